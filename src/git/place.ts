// Place: on the target, put the source's branch where the agent will work, and its uncommitted
// work on top — without ever losing something that was already there.
//
// Where the branch lands:
//   - checked out in some worktree → that worktree, fast-forwarded (refused if it has uncommitted
//     changes, or commits the source lacks);
//   - otherwise → the branch ref is fast-forwarded or created, and a worktree is added beside the
//     main checkout at `<main>.worktrees/<slug>`.
// The snapshot is then applied with a temporary index (`read-tree -m -u head wip`): files change,
// new files appear untracked, deletions happen, the target's real index is not touched.
//
// The read-only check (`checkPlacement`, run by the plan before the agent is quit, and again by
// `place` before its first change): every placement that is not refused puts the worktree at
// exactly the source's HEAD — a clean checkout of it, or a fast-forward of a clean one — and the
// snapshot is a child of that HEAD. Applying a child onto a clean checkout of its own parent can
// only fail because of files git does not track there: untracked or ignored files (or folders,
// or case-insensitive twins) sitting where the fast-forward or the snapshot adds a path. So the
// check needs no objects on the target and writes nothing: the source lists the paths added
// between the worktree's commit and the snapshot (the source has that commit, or the branches
// diverged and we refuse anyway), and one POSIX `sh` loop on the target tests those paths.
import { z } from 'zod';
import { HandoffError } from '../errors.js';
import type { Host, RunResult } from '../host/host.js';
import { runInOrder } from '../host/run-in-order.js';
import { randomBytes } from 'node:crypto';
import { branchRef, GIT_BASE_CONFIG, GIT_BASE_ENV, git, gitFailed, isAncestor, line, splitNul, ZERO_OID } from './git.js';
import { changedBetween, type ChangedFile } from './snapshot.js';
import { cleanupRefs, presentObjects } from './transfer.js';
import { handoffBranchName } from './branch-name.js';
import { branchSlug, branchTaken, firstFree, isInside, parseWorktreeList, worktreeHome, type Worktree } from './worktrees.js';

export interface PlacementRequest {
  target: Host;
  /** Any checkout of the repository on the target (the discovered one). */
  targetRepo: string;
  id: string;
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
  /** `place` only: awaited after its read-only check and before its first change (e.g. a journal write), with what it will do. */
  beforeChanges?: (plan: PlacementPlan) => Promise<void>;
  /** The target's worktrees and branches read ahead (see readPlacementState), instead of asking now. */
  read?: Promise<PlacementReads>;
  /** `place` only: ask questions about commits here (e.g. the source, which has them all) instead of the target. */
  commitsOn?: { host: Host; repo: string };
  /** What wip changes relative to head, when already known (the snapshot lists it), instead of asking. */
  changedFiles?: ChangedFile[];
}

/** What deciding a placement reads of the target. */
export interface PlacementReads {
  worktrees: Worktree[];
  refs: BranchRefs;
  /** Where a new worktree of the branch would most likely go, and whether something is there (null: not asked). */
  likely: { path: string; exists: boolean } | null;
  /** Whether `<repo>.worktrees` exists. */
  homeExists: boolean;
}

type BranchRefs = ReturnType<typeof branchRefs>;

// $1 the likely new worktree's path ('' for none), $2 the worktree home, then git's base options
// (run in the repository): a line each saying whether the two exist (1 or 0), then the worktrees,
// a NUL, then every ref with its commit.
export const PLACEMENT_READ_PROGRAM = [
  'l=$1; h=$2; shift 2',
  'if [ -n "$l" ] && { [ -e "$l" ] || [ -L "$l" ]; }; then echo 1; else echo 0; fi',
  'if [ -e "$h" ] || [ -L "$h" ]; then echo 1; else echo 0; fi',
  'git "$@" worktree list --porcelain || exit',
  'printf "\\0"',
  'exec git "$@" for-each-ref "--format=%(objectname) %(refname)"',
].join('\n');

/** The program that reads what deciding a placement needs (see placementReadsOf for its answer). */
export function placementReadProgram(targetRepo: string, likelyBranch: string | null): { argv: string[]; cwd: string; env: Record<string, string> } {
  const likely = likelyBranch !== null ? firstWorktreePath(targetRepo, likelyBranch) : '';
  return { argv: ['/bin/sh', '-c', PLACEMENT_READ_PROGRAM, 'sh', likely, worktreeHome(targetRepo), ...GIT_BASE_CONFIG], cwd: targetRepo, env: GIT_BASE_ENV };
}

/** PLACEMENT_READ_PROGRAM's answer; throws git_failed as git's own failure would. */
export function placementReadsOf(target: Host, targetRepo: string, likelyBranch: string | null, r: RunResult): PlacementReads {
  const lines = r.stdout.split('\n', 2);
  const rest = r.stdout.slice((lines[0]?.length ?? 0) + (lines[1]?.length ?? 0) + 2);
  const nul = rest.indexOf('\0');
  if (r.exitCode !== 0 || lines.length < 2 || nul < 0) throw gitFailed(target, targetRepo, nul < 0 ? ['worktree', 'list', '--porcelain'] : ['for-each-ref'], r);
  return {
    worktrees: parseWorktreeList(rest.slice(0, nul)),
    refs: branchRefs(rest.slice(nul + 1)),
    likely: likelyBranch !== null ? { path: firstWorktreePath(targetRepo, likelyBranch), exists: lines[0] === '1' } : null,
    homeExists: lines[1] === '1',
  };
}

/**
 * Read what deciding a placement needs of the target, in one program; read-only, so it can be
 * asked ahead (while the agent quits, or in the plan's look). `likelyBranch`: the branch whose new
 * worktree path to look at (null: a new branch will be named).
 */
export async function readPlacementState(target: Host, targetRepo: string, likelyBranch: string | null): Promise<PlacementReads> {
  const { argv, cwd, env } = placementReadProgram(targetRepo, likelyBranch);
  return placementReadsOf(target, targetRepo, likelyBranch, await target.run(argv, { cwd, env }));
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

/** The facts that need the commits: asked of the source before transfer, of the target after. */
interface CommitOracle {
  has(oid: string): Promise<boolean>;
  isAncestor(a: string, b: string): Promise<boolean>;
  changed(from: string, to: string): Promise<ChangedFile[]>;
}

function oracleOn(host: Host, repo: string): CommitOracle {
  return {
    has: async (oid) => (await presentObjects(host, repo, [oid])).length === 1,
    isAncestor: (a, b) => isAncestor(host, repo, a, b),
    changed: (from, to) => changedBetween(host, repo, from, to),
  };
}

/**
 * Decide the placement and check it would succeed, changing nothing anywhere (no refs, no files,
 * no index). Throws `target_dirty`, `target_diverged`, `apply_conflict`… exactly as `place` would.
 */
export async function checkPlacement(req: PlacementRequest & { source: Host; sourceRepo: string }): Promise<PlacementPlan> {
  return planPlacement(req, oracleOn(req.source, req.sourceRepo));
}

async function planPlacement(req: PlacementRequest, commits: CommitOracle): Promise<PlacementPlan> {
  const { target, head, wip } = req;
  const wantNew = req.newBranch !== undefined && req.newBranch !== false;
  // The target's state (with where a new worktree of the source's branch would most likely go:
  // newWorktreePath uses that answer when it picks that very path), unless read ahead.
  const reads = req.read ?? readPlacementState(target, req.targetRepo, !wantNew ? req.sourceBranch : null);
  const changes = !wip ? [] : (req.changedFiles ?? commits.changed(head, wip));
  const [{ worktrees, refs, likely, homeExists }, snapshotChanges] = await Promise.all([reads, changes]);
  const main = worktrees[0];
  if (!main) throw new HandoffError('git_failed', `git listed no worktree for ${req.targetRepo} on ${target.label}.`);
  let branch: string;
  if (wantNew || req.sourceBranch === null) {
    if (typeof req.newBranch === 'string' && req.newBranch) {
      await checkBranchName(target, main.path, req.newBranch);
      branch = firstFree(req.newBranch, (c) => branchTaken(c, refs.branches));
    } else {
      // Valid by construction: no check on the target needed.
      branch = handoffBranchName(req.sessionId ?? '', req.id, refs.branches);
    }
  } else {
    branch = req.sourceBranch;
  }
  const branchTip = refs.tips.get(branch) ?? null;
  const checkedOut = worktrees.find((w) => w.branch === branch && !w.bare) ?? null;
  const changedFiles = snapshotChanges;

  // The branch may only move forward to head: anything else would drop the target's commits.
  let fastForward = false;
  if (branchTip !== null && branchTip !== head) {
    if (!(await commits.has(branchTip)) || !(await commits.isAncestor(branchTip, head))) {
      throw new HandoffError('target_diverged', `Branch ${branch} on ${target.label} has commits the source does not have (${branchTip.slice(0, 12)} is not an ancestor of ${head.slice(0, 12)}).`, {
        fix: `Bring the branches together first (push from ${target.label} and pull at the source), or hand off with --new-branch.`,
        details: { branch, targetCommit: branchTip, sourceCommit: head, worktree: checkedOut?.path ?? null },
      });
    }
    fastForward = true;
  }

  const plan: PlacementPlan = { id: req.id, repo: main.path, branch, mode: 'new-worktree', worktree: '', branchTip, fastForward, head, wip, changedFiles, originHasBranch: refs.origin.has(branch) };
  if (checkedOut) {
    if (checkedOut.prunable || !(await target.stat(checkedOut.path))) {
      throw new HandoffError('target_worktree_missing', `Branch ${branch} is checked out in ${checkedOut.path} on ${target.label}, but that folder is gone.`, {
        fix: `Run \`git worktree prune\` in ${main.path} on ${target.label}, then hand off again.`,
        details: { worktree: checkedOut.path },
      });
    }
    if (branchTip === null) {
      throw new HandoffError('target_unborn', `Branch ${branch} is checked out in ${checkedOut.path} on ${target.label} but has no commit yet.`, {
        fix: `Check out another branch in ${checkedOut.path} on ${target.label}, or hand off with --new-branch.`,
        details: { worktree: checkedOut.path },
      });
    }
    const dirty = await dirtyFiles(target, checkedOut.path);
    if (dirty.length > 0) {
      throw new HandoffError('target_dirty', `Branch ${branch} is checked out in ${checkedOut.path} on ${target.label}, which has uncommitted changes (${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}).`, {
        fix: `Commit or stash the changes in ${checkedOut.path} on ${target.label}, or hand off with --new-branch.`,
        details: { worktree: checkedOut.path, files: dirty.slice(0, 50) },
      });
    }
    const added = branchTip === (wip ?? head) ? [] : await commits.changed(branchTip, wip ?? head);
    const clashes = await untrackedClashes(target, checkedOut.path, added);
    if (clashes.length > 0) {
      throw new HandoffError('apply_conflict', `The changes would overwrite files that git does not track in ${checkedOut.path} on ${target.label}: ${clashes.slice(0, 5).join(', ')}${clashes.length > 5 ? ', …' : ''}.`, {
        fix: `Move those files away in ${checkedOut.path} on ${target.label}, or hand off with --new-branch.`,
        details: { worktree: checkedOut.path, files: clashes.slice(0, 50) },
      });
    }
    return { ...plan, mode: 'checked-out', worktree: checkedOut.path };
  }
  // The main checkout is the repository named (it is the first worktree git lists).
  return { ...plan, worktree: await newWorktreePath(target, main, worktrees, branch, likely), worktreeHomeExists: main.path === req.targetRepo ? homeExists : (await target.stat(worktreeHome(main.path))) !== null };
}

async function checkBranchName(target: Host, repo: string, name: string): Promise<void> {
  const r = await git(target, repo, ['check-ref-format', '--branch', name], { okCodes: [1, 128] });
  if (r.exitCode !== 0) {
    throw new HandoffError('bad_branch_name', `${JSON.stringify(name)} is not a valid branch name.`, { fix: 'Choose another name for --new-branch.' });
  }
}

/**
 * From `for-each-ref` lines: local branches (name → commit), origin's branches (for upstreams),
 * and the commit of every ref (what the target has: a transfer sends only what they lack).
 */
function branchRefs(out: string): { branches: Set<string>; tips: Map<string, string>; origin: Set<string>; all: string[] } {
  const tips = new Map<string, string>();
  const origin = new Set<string>();
  const all = new Set<string>();
  for (const l of out.split('\n')) {
    const sp = l.indexOf(' ');
    if (sp < 0) continue;
    const oid = l.slice(0, sp);
    const ref = l.slice(sp + 1);
    if (/^[0-9a-f]{40,64}$/.test(oid)) all.add(oid);
    if (ref.startsWith('refs/heads/')) tips.set(ref.slice('refs/heads/'.length), oid);
    else if (ref.startsWith('refs/remotes/origin/')) origin.add(ref.slice('refs/remotes/origin/'.length));
  }
  return { branches: new Set(tips.keys()), tips, origin, all: [...all] };
}

/** Tracked files with staged or unstaged changes in a worktree (read-only: no optional locks). */
async function dirtyFiles(target: Host, worktree: string): Promise<string[]> {
  const records = splitNul((await git(target, worktree, ['status', '--porcelain=v1', '-z', '--untracked-files=no'])).stdout);
  const named = records.filter((r) => r.length > 3 && r[2] === ' ').map((r) => r.slice(3));
  // A rename's second record is its old name; any record at all means dirty.
  return named.length > 0 || records.length === 0 ? named : records;
}

// Tests each argument `f:<path>` (a path the change adds: must not exist in any form) and
// `d:<path>` (a folder the change needs: must be absent or a real folder); prints the clashes.
const CLASH_SCRIPT = `for a do
  p=./\${a#??}
  case $a in
    f:*) if [ -e "$p" ] || [ -h "$p" ]; then printf '%s\\0' "\${a#??}"; fi ;;
    d:*) if [ -h "$p" ] || { [ -e "$p" ] && [ ! -d "$p" ]; }; then printf '%s\\0' "\${a#??}"; fi ;;
  esac
done`;

/**
 * Paths the change would add that already exist, untracked or ignored, in a clean worktree.
 * `changes` is the diff from the worktree's commit to the final state.
 */
export async function untrackedClashes(target: Host, worktree: string, changes: readonly ChangedFile[]): Promise<string[]> {
  const deleted = new Set(changes.filter((c) => c.status === 'D').map((c) => c.path));
  const deletedDirs = new Set<string>();
  for (const d of deleted) for (const dir of parents(d)) deletedDirs.add(dir);
  const checks: string[] = [];
  const dirs = new Set<string>();
  for (const c of changes) {
    if (c.status !== 'A') continue;
    // A tracked folder that becomes a file: the folder's files go first; read-tree guards the rest.
    if (!deletedDirs.has(c.path)) checks.push(`f:${c.path}`);
    for (const dir of parents(c.path)) if (!deleted.has(dir)) dirs.add(dir);
  }
  for (const d of dirs) checks.push(`d:${d}`);
  const clashes: string[] = [];
  // Chunks keep each command line far below ARG_MAX and the ssh channel-request limit.
  for (let i = 0; i < checks.length; i += 500) {
    const r = await target.run(['sh', '-c', CLASH_SCRIPT, 'sh', ...checks.slice(i, i + 500)], { cwd: worktree });
    if (r.exitCode !== 0) throw new HandoffError('target_check_failed', `Could not check ${worktree} on ${target.label}: ${r.stderr.trim()}`);
    clashes.push(...splitNul(r.stdout));
  }
  return clashes;
}

function parents(p: string): string[] {
  const parts = p.split('/');
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join('/'));
  return out;
}

/** A new worktree's path before any -2, -3… suffix: `<main>.worktrees/<slug>`. */
function firstWorktreePath(mainPath: string, branch: string): string {
  return `${worktreeHome(mainPath)}/${branchSlug(branch)}`;
}

async function newWorktreePath(target: Host, main: Worktree, worktrees: readonly Worktree[], branch: string, asked: PlacementReads['likely']): Promise<string> {
  const home = worktreeHome(main.path);
  for (const w of worktrees) {
    if (isInside(home, w.path)) {
      throw new HandoffError('worktree_nested', `A new worktree at ${home} on ${target.label} would be inside the worktree ${w.path}.`, {
        fix: 'Check out the branch somewhere on the target yourself, or hand off with --dir.',
      });
    }
  }
  const base = firstWorktreePath(main.path, branch);
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (worktrees.some((w) => w.path === candidate)) continue;
    if (!(asked?.path === candidate ? asked.exists : (await target.stat(candidate)) !== null)) return candidate;
  }
}

// ---------------------------------------------------------------------------------------------
// The record of what placement changed, and its exact undo.

const Oid = z.string().regex(/^[0-9a-f]{40,64}$/);
export const PlacementActionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('branch-created'), branch: z.string(), at: Oid }),
  z.object({ kind: z.literal('branch-moved'), branch: z.string(), from: Oid, to: Oid }),
  z.object({ kind: z.literal('upstream-set'), branch: z.string() }),
  z.object({ kind: z.literal('worktree-added'), path: z.string(), createdHome: z.string().nullable() }),
  z.object({ kind: z.literal('fast-forwarded'), worktree: z.string(), branch: z.string(), from: Oid, to: Oid }),
  z.object({ kind: z.literal('snapshot-applied'), worktree: z.string(), head: Oid, wip: Oid }),
]);
export type PlacementAction = z.infer<typeof PlacementActionSchema>;

export const PlacementRecordSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  repo: z.string(),
  branch: z.string(),
  mode: z.enum(['checked-out', 'new-worktree']),
  worktree: z.string(),
  /** The branch's commit before placement (null: created). */
  previousCommit: Oid.nullable(),
  head: Oid,
  wip: Oid.nullable(),
  /** In the order they happened; undo walks them backwards. */
  actions: z.array(PlacementActionSchema),
});
export type PlacementRecord = z.infer<typeof PlacementRecordSchema>;

/**
 * Place the branch and the snapshot on the target. The objects must be there already (`transfer`).
 * Re-checks everything first (with the state read ahead, if given, and commits asked of
 * `commitsOn`, by default the target); on a failure midway undoes its own changes before
 * rethrowing. Every change is conditional on what was read (`update-ref` with the old value,
 * `worktree add` into a free folder), so a target changed since the read fails safely. Deletes
 * refs/handoff/<id>/* in every case.
 */
export async function place(req: PlacementRequest): Promise<PlacementRecord> {
  const { target } = req;
  // The refs go as soon as place starts changing things (every change names its commits by id,
  // never by these refs), side by side with the changes; on every other path, at the end.
  let refsGone: Promise<void> | null = null;
  const dropRefs = () => {
    refsGone ??= cleanupRefs(target, req.targetRepo, req.id);
    refsGone.catch(() => undefined);
  };
  try {
    const plan = await planPlacement(req, req.commitsOn ? oracleOn(req.commitsOn.host, req.commitsOn.repo) : oracleOn(target, req.targetRepo));
    const record: PlacementRecord = {
      version: 1,
      id: req.id,
      repo: plan.repo,
      branch: plan.branch,
      mode: plan.mode,
      worktree: plan.worktree,
      previousCommit: plan.branchTip,
      head: req.head,
      wip: req.wip,
      actions: [],
    };
    await req.beforeChanges?.(plan);
    try {
      await execute(target, plan, record, dropRefs);
    } catch (err) {
      const undo = await undoPlacement(target, record);
      if (err instanceof HandoffError && undo.errors.length > 0) {
        throw new HandoffError(err.code, err.message, { ...(err.fix ? { fix: err.fix } : {}), details: { ...err.details, undoErrors: undo.errors }, cause: err });
      }
      throw err;
    }
    return record;
  } finally {
    await (refsGone ?? cleanupRefs(target, req.targetRepo, req.id)).catch(() => undefined);
  }
}

/** A change of `execute`, run in order with the others, and what to record once it is done. */
interface Change {
  cwd: string;
  /** git's arguments (after the base options), or a whole argv when `program` is set. */
  args: string[];
  program?: boolean;
  done: PlacementAction | null;
  /** The error when it fails (default: git_failed naming the command). */
  failure?: (r: RunResult) => HandoffError;
}

async function execute(target: Host, plan: PlacementPlan, record: PlacementRecord, dropRefs: () => void): Promise<void> {
  const ref = branchRef(plan.branch);
  const msg = `agent-handoff ${plan.id}`;
  // From here on nothing needs the handoff refs (every change names its commits by id).
  dropRefs();
  // The upstream question reads refs and config only: asked while the branch and worktree are made.
  const upstream = upstreamWanted(target, plan);
  upstream.catch(() => undefined);
  const changes: Change[] = [];
  if (plan.mode === 'checked-out') {
    if (plan.fastForward && plan.branchTip) {
      // Plumbing rather than `git merge --ff-only`: no hooks, no merge machinery, same checks
      // (read-tree refuses to overwrite local changes or untracked files).
      changes.push({ cwd: plan.worktree, args: ['/bin/sh', '-c', 'git "$@" update-index -q --refresh; [ $? -le 1 ]', 'sh', ...GIT_BASE_CONFIG], program: true, done: null });
      changes.push({ cwd: plan.worktree, args: ['read-tree', '-u', '-m', plan.branchTip, plan.head], done: { kind: 'fast-forwarded', worktree: plan.worktree, branch: plan.branch, from: plan.branchTip, to: plan.head } });
      changes.push({ cwd: plan.worktree, args: ['update-ref', '-m', `${msg}: fast-forward`, ref, plan.head, plan.branchTip], done: null });
    }
  } else {
    if (plan.branchTip === null) {
      changes.push({ cwd: plan.repo, args: ['update-ref', '-m', `${msg}: create`, ref, plan.head, ZERO_OID], done: { kind: 'branch-created', branch: plan.branch, at: plan.head } });
    } else if (plan.fastForward) {
      changes.push({ cwd: plan.repo, args: ['update-ref', '-m', `${msg}: fast-forward`, ref, plan.head, plan.branchTip], done: { kind: 'branch-moved', branch: plan.branch, from: plan.branchTip, to: plan.head } });
    }
    const createdHome = plan.worktreeHomeExists === false ? worktreeHome(plan.repo) : null;
    changes.push({ cwd: plan.repo, args: ['worktree', 'add', '-q', plan.worktree, plan.branch], done: { kind: 'worktree-added', path: plan.worktree, createdHome } });
  }
  if (plan.wip) {
    const wip = plan.wip;
    changes.push({
      cwd: plan.worktree,
      args: moveFilesArgv(plan.head, wip, plan.head),
      program: true,
      done: { kind: 'snapshot-applied', worktree: plan.worktree, head: plan.head, wip },
      failure: (r) => applyConflict(target, plan.worktree, gitFailed(target, plan.worktree, ['read-tree', '-m', '-u', plan.head, wip], r)),
    });
  }
  // All in one program (one round trip); each change is recorded once it is done.
  const out = await runInOrder(
    target,
    changes.map((c) => ({ cwd: c.cwd, argv: c.program ? c.args : ['git', ...GIT_BASE_CONFIG, ...c.args] })),
    { env: GIT_BASE_ENV },
  );
  for (const c of changes.slice(0, out.done)) if (c.done) record.actions.push(c.done);
  const failed = changes[out.done];
  if (out.failed && failed) {
    const r = { exitCode: out.failed.exitCode, stdout: '', stderr: out.failed.stderr, durationMs: 0 };
    throw failed.failure ? failed.failure(r) : gitFailed(target, failed.cwd, failed.args, r);
  }
  if (await upstream) await setUpstream(target, plan, record);
}

/**
 * Should the branch track origin/<branch>? When that exists and the branch tracks nothing yet.
 * Whether it exists was read with the rest of the target's refs (no program when it does not).
 */
async function upstreamWanted(target: Host, plan: PlacementPlan): Promise<boolean> {
  if (!plan.originHasBranch) return false;
  const current = await git(target, plan.repo, ['config', '--get', `branch.${plan.branch}.merge`], { okCodes: [1] });
  return current.exitCode !== 0;
}

async function setUpstream(target: Host, plan: PlacementPlan, record: PlacementRecord): Promise<void> {
  record.actions.push({ kind: 'upstream-set', branch: plan.branch });
  // Both settings in one program (one round trip).
  const out = await runInOrder(
    target,
    [
      { cwd: plan.repo, argv: ['git', ...GIT_BASE_CONFIG, 'config', `branch.${plan.branch}.remote`, 'origin'] },
      { cwd: plan.repo, argv: ['git', ...GIT_BASE_CONFIG, 'config', `branch.${plan.branch}.merge`, branchRef(plan.branch)] },
    ],
    { env: GIT_BASE_ENV },
  );
  if (out.failed) throw gitFailed(target, plan.repo, ['config', `branch.${plan.branch}.${out.done === 0 ? 'remote' : 'merge'}`], { exitCode: out.failed.exitCode, stdout: '', stderr: out.failed.stderr, durationMs: 0 });
}

/**
 * Move the worktree's files from `from` to `to` through a temporary index that starts as the
 * real index (clean at `from`, so its stat cache is valid): `read-tree -m -u` writes only the
 * paths that differ, refuses to overwrite anything changed or untracked, and the real index
 * stays as it was — new files show up untracked, changes unstaged. One program, run in the worktree.
 */
function moveFilesArgv(from: string, to: string, indexAt: string): string[] {
  return ['/bin/sh', '-c', MOVE_FILES_SCRIPT, 'sh', `agent-handoff-index-${process.pid}-${randomBytes(6).toString('hex')}`, indexAt, from, to, ...GIT_BASE_CONFIG];
}

async function moveFiles(target: Host, worktree: string, from: string, to: string, indexAt: string): Promise<void> {
  const r = await target.run(moveFilesArgv(from, to, indexAt), { cwd: worktree, env: GIT_BASE_ENV });
  if (r.exitCode !== 0) throw gitFailed(target, worktree, ['read-tree', '-m', '-u', from, to], r);
}

/**
 * $1 temp index name, $2 the commit the real index holds, $3 from, $4 to, then git's base
 * options. The temporary index lives in the worktree's own git folder and is always removed.
 */
const MOVE_FILES_SCRIPT = [
  't=$1; at=$2; from=$3; to=$4; shift 4',
  'g=$(git "$@" rev-parse --absolute-git-dir) || exit 1',
  'i=$g/index; t=$g/$t',
  `if [ -e "$i" ]; then cp -p -- "$i" "$t" || exit 1; fi`,
  'GIT_INDEX_FILE=$t; export GIT_INDEX_FILE',
  '{ [ "$at" = "$from" ] || git "$@" read-tree -m -i "$at" "$from"; } && { git "$@" update-index -q --refresh; [ $? -le 1 ]; } && git "$@" read-tree -m -u "$from" "$to"; rc=$?',
  'rm -f -- "$t"; exit $rc',
].join('\n');

/** A failed apply of the snapshot, said as what the user must do. */
function applyConflict(target: Host, worktree: string, err: HandoffError): HandoffError {
  if (err.code !== 'git_failed') return err;
  return new HandoffError('apply_conflict', `The uncommitted changes could not be applied in ${worktree} on ${target.label}: ${err.message}`, {
    fix: `Move the files named above away in ${worktree} on ${target.label}, or hand off with --new-branch.`,
    details: err.details,
    cause: err,
  });
}

export interface UndoResult {
  undone: PlacementAction[];
  errors: { action: PlacementAction; message: string }[];
}

/**
 * Undo a placement exactly, newest change first. Never forces over work done since: a file
 * changed after the apply makes that step fail (reported in `errors`) rather than be lost.
 */
export async function undoPlacement(target: Host, record: PlacementRecord): Promise<UndoResult> {
  const rec = PlacementRecordSchema.parse(record);
  const result: UndoResult = { undone: [], errors: [] };
  const removedWorktrees = new Set(rec.actions.filter((a) => a.kind === 'worktree-added').map((a) => a.path));
  for (const action of [...rec.actions].reverse()) {
    try {
      await undoAction(target, rec, action, removedWorktrees);
      result.undone.push(action);
    } catch (err) {
      result.errors.push({ action, message: err instanceof Error ? err.message : String(err) });
    }
  }
  return result;
}

async function undoAction(target: Host, rec: PlacementRecord, action: PlacementAction, removedWorktrees: Set<string>): Promise<void> {
  const msg = `agent-handoff ${rec.id}: undo`;
  switch (action.kind) {
    case 'snapshot-applied':
      // A worktree that is removed next takes the applied files with it.
      if (removedWorktrees.has(action.worktree)) return;
      await moveFiles(target, action.worktree, action.wip, action.head, action.head);
      return;
    case 'fast-forwarded': {
      await git(target, action.worktree, ['update-index', '-q', '--refresh'], { okCodes: [1] });
      await git(target, action.worktree, ['read-tree', '-u', '-m', action.to, action.from]);
      // The record is written between read-tree and update-ref: the ref may not have moved yet.
      const now = await git(target, action.worktree, ['rev-parse', '--verify', '-q', branchRef(action.branch)], { okCodes: [1] });
      if (line(now) === action.to) await git(target, action.worktree, ['update-ref', '-m', msg, branchRef(action.branch), action.from, action.to]);
      return;
    }
    case 'worktree-added': {
      const r = await git(target, rec.repo, ['worktree', 'remove', '--force', '--force', action.path], { okCodes: [128] });
      if (r.exitCode !== 0) {
        await target.remove(action.path, { recursive: true });
        await git(target, rec.repo, ['worktree', 'prune']);
      }
      if (action.createdHome) await target.run(['rmdir', action.createdHome]);
      return;
    }
    case 'upstream-set':
      await git(target, rec.repo, ['config', '--unset', `branch.${action.branch}.remote`], { okCodes: [5] });
      await git(target, rec.repo, ['config', '--unset', `branch.${action.branch}.merge`], { okCodes: [5] });
      return;
    case 'branch-moved':
      await git(target, rec.repo, ['update-ref', '-m', msg, branchRef(action.branch), action.from, action.to]);
      return;
    case 'branch-created':
      await git(target, rec.repo, ['update-ref', '-m', msg, '-d', branchRef(action.branch), action.at]);
      return;
  }
}
