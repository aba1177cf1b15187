// Execute a plan: quit, with the plan's snapshot sent and placed on the target meanwhile; snapshot
// again (other work is sent and placed instead), with the session copy beside it; start on the
// target, verify, stash at the source. Every step is journaled before it acts and after it
// completes; anything that changes the target is recorded so a failure (or `recover`) can undo it
// exactly.
import { HandoffError } from '../errors.js';
import { HerdrError } from '../herdr/herdr-error.js';
import { place, undoPlacement, type PlacementRecord } from '../git/place.js';
import type { PlacementReads } from '../git/placement-read.js';
import { sameWork, snapshotAgain, type Snapshot } from '../git/snapshot.js';
import { prepareStash, stashSourceChanges, type StashResult } from '../git/stash.js';
import { presentObjects, transfer, type TransferResult } from '../git/transfer.js';
import type { Progress } from '../progress.js';
import os from 'node:os';
import { copySessionUnit } from './session-copy.js';
import { placementIntent, sessionIntent } from './intents.js';
import { hostStateDir, markerPath, writeMarker } from './marker.js';
import { discardBackups, undoCopy } from '../transcript/copy.js';
import { destinationUnder, lookAtDestinations, type DestinationLook } from '../transcript/destinations.js';
import { ledgerDir, recordLeft } from '../transcript/left-ledger.js';
import { arrivalsDir, recordArrivals } from '../transcript/arrivals.js';
import { handleOf, recordStarted, startedDir } from './started-agents.js';
import type { Journal } from './journal.js';
import { cwdIn, type Plan } from './plan.js';
import { paneAtShell, quitAgent, type QuitResult } from './quit.js';
import { StepRunner } from './steps.js';
import { checkTargetFiles, verify } from './verify.js';
import { HandoffRecord } from './records.js';
import { HandoffFailed, rollback, type RollbackReport } from './rollback.js';
import type { Sides } from './sides.js';
import type { HookTrustOutcome } from '../../adapters/hook-trust.js';
import { startAgent, uniqueAgentName, type StartResult } from './start.js';
import { toAgentName } from './start.js';

export interface ExecuteResult {
  quit: QuitResult;
  snapshot: Snapshot;
  transfer: TransferResult;
  placementWorktree: string;
  createdWorktree: boolean;
  branch: string;
  sessionFiles: string[];
  /** Files on the target that --overwrite replaced, kept here. */
  sessionBackups: string[];
  integrationInstalled: boolean;
  /** herdr's hook trust carried to the target (kinds that review new hooks), or null. */
  hookTrust: HookTrustOutcome | null;
  start: StartResult;
  stash: StashResult;
  verified: string[];
  /** The source pane is at its shell after the stash (herdr asked alongside it). */
  sourceAtShell: boolean;
}

/** The work on the target: what was sent, and where and how it was placed. */
interface Moved {
  moved: TransferResult;
  placement: PlacementRecord;
}

export async function execute(plan: Plan, sides: Sides, journal: Journal, progress: Progress, signal: AbortSignal): Promise<ExecuteResult> {
  const records: HandoffRecord[] = [];
  const record = (rec: HandoffRecord) => {
    records.push(HandoffRecord.parse(rec));
    journal.record(rec.kind, rec as Record<string, unknown>);
  };
  const steps = new StepRunner(journal, progress, signal);
  const step = steps.run.bind(steps);
  const { source, target } = sides;
  const { adapter, agent, opts } = plan;
  record({ kind: 'controller', host: os.hostname(), pid: process.pid });

  // Before the quit nothing has changed: a failure here needs no rollback.
  if (opts.wait || adapter.quit.mustBeIdle) {
    await step('wait', `waiting for ${agent.name ?? agent.pane_id} to be idle`, async () => {
      const now = (await source.herdr.agentList()).find((a) => a.pane_id === agent.pane_id);
      if (now && (now.agent_status === 'working' || now.agent_status === 'blocked')) {
        if (!opts.wait) throw new HandoffError('agent_busy', `The ${plan.kind} agent is ${now.agent_status}; it must be idle before it can be quit.`, { fix: 'Pass --wait.' });
        await source.herdr.agentWait(agent.pane_id, ['idle', 'done'], opts.waitTimeoutS * 1000);
      }
    });
  }

  let sourceAtShell = false;
  // Work started beside a step (reads, checks, the stash commit). A rollback waits for it to
  // settle first: a check still running git in a worktree being removed makes the removal fail.
  const aside: Promise<unknown>[] = [];
  const besides = <T>(p: Promise<T>): Promise<T> => {
    p.catch(() => undefined);
    aside.push(p);
    return p;
  };
  // Undo what the records name, journaled, once the work started beside the steps has settled
  // (bounded: a side read on a connection that hangs must not hold the rollback for ever).
  const undoAll = async (restart: boolean): Promise<RollbackReport> => {
    await settledWithin(aside, opts.timeoutS * 1000);
    const report = await progress.step('rolling back', () => rollback(sides, records, { restart }));
    journal.append({ type: 'undone', data: { ...report } });
    return report;
  };
  const restartArgs = adapter.resumeArgv(plan.sourceHandle, opts.agentArgs).slice(1);
  // What the plan read of the target checkout moments ago places the work ahead, and its refs'
  // commits that the source has too are what the pack need not carry. Read-only and independent
  // of the snapshot, so asked while the agent quits: the placement's intent and the session's
  // destinations as planned (each user checks the answer is for what it then does).
  const commonEarly = besides(plan.placementRead.then((read) => presentObjects(source.host, plan.snapshot.repoRoot, read.refs.all)));
  // The placement's intent, as planned (this run's snapshot goes in once it is made).
  const intentEarly = besides(placementIntent(target.host, plan.placement));
  const plannedRoot = plan.sessionPlacement.configRoot;
  const earlyLook = besides(lookAtDestinations(target.host, plannedRoot, plan.unit.map((e) => destinationUnder(plannedRoot, e.dest))).catch(() => null));
  // Filled in as soon as known, so a failure's plan shows it too.
  void besides(plan.targetIntegrationAsked.then((state) => (plan.targetIntegration ??= state)));
  // What the source's agent trusts of herdr's hook, asked while it quits (read-only, never fails).
  const hookTrust = adapter.hookTrust;
  const sourceHooks = hookTrust ? besides(hookTrust.look(source.host, plan.sourceCtx, plan.cwd)) : null;
  // The target's too, when herdr's integration there is current (not reinstalled below), in its
  // home: the target cwd may not exist yet, and only the user's own hooks count.
  const targetHooksEarly = hookTrust
    ? besides(plan.targetIntegrationAsked.then((state) => (state?.status === 'current' ? hookTrust.look(target.host, plan.targetCtx, plan.targetCtx.home) : null)).catch(() => null))
    : null;
  const targetState = hostStateDir(target.info);
  const markerFile = markerPath(targetState, plan.id);
  let markerWritten: Promise<unknown> | null = null;
  const targetRepo = plan.placement.repo;
  // Send the commits and place them: a snapshot's HEAD and work, on the target.
  const sendAndPlace = async (s: Snapshot, how: { read?: Promise<PlacementReads>; replacing?: PlacementRecord }): Promise<Moved> => {
    const moved = await step('transfer', `sending commits to ${target.host.label}`, async () => {
      await markerWritten;
      record({ kind: 'refs', targetRepo, id: plan.id });
      return transfer({ source: source.host, sourceRepo: s.repoRoot, target: target.host, targetRepo, id: plan.id, head: s.head, wip: s.snapshot, timeoutMs: opts.timeoutS * 1000, commonTips: commonEarly });
    });
    const placement = await step('place', `placing ${s.branch ?? 'the work'} on ${target.host.label}`, async () => {
      if (how.replacing) {
        // What was placed ahead of the quit is not this work: undone first, exactly.
        const undo = await undoPlacement(target.host, how.replacing);
        if (undo.errors.length > 0) throw new HandoffError('place_failed', `Could not undo the placement made while the agent quit in ${how.replacing.worktree} on ${target.host.label}: ${undo.errors.map((e) => e.message).join('; ')}`);
        record({ kind: 'undone', what: 'placement' });
      }
      // The plan's placement with this snapshot, journaled before place changes anything.
      const rec = await place({
        target: target.host,
        targetRepo,
        id: plan.id,
        head: s.head,
        wip: s.snapshot,
        sourceBranch: s.branch,
        newBranch: plan.placement.branch !== s.branch || opts.newBranch,
        sessionId: plan.session.id,
        changedFiles: s.changedFiles,
        ...(how.read ? { read: how.read } : {}),
        commitsOn: { host: source.host, repo: s.repoRoot },
        beforeChanges: async (p) => {
          // The intent asked early is for the placement planned; another one is asked now.
          const early = await intentEarly;
          const planned = early.repo === p.repo && early.branch === p.branch && early.mode === p.mode && early.worktree === p.worktree && early.branchTip === p.branchTip;
          record({ ...(planned ? early : await placementIntent(target.host, p)), head: s.head, wip: s.snapshot });
        },
      });
      record({ kind: 'placement', record: rec });
      return rec;
    });
    return { moved, placement };
  };
  // The plan's snapshot is sent and placed while the agent quits (a quitting agent seldom changes
  // its files). The snapshot taken after the quit decides: the same work keeps that placement;
  // other work has it undone and is sent and placed instead.
  const ahead: { moving?: Promise<Moved> } = {};
  const quit = await step('quit', `quitting the ${plan.kind} agent`, async () => {
    // Recorded before the keys go out: a controller killed mid-quit leaves a journal from which
    // `recover` restarts the agent (or clears the typed quit text) instead of "nothing changed".
    record({ kind: 'quit', pane: agent.pane_id, name: agent.name ?? null, agentKind: adapter.herdrKind, restartArgs });
    // The incoming marker (the target may hold something of this handoff from the transfer on)
    // is written while the agent quits; the transfer waits for it.
    record({ kind: 'marker', path: markerFile });
    markerWritten = besides(writeMarker(target.host, targetState, {
      id: plan.id,
      controller: os.hostname(),
      pid: process.pid,
      // Read on the target, where the controller's ssh aliases mean nothing: the addresses.
      from: source.host.address,
      to: target.host.address,
      agent: agent.name ?? agent.pane_id,
      kind: plan.kind,
      started: new Date().toISOString(),
      repo: plan.placement.repo,
      branch: plan.placement.branch,
      worktree: plan.placement.worktree,
    }));
    // Placed from what the plan read of the target (for the branch it planned with).
    ahead.moving = besides(sendAndPlace(plan.snapshot, { read: plan.placementRead }));
    return quitAgent(source.herdr, agent.pane_id, plan.kind, adapter.quit, adapter.classifyScreen, { timeoutMs: opts.timeoutS * 1000 });
  }).catch(async (err: unknown) => {
    // The agent did not quit (it still runs): what went ahead to the target is undone, and the
    // marker goes again. Nothing else was changed.
    const report = await undoAll(false);
    if (report.errors.length > 0 && err instanceof HandoffError) throw new HandoffFailed(err, 'quit', report);
    throw err;
  });

  try {
    // The session copy needs only where the work lands on the target, which the plan knows: it
    // starts as soon as the agent is gone (nothing writes its transcript any more), beside the
    // snapshot (and the placement, if that is still going). Should the work land in another
    // worktree (the target or the branch changed since the plan), the copy is undone and made
    // again for that one.
    const copySession = (worktree: string, look: Promise<DestinationLook | null>) =>
      step('session', `copying the ${plan.kind} session`, async () => {
        // The marker goes first: from here on the target may hold something of this handoff.
        await markerWritten;
        const sessionPlacement = adapter.placement(plan.session, { ...plan.targetCtx, cwd: cwdIn(worktree, plan.snapshot.relativeCwd) });
        // The unit as the quit left it (sizes and times are final now).
        const unit = await adapter.unit(source.host, plan.session, sessionPlacement);
        // One look at the destinations serves the intent and the copy (the early one when it is for these).
        const root = sessionPlacement.configRoot;
        const dests = unit.map((e) => destinationUnder(root, e.dest));
        const early = await look;
        const looked = early && early.root === root && early.dests.join('\0') === dests.join('\0') ? Promise.resolve(early) : lookAtDestinations(target.host, root, dests);
        looked.catch(() => undefined);
        record(await sessionIntent(looked, unit, sessionCopyTag(plan.id)));
        // The repository's spellings are the plan's (the snapshot below is of the same checkout and cwd).
        const sourceState = hostStateDir(source.info);
        const out = await copySessionUnit({ plan, sides, unit, placement: sessionPlacement, snapshot: plan.snapshot, targetWorktree: worktree, looked, ledgerDir: ledgerDir(targetState), left: plan.targetLeft, arrivalsDir: arrivalsDir(sourceState), overwrite: opts.overwrite });
        record({ kind: 'session_copy', record: out });
        // What left the source, recorded there: when the session comes back, a copy still as it
        // left is ours to replace (agents that rewrite files in place). What arrived, recorded on
        // the target: when it leaves again, what it still holds of that need not cross.
        const at = new Date().toISOString();
        await Promise.all([
          recordLeft(source.host, ledgerDir(sourceState), out.files.flatMap((f) => (f.source ? [{ ...f.source, handoff: plan.id, to: target.host.address, at }] : []))),
          recordArrivals(target.host, arrivalsDir(targetState), out.files.flatMap((f) => (f.content ? [{ path: f.path, ...f.content, handoff: plan.id }] : []))),
        ]);
        return { out, sessionPlacement };
      });
    const plannedWorktree = plan.placement.worktree;
    const copying = besides(copySession(plannedWorktree, earlyLook));
    const snap = await step('snapshot', 'snapshotting uncommitted changes', async () => {
      const s = await snapshotAgain(source.host, plan.cwd, plan.snapshot);
      record({ kind: 'snapshot', head: s.head, wip: s.snapshot, fingerprint: s.fingerprint, repo: s.repoRoot });
      return s;
    });
    let { moved, placement } = await (ahead.moving as Promise<Moved>);
    if (!sameWork(snap, plan.snapshot)) ({ moved, placement } = await sendAndPlace(snap, { replacing: placement }));
    let { out: copied, sessionPlacement } = await copying;
    if (placement.worktree !== plannedWorktree) {
      await undoCopy(target.host, copied);
      record({ kind: 'undone', what: 'session_copy' });
      ({ out: copied, sessionPlacement } = await copySession(placement.worktree, Promise.resolve(null)));
    }
    const targetCwd = cwdIn(placement.worktree, snap.relativeCwd);
    // The target's files are checked while the agent starts there (the check reads git and the
    // session files only); its answer is awaited by the verify step, after the start.
    const filesChecked = besides(checkTargetFiles(plan, sides, snap, placement.worktree, copied));
    // Built while the agent starts on the target, used at the end: the stash commit costs a dozen
    // local git runs that would otherwise come after the target is verified.
    const preparedStash = opts.keepSourceChanges ? undefined : besides(prepareStash(source.host, snap, plan.id, target.host.label));
    const integrationInstalled = await step('integration', 'checking the herdr integration on the target', async () => {
      // Asked while the agent quit (see Plan.targetIntegration); the result's plan shows it.
      plan.targetIntegration ??= await plan.targetIntegrationAsked;
      if (plan.targetIntegration?.status === 'current') return false;
      await target.herdr.integrationInstall(adapter.integration);
      record({ kind: 'integration', target: adapter.integration });
      return true;
    });
    // After our install, herdr's new hook would wait for review in the agent: its trust is
    // carried when the source trusts the very same hook.
    const hookTrusted =
      hookTrust && sourceHooks
        ? await step('hook_trust', `checking the trust of herdr's hook on ${target.host.label}`, async () =>
            hookTrust.carry({
              target: target.host,
              ctx: plan.targetCtx,
              cwd: targetCwd,
              source: await sourceHooks,
              early: integrationInstalled ? null : targetHooksEarly,
              sourceLabel: source.host.label,
              tag: sessionCopyTag(plan.id),
              allowed: opts.trust,
              journal: (w) => record({ kind: 'hook_trust', ...w }),
            }),
          )
        : null;
    const startedMs = Date.now();
    const started = await step('start', `starting ${plan.kind} on ${target.host.label}`, async () => {
      const taken = new Set((await target.herdr.agentList()).map((a) => a.name).filter((n): n is string => !!n));
      const repoName = placement.repo.split('/').pop() ?? 'repo';
      const preferred = opts.name ?? agent.name ?? `${repoName}-${plan.kind}`;
      // The source agent still holds its name on the same herdr (--here): pick another.
      const name = uniqueAgentName(toAgentName(preferred), taken);
      const worktreeName = placement.worktree.split('/').pop() ?? repoName;
      return startAgent(target.herdr, {
        cwd: targetCwd,
        label: `${worktreeName} (${plan.kind})`,
        focus: opts.focus,
        name,
        kind: adapter.herdrKind,
        args: adapter.resumeArgv(sessionPlacement.handle, opts.agentArgs).slice(1),
        trust: opts.trust,
        classify: adapter.classifyScreen,
        timeoutMs: Math.max(30_000, opts.timeoutS * 1000),
        onWorkspace: (workspace, pane) => record({ kind: 'workspace', workspace, pane }),
      });
    });
    const verified = await step('verify', 'verifying the target', async () => verify(plan, sides, started, filesChecked));
    let backupsKept: string[] = [];
    const stash = await step('stash', 'stashing the changes at the source', async () => {
      const [s] = await Promise.all([
        stashSourceChanges({ host: source.host, snapshot: snap, id: plan.id, targetLabel: target.host.label, keepSourceChanges: opts.keepSourceChanges, ...(preparedStash ? { prepared: preparedStash } : {}) }),
        // The quit left the pane at its shell; say whether it still is, alongside the stash.
        paneAtShell(source.herdr, agent.pane_id)
          .catch(() => false)
          .then((atShell) => (sourceAtShell = atShell)),
        // The target is verified: it no longer needs the marker (it only points `recover` there
        // to this machine, whose journal finishes the stash should this process die now).
        target.host.remove(markerFile).catch(() => undefined),
        // Verified: the backups of files replaced as they were left go; forced ones stay.
        discardBackups(target.host, copied).then((kept) => (backupsKept = kept)),
        // The target knows from now on which session this agent resumed (see started-agents.ts).
        recordStarted(target.host, startedDir(targetState), {
          pane: started.pane,
          workspace: started.workspace,
          name: started.name,
          kind: plan.kind,
          handle: handleOf(plan.kind, sessionPlacement.handle),
          cwd: targetCwd,
          startedMs,
          handoff: plan.id,
        }).catch(() => undefined),
      ]);
      record({ kind: 'stash', stashed: s.stashed, stash: s.stash });
      return s;
    });
    return {
      quit,
      snapshot: snap,
      transfer: moved,
      placementWorktree: placement.worktree,
      createdWorktree: placement.actions.some((a) => a.kind === 'worktree-added'),
      branch: placement.branch,
      sessionFiles: copied.files.map((f) => f.path),
      sessionBackups: backupsKept,
      integrationInstalled,
      hookTrust: hookTrusted,
      start: started,
      stash,
      verified,
      sourceAtShell,
    };
  } catch (thrown) {
    // Side by side steps: the first failure is the one to report.
    const err = steps.firstFailure?.err ?? thrown;
    const current = steps.firstFailure?.step ?? steps.current;
    const cause = err instanceof HandoffError ? err : new HandoffError('internal', err instanceof Error ? err.message : String(err));
    journal.failed(current, { code: cause.code, error: cause.message });
    throw new HandoffFailed(cause, current, await undoAll(true));
  }
}

/** Waits for every promise to settle, or for `ms`, whichever comes first (the timer never holds the process). */
async function settledWithin(promises: Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([Promise.allSettled(promises), timeUp]);
  clearTimeout(timer);
}

/** The temp-name tag copySessionUnit gives the session copy (src/handoff/session-copy.ts). */
export function sessionCopyTag(id: string): string {
  return id.slice(-8);
}

export function isHerdrCode(err: unknown, code: string): boolean {
  return err instanceof HerdrError && err.herdrCode === code;
}
