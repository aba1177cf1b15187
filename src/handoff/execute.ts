// Execute the plans of one checkout's agents (a single send is a checkout of one), in order:
// 1. each agent idle, or waited for;
// 2. the quits, and beside them one step (beside-quit.ts): the work as planned sent and placed on
//    the target, each agent's pane opened there; each agent that quit has its session copied;
// 3. the snapshot again: the same work keeps that placement, other work replaces it;
// 4. each agent on its own, side by side: its start on the target and the checks;
// 5. the stash at the source, once, when every agent of the checkout moved.
// Every step is journaled before it acts and after it completes, in the journal of each agent it
// concerns; anything that changes the target is recorded so a failure (or `recover`) can undo it
// exactly. Each agent fails alone (checkout-run.ts): it is rolled back and restarted at the source,
// the others stay moved; the work's move is undone only when no agent of the checkout stays moved.
import { HandoffError } from '../errors.js';
import { snapshotAgain, type Snapshot } from '../git/snapshot.js';
import { prepareStash, stashSourceChanges, type StashResult } from '../git/stash.js';
import type { TransferResult } from '../git/transfer.js';
import type { Progress } from '../progress.js';
import type { HookTrustOutcome } from '../../adapters/hook-trust.js';
import { BesideTheQuit } from './beside-quit.js';
import { CheckoutRun, type MemberOutcome } from './checkout-run.js';
import type { Journal } from './journal.js';
import type { Member } from './member.js';
import { copySession, finishing, integrationInstaller, quitStep, sessionFor, startOnTarget, TargetDesk, waitIdle, type Seat, type SessionCopied, type Started } from './member-steps.js';
import type { Plan } from './plan.js';
import { paneAtShell, type QuitResult } from './quit.js';
import { HandoffFailed } from './rollback.js';
import type { Moved } from './send-and-place.js';
import type { Sides } from './sides.js';
import type { StartResult } from './start.js';

export type { MemberOutcome } from './checkout-run.js';

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
  /** The source pane was at its shell while the agent started on the target (herdr asked then). */
  sourceAtShell: boolean;
}

/** A single agent: its outcome, or its failure thrown. */
export async function execute(plan: Plan, sides: Sides, journal: Journal, progress: Progress, signal: AbortSignal): Promise<ExecuteResult> {
  const [out] = await executeCheckout([{ plan, journal }], sides, progress, signal);
  if (!out!.ok) throw out!.error;
  return out!.done;
}

/** What the checkouts of one batch share on the target: herdr's integrations (installed once per kind) and its desk. */
export interface BatchTarget {
  integration: (m: Member) => Promise<boolean>;
  desk: TargetDesk;
}

export function batchTarget(sides: Sides): BatchTarget {
  return { integration: integrationInstaller(sides), desk: new TargetDesk() };
}

/** An agent that quit: how, and its session being copied. */
interface Quitted {
  member: Member;
  quit: QuitResult;
  copying: Promise<SessionCopied>;
}

/** An agent started on the target and checked there. */
interface Arrived {
  quit: QuitResult;
  session: SessionCopied;
  started: Started;
  /** Whether the source pane was at its shell while the agent started on the target. */
  atShell: Promise<boolean>;
}

export async function executeCheckout(plans: { plan: Plan; journal: Journal }[], sides: Sides, progress: Progress, signal: AbortSignal, batch: BatchTarget = batchTarget(sides)): Promise<MemberOutcome[]> {
  const run = new CheckoutRun(plans, sides, progress, signal);
  const { lead, side } = run;
  const { source, target } = sides;

  // 1. Each agent idle. Before the quit nothing has changed: a failure here needs no rollback.
  const idle = await idleAgents(run, sides);
  if (idle.length === 0) return run.outcomes();

  // 2. The quits, and beside them the work as planned moved to the target. An agent that did not
  // quit still runs: nothing of its own changed, and the pane opened for it is closed. Nothing
  // writes the session of one that quit any more: it is copied at once.
  const quits = new Map<Member, Promise<QuitResult>>();
  const beside = new BesideTheQuit(run, sides, idle, batch.desk, (m) => quits.get(m)!.catch(() => undefined));
  for (const m of idle) quits.set(m, quitStep(m, sides, () => beside.begin()));
  const settled = await Promise.allSettled(idle.map((m) => quits.get(m)!));
  const gone: Quitted[] = [];
  const stayed: { member: Member; err: unknown }[] = [];
  idle.forEach((member, i) => {
    const q = settled[i]!;
    if (q.status === 'rejected') stayed.push({ member, err: q.reason });
    else gone.push({ member, quit: q.value, copying: side.add(copySession(member, sides, lead.placement.worktree, beside.readsOf(member).look, beside.move.markerWritten)) });
  });
  if (gone.length === 0) beside.drop();
  await beside.closeSeats(stayed.map((s) => s.member));
  if (gone.length === 0) {
    // None quit: what went to the target is undone, and the marker goes again.
    const report = await run.undoWorkMove();
    for (const { member, err } of stayed) run.notMoved(member, report.errors.length > 0 && err instanceof HandoffError ? new HandoffFailed(err, 'quit', report) : err);
    return run.outcomes();
  }
  for (const { member, err } of stayed) run.notMoved(member, err);
  const movers = gone.map((g) => g.member);

  // 3. The snapshot taken now decides what the target holds (see BesideTheQuit.workFor).
  let snap: Snapshot;
  let work: Moved;
  let seats: Map<Member, Seat>;
  try {
    snap = await snapshotAfterQuits(run, sides);
    ({ work, seats } = await beside.workFor(snap, movers));
  } catch (thrown) {
    beside.drop();
    await run.failAll(movers, thrown);
    return run.outcomes();
  }
  const { placement } = work;

  // 4. Each agent started on the target where the work landed, and checked there. The stash
  // commit is built meanwhile (a dozen git runs that would otherwise follow the checks), begun
  // once the sessions are copied: those runs would hold up the copies, which the starts wait for.
  const copied = Promise.allSettled(gone.map((g) => g.copying));
  const preparedStash = lead.opts.keepSourceChanges ? undefined : side.add(copied.then(() => prepareStash(source.host, snap, lead.id, target.host.label)));
  const arrived = new Map<Member, Arrived>();
  await Promise.all(
    gone.map(async ({ member: m, quit, copying }) => {
      try {
        const session = await sessionFor(m, sides, copying, placement.worktree, beside.move.markerWritten);
        // Each agent's cwd in the worktree: its own place in the repository.
        const mine = { ...snap, relativeCwd: m.plan.snapshot.relativeCwd };
        // Whether the source pane is still at the shell the quit left it at: asked while the agent
        // starts there, not after (over ssh a look at herdr's socket may wait for its next read).
        const atShell = side.add(paneAtShell(source.herdr, m.plan.agent.pane_id).catch(() => false));
        const started = await startOnTarget(m, sides, { snap: mine, worktree: placement.worktree, session, reads: beside.readsOf(m), integration: batch.integration, seat: seats.get(m)! }, side);
        // Written while the agent started; without it the agent does not count as moved (see copySession).
        await session.leftRecorded;
        arrived.set(m, { quit, session, started, atShell });
      } catch (thrown) {
        await run.failMember(m, thrown);
      }
    }),
  );
  const moved = movers.filter((m) => arrived.has(m));
  if (moved.length === 0) {
    // No agent of the checkout stays moved: the work's move is undone too.
    if (!run.alone) await run.undoWorkMove();
    return run.outcomes();
  }

  // 5. The stash: once for the checkout, and only when every agent of it moved (one still here
  // works on those changes). Beside it, what follows each agent's checks, and the marker removed:
  // the target is verified, and the marker only points `recover` there to this machine, whose
  // journal finishes the stash should this process die now.
  const backups = new Map<Member, string[]>();
  let stash: StashResult;
  try {
    stash = await run.shared.run('stash', 'stashing the changes at the source', async () => {
      const [s] = await Promise.all([
        moved.length === run.members.length
          ? stashSourceChanges({ host: source.host, snapshot: snap, id: lead.id, targetLabel: target.host.label, keepSourceChanges: lead.opts.keepSourceChanges, ...(preparedStash ? { prepared: preparedStash } : {}) })
          : Promise.resolve(keptForThoseHere(run.members.length - moved.length)),
        target.host.remove(beside.markerFile).catch(() => undefined),
        ...moved.map((m) => finishing(m, arrived.get(m)!, sides, backups)),
      ]);
      run.recordShared({ kind: 'stash', stashed: s.stashed, stash: s.stash });
      return s;
    });
  } catch (thrown) {
    await run.failAll(moved, thrown);
    return run.outcomes();
  }
  for (const m of moved) {
    const { quit, session, started, atShell } = arrived.get(m)!;
    run.moved(m, {
      quit,
      snapshot: { ...snap, relativeCwd: m.plan.snapshot.relativeCwd },
      transfer: work.moved,
      placementWorktree: placement.worktree,
      createdWorktree: placement.actions.some((a) => a.kind === 'worktree-added'),
      branch: placement.branch,
      sessionFiles: session.out.files.map((f) => f.path),
      sessionBackups: backups.get(m) ?? [],
      integrationInstalled: started.integrationInstalled,
      hookTrust: started.hookTrust,
      start: started.start,
      stash,
      verified: started.verified,
      sourceAtShell: await atShell,
    });
  }
  return run.outcomes();
}

/** The agents that are idle (or were waited for); the others are refused, nothing of theirs changed. */
async function idleAgents(run: CheckoutRun, sides: Sides): Promise<Member[]> {
  const waited = await Promise.allSettled(run.members.map((m) => waitIdle(m, sides)));
  return run.members.filter((m, i) => {
    const w = waited[i]!;
    if (w.status === 'rejected') run.notMoved(m, w.reason);
    return w.status === 'fulfilled';
  });
}

/** The uncommitted changes as the quits left them, journaled for every agent of the checkout. */
function snapshotAfterQuits(run: CheckoutRun, sides: Sides): Promise<Snapshot> {
  return run.shared.run('snapshot', 'snapshotting uncommitted changes', async () => {
    const s = await snapshotAgain(sides.source.host, run.lead.cwd, run.lead.snapshot);
    run.recordShared({ kind: 'snapshot', head: s.head, wip: s.snapshot, fingerprint: s.fingerprint, repo: s.repoRoot });
    return s;
  });
}

/** The stash result when agents of the checkout are still here, working on its changes. */
function keptForThoseHere(count: number): StashResult {
  return {
    stashed: false,
    stash: null,
    message: null,
    reason: 'keep_requested',
    changedAfterSnapshot: [],
    note: `The uncommitted changes were left in the source checkout: ${count === 1 ? 'an agent of it did' : `${count} agents of it did`} not move and work on them there.`,
  };
}
