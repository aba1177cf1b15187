// The work's move, shared by every agent of a checkout: the commits (and the snapshot of the
// uncommitted changes) sent to the target, then placed there — journaled before each change.
import { HandoffError } from '../errors.js';
import { place, undoPlacement, type PlacementRecord } from '../git/place.js';
import type { PlacementReads } from '../git/placement-read.js';
import type { Snapshot } from '../git/snapshot.js';
import { transfer, type FirstFile, type TransferResult } from '../git/transfer.js';
import type { PlacementIntent } from './intents.js';
import { placementIntent } from './intents.js';
import type { Plan } from './plan.js';
import type { HandoffRecord } from './records.js';
import type { Sides } from './sides.js';
import type { StepRunner } from './steps.js';

/** The work on the target: what was sent, and where and how it was placed. */
export interface Moved {
  moved: TransferResult;
  placement: PlacementRecord;
}

export interface WorkMove {
  /** The lead agent's plan: its snapshot, placement and id name the move. */
  plan: Plan;
  sides: Sides;
  steps: StepRunner;
  /** Journaled in every journal of the checkout. */
  record: (rec: HandoffRecord) => void;
  /** Waited for before anything reaches the target (the incoming marker goes first), unless the transfer carries it. */
  markerWritten: () => Promise<unknown>;
  /** The target refs' commits the source has too (the pack need not carry them). */
  commonTips: Promise<string[]>;
  /** The placement's intent as planned, asked while the agents quit. */
  plannedIntent: Promise<PlacementIntent>;
}

/** Send a snapshot's HEAD and work to the target and place it there (undoing `replacing` first, exactly). */
export async function sendAndPlace(w: WorkMove, s: Snapshot, how: { read?: PlacementReads; replacing?: PlacementRecord }): Promise<Moved> {
  return placeWork(w, s, sendWork(w, s), how);
}

/**
 * Send a snapshot's HEAD and work to the target as refs/handoff/<id>/*. `marker`: the incoming
 * marker, written by the transfer's own program before anything else arrives (else it was written
 * before: waited for).
 */
export async function sendWork(w: WorkMove, s: Snapshot, marker?: FirstFile): Promise<TransferResult> {
  const { plan, sides, steps } = w;
  const { source, target } = sides;
  const targetRepo = plan.placement.repo;
  return steps.run('transfer', `sending commits to ${target.host.label}`, async () => {
    if (!marker) await w.markerWritten();
    w.record({ kind: 'refs', targetRepo, id: plan.id });
    return transfer({ source: source.host, sourceRepo: s.repoRoot, target: target.host, targetRepo, id: plan.id, head: s.head, wip: s.snapshot, timeoutMs: plan.opts.timeoutS * 1000, commonTips: w.commonTips, ...(marker ? { firstFile: marker } : {}) });
  });
}

/** Place the work `sending` sends (undoing `replacing` first, exactly), journaled before each change. */
export async function placeWork(w: WorkMove, s: Snapshot, sending: Promise<TransferResult>, how: { read?: PlacementReads; replacing?: PlacementRecord }): Promise<Moved> {
  const { plan, sides, steps } = w;
  const { source, target } = sides;
  const targetRepo = plan.placement.repo;
  const opts = plan.opts;
  const moved = await sending;
  const placement = await steps.run('place', `placing ${s.branch ?? 'the work'} on ${target.host.label}`, async () => {
    if (how.replacing) {
      // What was placed ahead of the quit is not this work: undone first, exactly.
      const undo = await undoPlacement(target.host, how.replacing);
      if (undo.errors.length > 0) throw new HandoffError('place_failed', `Could not undo the placement made while the agent quit in ${how.replacing.worktree} on ${target.host.label}: ${undo.errors.map((e) => e.message).join('; ')}`);
      w.record({ kind: 'undone', what: 'placement' });
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
      ...(how.read ? { read: Promise.resolve(how.read) } : {}),
      commitsOn: { host: source.host, repo: s.repoRoot },
      beforeChanges: async (p) => {
        // The intent asked while the agents quit is for the placement planned; another one is asked now.
        const asked = await w.plannedIntent;
        const planned = asked.repo === p.repo && asked.branch === p.branch && asked.mode === p.mode && asked.worktree === p.worktree && asked.branchTip === p.branchTip;
        w.record({ ...(planned ? asked : await placementIntent(target.host, p)), head: s.head, wip: s.snapshot });
      },
    });
    w.record({ kind: 'placement', record: rec });
    return rec;
  });
  return { moved, placement };
}
