// The facts a placement is decided on (placement-decide.ts), asked with as few round trips as
// their order allows: the target's read (usually asked ahead), what the snapshot changes and
// whether a given branch name is valid, side by side; then, for the branch the decision picks:
// whether its commit there is an ancestor of HEAD (asked of whoever has the commits), and either
// the state of the worktree it is checked out in (one program) or which new worktree folders
// are taken (one program, and none when the read already answered).
import type { Host } from '../host/host.js';
import { git, isAncestor } from './git.js';
import { checkedOutState, pathsExist } from './placement-probes.js';
import { chooseBranch, nestingWorktree, requestedBranchName, wantsNewBranch, worktreePathCandidates, type PlacementFacts, type PlacementWish } from './placement-decide.js';
import { readPlacementState, type PlacementReads } from './placement-read.js';
import { changedBetween, type ChangedFile } from './snapshot.js';
import { presentObjects } from './transfer.js';
import { worktreeHome, type Worktree } from './worktrees.js';

/** The questions that need the commits: asked of the source before the transfer, of the target after. */
export interface CommitOracle {
  has(oid: string): Promise<boolean>;
  isAncestor(a: string, b: string): Promise<boolean>;
  changed(from: string, to: string): Promise<ChangedFile[]>;
}

export function commitsOn(host: Host, repo: string): CommitOracle {
  return {
    has: async (oid) => (await presentObjects(host, repo, [oid])).length === 1,
    isAncestor: (a, b) => isAncestor(host, repo, a, b),
    changed: (from, to) => changedBetween(host, repo, from, to),
  };
}

export interface FactSources {
  target: Host;
  commits: CommitOracle;
  /** The target's read, asked ahead (else it is asked now). */
  read?: Promise<PlacementReads>;
  /** What the snapshot changes relative to HEAD, when already known. */
  changedFiles?: ChangedFile[];
}

/** New worktree folders asked about in one program when the read did not answer. */
const PATHS_PER_PROBE = 8;

/**
 * Ask everything deciding `wish` needs. Refusals that need no more facts (no worktree listed, a
 * bad branch name) come from the decision's first half, here already.
 */
export async function gatherPlacementFacts(wish: PlacementWish, from: FactSources): Promise<PlacementFacts> {
  const { target, commits } = from;
  const named = requestedBranchName(wish);
  const [read, snapshotChanges, newBranchNameValid] = await Promise.all([
    from.read ?? readPlacementState(target, wish.targetRepo, wantsNewBranch(wish) ? null : wish.sourceBranch),
    !wish.wip ? [] : (from.changedFiles ?? commits.changed(wish.head, wish.wip)),
    named === null ? null : validBranchName(target, wish.targetRepo, named),
  ]);
  const base = { worktrees: read.worktrees, refs: read.refs, snapshotChanges, newBranchNameValid };
  const { main, branch, branchTip, checkedOut } = chooseBranch(wish, base);
  const ancestry = branchTip !== null && branchTip !== wish.head ? behind(commits, branchTip, wish.head) : Promise.resolve(null);
  if (checkedOut) {
    const tipIsAncestor = await ancestry;
    const asked = !checkedOut.prunable && tipIsAncestor !== false;
    const state = asked ? await checkedOutState(target, checkedOut.path, await addedBy(wish, branchTip, snapshotChanges, commits)) : null;
    return { ...base, tipIsAncestor, checkedOut: state, occupiedPaths: [], worktreeHomeExists: read.homeExists };
  }
  const [tipIsAncestor, folders] = await Promise.all([ancestry, newWorktreeFolders(target, wish.targetRepo, main, branch, read)]);
  return { ...base, tipIsAncestor, checkedOut: null, ...folders };
}

/** What the move changes from the worktree's commit to the final state (the snapshot's list when that commit is HEAD). */
async function addedBy(wish: PlacementWish, branchTip: string | null, snapshotChanges: ChangedFile[], commits: CommitOracle): Promise<ChangedFile[]> {
  const final = wish.wip ?? wish.head;
  if (branchTip === null || branchTip === final) return [];
  return branchTip === wish.head ? snapshotChanges : commits.changed(branchTip, final);
}

/** `git check-ref-format --branch`: whether the target's git accepts `name` as a new branch. */
async function validBranchName(target: Host, repo: string, name: string): Promise<boolean> {
  return (await git(target, repo, ['check-ref-format', '--branch', name], { okCodes: [1, 128] })).exitCode === 0;
}

/** `tip` is an ancestor of `head` (false when the commits' holder lacks it: the target has commits the source does not). */
async function behind(commits: CommitOracle, tip: string, head: string): Promise<boolean> {
  return (await commits.has(tip)) && (await commits.isAncestor(tip, head));
}

/**
 * Which candidate folders of a new worktree are taken (asked in order until a free one), and
 * whether the main checkout's worktree home exists. The read answered both for the likely branch
 * in the repository it read, which is usually this one: then nothing is asked.
 */
async function newWorktreeFolders(target: Host, targetRepo: string, main: Worktree, branch: string, read: PlacementReads): Promise<Pick<PlacementFacts, 'occupiedPaths' | 'worktreeHomeExists'>> {
  let homeExists: boolean | null = main.path === targetRepo ? read.homeExists : null;
  // Refused whatever the folders: nothing to ask.
  if (nestingWorktree(main.path, read.worktrees)) return { occupiedPaths: [], worktreeHomeExists: homeExists ?? false };
  const known = new Map<string, boolean>(read.likely ? [[read.likely.path, read.likely.exists]] : []);
  const candidates = worktreePathCandidates(main.path, branch, read.worktrees);
  const occupied: string[] = [];
  let ahead: string[] = [];
  for (;;) {
    const candidate = ahead.shift() ?? candidates.next().value;
    if (!known.has(candidate)) {
      // This one and the next few in one program (with the home, when not known yet).
      ahead = Array.from({ length: PATHS_PER_PROBE - 1 }, () => candidates.next().value);
      const asked = [candidate, ...ahead];
      const answers = await pathsExist(target, homeExists === null ? [...asked, worktreeHome(main.path)] : asked);
      asked.forEach((p, i) => known.set(p, answers[i] ?? false));
      if (homeExists === null) homeExists = answers[asked.length] ?? false;
    }
    if (!known.get(candidate)) break;
    occupied.push(candidate);
  }
  homeExists ??= (await pathsExist(target, [worktreeHome(main.path)]))[0] ?? false;
  return { occupiedPaths: occupied, worktreeHomeExists: homeExists };
}
