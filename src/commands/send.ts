// `send <agent> [target]`: lock the agent's pane and plan at once (a dry run only looks at the
// lock), lock its session, journal, execute.
import os from 'node:os';
import { z } from 'zod';
import { HandoffError } from '../errors.js';
import { execute, type ExecuteResult } from '../handoff/execute.js';
import { HandoffFailed } from '../handoff/rollback.js';
import { Journal, newHandoffId, stateDir } from '../handoff/journal.js';
import { acquireLock, heldFor, inProgress, localLiveness, lockHolder, paneLockKey, sessionLockKey, type HeldLock, type LockOwner } from '../handoff/lock.js';
import { findAgent, sessionIdOf } from '../handoff/find-agent.js';
import { hostStateDir } from '../handoff/marker.js';
import { processStartId } from '../handoff/process-age.js';
import { isBatch, type SendOptions } from '../handoff/options.js';
import { buildPlan, sourceHerdrProbe, type Plan } from '../handoff/plan.js';
import { openSides, type Side, type Sides } from '../handoff/sides.js';
import { deferSelf, selfWithFrom, type DeferredJob } from '../handoff/self.js';
import { createProgress } from '../progress.js';
import { recoverOne, stillRunning, unfinishedFor, type RecoverReport } from '../handoff/recover.js';
import { buildBrief, deliverBrief, wantsBrief, type BriefOutcome } from '../handoff/brief.js';
import { recordMoved } from '../handoff/moved.js';
import { registerResultSchema } from '../result.js';
import type { CommandContext, CommandOutput } from './index.js';

const PlanJson = z.object({
  id: z.string(),
  agent: z.object({ target: z.string(), name: z.string().nullable(), pane: z.string(), status: z.string(), argv: z.array(z.string()), pid: z.number() }),
  kind: z.string(),
  session: z.object({ id: z.string(), via: z.enum(['herdr', 'option', 'handoff', 'guess']), files: z.number(), bytes: z.number() }),
  transcript: z.string(),
  source: z.object({ host: z.string().describe('the machine as the user named it (`local`, an ssh alias, user@host)'), address: z.string().describe('where it is: `local` or the resolved user@host[:port]'), repo: z.string(), cwd: z.string(), relative_cwd: z.string(), branch: z.string().nullable(), head: z.string(), dirty: z.boolean(), changed_files: z.array(z.string()), remotes: z.array(z.string()) }),
  target: z.object({
    host: z.string().describe('the machine as the user named it (`local`, an ssh alias, user@host)'),
    address: z.string().describe('where it is: `local` or the resolved user@host[:port]'),
    repo: z.string(),
    other_checkouts: z.array(z.string()),
    integration: z.string(),
    agent_cli: z.string().nullable(),
    config_root: z.string(),
    herdr_version: z.string().nullable(),
  }),
  will_create: z.object({
    branch: z.string(),
    worktree: z.string(),
    new_worktree: z.boolean(),
    fast_forward: z.boolean(),
    cwd: z.string(),
    session_file: z.string(),
    resume_argv: z.array(z.string()),
  }),
  warnings: z.array(z.string()),
});
export type PlanJson = z.infer<typeof PlanJson>;

export const SendResult = z.object({
  ok: z.literal(true),
  command: z.literal('send'),
  dry_run: z.boolean(),
  deferred: z.boolean(),
  plan: PlanJson.optional().describe('Absent only when `resumed` finished an earlier handoff of this agent instead'),
  resumed: z
    .array(z.object({ id: z.string(), action: z.string() }).loose())
    .optional()
    .describe('Unfinished earlier handoffs of this agent that this run finished or rolled back first'),
  target_worktree: z.string().optional(),
  branch: z.string().optional(),
  cwd: z.string().optional(),
  worktree_created: z.boolean().optional(),
  changes_applied: z.boolean().optional(),
  target_agent: z.object({ name: z.string(), pane: z.string(), workspace: z.string() }).optional(),
  integration_installed: z.boolean().optional(),
  trust: z.string().optional(),
  hook_trust: z
    .object({ status: z.enum(['carried', 'already_trusted', 'no_hook', 'left_for_user']), detail: z.string() })
    .optional()
    .describe("codex: herdr's hook trusted on the target as at the source (carried), or left for the user to review, and why"),
  waiting_for_user: z.array(z.string()).optional(),
  next_steps: z.array(z.string()).optional().describe('What the person does on the target for the screens in waiting_for_user that agent-handoff can describe (which keys answer them)'),
  source_stash: z.object({ stashed: z.boolean(), stash: z.string().nullable(), reason: z.string(), note: z.string(), changed_after_snapshot: z.array(z.string()) }).optional(),
  source_pane_at_shell: z.boolean().optional(),
  attach: z.string().nullable().optional(),
  verified: z.array(z.string()).optional(),
  bytes_sent: z.number().optional(),
  session_backups: z.array(z.string()).optional().describe('--overwrite: the session files on the target that it replaced, kept there under these names'),
  steps: z.array(z.object({ step: z.string(), ms: z.number(), ok: z.boolean() })).optional(),
  brief: z.object({ status: z.enum(['delivered', 'not_delivered', 'skipped_waiting_for_user']), text: z.string() }).optional().describe('--brief/--focus/--done-when: the first message sent to the resumed agent'),
  helper: z.object({ workspace: z.string(), pane: z.string(), job: z.string() }).optional().describe('--self: the helper that will run the handoff after this turn'),
  running_handoff: z
    .object({ id: z.string(), controller: z.string(), pid: z.number(), started: z.string() })
    .optional()
    .describe('--dry-run: a handoff of this agent is running right now (a real send would be refused until it ends)'),
});
registerResultSchema('send', SendResult);

export function planJson(plan: Plan, sides: Sides): PlanJson {
  const p = plan.placement;
  const resume = plan.adapter.resumeArgv(plan.sessionPlacement.handle, plan.opts.agentArgs);
  return {
    id: plan.id,
    agent: { target: plan.agent.name ?? plan.agent.pane_id, name: plan.agent.name ?? null, pane: plan.agent.pane_id, status: plan.agent.agent_status, argv: plan.process.argv ?? [plan.process.name], pid: plan.process.pid },
    kind: plan.kind,
    session: { id: plan.session.id, via: plan.sessionVia, files: plan.unit.length, bytes: plan.unit.reduce((n, e) => n + e.size, 0) },
    transcript: plan.session.file,
    source: {
      host: sides.source.host.label,
      address: sides.source.host.address,
      repo: plan.snapshot.repoRoot,
      cwd: plan.cwd,
      relative_cwd: plan.snapshot.relativeCwd,
      branch: plan.snapshot.branch,
      head: plan.snapshot.head,
      dirty: plan.snapshot.snapshot !== null,
      changed_files: plan.snapshot.changedFiles.map((f) => f.path),
      remotes: plan.remotes.map((r) => r.url),
    },
    target: {
      host: sides.target.host.label,
      address: sides.target.host.address,
      repo: p.repo,
      other_checkouts: plan.otherCheckouts,
      integration: plan.targetIntegration?.status ?? 'unknown',
      agent_cli: plan.targetAgentCli,
      config_root: plan.sessionPlacement.configRoot,
      herdr_version: plan.targetHerdr.version?.version ?? null,
    },
    will_create: {
      branch: p.branch,
      worktree: p.worktree,
      new_worktree: p.mode === 'new-worktree',
      fast_forward: p.fastForward,
      cwd: plan.targetCwd,
      session_file: plan.sessionPlacement.file,
      resume_argv: resume,
    },
    warnings: plan.warnings,
  };
}

export function resultOf(plan: Plan, sides: Sides, done: ExecuteResult, timings: { step: string; ms: number; ok: boolean }[], sourceAtShell: boolean): z.infer<typeof SendResult> {
  const target = sides.target;
  return {
    ok: true,
    command: 'send',
    dry_run: false,
    deferred: false,
    plan: planJson(plan, sides),
    target_worktree: done.placementWorktree,
    branch: done.branch,
    cwd: done.snapshot.relativeCwd ? `${done.placementWorktree}/${done.snapshot.relativeCwd}` : done.placementWorktree,
    worktree_created: done.createdWorktree,
    changes_applied: done.snapshot.snapshot !== null,
    target_agent: { name: done.start.name, pane: done.start.pane, workspace: done.start.workspace },
    integration_installed: done.integrationInstalled,
    trust: done.start.trust,
    ...(done.hookTrust ? { hook_trust: { status: done.hookTrust.status, detail: done.hookTrust.detail } } : {}),
    waiting_for_user: done.start.waitingForUser,
    ...nextSteps(done),
    source_stash: { stashed: done.stash.stashed, stash: done.stash.stash, reason: done.stash.reason, note: done.stash.note, changed_after_snapshot: done.stash.changedAfterSnapshot },
    source_pane_at_shell: sourceAtShell,
    attach: sides.sameHost || target.host.isThisMachine ? null : `herdr --remote ${target.spec}`,
    verified: done.verified,
    bytes_sent: done.transfer.bytesSent,
    ...(done.sessionBackups.length > 0 ? { session_backups: done.sessionBackups } : {}),
    steps: timings,
  };
}

/** The keys that answer a waiting screen, where we know them (codex's hook review). */
function nextSteps(done: ExecuteResult): { next_steps?: string[] } {
  const steps: string[] = [];
  if (done.start.waitingForUser.includes('hook_review') && done.hookTrust?.help) steps.push(done.hookTrust.help);
  return steps.length > 0 ? { next_steps: steps } : {};
}

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
    const claiming = claimAgent(source, opening.sameHost, opts.agent, { stateDir: stateOnSource, owner, isAlive, take: !opts.dryRun && !opts.self });
    const planning = (async () => {
      if (expect) {
        // --self helper: wait for the agent's turn to end before planning.
        await progress.step('waiting for the agent to finish its turn', () => source.herdr.agentWait(expect.pane, ['idle', 'done'], opts.waitTimeoutS * 1000));
      }
      return progress.step('planning', () => buildPlan({ id, opts, source, sameHost: opening.sameHost, sides: connecting, callerPane: expect ? undefined : ctx.env.HERDR_PANE_ID }));
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
    if (expect && (plan.process.pid !== expect.pid || plan.kind !== expect.kind || plan.session.id !== expect.session)) {
      throw new HandoffError('agent_changed', `The agent in ${expect.pane} is no longer the one that asked to move (expected ${expect.kind} pid ${expect.pid} session ${expect.session}).`, {
        fix: 'Nothing was changed. Ask the agent again.',
      });
    }
    if (opts.dryRun) {
      const running = claim.running ? { id: claim.running.holder.handoff, controller: claim.running.holder.controller, pid: claim.running.holder.pid, started: claim.running.holder.started } : null;
      const planOut = planJson(plan, sides);
      if (running) planOut.warnings.push(`A handoff of this agent (${running.id}, pid ${running.pid} on ${running.controller}) is running now; a real send would be refused until it ends.`);
      return { result: { ok: true, command: 'send', dry_run: true, deferred: false, plan: planOut, ...(running ? { running_handoff: running } : {}) }, exitCode: 0 };
    }
    if (opts.self) {
      // Its helper would only be refused later: say so now.
      if (claim.running) throw inProgress(claim.running.holder, claim.running.dir, claim.running.alive);
      return { result: await deferSelf(plan, sides, opts, ctx, planJson(plan, sides)), exitCode: 0 };
    }
    const lockOwner = { ...owner, agent: plan.agent.name ?? null, pane: plan.agent.pane_id, session: plan.session.id };
    if (claim.pane !== plan.agent.pane_id) {
      // The name moved to another pane between the two looks: lock the pane the plan moves.
      await releaseLocks(locks);
      locks.push(await acquireLock(sides.source.host, { stateDir: stateOnSource, key: paneLockKey(plan.agent.pane_id), owner: lockOwner, isAlive }));
    }
    // The session too: two panes resuming one session are one agent. Always taken after the pane
    // lock and never waited for, so two sends can never hold one each and wait on each other.
    locks.push(await acquireLock(sides.source.host, { stateDir: stateOnSource, key: sessionLockKey(plan.kind, plan.session.id), owner: lockOwner, isAlive }));
    const journal = Journal.create(stateDir(ctx.env), id, {
      agent: plan.agent.name ?? plan.agent.pane_id,
      kind: plan.kind,
      from: sides.source.host.label,
      to: sides.target.host.label,
      source_spec: sides.source.spec,
      target_spec: sides.target.spec,
      session: plan.session.id,
      pane: plan.agent.pane_id,
      // Who runs it, with its start time: `recover` leaves the journal alone while this process lives.
      controller: { host: controller, pid: process.pid, pid_start: owner.pid_start ?? null },
      plan: planJson(plan, sides),
    });
    const aborter = new AbortController();
    const onSignal = (sig: NodeJS.Signals) => aborter.abort(sig);
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    try {
      const done = await execute(plan, sides, journal, progress, aborter.signal);
      journal.outcome('succeeded');
      const result = await movedResult(plan, sides, done, progress, stateOnSource);
      return { result: { ...result, ...(resumed.length > 0 ? { resumed } : {}) }, exitCode: 0 };
    } catch (err) {
      journal.outcome(failedOutcome(err), { error: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  } finally {
    await releaseLocks(locks);
    await opening.close();
  }
}

/**
 * The result of an agent that moved. After success nothing here may fail the handoff: these are
 * notes (the source's record that the session moved) and courtesies (the brief).
 */
export async function movedResult(plan: Plan, sides: Sides, done: ExecuteResult, progress: ReturnType<typeof createProgress>, stateOnSource: string): Promise<z.infer<typeof SendResult>> {
  const moved = await recordMoved(sides.source.host, stateOnSource, {
    kind: plan.kind,
    session: plan.session.id,
    // A note kept on the source machine, read by whoever lists it: the address, not an alias.
    to: sides.target.host.address,
    target_path: plan.sessionPlacement.file,
    at: new Date().toISOString(),
    handoff: plan.id,
  }).then(
    () => null,
    (err: unknown) => `Could not note at the source that the session moved: ${err instanceof Error ? err.message : String(err)}`,
  );
  const brief = await sendBrief(plan, sides, done, progress);
  const result = resultOf(plan, sides, done, progress.timings, done.sourceAtShell);
  if (moved) result.plan?.warnings.push(moved);
  return { ...result, ...(brief ? { brief } : {}) };
}

/** How a failed handoff ended: a rollback that left undo errors is incomplete (`recover` retries it). */
export function failedOutcome(err: unknown): 'rolled_back' | 'rollback_incomplete' | 'failed' {
  if (!(err instanceof HandoffFailed)) return 'failed';
  return err.rollbackReport.errors.length > 0 ? 'rollback_incomplete' : 'rolled_back';
}

/** Newest first: the session lock, then the pane lock. */
export async function releaseLocks(locks: HeldLock[]): Promise<void> {
  for (const lock of locks.splice(0).reverse()) await lock.release().catch(() => undefined);
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
async function claimAgent(source: Side, sameHost: boolean, ref: string, o: { stateDir: string; owner: LockOwner; isAlive: ReturnType<typeof localLiveness>; take: boolean }): Promise<Claim> {
  const host = source.host;
  let agent;
  try {
    // After the plan's source probe (shared): the list then comes over herdr's API socket.
    await sourceHerdrProbe(source, sameHost).catch(() => undefined);
    agent = findAgent(await source.herdr.agentList(), ref, host.label);
  } catch (err) {
    if (err instanceof HandoffError && err.code === 'agent_not_found') {
      const held = await heldFor(host, o.stateDir, ref, o.isAlive).catch(() => null);
      if (held) throw inProgress(held.holder, held.dir, held.alive);
    }
    throw err;
  }
  const key = paneLockKey(agent.pane_id);
  if (!o.take) return { pane: agent.pane_id, lock: null, running: await lockHolder(host, { stateDir: o.stateDir, key, isAlive: o.isAlive }).catch(() => null) };
  const owner = { ...o.owner, agent: agent.name ?? null, pane: agent.pane_id, session: sessionIdOf(agent) };
  return { pane: agent.pane_id, lock: await acquireLock(host, { stateDir: o.stateDir, key, owner, isAlive: o.isAlive }), running: null };
}

/**
 * Re-running `send` after an uncertain end (killed controller, lost network) finishes or rolls
 * back the unfinished handoff of that agent first, instead of starting a second one beside it.
 * A different target than the unfinished one is refused: the user must say which they want.
 */
async function finishEarlierHandoffs(opts: SendOptions, ctx: CommandContext, progress: ReturnType<typeof createProgress>): Promise<RecoverReport[]> {
  const dir = stateDir(ctx.env);
  const pending = unfinishedFor(dir, { sourceSpec: opts.from ?? 'local', agent: opts.agent, pane: opts.agent, ...(opts.session ? { session: opts.session } : {}) });
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

/** The hand-off brief, when asked for: delivered once the agent is idle on the target. */
export async function sendBrief(plan: Plan, sides: Sides, done: ExecuteResult, progress: ReturnType<typeof createProgress>): Promise<{ status: BriefOutcome; text: string } | null> {
  const opts = plan.opts;
  const asked = { brief: opts.brief, focus: opts.briefFocus, doneWhen: opts.doneWhen };
  if (!wantsBrief(asked)) return null;
  const text = buildBrief({
    sourceHost: sides.source.host.label,
    sourcePath: plan.cwd,
    targetHost: sides.target.host.label,
    targetPath: done.snapshot.relativeCwd ? `${done.placementWorktree}/${done.snapshot.relativeCwd}` : done.placementWorktree,
    head: done.snapshot.head,
    branch: done.branch,
    restoredFiles: done.snapshot.changedFiles.map((f) => f.path),
    ...asked,
  });
  if (done.start.waitingForUser.length > 0) return { status: 'skipped_waiting_for_user', text };
  const status = await progress
    .step('sending the hand-off brief', () => deliverBrief(sides.target.herdr, done.start.pane, text, { timeoutMs: opts.timeoutS * 1000 }))
    .catch((): BriefOutcome => 'not_delivered');
  return { status, text };
}

export { HandoffError };
