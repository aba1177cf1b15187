// Deciding a placement: which branch the work lands on, where — the worktree the branch is checked
// out in (fast-forwarded), else a new worktree `<main>.worktrees/<slug>` — and every refusal with
// its code and fix. Pure: the facts come in as plain data (placement-facts.ts asks them), a plan
// or a HandoffError comes out; no promise, no host.
//
// Every placement that is not refused puts the worktree at exactly the source's HEAD — a clean
// checkout of it, or a fast-forward of a clean one — and the snapshot is a child of that HEAD.
// Applying a child onto a clean checkout of its own parent can only fail because of files git
// does not track there (untracked or ignored files, folders, case-insensitive twins) where the
// fast-forward or the snapshot adds a path: the facts name those, and they are refused here.
import { HandoffError } from '../errors.js';
import { handoffBranchName } from './branch-name.js';
import type { BranchRefs } from './placement-read.js';
import type { ChangedFile } from './snapshot.js';
import { branchTaken, firstFree, firstWorktreePath, isInside, worktreeHome, type Worktree } from './worktrees.js';

/** What is asked: the source's side of a placement. */
export interface PlacementWish {
  id: string;
  /** Any checkout of the repository on the target (the discovered one). */
  targetRepo: string;
  /** The target as messages name it. */
  targetLabel: string;
  /** The source's HEAD commit and snapshot commit (null: nothing uncommitted). */
  head: string;
  wip: string | null;
  /** The source's branch, or null for a detached HEAD. */
  sourceBranch: string | null;
  /**
   * true → a new branch `handoff/<first 8 of the session id>` (see branch-name.ts); a string →
   * a new branch of that name; suffixed -2, -3… if taken.
   */
  newBranch?: boolean | string;
  /** The session that moves: names a new branch (the handoff id does when it is not given). */
  sessionId?: string;
}

/** The state of the worktree the branch is checked out in. */
export interface CheckedOutState {
  /** Its folder is there. */
  exists: boolean;
  /** Tracked files with staged or unstaged changes. */
  dirty: string[];
  /** Untracked or ignored paths where the fast-forward or the snapshot adds a path. */
  inTheWay: string[];
}

/** Everything the decision reads; each fact is asked only when the decision will look at it. */
export interface PlacementFacts {
  /** The target's worktrees, main checkout first (git's order). */
  worktrees: Worktree[];
  refs: Pick<BranchRefs, 'branches' | 'tips' | 'origin'>;
  /** What the snapshot changes relative to head ([] without a snapshot). */
  snapshotChanges: ChangedFile[];
  /** Whether `--new-branch NAME` is a valid branch name (null: no name given). */
  newBranchNameValid: boolean | null;
  /** Whether the branch's commit on the target is one of HEAD's ancestors the source has (null: not asked — no commit there, or HEAD itself). */
  tipIsAncestor: boolean | null;
  /** The branch's worktree (null: not asked — not checked out, gone, or the branches diverged). */
  checkedOut: CheckedOutState | null;
  /** Folders for a new worktree found taken on the target, asked in order until one was free. */
  occupiedPaths: string[];
  /** Whether the main checkout's `<main>.worktrees` exists (else undo removes it when empty). */
  worktreeHomeExists: boolean;
}

export interface PlacementPlan {
  id: string;
  /** Main checkout of the target repository. */
  repo: string;
  branch: string;
  /** 'checked-out': the branch's existing worktree; 'new-worktree': a worktree added beside the repo. */
  mode: 'checked-out' | 'new-worktree';
  /** Folder the agent will work in. */
  worktree: string;
  /** The branch's commit on the target before placement; null when the branch is created. */
  branchTip: string | null;
  /** The branch moves from branchTip to head. */
  fastForward: boolean;
  head: string;
  wip: string | null;
  /** What the snapshot changes relative to head. */
  changedFiles: ChangedFile[];
  /** The target had refs/remotes/origin/<branch> when it was read (the branch may then track it). */
  originHasBranch: boolean;
  /** new-worktree: whether `<repo>.worktrees` was there when the target was read (else undo removes it when empty). */
  worktreeHomeExists?: boolean;
}

/** The first half of the decision, which says what else to ask: the branch, its commit there, its worktree. */
export interface BranchChoice {
  main: Worktree;
  branch: string;
  /** The branch's commit on the target (null: no such branch yet). */
  branchTip: string | null;
  /** The worktree it is checked out in, if any. */
  checkedOut: Worktree | null;
}

/** The work goes on a new branch: asked for, or the source's HEAD is detached. */
export function wantsNewBranch(wish: Pick<PlacementWish, 'newBranch' | 'sourceBranch'>): boolean {
  return asksNewBranch(wish) || wish.sourceBranch === null;
}

function asksNewBranch(wish: Pick<PlacementWish, 'newBranch'>): boolean {
  return wish.newBranch !== undefined && wish.newBranch !== false;
}

/** The branch name the user gave (`--new-branch NAME`), which the target's git must accept. */
export function requestedBranchName(wish: Pick<PlacementWish, 'newBranch'>): string | null {
  return typeof wish.newBranch === 'string' && wish.newBranch ? wish.newBranch : null;
}

/** Which branch the work lands on and where that branch is now. */
export function chooseBranch(wish: PlacementWish, facts: Pick<PlacementFacts, 'worktrees' | 'refs' | 'newBranchNameValid'>): BranchChoice {
  const main = facts.worktrees[0];
  if (!main) throw new HandoffError('git_failed', `git listed no worktree for ${wish.targetRepo} on ${wish.targetLabel}.`);
  const named = requestedBranchName(wish);
  let branch: string;
  if (!asksNewBranch(wish) && wish.sourceBranch !== null) {
    branch = wish.sourceBranch;
  } else if (named !== null) {
    if (!known(facts.newBranchNameValid, 'newBranchNameValid')) {
      throw new HandoffError('bad_branch_name', `${JSON.stringify(named)} is not a valid branch name.`, { fix: 'Choose another name for --new-branch.' });
    }
    branch = firstFree(named, (c) => branchTaken(c, facts.refs.branches));
  } else {
    // Valid by construction: no check on the target needed.
    branch = handoffBranchName(wish.sessionId ?? '', wish.id, facts.refs.branches);
  }
  return { main, branch, branchTip: facts.refs.tips.get(branch) ?? null, checkedOut: facts.worktrees.find((w) => w.branch === branch && !w.bare) ?? null };
}

/** Decide the placement from the facts, or refuse it (`target_diverged`, `target_dirty`, `apply_conflict`…). */
export function decidePlacement(wish: PlacementWish, facts: PlacementFacts): PlacementPlan {
  const { main, branch, branchTip, checkedOut } = chooseBranch(wish, facts);
  const where = wish.targetLabel;
  // The branch may only move forward to head: anything else would drop the target's commits.
  const fastForward = branchTip !== null && branchTip !== wish.head;
  if (fastForward && !known(facts.tipIsAncestor, 'tipIsAncestor')) {
    throw new HandoffError('target_diverged', `Branch ${branch} on ${where} has commits the source does not have (${branchTip.slice(0, 12)} is not an ancestor of ${wish.head.slice(0, 12)}).`, {
      fix: `Bring the branches together first (push from ${where} and pull at the source), or hand off with --new-branch.`,
      details: { branch, targetCommit: branchTip, sourceCommit: wish.head, worktree: checkedOut?.path ?? null },
    });
  }
  const plan: PlacementPlan = {
    id: wish.id,
    repo: main.path,
    branch,
    mode: 'new-worktree',
    worktree: '',
    branchTip,
    fastForward,
    head: wish.head,
    wip: wish.wip,
    changedFiles: facts.snapshotChanges,
    originHasBranch: facts.refs.origin.has(branch),
  };
  if (checkedOut) {
    refuseCheckedOut(where, main, branch, branchTip, checkedOut, facts.checkedOut);
    return { ...plan, mode: 'checked-out', worktree: checkedOut.path };
  }
  return { ...plan, worktree: newWorktreePath(where, main, facts.worktrees, branch, facts.occupiedPaths), worktreeHomeExists: facts.worktreeHomeExists };
}

/** The branch's own worktree takes the work only when it is there, born, clean, and nothing untracked is in the way. */
function refuseCheckedOut(where: string, main: Worktree, branch: string, branchTip: string | null, wt: Worktree, state: CheckedOutState | null): void {
  const seen = wt.prunable ? null : known(state, 'checkedOut');
  if (seen === null || !seen.exists) {
    throw new HandoffError('target_worktree_missing', `Branch ${branch} is checked out in ${wt.path} on ${where}, but that folder is gone.`, {
      fix: `Run \`git worktree prune\` in ${main.path} on ${where}, then hand off again.`,
      details: { worktree: wt.path },
    });
  }
  if (branchTip === null) {
    throw new HandoffError('target_unborn', `Branch ${branch} is checked out in ${wt.path} on ${where} but has no commit yet.`, {
      fix: `Check out another branch in ${wt.path} on ${where}, or hand off with --new-branch.`,
      details: { worktree: wt.path },
    });
  }
  const { dirty, inTheWay } = seen;
  if (dirty.length > 0) {
    throw new HandoffError('target_dirty', `Branch ${branch} is checked out in ${wt.path} on ${where}, which has uncommitted changes (${firstFew(dirty)}).`, {
      fix: `Commit or stash the changes in ${wt.path} on ${where}, or hand off with --new-branch.`,
      details: { worktree: wt.path, files: dirty.slice(0, 50) },
    });
  }
  if (inTheWay.length > 0) {
    throw new HandoffError('apply_conflict', `The changes would overwrite files that git does not track in ${wt.path} on ${where}: ${firstFew(inTheWay)}.`, {
      fix: `Move those files away in ${wt.path} on ${where}, or hand off with --new-branch.`,
      details: { worktree: wt.path, files: inTheWay.slice(0, 50) },
    });
  }
}

/** A worktree that `<main>.worktrees` would be inside: no new worktree can go there. */
export function nestingWorktree(mainPath: string, worktrees: readonly Worktree[]): Worktree | undefined {
  const home = worktreeHome(mainPath);
  return worktrees.find((w) => isInside(home, w.path));
}

/** The folders a new worktree of `branch` may take, best first: `<slug>`, `<slug>-2`…, leaving out those git lists as worktrees. */
export function* worktreePathCandidates(mainPath: string, branch: string, worktrees: readonly Worktree[]): Generator<string, never> {
  const base = firstWorktreePath(mainPath, branch);
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!worktrees.some((w) => w.path === candidate)) yield candidate;
  }
}

function newWorktreePath(where: string, main: Worktree, worktrees: readonly Worktree[], branch: string, occupied: readonly string[]): string {
  const nest = nestingWorktree(main.path, worktrees);
  if (nest) {
    throw new HandoffError('worktree_nested', `A new worktree at ${worktreeHome(main.path)} on ${where} would be inside the worktree ${nest.path}.`, {
      fix: 'Check out the branch somewhere on the target yourself, or hand off with --dir.',
    });
  }
  for (const candidate of worktreePathCandidates(main.path, branch, worktrees)) if (!occupied.includes(candidate)) return candidate;
  throw new Error('unreachable: the candidates never end');
}

function firstFew(paths: readonly string[]): string {
  return `${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}`;
}

/** A fact the decision needs: its absence is a bug in the facts step, never a refusal. */
function known<T>(fact: T | null, name: string): T {
  if (fact === null) throw new Error(`placement decision: the fact ${name} was not gathered`);
  return fact;
}
