// `send AGENT TARGET`: lock the agent's pane and plan at once (a dry run only looks at the lock),
// lock its session, journal, execute. Several agents are a batch (send-batch.ts).
import os from 'node:os';
import { HandoffError } from '../errors.js';
import { execute } from '../handoff/execute.js';
import { HandoffFailed } from '../handoff/rollback.js';
import { Journal, newHandoffId, stateDir } from '../handoff/journal.js';
import { acquireLock, heldFor, inProgress, localLiveness, lockHolder, paneLockKey, sessionLockKey, type HeldLock, type LockOwner } from '../handoff/lock.js';
import { findAgent, sessionIdOf } from '../handoff/find-agent.js';
import type { AgentInfo } from '../herdr/schemas.js';
import type { SessionRef } from '../../adapters/adapter.js';
import type { SupportedKind } from '../result.js';
import { quiet } from '../quiet.js';
import { hostStateDir } from '../handoff/marker.js';
import { processStartId } from '../handoff/process-age.js';
import { isBatch, type SendOptions } from '../handoff/options.js';
import { expectedSocket, herdrServerOf } from '../herdr/socket-path.js';
import { buildPlan, sourceHerdrProbe } from '../handoff/plan.js';
import { openSides, type Side } from '../handoff/sides.js';
import { deferSelf, selfWithFrom, type DeferredJob } from '../handoff/self.js';
import { createProgress } from '../progress.js';
import { recoverOne, stillRunning, unfinishedFor, type RecoverReport } from '../handoff/recover.js';
import { movedResult, planJson } from './send-result.js';
import { agentChanged, openJournal, runningWarning, withAbortOnSignals } from './send-common.js';
import type { CommandContext, CommandOutput } from './index.js';

export async function send(args: Record<string, unknown>, ctx: CommandContext): Promise<CommandOutput> {
  const opts = args.send as SendOptions;
  // Refused before connecting anywhere (exit 2, like the other flag rules).
  if (opts.self && opts.from) throw selfWithFrom();
  if (isBatch(opts)) return (await import('./send-batch.js')).sendBatch(args, ctx);
  const progress = createProgress(ctx.stderr, { quiet: ctx.quiet });
  const resumed = opts.dryRun ? [] : await finishEarlierHandoffs(opts, ctx, progress);
  const completed = resumed.find((r) => r.action === 'completed');
  if (completed) {
    // The earlier run had the agent running on its target already: that handoff is now finished.
    return { result: { ok: true, command: 'send', dry_run: false, deferred: false, resumed }, exitCode: 0 };
  }
  const id = newHandoffId();
  // The plan starts at the source as soon as it answers; the target's handshake goes on meanwhile.
  const opening = openSides(opts);
  const connecting = progress.step('connecting', () => opening.sides);
  connecting.catch(() => undefined);
  const locks: HeldLock[] = [];
  // The session's lock while it is being taken, until it is held in `locks`; none once this ends.
  let sessionLocking: Promise<HeldLock> | null = null;
  let ended = false;
  try {
    const source = await opening.source;
    const controller = os.hostname();
    const owner: LockOwner = { handoff: id, controller, pid: process.pid, pid_start: processStartId(process.pid), started: new Date().toISOString() };
    const isAlive = localLiveness(controller);
    const stateOnSource = hostStateDir(source.info);
    const expect = args.expect as DeferredJob['expect'] | undefined;
    // The pane lock is taken while the plan is made (planning only reads): a second send of this
    // agent is refused at once, never left to find the agent already quit by the first. A dry run
    // and the --self request change nothing, so they only look (the --self helper takes it).
    // One list of the source's agents for the lock and the plan, asked beside the probe. The
    // --self helper plans from a list made after the turn.
    const listing = source.herdr.agentListBeside(sourceHerdrProbe(source, opening.sameHost));
    listing.catch(() => undefined);
    const claiming = claimAgent(source, listing, opts.agent, { stateDir: stateOnSource, owner, isAlive, take: !opts.dryRun && !opts.self });
    // The session too: two panes resuming one session are one agent. Taken as soon as the plan
    // found the session (on a remote source, a round trip less after the plan), always after the
    // pane lock and never waited for, so two sends can never hold one each and wait on each other.
    const herdrServer = herdrServerOf(source.info);
    const ownerFor = (agent: AgentInfo, session: string): LockOwner => ({ ...owner, agent: agent.name ?? null, pane: agent.pane_id, herdr_server: herdrServer, session });
    const lockSession = (agent: AgentInfo, kind: SupportedKind, session: SessionRef): void => {
      if (opts.dryRun || opts.self || ended) return;
      sessionLocking = quiet(claiming.then(() => acquireLock(source.host, { stateDir: stateOnSource, key: sessionLockKey(kind, session.id), owner: ownerFor(agent, session.id), isAlive })));
    };
    const planning = (async () => {
      if (expect) {
        // --self helper: wait for the agent's turn to end before planning.
        await progress.step('waiting for the agent to finish its turn', () => source.herdr.agentWait(expect.pane, ['idle', 'done'], opts.waitTimeoutS * 1000));
      }
      return progress.step('planning', () => buildPlan({ id, opts, source, sameHost: opening.sameHost, sides: connecting, earlyTarget: opening.earlyTarget, callerPane: expect ? undefined : ctx.env.HERDR_PANE_ID, ...(expect ? {} : { agents: listing }), sessionFound: lockSession }));
    })();
    const [claimed, planned] = await Promise.allSettled([claiming, planning]);
    if (claimed.status === 'fulfilled' && claimed.value.lock) locks.push(claimed.value.lock);
    // Another handoff of this agent explains any planning failure (it may have quit the agent).
    if (claimed.status === 'rejected' && claimed.reason instanceof HandoffError && claimed.reason.code === 'handoff_in_progress') throw claimed.reason;
    if (planned.status === 'rejected') throw planned.reason;
    if (claimed.status === 'rejected') throw claimed.reason;
    const plan = planned.value;
    const claim = claimed.value;
    const sides = await connecting;
    const changed = expect ? agentChanged(plan, expect) : null;
    if (changed) throw changed;
    if (opts.dryRun) {
      const running = claim.running ? { id: claim.running.holder.handoff, controller: claim.running.holder.controller, pid: claim.running.holder.pid, started: claim.running.holder.started } : null;
      const planOut = planJson(plan, sides);
      if (claim.running) planOut.warnings.push(runningWarning(claim.running.holder));
      return { result: { ok: true, command: 'send', dry_run: true, deferred: false, plan: planOut, ...(running ? { running_handoff: running } : {}) }, exitCode: 0 };
    }
    if (opts.self) {
      // Its helper would only be refused later: say so now.
      if (claim.running) throw inProgress(claim.running.holder, claim.running.dir, claim.running.alive);
      return { result: await deferSelf(plan, sides, opts, ctx, planJson(plan, sides)), exitCode: 0 };
    }
    const lockOwner = ownerFor(plan.agent, plan.session.id);
    if (claim.pane !== plan.agent.pane_id) {
      // The name moved to another pane between the two looks: lock the pane the plan moves.
      await releaseLocks(locks);
      locks.push(await acquireLock(sides.source.host, { stateDir: stateOnSource, key: paneLockKey(plan.agent.pane_id, herdrServer), owner: lockOwner, isAlive }));
    }
    const sessionLock = await (sessionLocking ?? acquireLock(sides.source.host, { stateDir: stateOnSource, key: sessionLockKey(plan.kind, plan.session.id), owner: lockOwner, isAlive }));
    sessionLocking = null;
    locks.push(sessionLock);
    const journal = openJournal(stateDir(ctx.env), plan, sides, owner);
    return await withAbortOnSignals(async (signal) => {
      try {
        const done = await execute(plan, sides, journal, progress, signal);
        journal.outcome('succeeded');
        // The locks go while the result is made: on a remote source, its note that the session
        // moved and the locks' removal are one round trip, not three.
        const [result] = await Promise.all([movedResult(plan, sides, done, progress, stateOnSource), releaseLocks(locks)]);
        return { result: { ...result, ...(resumed.length > 0 ? { resumed } : {}) }, exitCode: 0 };
      } catch (err) {
        journal.outcome(failedOutcome(err), { error: err instanceof Error ? err.message : String(err) });
        throw err;
      }
    });
  } finally {
    // A session lock taken for a plan that then failed goes too.
    ended = true;
    const unclaimed = await (sessionLocking as Promise<HeldLock> | null)?.catch(() => null);
    if (unclaimed) locks.push(unclaimed);
    await releaseLocks(locks);
    await opening.close();
  }
}

/** How a failed handoff ended: a rollback that left undo errors is incomplete (`recover` retries it). */
export function failedOutcome(err: unknown): 'rolled_back' | 'rollback_incomplete' | 'failed' {
  if (!(err instanceof HandoffFailed)) return 'failed';
  return err.rollbackReport.errors.length > 0 ? 'rollback_incomplete' : 'rolled_back';
}

/**
 * All at once (one round trip on a remote source): a lock is never waited for, so the order in
 * which they go does not matter.
 */
export async function releaseLocks(locks: HeldLock[]): Promise<void> {
  await Promise.all(locks.splice(0).map((lock) => lock.release().catch(() => undefined)));
}

interface Claim {
  /** The pane the agent was found in. */
  pane: string;
  /** The pane lock, when taken. */
  lock: HeldLock | null;
  /** When only looking: the live holder of the pane lock, if any. */
  running: Awaited<ReturnType<typeof lockHolder>>;
}

/**
 * Find the agent on the source herdr and lock its pane (or, when only looking, see who holds it).
 * An agent that is not there while a live handoff names it was quit by that handoff: refused as
 * handoff_in_progress, not agent_not_found.
 */
async function claimAgent(source: Side, listing: Promise<AgentInfo[]>, ref: string, o: { stateDir: string; owner: LockOwner; isAlive: ReturnType<typeof localLiveness>; take: boolean }): Promise<Claim> {
  const host = source.host;
  const server = herdrServerOf(source.info);
  let agent;
  try {
    agent = findAgent(await listing, ref, host.label);
  } catch (err) {
    if (err instanceof HandoffError && err.code === 'agent_not_found') {
      const held = await heldFor(host, o.stateDir, ref, server, o.isAlive).catch(() => null);
      if (held) throw inProgress(held.holder, held.dir, held.alive);
    }
    throw err;
  }
  const key = paneLockKey(agent.pane_id, server);
  if (!o.take) return { pane: agent.pane_id, lock: null, running: await lockHolder(host, { stateDir: o.stateDir, key, isAlive: o.isAlive }).catch(() => null) };
  const owner = { ...o.owner, agent: agent.name ?? null, pane: agent.pane_id, herdr_server: server, session: sessionIdOf(agent) };
  return { pane: agent.pane_id, lock: await acquireLock(host, { stateDir: o.stateDir, key, owner, isAlive: o.isAlive }), running: null };
}

/**
 * Re-running `send` after an uncertain end (killed controller, lost network) finishes or rolls
 * back the unfinished handoff of that agent first, instead of starting a second one beside it.
 * A different target than the unfinished one is refused: the user must say which they want.
 */
async function finishEarlierHandoffs(opts: SendOptions, ctx: CommandContext, progress: ReturnType<typeof createProgress>): Promise<RecoverReport[]> {
  const dir = stateDir(ctx.env);
  // Here, the herdr server is the one this process's environment names (another machine's is
  // known only once connected: any is taken then).
  const herdrServer = opts.from ? undefined : expectedSocket(ctx.env, ctx.env.HOME || os.userInfo().homedir);
  const pending = unfinishedFor(dir, { sourceSpec: opts.from ?? 'local', herdrServer, agent: opts.agent, pane: opts.agent, ...(opts.session ? { session: opts.session } : {}) });
  const reports: RecoverReport[] = [];
  const wantedTarget = opts.here ? 'local' : (opts.target ?? 'local');
  for (const earlier of pending) {
    const events = Journal.open(dir, earlier).events();
    const header = events.find((e) => e.type === 'header')?.data ?? {};
    const live = stillRunning(events);
    if (live) {
      throw new HandoffError('handoff_in_progress', `A handoff of this agent (${earlier}) is still running (pid ${live.pid} on ${live.host}).`, { fix: 'Wait for it to finish; `agent-handoff history` shows it.', details: { unfinished: earlier } });
    }
    if (typeof header.target_spec === 'string' && header.target_spec !== wantedTarget) {
      throw new HandoffError('handoff_in_progress', `An unfinished handoff of this agent to ${header.target_spec} (${earlier}) exists; this one goes to ${wantedTarget}.`, {
        fix: `Finish or undo it first with \`agent-handoff recover ${earlier}\` (add --rollback to undo), then run this send again.`,
        details: { unfinished: earlier },
      });
    }
    const report = await progress.step(`finishing the earlier handoff ${earlier}`, () => recoverOne(dir, earlier, { forceRollback: false, timeoutS: opts.timeoutS }));
    if (report.action === 'still_running') {
      throw new HandoffError('handoff_in_progress', `A handoff of this agent (${earlier}) is still running.`, { fix: 'Wait for it to finish; `agent-handoff history` shows it.', details: { unfinished: earlier } });
    }
    reports.push(report);
  }
  return reports;
}

export { HandoffError };
