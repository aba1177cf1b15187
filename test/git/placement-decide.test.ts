// The placement decision as a table: facts and a wish in, a plan or a refusal out. No git, no
// folders, no host: every rule of where the work lands, and every refusal with its code and fix.
import { describe, expect, it } from 'vitest';
import { parserFor } from '../../src/cli.js';
import { commandSpecs } from '../../src/completion.js';
import { HandoffError } from '../../src/errors.js';
import { decidePlacement, type CheckedOutState, type PlacementFacts, type PlacementPlan, type PlacementWish } from '../../src/git/placement-decide.js';
import type { Worktree } from '../../src/git/worktrees.js';

const HEAD = '1'.repeat(40);
const WIP = '2'.repeat(40);
/** An ancestor of HEAD (the target is behind). */
const OLD = '3'.repeat(40);
/** A commit the source does not have (the target has its own commits). */
const THEIRS = '4'.repeat(40);
const REPO = '/home/v/code/app';
const HOME = `${REPO}.worktrees`;
const SESSION = '0199f3c2-5d1e-7a40-9b11-2f6c0c7d8e01';
const HANDOFF_ID = '20261201-201721-20d31c39f8677e06';

function wt(path: string, branch: string | null, more: Partial<Worktree> = {}): Worktree {
  return { path, head: HEAD, branch, bare: false, prunable: false, ...more };
}

const CLEAN: CheckedOutState = { exists: true, dirty: [], inTheWay: [] };
const MAIN = wt(REPO, 'main');

interface Given {
  worktrees?: Worktree[];
  /** The target's local branches and their commits. */
  branches?: Record<string, string>;
  origin?: string[];
  facts?: Partial<Omit<PlacementFacts, 'worktrees' | 'refs'>>;
}

function factsOf(g: Given): PlacementFacts {
  const tips = new Map(Object.entries(g.branches ?? { main: HEAD }));
  return {
    worktrees: g.worktrees ?? [MAIN],
    refs: { branches: new Set(tips.keys()), tips, origin: new Set(g.origin ?? []) },
    snapshotChanges: [],
    newBranchNameValid: null,
    tipIsAncestor: null,
    checkedOut: null,
    occupiedPaths: [],
    worktreeHomeExists: false,
    ...g.facts,
  };
}

function wishOf(w: Partial<PlacementWish>): PlacementWish {
  return { id: HANDOFF_ID, targetRepo: REPO, targetLabel: 'vega', head: HEAD, wip: WIP, sourceBranch: 'main', ...w };
}

type Row = [name: string, wish: Partial<PlacementWish>, given: Given, expected: Partial<PlacementPlan>];

const plans: Row[] = [
  // The branch is checked out: that worktree takes the work.
  ['checked out in the main checkout, at HEAD', {}, { facts: { checkedOut: CLEAN } }, { mode: 'checked-out', repo: REPO, branch: 'main', worktree: REPO, branchTip: HEAD, fastForward: false }],
  ['checked out in the main checkout, behind: fast-forward', {}, { branches: { main: OLD }, facts: { tipIsAncestor: true, checkedOut: CLEAN } }, { mode: 'checked-out', worktree: REPO, branchTip: OLD, fastForward: true }],
  ['checked out in a linked worktree', { sourceBranch: 'feature' }, { worktrees: [MAIN, wt('/srv/feature', 'feature')], branches: { main: HEAD, feature: OLD }, facts: { tipIsAncestor: true, checkedOut: CLEAN } }, { mode: 'checked-out', repo: REPO, worktree: '/srv/feature', fastForward: true }],
  ['checked out in a bare main repository does not count', {}, { worktrees: [wt(REPO, 'main', { bare: true })], facts: {} }, { mode: 'new-worktree', worktree: `${HOME}/main` }],
  // Not checked out: a new worktree beside the main checkout.
  ['not on the target: created, in a new worktree', { sourceBranch: 'feature/login' }, {}, { mode: 'new-worktree', branch: 'feature/login', worktree: `${HOME}/feature-login`, branchTip: null, fastForward: false, worktreeHomeExists: false }],
  ['on the target, not checked out, behind: moved forward', { sourceBranch: 'feature' }, { branches: { main: HEAD, feature: OLD }, facts: { tipIsAncestor: true } }, { mode: 'new-worktree', worktree: `${HOME}/feature`, branchTip: OLD, fastForward: true }],
  ['on the target at HEAD, not checked out', { sourceBranch: 'feature' }, { branches: { main: HEAD, feature: HEAD } }, { mode: 'new-worktree', branchTip: HEAD, fastForward: false }],
  ['the natural folder is taken: -2', { sourceBranch: 'topic' }, { facts: { occupiedPaths: [`${HOME}/topic`], worktreeHomeExists: true } }, { worktree: `${HOME}/topic-2`, worktreeHomeExists: true }],
  ['folders taken and listed as worktrees: -4', { sourceBranch: 'topic' }, { worktrees: [MAIN, wt(`${HOME}/topic-2`, 'other')], facts: { occupiedPaths: [`${HOME}/topic`, `${HOME}/topic-3`] } }, { worktree: `${HOME}/topic-4` }],
  ['a hostile branch name gets a safe folder', { sourceBranch: 'feat/it\'s-"q"-$(id)' }, {}, { branch: 'feat/it\'s-"q"-$(id)', worktree: `${HOME}/feat-it-s-q-id` }],
  ['the discovered checkout is a linked worktree: the main checkout names the folder', { targetRepo: '/srv/other-wt', sourceBranch: 'topic' }, { worktrees: [MAIN, wt('/srv/other-wt', 'x')], facts: { worktreeHomeExists: true } }, { repo: REPO, worktree: `${HOME}/topic`, worktreeHomeExists: true }],
  ['origin has the branch: it may track it', { sourceBranch: 'topic' }, { origin: ['topic'] }, { originHasBranch: true }],
  ['origin lacks the branch', { sourceBranch: 'topic' }, { origin: ['main'] }, { originHasBranch: false }],
  // New branches.
  ['--new-branch: handoff/<session>', { newBranch: true, sessionId: SESSION }, {}, { branch: 'handoff/0199f3c2', worktree: `${HOME}/handoff-0199f3c2`, branchTip: null, mode: 'new-worktree' }],
  ['--new-branch, that name taken: -2', { newBranch: true, sessionId: SESSION }, { branches: { main: HEAD, 'handoff/0199f3c2': OLD } }, { branch: 'handoff/0199f3c2-2', worktree: `${HOME}/handoff-0199f3c2-2`, branchTip: null }],
  ['--new-branch, -2 taken too: -3', { newBranch: true, sessionId: SESSION }, { branches: { main: HEAD, 'handoff/0199f3c2': OLD, 'handoff/0199f3c2-2': OLD } }, { branch: 'handoff/0199f3c2-3' }],
  ['--new-branch while the branch is checked out there: not that worktree', { newBranch: true, sessionId: SESSION }, { facts: { checkedOut: CLEAN } }, { branch: 'handoff/0199f3c2', mode: 'new-worktree' }],
  ['--new-branch without a session: the handoff id', { newBranch: true }, {}, { branch: 'handoff/20d31c39' }],
  ['--new-branch NAME', { newBranch: 'spike' }, { facts: { newBranchNameValid: true } }, { branch: 'spike', worktree: `${HOME}/spike` }],
  ['--new-branch NAME, taken: -2', { newBranch: 'spike' }, { branches: { main: HEAD, spike: OLD }, facts: { newBranchNameValid: true } }, { branch: 'spike-2', worktree: `${HOME}/spike-2` }],
  ['--new-branch NAME, a ref-store clash: -2', { newBranch: 'a' }, { branches: { main: HEAD, 'a/b': OLD }, facts: { newBranchNameValid: true } }, { branch: 'a-2' }],
  ['newBranch false: the source branch', { newBranch: false }, { facts: { checkedOut: CLEAN } }, { branch: 'main', mode: 'checked-out' }],
  ['detached HEAD at the source: handoff/<session>', { sourceBranch: null, sessionId: SESSION }, {}, { branch: 'handoff/0199f3c2', mode: 'new-worktree' }],
  ['detached HEAD, a branch named handoff there', { sourceBranch: null, sessionId: SESSION }, { branches: { main: HEAD, handoff: OLD } }, { branch: 'handoff-0199f3c2' }],
  // The snapshot.
  ['the snapshot\'s files go into the plan', {}, { facts: { checkedOut: CLEAN, snapshotChanges: [{ status: 'A', path: 'new.txt' }] } }, { wip: WIP, changedFiles: [{ status: 'A', path: 'new.txt' }] }],
  ['nothing uncommitted', { wip: null }, { facts: { checkedOut: CLEAN } }, { wip: null, changedFiles: [] }],
];

type Refusal = [name: string, wish: Partial<PlacementWish>, given: Given, code: string, fixNames: string | null];

const refusals: Refusal[] = [
  ['no worktree listed', {}, { worktrees: [] }, 'git_failed', null],
  ['diverged, checked out', {}, { branches: { main: THEIRS }, facts: { tipIsAncestor: false } }, 'target_diverged', '--new-branch'],
  ['diverged, not checked out', { sourceBranch: 'feature' }, { branches: { main: HEAD, feature: THEIRS }, facts: { tipIsAncestor: false } }, 'target_diverged', '--new-branch'],
  ['the target branch is ahead (its tip is unknown to the source)', {}, { branches: { main: THEIRS }, facts: { tipIsAncestor: false, checkedOut: CLEAN } }, 'target_diverged', '--new-branch'],
  ['dirty target worktree', {}, { facts: { checkedOut: { exists: true, dirty: ['README.md'], inTheWay: [] } } }, 'target_dirty', '--new-branch'],
  ['dirty and in the way: dirty is said first', {}, { facts: { checkedOut: { exists: true, dirty: ['a'], inTheWay: ['b'] } } }, 'target_dirty', '--new-branch'],
  ['untracked files in the way of the work', {}, { facts: { checkedOut: { exists: true, dirty: [], inTheWay: ['new/file.txt'] } } }, 'apply_conflict', '--new-branch'],
  ['the branch\'s worktree folder is gone', { sourceBranch: 'feature' }, { worktrees: [MAIN, wt('/srv/feature', 'feature')], branches: { main: HEAD, feature: HEAD }, facts: { checkedOut: { exists: false, dirty: [], inTheWay: [] } } }, 'target_worktree_missing', 'git worktree prune'],
  ['the branch\'s worktree is prunable', { sourceBranch: 'feature' }, { worktrees: [MAIN, wt('/srv/feature', 'feature', { prunable: true })], branches: { main: HEAD, feature: HEAD } }, 'target_worktree_missing', 'git worktree prune'],
  ['checked out but unborn', {}, { branches: {}, facts: { checkedOut: CLEAN } }, 'target_unborn', '--new-branch'],
  ['the worktree home would be inside a worktree', { sourceBranch: 'topic' }, { worktrees: [MAIN, wt('/home/v/code', 'x')] }, 'worktree_nested', '--dir'],
  ['the worktree home is itself a worktree', { sourceBranch: 'topic' }, { worktrees: [MAIN, wt(HOME, 'x')] }, 'worktree_nested', '--dir'],
  ['--new-branch NAME that git rejects', { newBranch: 'bad..name' }, { facts: { newBranchNameValid: false } }, 'bad_branch_name', '--new-branch'],
  ['diverged is said before dirty', {}, { branches: { main: THEIRS }, facts: { tipIsAncestor: false, checkedOut: { exists: true, dirty: ['a'], inTheWay: [] } } }, 'target_diverged', '--new-branch'],
];

function refusalOf(fn: () => unknown): HandoffError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HandoffError);
    return err as HandoffError;
  }
  throw new Error('not refused');
}

/** The long flags the send command accepts, from the parser itself. */
async function sendFlags(): Promise<Set<string>> {
  const { commands, globalFlags } = await commandSpecs(parserFor);
  const send = commands.find((c) => c.name === 'send');
  return new Set([...globalFlags, ...(send?.flags ?? [])].map((f) => f.name));
}

describe('decidePlacement', () => {
  it.each(plans)('%s', (_name, wish, given, expected) => {
    expect(decidePlacement(wishOf(wish), factsOf(given))).toMatchObject({ id: HANDOFF_ID, head: HEAD, ...expected });
  });

  it.each(refusals)('refuses: %s', async (_name, wish, given, code, fixNames) => {
    const err = refusalOf(() => decidePlacement(wishOf(wish), factsOf(given)));
    expect(err.code).toBe(code);
    if (fixNames !== null) expect(err.fix).toContain(fixNames);
    // Every flag a fix names is one `send` accepts.
    const flags = await sendFlags();
    for (const m of (err.fix ?? '').matchAll(/(?<!\w)--([a-z][a-z0-9-]*)/g)) expect(flags, `--${m[1]} in ${err.fix}`).toContain(m[1]);
  });

  it('names the target, the worktree and the files in a refusal', () => {
    const dirty = ['a', 'b', 'c', 'd', 'e', 'f'];
    const err = refusalOf(() => decidePlacement(wishOf({}), factsOf({ facts: { checkedOut: { exists: true, dirty, inTheWay: [] } } })));
    expect(err.message).toBe(`Branch main is checked out in ${REPO} on vega, which has uncommitted changes (a, b, c, d, e, …).`);
    expect(err.details).toEqual({ worktree: REPO, files: dirty });
    const diverged = refusalOf(() => decidePlacement(wishOf({}), factsOf({ branches: { main: THEIRS }, facts: { tipIsAncestor: false } })));
    expect(diverged.details).toEqual({ branch: 'main', targetCommit: THEIRS, sourceCommit: HEAD, worktree: REPO });
  });

  it('says when the facts step left out a fact it needs (a bug, not a refusal)', () => {
    expect(() => decidePlacement(wishOf({}), factsOf({ branches: { main: OLD } }))).toThrow(/tipIsAncestor was not gathered/);
    expect(() => decidePlacement(wishOf({}), factsOf({}))).toThrow(/checkedOut was not gathered/);
    expect(() => decidePlacement(wishOf({ newBranch: 'x' }), factsOf({}))).toThrow(/newBranchNameValid was not gathered/);
  });

  it('the send command has the flags the fixes name', async () => {
    const flags = await sendFlags();
    for (const f of ['dir', 'new-branch', 'here', 'new-worktree', 'overwrite', 'wait']) expect(flags).toContain(f);
  });
});
