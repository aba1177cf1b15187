// Whether the agent is known to be idle just before its quit. Codex must be quit idle (its
// `/quit` only detaches from a daemon that keeps a running turn writing), and --wait waits for
// idle. herdr's status is asked again as the target's look goes out, beside it; the quit trusts
// that answer while it is fresh, and asks herdr once more only when not.
import { HandoffError } from '../errors.js';
import type { HerdrClient } from '../herdr/client.js';

/** An agent's status as herdr's list gave it (null: the pane holds no agent any more). */
export interface AgentStatusRead {
  status: string | null;
  /** When the question was sent (herdr answers with its state at some moment after). */
  askedAtMs: number;
}

/**
 * How long a status read stands for the state at the quit: herdr itself notices an agent's
 * change on its detection tick (0.3–0.5 s), so a read this young is as current as herdr can be.
 */
export const STATUS_FRESH_MS = 500;

export function isBusy(status: string | null | undefined): boolean {
  return status === 'working' || status === 'blocked';
}

/** The refusal of an agent (`label`) found busy when the plan looked, without --wait. */
export function agentBusy(label: string, status: string): HandoffError {
  return new HandoffError('agent_busy', `The agent ${label} is ${status}.`, {
    fix: status === 'blocked' ? 'Answer what it is asking first, or pass --wait.' : 'Pass --wait to move it once its turn ends.',
  });
}

/** herdr's status of the agent in `pane`, with when it was asked. */
export async function askStatus(herdr: Pick<HerdrClient, 'agentList'>, pane: string, now: () => number = Date.now): Promise<AgentStatusRead> {
  const askedAtMs = now();
  const agent = (await herdr.agentList()).find((a) => a.pane_id === pane);
  return { status: agent?.agent_status ?? null, askedAtMs };
}

/** Is the agent known idle at `nowMs` from this read, so that the quit need not ask herdr again? */
export function knownIdle(read: AgentStatusRead | null, nowMs: number): boolean {
  return read !== null && read.status !== null && !isBusy(read.status) && nowMs - read.askedAtMs < STATUS_FRESH_MS;
}
