// What a single send and a batch share: the journal each agent's handoff gets, the agent
// changed under a --self helper, the note on a running handoff, and Ctrl-C / SIGTERM as an abort.
import { HandoffError } from '../errors.js';
import { Journal } from '../handoff/journal.js';
import type { LockOwner } from '../handoff/lock.js';
import type { Plan } from '../handoff/plan.js';
import type { Sides } from '../handoff/sides.js';
import { herdrServerOf } from '../herdr/socket-path.js';
import { planJson } from './send-result.js';

/** The journal of one agent's handoff, its header naming the plan, both sides and who runs it (`recover` leaves it alone while that process lives). */
export function openJournal(dir: string, plan: Plan, sides: Sides, owner: LockOwner, batch?: { batch: string; batch_size: number }): Journal {
  return Journal.create(dir, plan.id, {
    ...batch,
    agent: plan.agent.name ?? plan.agent.pane_id,
    kind: plan.kind,
    from: sides.source.host.label,
    to: sides.target.host.label,
    source_spec: sides.source.spec,
    target_spec: sides.target.spec,
    session: plan.session.id,
    pane: plan.agent.pane_id,
    herdr_server: herdrServerOf(sides.source.info),
    controller: { host: owner.controller, pid: owner.pid, pid_start: owner.pid_start ?? null },
    plan: planJson(plan, sides),
  });
}

/** --self helper: the agent that asked must still be the one found now. */
export function agentChanged(plan: Plan, expect: { pane: string; pid: number; kind: string; session: string }): HandoffError | null {
  if (plan.process.pid === expect.pid && plan.kind === expect.kind && plan.session.id === expect.session) return null;
  return new HandoffError('agent_changed', `The agent in ${expect.pane} is no longer the one that asked to move (expected ${expect.kind} pid ${expect.pid} session ${expect.session}).`, {
    fix: 'Nothing was changed. Ask the agent again.',
  });
}

/** A dry run's note on a handoff of this agent that runs now. */
export function runningWarning(holder: { handoff: string; pid: number; controller: string }): string {
  return `A handoff of this agent (${holder.handoff}, pid ${holder.pid} on ${holder.controller}) is running now; a real send would be refused until it ends.`;
}

/** Run `fn` with Ctrl-C and SIGTERM turned into an abort of its signal (the steps then stop and undo). */
export async function withAbortOnSignals<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const aborter = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => aborter.abort(sig);
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await fn(aborter.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
