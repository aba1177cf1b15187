// Execute the plans of one checkout's agents (a single send is a checkout of one): wait for them
// to be idle; quit them, with the lead plan's snapshot sent and placed on the target meanwhile;
// snapshot again (other work is sent and placed instead), while each agent's pane is made where
// the work was placed; then each agent on its own, side by side: its session copy, its start on
// the target and the checks; last the stash at the source, once, when every agent of the
// checkout moved. Every step is journaled before it acts and after it completes, in the journal
// of each agent it concerns; anything that changes the target is recorded so a failure (or
// `recover`) can undo it exactly. Each agent fails alone: it is rolled back and restarted at the
// source, the others stay moved; the work's move is undone only when no agent of the checkout
// stays moved.
import os from 'node:os';
import { HandoffError } from '../errors.js';
import { sameWork, snapshotAgain, type Snapshot } from '../git/snapshot.js';
import { prepareStash, stashSourceChanges, type StashResult } from '../git/stash.js';
import { presentObjects, type TransferResult } from '../git/transfer.js';
import type { Progress } from '../progress.js';
import { placementIntent } from './intents.js';
import { hostStateDir, markerPath, markerWrite } from './marker.js';
import type { Journal } from './journal.js';
import type { Plan } from './plan.js';
import { paneAtShell, quitAgent, type QuitResult } from './quit.js';
import { StepRunner } from './steps.js';
import { HandoffFailed, rollback, type RollbackReport } from './rollback.js';
import type { Sides } from './sides.js';
import type { HookTrustOutcome } from '../../adapters/hook-trust.js';
import type { StartResult } from './start.js';
import { allJournals, Member, ownRecords, sharedRecords } from './member.js';
import { copySession, earlyReads, finishing, integrationInstaller, seatAgent, sessionFor, startOnTarget, TargetDesk, unseat, waitIdle, type Seat, type SessionCopied, type Started } from './member-steps.js';
import { placeWork, sendAndPlace, sendWork, type Moved } from './send-and-place.js';

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

/** One agent's end: moved, or not (rolled back and restarted at the source, or never quit). */
export type MemberOutcome = { ok: true; done: ExecuteResult } | { ok: false; error: HandoffError };

/** A single agent: its outcome, or its failure thrown. */
export async function execute(plan: Plan, sides: Sides, journal: Journal, progress: Progress, signal: AbortSignal): Promise<ExecuteResult> {
  const [out] = await executeCheckout([{ plan, journal }], sides, progress, signal);
  if (!out!.ok) throw out!.error;
  return out!.done;
}

/** What is settled about an agent once it has quit. */
interface Quitted {
  member: Member;
  quit: QuitResult;
  copying: Promise<SessionCopied>;
}

/** What the checkouts of one batch share on the target: herdr's integrations (installed once per kind) and its desk. */
export interface BatchTarget {
  integration: (m: Member) => Promise<boolean>;
  desk: TargetDesk;
}

export function batchTarget(sides: Sides): BatchTarget {
  return { integration: integrationInstaller(sides), desk: new TargetDesk() };
}

export async function executeCheckout(plans: { plan: Plan; journal: Journal }[], sides: Sides, progress: Progress, signal: AbortSignal, batch: BatchTarget = batchTarget(sides)): Promise<MemberOutcome[]> {
  const members = plans.map((p) => new Member(p.plan, p.journal, progress, signal, plans.length > 1));
  const outcomes = new Map<Member, MemberOutcome>();
  const lead = members[0]!.plan;
  const alone = members.length === 1;
  const { source, target } = sides;
  const opts = lead.opts;
  // The work's move: its steps begin and end in every journal, its records are in each.
  const shared = new StepRunner(allJournals(members), progress, signal);
  const recordShared = (rec: Parameters<Member['record']>[0]) => members.forEach((m) => m.record(rec));
  recordShared({ kind: 'controller', host: os.hostname(), pid: process.pid });
  if (!alone) recordShared({ kind: 'group', lead: lead.id, members: members.map((m) => m.plan.id) });

  // Before the quit nothing has changed: a failure here needs no rollback.
  const waited = await Promise.allSettled(members.map((m) => waitIdle(m, sides)));
  let live = members.filter((m, i) => {
    const w = waited[i]!;
    if (w.status === 'rejected') outcomes.set(m, { ok: false, error: asHandoffError(w.reason) });
    return w.status === 'fulfilled';
  });
  if (live.length === 0) return members.map((m) => outcomes.get(m)!);

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
  const undo = async (m: Member, records: Parameters<typeof rollback>[1], restart: boolean): Promise<RollbackReport> => {
    // Work that settles may start more beside it (the seats once the work is placed): that too.
    for (let seen = -1; seen !== aside.length; ) {
      seen = aside.length;
      await settledWithin([...aside], opts.timeoutS * 1000);
    }
    const report = await progress.step(m.says('rolling back'), () => rollback(sides, records, { restart }));
    m.journal.append({ type: 'undone', data: { ...report } });
    return report;
  };
  /** The agent's failure after its quit: its own part undone (all of it when alone), restarted at the source. */
  const failMember = async (m: Member, thrown: unknown): Promise<void> => {
    const err = m.steps.firstFailure?.err ?? shared.firstFailure?.err ?? thrown;
    const step = m.steps.firstFailure?.step ?? shared.firstFailure?.step ?? m.steps.current;
    const cause = asHandoffError(err);
    m.journal.failed(step, { code: cause.code, error: cause.message });
    outcomes.set(m, { ok: false, error: new HandoffFailed(cause, step, await undo(m, alone ? m.records : ownRecords(m.records), true)) });
  };

  const restartArgsOf = (plan: Plan) => plan.adapter.resumeArgv(plan.sourceHandle, plan.opts.agentArgs).slice(1);
  // What the plan read of the target checkout moments ago places the work ahead, and its refs'
  // commits that the source has too are what the pack need not carry. Read-only and independent
  // of the snapshot, so asked while the agents quit.
  const commonTips = besides(presentObjects(source.host, lead.snapshot.repoRoot, lead.placementRead.refs.all));
  const intentEarly = besides(placementIntent(target.host, lead.placement, lead.placementRead));
  const early = new Map(live.map((m) => [m, earlyReads(m, sides, besides)]));
  const targetState = hostStateDir(target.info);
  const markerFile = markerPath(targetState, lead.id);
  let markerWriting: Promise<unknown> | null = null;
  const markerWritten = () => markerWriting ?? Promise.resolve();
  const move = { plan: lead, sides, steps: shared, record: recordShared, markerWritten, commonTips, intentEarly };
  // The lead's snapshot is sent and placed while the agents quit (a quitting agent seldom changes
  // its files). The snapshot taken after the quits decides: the same work keeps that placement;
  // other work has it undone and is sent and placed instead.
  let ahead: Promise<Moved> | null = null;
  // Each agent's pane and name on the target, asked the moment the work is placed as planned (its
  // folder exists): while the agents quit, the snapshot is taken and the sessions copied. A
  // rollback waits for them (the pane is then recorded, and closed); an agent that did not quit
  // has its pane closed, and other work placed instead closes them all and seats the agents again.
  let failed = false;
  const quitting = new Map<Member, Promise<unknown>>();
  const seatAll = (who: readonly Member[], placed: Moved['placement'], names?: Map<Member, Seat>): Map<Member, Seat> =>
    new Map(
      who.map((m) => {
        const seat = seatAgent(m, sides, placed, batch.desk, quitting.get(m) ?? Promise.resolve(), names?.get(m)?.name);
        return [m, { pane: besides(seat.pane), name: besides(seat.name), screenBefore: besides(seat.screenBefore) }] as const;
      }),
    );
  let seatedAhead: Promise<Map<Member, Seat>> | null = null;
  const goAhead = (): Promise<Moved> => {
    if (!ahead) {
      ahead = sendAhead();
      const quitters = live;
      seatedAhead = besides(ahead.then((w) => (failed ? new Map<Member, Seat>() : seatAll(quitters, w.placement))));
    }
    return ahead;
  };
  /**
   * Close the panes made ahead for these agents (best effort: they did not quit, nothing else of
   * theirs changed). With none, nothing waits for the placement.
   */
  const closeSeats = async (who: readonly Member[]): Promise<void> => {
    if (who.length === 0) return;
    const seats = await seatedAhead?.catch(() => null);
    await Promise.all(
      who.map(async (m) => {
        const seat = seats?.get(m);
        if (seat) await unseat(m, sides, seat).catch(() => undefined);
      }),
    );
  };
  const sendAhead = (): Promise<Moved> => {
    // The incoming marker (the target may hold something of this handoff from the transfer on)
    // is written by the transfer's own program, before its pack and refs.
    recordShared({ kind: 'marker', path: markerFile });
    const marker = markerWrite(targetState, {
      id: lead.id,
      controller: os.hostname(),
      pid: process.pid,
      // Read on the target, where the controller's ssh aliases mean nothing: the addresses.
      from: source.host.address,
      to: target.host.address,
      agent: members.map((m) => m.label).join(', '),
      kind: lead.kind,
      started: new Date().toISOString(),
      repo: lead.placement.repo,
      branch: lead.placement.branch,
      worktree: lead.placement.worktree,
    });
    const sending = besides(sendWork(move, lead.snapshot, marker));
    markerWriting = sending;
    // Placed from what the plan read of the target (for the branch it planned with).
    return besides(placeWork(move, lead.snapshot, sending, { read: lead.placementRead }));
  };
  const quits = await Promise.allSettled(
    live.map((m) => {
      const quit = m.steps.run('quit', m.says(`quitting the ${m.plan.kind} agent`), async () => {
        const { plan } = m;
        // Recorded before the keys go out: a controller killed mid-quit leaves a journal from which
        // `recover` restarts the agent (or clears the typed quit text) instead of "nothing changed".
        m.record({ kind: 'quit', pane: plan.agent.pane_id, name: plan.agent.name ?? null, agentKind: plan.adapter.herdrKind, restartArgs: restartArgsOf(plan) });
        void goAhead();
        return quitAgent(source.herdr, plan.agent.pane_id, plan.kind, plan.adapter.quit, plan.adapter.classifyScreen, { timeoutMs: plan.opts.timeoutS * 1000 });
      });
      quitting.set(m, quit.catch(() => undefined));
      return quit;
    }),
  );
  // An agent that did not quit still runs: nothing of its own changed. When none quit, what went
  // ahead to the target is undone, and the marker goes again.
  const gone: Quitted[] = [];
  const stayed: { m: Member; err: unknown }[] = [];
  live.forEach((m, i) => {
    const q = quits[i]!;
    if (q.status === 'fulfilled') gone.push({ member: m, quit: q.value, copying: besides(copySession(m, sides, lead.placement.worktree, early.get(m)!.look, markerWritten)) });
    else stayed.push({ m, err: q.reason });
  });
  if (gone.length === 0) failed = true;
  await closeSeats(stayed.map((x) => x.m));
  if (gone.length === 0) {
    const report = await undo(members[0]!, sharedRecords(members[0]!.records), false);
    for (const { m, err } of stayed) outcomes.set(m, { ok: false, error: report.errors.length > 0 && err instanceof HandoffError ? new HandoffFailed(err, 'quit', report) : asHandoffError(err) });
    return members.map((m) => outcomes.get(m)!);
  }
  for (const { m, err } of stayed) outcomes.set(m, { ok: false, error: asHandoffError(err) });
  live = gone.map((g) => g.member);

  let snap: Snapshot;
  let work: Moved;
  let seats: Map<Member, Seat>;
  try {
    snap = await shared.run('snapshot', 'snapshotting uncommitted changes', async () => {
      const s = await snapshotAgain(source.host, lead.cwd, lead.snapshot);
      recordShared({ kind: 'snapshot', head: s.head, wip: s.snapshot, fingerprint: s.fingerprint, repo: s.repoRoot });
      return s;
    });
    work = await goAhead();
    seats = await seatedAhead!;
    if (!sameWork(snap, lead.snapshot)) {
      // Other work: its placement replaces the one made ahead, folder and all, so the panes opened
      // there close first and are opened again (under the names chosen) once it is placed.
      await Promise.all(live.map((m) => unseat(m, sides, seats.get(m)!)));
      work = await sendAndPlace(move, snap, { replacing: work.placement });
      seats = seatAll(live, work.placement, seats);
    }
  } catch (thrown) {
    await failCheckout(gone, thrown);
    return members.map((m) => outcomes.get(m)!);
  }
  const { placement } = work;
  // Built while the agents start on the target, used at the end: the stash commit costs a dozen
  // local git runs that would otherwise come after the target is verified. Begun once the
  // sessions are copied: those runs would hold up the copies, which the starts wait for.
  const copied = Promise.allSettled(gone.map((g) => g.copying));
  const preparedStash = opts.keepSourceChanges ? undefined : besides(copied.then(() => prepareStash(source.host, snap, lead.id, target.host.label)));
  const started = new Map<Member, { started: Started; session: SessionCopied; quit: QuitResult; atShell: Promise<boolean> }>();
  await Promise.all(
    gone.map(async ({ member: m, quit, copying }) => {
      try {
        // Each agent's cwd in the worktree: its own place in the repository.
        const session = await sessionFor(m, sides, copying, placement.worktree, markerWritten);
        const mine = { ...snap, relativeCwd: m.plan.snapshot.relativeCwd };
        // Whether the source pane is still at the shell the quit left it at: asked while the agent
        // starts there, not after (over ssh a look at herdr's socket may wait for its next read).
        const atShell = besides(paneAtShell(source.herdr, m.plan.agent.pane_id).catch(() => false));
        const s = await startOnTarget(m, sides, { snap: mine, worktree: placement.worktree, session, early: early.get(m)!, integration: batch.integration, seat: seats.get(m)! }, besides);
        // Written while the agent started; without it the agent does not count as moved (see copySession).
        await session.leftRecorded;
        started.set(m, { quit, session, started: s, atShell });
      } catch (thrown) {
        await failMember(m, thrown);
      }
    }),
  );
  const moved = live.filter((m) => started.has(m));
  if (moved.length === 0) {
    // No agent of the checkout stays moved: the work's move is undone too.
    if (!alone) await undo(members[0]!, sharedRecords(members[0]!.records), false);
    return members.map((m) => outcomes.get(m)!);
  }

  // The stash: once for the checkout, and only when every agent of it moved (one still here
  // works on those changes).
  const everyoneMoved = moved.length === members.length;
  let stash: StashResult;
  const backups = new Map<Member, string[]>();
  try {
    stash = await shared.run('stash', 'stashing the changes at the source', async () => {
      const [s] = await Promise.all([
        everyoneMoved
          ? stashSourceChanges({ host: source.host, snapshot: snap, id: lead.id, targetLabel: target.host.label, keepSourceChanges: opts.keepSourceChanges, ...(preparedStash ? { prepared: preparedStash } : {}) })
          : Promise.resolve(keptForThoseHere(members.length - moved.length)),
        // The target is verified: it no longer needs the marker (it only points `recover` there
        // to this machine, whose journal finishes the stash should this process die now).
        target.host.remove(markerFile).catch(() => undefined),
        ...moved.map((m) => finishing(m, started.get(m)!, sides, backups)),
      ]);
      recordShared({ kind: 'stash', stashed: s.stashed, stash: s.stash });
      return s;
    });
  } catch (thrown) {
    await failCheckout(
      gone.filter((g) => moved.includes(g.member)),
      thrown,
    );
    return members.map((m) => outcomes.get(m)!);
  }
  for (const m of moved) {
    const { quit, session, started: s, atShell } = started.get(m)!;
    outcomes.set(m, {
      ok: true,
      done: {
        quit,
        snapshot: { ...snap, relativeCwd: m.plan.snapshot.relativeCwd },
        transfer: work.moved,
        placementWorktree: placement.worktree,
        createdWorktree: placement.actions.some((a) => a.kind === 'worktree-added'),
        branch: placement.branch,
        sessionFiles: session.out.files.map((f) => f.path),
        sessionBackups: backups.get(m) ?? [],
        integrationInstalled: s.integrationInstalled,
        hookTrust: s.hookTrust,
        start: s.start,
        stash,
        verified: s.verified,
        sourceAtShell: await atShell,
      },
    });
  }
  return members.map((m) => outcomes.get(m)!);

  /** The work's move failed (snapshot, transfer, place, stash): every agent that quit goes back, and the move is undone. */
  async function failCheckout(quitted: Quitted[], thrown: unknown): Promise<void> {
    failed = true;
    await Promise.all(quitted.map(({ member }) => failMember(member, thrown)));
    if (!alone) await undo(members[0]!, sharedRecords(members[0]!.records), false);
  }
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

function asHandoffError(err: unknown): HandoffError {
  return err instanceof HandoffError ? err : new HandoffError('internal', err instanceof Error ? err.message : String(err));
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
