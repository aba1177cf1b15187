// Place: on the target, put the source's branch where the agent will work, and its uncommitted
// work on top — without ever losing something that was already there — and undo that exactly.
//
// Where the branch lands is decided from the facts (placement-facts.ts asks them,
// placement-decide.ts decides, changing nothing anywhere): its checked-out worktree,
// fast-forwarded, or a new worktree beside the main checkout. The snapshot is then applied with
// a temporary index (`read-tree -m -u head wip`): files change, new files appear untracked,
// deletions happen, the target's real index is not touched.
import { z } from 'zod';
import { HandoffError } from '../errors.js';
import type { Host, RunResult } from '../host/host.js';
import { runInOrder } from '../host/run-in-order.js';
import { randomBytes } from 'node:crypto';
import { branchRef, GIT_BASE_CONFIG, GIT_BASE_ENV, git, gitFailed, line, ZERO_OID } from './git.js';
import { decidePlacement, type PlacementPlan, type PlacementWish } from './placement-decide.js';
import { commitsOn, gatherPlacementFacts, type CommitOracle } from './placement-facts.js';
import { knownUpstream, type PlacementReads } from './placement-read.js';
import type { ChangedFile } from './snapshot.js';
import { cleanupRefs } from './transfer.js';
import { worktreeHome } from './worktrees.js';

export interface PlacementRequest extends Omit<PlacementWish, 'targetLabel'> {
  target: Host;
  /** `place` only: awaited after its read-only check and before its first change (e.g. a journal write), with what it will do. */
  beforeChanges?: (plan: PlacementPlan) => Promise<void>;
  /** The target's worktrees and branches read ahead (see readPlacementState), instead of asking now. */
  read?: Promise<PlacementReads>;
  /** `place` only: ask questions about commits here (e.g. the source, which has them all) instead of the target. */
  commitsOn?: { host: Host; repo: string };
  /** What wip changes relative to head, when already known (the snapshot lists it), instead of asking. */
  changedFiles?: ChangedFile[];
}

/**
 * Decide the placement and check it would succeed, changing nothing anywhere (no refs, no files,
 * no index). Throws `target_dirty`, `target_diverged`, `apply_conflict`… exactly as `place` would.
 */
export async function checkPlacement(req: PlacementRequest & { source: Host; sourceRepo: string }): Promise<PlacementPlan> {
  return planPlacement(req, commitsOn(req.source, req.sourceRepo));
}

async function planPlacement(req: PlacementRequest, commits: CommitOracle): Promise<PlacementPlan> {
  const wish: PlacementWish = {
    id: req.id,
    targetRepo: req.targetRepo,
    targetLabel: req.target.label,
    head: req.head,
    wip: req.wip,
    sourceBranch: req.sourceBranch,
    ...(req.newBranch !== undefined ? { newBranch: req.newBranch } : {}),
    ...(req.sessionId !== undefined ? { sessionId: req.sessionId } : {}),
  };
  const facts = await gatherPlacementFacts(wish, {
    target: req.target,
    commits,
    ...(req.read ? { read: req.read } : {}),
    ...(req.changedFiles ? { changedFiles: req.changedFiles } : {}),
  });
  return decidePlacement(wish, facts);
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
    const plan = await planPlacement(req, req.commitsOn ? commitsOn(req.commitsOn.host, req.commitsOn.repo) : commitsOn(target, req.targetRepo));
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
      await execute(target, plan, record, dropRefs, req.read ? await req.read.catch(() => null) : null);
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

async function execute(target: Host, plan: PlacementPlan, record: PlacementRecord, dropRefs: () => void, read: PlacementReads | null): Promise<void> {
  const ref = branchRef(plan.branch);
  const msg = `agent-handoff ${plan.id}`;
  // From here on nothing needs the handoff refs (every change names its commits by id).
  dropRefs();
  // The upstream question reads refs and config only: asked while the branch and worktree are made.
  const upstream = upstreamWanted(target, plan, read);
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
async function upstreamWanted(target: Host, plan: PlacementPlan, read: PlacementReads | null): Promise<boolean> {
  if (!plan.originHasBranch) return false;
  // Read with the rest of the checkout moments ago, when the plan looked at this branch.
  const known = knownUpstream(read, plan.branch);
  if (known !== undefined) return !known;
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
