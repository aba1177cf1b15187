// The agent's session at the source: herdr's handle, else --session, else the session this tool
// started it with, else the adapter's guess (the newest transcript for its folder written since
// the agent started).
import type { Adapter, Placement, SessionHandle, SessionRef, SideCtx, UnitEntry } from '../../adapters/adapter.js';
import type { Host } from '../host/host.js';
import { HandoffError } from '../errors.js';
import type { IntegrationState } from '../herdr/integration.js';
import type { AgentInfo } from '../herdr/schemas.js';
import { sleep } from '../sleep.js';
import { hostStateDir } from './marker.js';
import type { SendOptions } from './options.js';
import type { Plan } from './plan.js';
import type { Side } from './sides.js';
import { isOurAgent, readStarted, startedDir } from './started-agents.js';

/**
 * The session: herdr's handle, else --session, else the adapter's guess. The agent's folder
 * (`cwd`, links resolved) is awaited only for a guess: a handle is located without it.
 */
export async function findSession(side: Side, adapter: Adapter, agent: AgentInfo, opts: SendOptions, ctx: SideCtx, cwdRead: Promise<string>, agentStarted: () => Promise<number>, integrationOf: () => Promise<IntegrationState | null>): Promise<{ ref: SessionRef; via: Plan['sessionVia'] }> {
  if (opts.session) {
    const handle: SessionHandle = opts.session.includes('/') || opts.session.endsWith('.jsonl') ? { kind: 'path', value: opts.session } : { kind: 'id', value: opts.session };
    return { ref: await adapter.locate(side.host, handle, ctx), via: 'option' };
  }
  if (agent.agent_session) {
    return { ref: await adapter.locate(side.host, { kind: agent.agent_session.kind, value: agent.agent_session.value }, ctx), via: 'herdr' };
  }
  // Only now are the agent's start time (a `ps` on the source) and its folder needed.
  const [startedAtMs, ours, cwd] = await Promise.all([agentStarted(), readStarted(side.host, startedDir(hostStateDir(side.info)), agent.pane_id), cwdRead]);
  // An agent this tool started there: the session it resumed is known, whatever herdr's hook did.
  if (ours && isOurAgent(ours, { kind: adapter.kind, cwd, processStartedMs: startedAtMs })) {
    const ref = await adapter.locate(side.host, ours.handle, ctx).catch(() => null);
    if (ref) return { ref, via: 'handoff' };
  }
  try {
    return { ref: await adapter.guess(side.host, { cwd, startedAtMs, ctx }), via: 'guess' };
  } catch (err) {
    // An agent started moments ago (e.g. restarted by a rollback) has written nothing yet, and
    // herdr's integration reports its session with a lag of a second or two: wait for that.
    if (err instanceof HandoffError && err.code === 'session_not_found' && Date.now() - startedAtMs < YOUNG_AGENT_MS) {
      const reported = await sessionReport(side, agent.pane_id, SESSION_REPORT_WAIT_MS);
      if (reported) return { ref: await adapter.locate(side.host, reported, ctx), via: 'herdr' };
    }
    // Only now is the source's integration worth a herdr call: it explains the miss.
    const integration = err instanceof HandoffError && err.code === 'session_not_found' ? await integrationOf() : null;
    if (err instanceof HandoffError && err.code === 'session_not_found' && integration?.status !== 'current') {
      throw new HandoffError('session_not_found', `${err.message} herdr does not know the session because its ${adapter.integration} integration is ${integration?.status.replace('_', ' ') ?? 'not installed'} on ${side.host.label}.`, {
        fix: `Install it (\`herdr integration install ${adapter.integration}\`) and restart the agent, or pass --session <id or path>.`,
      });
    }
    throw err;
  }
}

/** An agent this young may not have been reported by herdr's integration yet. */
const YOUNG_AGENT_MS = 30_000;
const SESSION_REPORT_WAIT_MS = 5_000;

/** herdr's session handle of the agent in `pane`, once its integration reports one (null after `waitMs`). */
async function sessionReport(side: Side, pane: string, waitMs: number): Promise<SessionHandle | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const s = (await side.herdr.agentGet(pane).catch(() => null))?.agent_session;
    if (s) return { kind: s.kind, value: s.value };
    if (Date.now() >= deadline) return null;
    await sleep(250);
  }
}

/**
 * The session's unit per placement, each walked once: the plan asks it for the look's likely
 * placements and again for the one chosen, and over ssh (--from) a walk of the store costs round trips.
 */
export function unitsOnce(adapter: Adapter, host: Host): (ref: SessionRef, placed: Placement) => Promise<UnitEntry[]> {
  const walked = new Map<string, Promise<UnitEntry[]>>();
  return (ref, placed) => {
    const key = JSON.stringify([ref, placed]);
    let unit = walked.get(key);
    if (!unit) walked.set(key, (unit = adapter.unit(host, ref, placed)));
    return unit;
  };
}
