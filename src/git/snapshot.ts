// Snapshot: the uncommitted work of a checkout as ONE commit object whose parent is HEAD.
//
// Built through a temporary index (a copy of the real one, so git's stat cache spares re-hashing
// unchanged files): `git add -A` into it, `write-tree`, `commit-tree`. The user's index, branch,
// HEAD and files are never written; the only trace is unreferenced objects in the object store,
// which git's gc removes in time. Untracked files that are not ignored are included; ignored
// files are not (they are build output and secrets more often than work).
import path from 'node:path';
import { HandoffError } from '../errors.js';
import type { Host, RunResult } from '../host/host.js';
import { GIT_BASE_CONFIG, GIT_BASE_ENV, git, gitFailed, line, splitNul, tempName } from './git.js';

/** Author and committer of the internal snapshot commit, so a machine without a git identity works too. */
export const SNAPSHOT_IDENTITY: Record<string, string> = {
  GIT_AUTHOR_NAME: 'agent-handoff',
  GIT_AUTHOR_EMAIL: 'agent-handoff@localhost',
  GIT_COMMITTER_NAME: 'agent-handoff',
  GIT_COMMITTER_EMAIL: 'agent-handoff@localhost',
};

export interface ChangedFile {
  /** A added (also untracked), M modified, D deleted, T type changed (file ↔ symlink ↔ submodule). */
  status: string;
  /** Path relative to the repository root, as git spells it. */
  path: string;
}

export interface RepoLayout {
  /** `git rev-parse --show-toplevel` (the worktree the agent is in). */
  repoRoot: string;
  /** repoRoot with every symlink resolved. */
  realRoot: string;
  /** This worktree's git folder (`.git`, or `.git/worktrees/<name>` in a linked worktree). */
  gitDir: string;
  /** The repository's shared git folder (objects, refs). */
  commonDir: string;
  /** Path of the agent's cwd below repoRoot ('' at the root), POSIX separators, no trailing slash. */
  relativeCwd: string;
}

export interface Snapshot extends RepoLayout {
  /** Commit HEAD points at. */
  head: string;
  /** Checked-out branch name (without refs/heads/), or null for a detached HEAD. */
  branch: string | null;
  /** The commit holding the uncommitted work (parent: head), or null when the tree equals HEAD's. */
  snapshot: string | null;
  /** Tree of the working state (equals HEAD's tree when there is nothing uncommitted). */
  tree: string;
  changedFiles: ChangedFile[];
  /**
   * Identity of the working state: `<head>:<tree>`. Trees are content-addressed, so two equal
   * fingerprints mean byte-identical tracked and untracked (non-ignored) files on the same HEAD.
   */
  fingerprint: string;
}

/** Where the checkout containing `cwd` keeps things; throws `not_a_repo` or `unborn_head`. */
/** A checkout's layout with its HEAD: what `rev-parse` tells in one program. */
export type HeadLayout = RepoLayout & { head: string; headTree: string; branch: string | null };

/**
 * In the checkout's folder: git's toplevel, git dirs, prefix, HEAD commit, its tree and its
 * symbolic name, a line each, then the toplevel's physical path (on a failure: what git printed,
 * and its exit code). One program: one round trip on a remote host.
 */
export const LAYOUT_SCRIPT = [
  "o=$(git rev-parse --show-toplevel --absolute-git-dir --git-common-dir --show-prefix HEAD 'HEAD^{tree}' --symbolic-full-name HEAD); rc=$?",
  'printf "%s\\n" "$o"',
  '[ "$rc" -eq 0 ] || exit "$rc"',
  "nl='",
  "'",
  'cd -P -- "${o%%"$nl"*}" && pwd -P',
].join('\n');

export async function repoLayout(host: Host, cwd: string): Promise<HeadLayout> {
  return layoutOf(host, cwd, await host.run(['/bin/sh', '-c', LAYOUT_SCRIPT], { cwd, env: LAYOUT_ENV }));
}

/** The environment LAYOUT_SCRIPT runs in: git's messages as the parse expects them, no index refresh. */
export const LAYOUT_ENV = { LC_ALL: 'C', GIT_OPTIONAL_LOCKS: '0' } as const;

/** LAYOUT_SCRIPT's answer, run in `cwd` (a physical path: git's relative answers are relative to it). */
export async function layoutOf(host: Host, cwd: string, r: RunResult): Promise<HeadLayout> {
  const lines = r.stdout.split('\n');
  const [top, gitDir, common, prefix, head, headTree, symbolic, real] = lines;
  if (r.exitCode !== 0) {
    if (top?.startsWith('/') && /ambiguous argument 'HEAD'|unknown revision/.test(r.stderr)) {
      throw new HandoffError('unborn_head', `The repository at ${top} on ${host.label} has no commit yet, so there is no branch to hand off.`, {
        fix: 'Make a first commit (git add -A && git commit -m "first commit"), then hand off again.',
        details: { repoRoot: top },
      });
    }
    if (r.exitCode === 127) throw new HandoffError('git_missing', `git is not installed on ${host.label}.`, { fix: `Install git on ${host.label}.` });
    throw new HandoffError('not_a_repo', `${cwd} on ${host.label} is not inside a git checkout: ${r.stderr.trim()}`, {
      fix: 'Run the agent inside a git repository, or hand off without a repository.',
      details: { cwd },
    });
  }
  if (!top || !gitDir || common === undefined || prefix === undefined || !head || !headTree || !symbolic) {
    throw new HandoffError('git_failed', `Unexpected output from git rev-parse in ${cwd} on ${host.label}.`, { details: { stdout: r.stdout } });
  }
  const branch = symbolic.startsWith('refs/heads/') ? symbolic.slice('refs/heads/'.length) : null;
  return {
    repoRoot: top,
    realRoot: real?.startsWith('/') ? real : await host.realpath(top),
    gitDir,
    // Relative answers are relative to the cwd git ran in.
    commonDir: path.posix.resolve(cwd, common),
    relativeCwd: prefix.replace(/\/+$/, ''),
    head,
    headTree,
    branch,
  };
}

/**
 * The tree of the working state of the checkout (tracked + untracked non-ignored files), written
 * through a temporary index. Shared by `snapshot` and the stash's "did anything change" check.
 */
export async function workingTree(host: Host, layout: Pick<RepoLayout, 'repoRoot' | 'gitDir'>): Promise<string> {
  // One program (one round trip on a remote host): copy the index, add, write the tree, clean up.
  const tmpIndex = tempName(layout.gitDir, 'index');
  const r = await host.run(['/bin/sh', '-c', WORKING_TREE_SCRIPT, 'sh', path.posix.join(layout.gitDir, 'index'), tmpIndex, ...GIT_BASE_CONFIG], { cwd: layout.repoRoot, env: GIT_BASE_ENV });
  return line(treeWritten(host, layout.repoRoot, `in ${layout.gitDir}`, r));
}

/** The run of a working-tree program, or the error that says why it failed. */
function treeWritten(host: Host, where: string, index: string, r: RunResult): RunResult {
  if (r.exitCode !== 0) throw treeFailure(host, where, index, r);
  return r;
}

/** Why a working-tree program wrote no tree. */
function treeFailure(host: Host, where: string, index: string, r: RunResult): HandoffError {
  if (r.exitCode === INDEX_COPY_FAILED) return indexCopyFailed(host, index, r);
  return gitFailed(host, where, ['add', '-A', '--', ':/'], r);
}

/** The error of a program that exited INDEX_COPY_FAILED: the real index (`index` names it) could not be copied. */
export function indexCopyFailed(host: Host, index: string, r: RunResult): HandoffError {
  return new HandoffError('git_failed', `Could not copy the git index ${index} on ${host.label}: ${r.stderr.trim()}`, { fix: 'Check the permissions of the repository folder.' });
}

/** The exit code of a program here when the real index could not be copied. */
export const INDEX_COPY_FAILED = 70;
/**
 * With $i the real index and $t the temporary one (git's base options in "$@"): the working
 * tree's id on stdout. A missing real index (a repository with no index yet) starts the temporary
 * one empty. The temporary index is always removed.
 *
 * A copy of the real index keeps git's stat cache, so unchanged files are not re-hashed. `cp -p`
 * matters: git treats an entry as "racily clean" (and compares content) when the file's mtime is
 * not older than the index file's own; a copy with a fresh mtime would make git trust the stat
 * data of a file rewritten with the same size within the same clock tick, and miss that change.
 */
const TREE_FROM_TEMP_INDEX = [
  `if [ -e "$i" ]; then cp -p -- "$i" "$t" || exit ${INDEX_COPY_FAILED}; fi`,
  'GIT_INDEX_FILE=$t; export GIT_INDEX_FILE',
  'git "$@" add -A -- :/ && git "$@" write-tree; rc=$?',
  'rm -f -- "$t"; exit $rc',
];

/** $1 the real index, $2 the temporary one, then git's base options. */
const WORKING_TREE_SCRIPT = ['i=$1; t=$2; shift 2', ...TREE_FROM_TEMP_INDEX].join('\n');

/**
 * HEAD and the working tree (as `workingTree` writes it) of the checkout at `worktree`, in one
 * program: the git folder is asked there too, so a remote check costs one round trip, not two.
 */
export async function headAndWorkingTree(host: Host, worktree: string): Promise<{ head: string; tree: string }> {
  const r = await host.run(['/bin/sh', '-c', HEAD_AND_TREE_SCRIPT, 'sh', tempIndexName(), ...GIT_BASE_CONFIG], { cwd: worktree, env: GIT_BASE_ENV });
  const [head = '', tree = ''] = treeWritten(host, worktree, `of ${worktree}`, r).stdout.trim().split('\n');
  return { head, tree };
}

/** $1 the temporary index's name (in the git folder), then git's base options: HEAD, then the tree. */
const HEAD_AND_TREE_SCRIPT = [
  'n=$1; shift',
  // One rev-parse: the git folder, then HEAD on the last line.
  'o=$(git "$@" rev-parse --absolute-git-dir --verify -q HEAD) || exit 1',
  "nl='\n'; g=${o%\"$nl\"*}; h=${o##*\"$nl\"}",
  '[ -n "$g" ] && [ "$g" != "$o" ] || exit 1',
  'i=$g/index; t=$g/$n',
  'printf "%s\\n" "$h"',
  ...TREE_FROM_TEMP_INDEX,
].join('\n');

/** The exit code of UNCHANGED_GUARD_SCRIPT when HEAD or the working tree is not the expected one. */
export const STATE_CHANGED_EXIT = 3;

/**
 * $1 the expected `HEAD:tree`, $2 a temporary index's name (in the git folder), then git's base
 * options: prints HEAD and the working tree (as headAndWorkingTree), and exits
 * STATE_CHANGED_EXIT when they are not the expected ones — a guard that can run first in a
 * program that goes on to change the checkout only when nothing changed.
 */
export const UNCHANGED_GUARD_SCRIPT = ['f=$1; shift', 'o=$(', HEAD_AND_TREE_SCRIPT, ') || exit $?', 'printf "%s\\n" "$o"', 'set -f; set -- $o', `[ "$1:$2" = "$f" ] || exit ${STATE_CHANGED_EXIT}`].join('\n');

/** The temporary index name the scripts above take (it goes in the git folder, found there). */
export function tempIndexName(): string {
  return path.posix.basename(tempName('/', 'index'));
}

/** Snapshot the uncommitted work of the checkout containing `cwd`. Changes nothing the user sees. */
export async function snapshot(host: Host, cwd: string): Promise<Snapshot> {
  return snapshotOf(host, await repoLayout(host, cwd));
}

/**
 * $1 the real index and $2 the temporary one of the checkout looked at before, $3 its top, then
 * git's base options; run in the agent's folder. The layout as LAYOUT_SCRIPT tells it (on a
 * failure its output and exit code, nothing more), a NUL, then the working tree's id written in
 * that checkout as WORKING_TREE_SCRIPT does, with that program's exit code.
 */
export const LAYOUT_AND_TREE_SCRIPT = [
  'i=$1; t=$2; top=$3; shift 3',
  'l=$(',
  LAYOUT_SCRIPT,
  ') || { rc=$?; printf "%s\\n" "$l"; exit "$rc"; }',
  'printf "%s\\n\\0" "$l"',
  'cd -- "$top" || exit 1',
  ...TREE_FROM_TEMP_INDEX,
].join('\n');

/**
 * The snapshot again (after the quit) of a checkout looked at before: HEAD and the working tree
 * in one program (one shell over ssh, where the quit's other reads want one too), the tree
 * through the git folder known from then. Should the checkout turn out to be another one, its
 * tree is asked again there. Unchanged (same HEAD and tree), it is the snapshot from before,
 * commit included: what was sent ahead of the quit stands.
 */
export async function snapshotAgain(host: Host, cwd: string, known: Snapshot): Promise<Snapshot> {
  const argv = ['/bin/sh', '-c', LAYOUT_AND_TREE_SCRIPT, 'sh', path.posix.join(known.gitDir, 'index'), tempName(known.gitDir, 'index'), known.repoRoot, ...GIT_BASE_CONFIG];
  const r = await host.run(argv, { cwd, env: GIT_BASE_ENV });
  const cut = r.stdout.indexOf('\0');
  // A checkout that is gone or broken is best told by the layout.
  const layout = await layoutOf(host, cwd, cut < 0 ? r : { ...r, exitCode: 0, stdout: r.stdout.slice(0, cut) });
  if (layout.gitDir !== known.gitDir || layout.repoRoot !== known.repoRoot) return snapshotOf(host, layout);
  if (cut < 0) throw new HandoffError('git_failed', `Unexpected output from the snapshot in ${cwd} on ${host.label}.`, { details: { stdout: r.stdout } });
  const tree = line(treeWritten(host, known.repoRoot, `in ${known.gitDir}`, { ...r, stdout: r.stdout.slice(cut + 1) }));
  if (layout.head === known.head && tree === known.tree) return { ...layout, snapshot: known.snapshot, tree, changedFiles: known.changedFiles, fingerprint: known.fingerprint };
  return snapshotWithTree(host, layout, tree);
}

/** The same work to place: checkout, branch, HEAD and snapshot commit (so also the files). */
export function sameWork(a: Snapshot, b: Snapshot): boolean {
  return a.repoRoot === b.repoRoot && a.branch === b.branch && a.head === b.head && a.snapshot === b.snapshot;
}

/**
 * With $h HEAD, $tree a tree and $m the message (git's base options in "$@"): the commit of the
 * tree on HEAD, its id on a line, then what it changes (diff-tree -z).
 */
const COMMIT_AND_DIFF = [
  'c=$(git "$@" commit-tree --no-gpg-sign -p "$h" -m "$m" "$tree") || exit $?',
  'printf "%s\\n" "$c"',
  'exec git "$@" diff-tree -r -z --no-renames --name-status "$h" "$c"',
];

/** SNAPSHOT_SCRIPT's work, its arguments in $i, $t, $h, $ht and $m (git's base options in "$@"). */
const SNAPSHOT_OF_VARIABLES = [
  // The temporary index is the subshell's alone: the commit below is made without it.
  'tree=$(',
  ...TREE_FROM_TEMP_INDEX,
  ') || exit $?',
  'printf "%s\\n" "$tree"',
  '[ "$tree" != "$ht" ] || exit 0',
  ...COMMIT_AND_DIFF,
];

/**
 * $1 the real index, $2 the temporary one, $3 HEAD, $4 HEAD's tree, $5 the message, then git's
 * base options: the working tree's id on a line (written as WORKING_TREE_SCRIPT does); when it
 * is not HEAD's, the snapshot commit's id on the next, then what it changes (diff-tree -z).
 */
export const SNAPSHOT_SCRIPT = ['i=$1; t=$2; h=$3; ht=$4; m=$5; shift 5', ...SNAPSHOT_OF_VARIABLES].join('\n');

/**
 * The snapshot of a checkout whose layout is known: its working tree, and the commit of it when
 * it is not HEAD's, in one program (one round trip on a remote host). The plan's first read of
 * the source makes it in the program that reads the layout (source-checkout.ts).
 */
export async function snapshotOf(host: Host, layout: HeadLayout): Promise<Snapshot> {
  const message = snapshotMessage(layout);
  const argv = ['/bin/sh', '-c', SNAPSHOT_SCRIPT, 'sh', path.posix.join(layout.gitDir, 'index'), tempName(layout.gitDir, 'index'), layout.head, layout.headTree, message, ...GIT_BASE_CONFIG];
  const r = await host.run(argv, { cwd: layout.repoRoot, env: { ...GIT_BASE_ENV, ...SNAPSHOT_IDENTITY } });
  return snapshotAnswered(host, layout, r);
}

/** SNAPSHOT_SCRIPT's answer (`r`, its output alone) for `layout`: the snapshot, or why there is none. */
export function snapshotAnswered(host: Host, layout: HeadLayout, r: RunResult): Snapshot {
  const [tree = ''] = r.stdout.split('\n', 1);
  if (!OBJECT_ID.test(tree)) throw treeFailure(host, layout.repoRoot, `in ${layout.gitDir}`, r);
  return snapshotFrom(layout, tree, tree === layout.headTree ? null : committed(host, layout, tree, r, r.stdout.slice(tree.length + 1)));
}

/**
 * SNAPSHOT_SCRIPT for the checkout LAYOUT_SCRIPT has just told (its rev-parse lines in `$o`, the
 * toplevel the folder), with $n the temporary index's name (in the git folder), $mb the
 * message's start for a branch (its name follows) and $md the message on a detached HEAD —
 * snapshotMessage's two forms — and git's base options in "$@". The same answer.
 */
export const SNAPSHOT_AFTER_LAYOUT = [
  // No line of $o is this word: they are absolute paths, object ids, a ref and a prefix ending in '/'.
  '{ IFS= read -r x; IFS= read -r g; IFS= read -r x; IFS= read -r x; IFS= read -r h; IFS= read -r ht; IFS= read -r s; } <<AH_LAYOUT_END',
  '$o',
  'AH_LAYOUT_END',
  'case $s in refs/heads/*) m=$mb${s#refs/heads/} ;; *) m=$md ;; esac',
  'i=$g/index; t=$g/$n',
  ...SNAPSHOT_OF_VARIABLES,
].join('\n');

/** snapshotMessage's two forms, for SNAPSHOT_AFTER_LAYOUT: the start of a branch's, and a detached HEAD's. */
export const SNAPSHOT_MESSAGES = { branchStart: 'agent-handoff snapshot of ', detached: 'agent-handoff snapshot of detached HEAD' } as const;

/** The snapshot of `layout` with its working tree, and the commit of it (null: the tree is HEAD's). */
function snapshotFrom(layout: HeadLayout, tree: string, made: { commit: string; changedFiles: ChangedFile[] } | null): Snapshot {
  return { ...layout, snapshot: made?.commit ?? null, tree, changedFiles: made?.changedFiles ?? [], fingerprint: `${layout.head}:${tree}` };
}

const OBJECT_ID = /^[0-9a-f]{40,64}$/;

function snapshotMessage(layout: HeadLayout): string {
  return layout.branch === null ? SNAPSHOT_MESSAGES.detached : `${SNAPSHOT_MESSAGES.branchStart}${layout.branch}`;
}

async function snapshotWithTree(host: Host, layout: HeadLayout, tree: string): Promise<Snapshot> {
  return snapshotFrom(layout, tree, tree === layout.headTree ? null : await commitSnapshot(host, layout, tree));
}

/** $1 HEAD, $2 the tree, $3 the message, then git's base options: COMMIT_AND_DIFF's answer. */
const COMMIT_AND_DIFF_SCRIPT = ['h=$1; tree=$2; m=$3; shift 3', ...COMMIT_AND_DIFF].join('\n');

/** The snapshot commit (parent HEAD) and the files it changes: one program. */
async function commitSnapshot(host: Host, layout: HeadLayout, tree: string): Promise<{ commit: string; changedFiles: ChangedFile[] }> {
  const message = snapshotMessage(layout);
  const r = await host.run(['/bin/sh', '-c', COMMIT_AND_DIFF_SCRIPT, 'sh', layout.head, tree, message, ...GIT_BASE_CONFIG], { cwd: layout.repoRoot, env: { ...GIT_BASE_ENV, ...SNAPSHOT_IDENTITY } });
  return committed(host, layout, tree, r, r.stdout);
}

/** COMMIT_AND_DIFF's answer (`out`, in the run `r`): the commit and the files it changes, or the error. */
function committed(host: Host, layout: HeadLayout, tree: string, r: RunResult, out: string): { commit: string; changedFiles: ChangedFile[] } {
  const nl = out.indexOf('\n');
  const commit = nl > 0 ? out.slice(0, nl) : '';
  if (r.exitCode !== 0 || !OBJECT_ID.test(commit)) throw gitFailed(host, layout.repoRoot, ['commit-tree', '-p', layout.head, tree], r);
  return { commit, changedFiles: parseNameStatus(out.slice(nl + 1)) };
}

/** Files that differ between two commits (renames not detected: one entry per path). */
export async function changedBetween(host: Host, cwd: string, from: string, to: string): Promise<ChangedFile[]> {
  return parseNameStatus((await git(host, cwd, ['diff-tree', '-r', '-z', '--no-renames', '--name-status', from, to])).stdout);
}

/** `diff-tree -z --name-status` output → one entry per path. */
function parseNameStatus(stdout: string): ChangedFile[] {
  const out = splitNul(stdout);
  const files: ChangedFile[] = [];
  for (let i = 0; i + 1 < out.length; i += 2) files.push({ status: out[i] ?? '', path: out[i + 1] ?? '' });
  return files;
}
