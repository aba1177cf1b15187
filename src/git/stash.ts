// Source stash: after a successful handoff, the work that moved leaves the source checkout as a
// regular stash entry (so `git stash pop` brings it back), and the files return to HEAD.
//
// Only when the working state is still exactly the snapshot that moved (same HEAD, same tree:
// trees are content-addressed, so equal ids mean identical files). Anything written after the
// snapshot did not reach the target; resetting would destroy it, so the files are then kept.
//
// The entry has git's own stash shape — parents HEAD, the index state, and the untracked files —
// because `git stash apply` refuses anything else.
import path from 'node:path';
import type { Host } from '../host/host.js';
import { runInOrder } from '../host/run-in-order.js';
import { GIT_BASE_CONFIG, GIT_BASE_ENV, git, gitFailed, splitNul, tempName } from './git.js';
import { headAndWorkingTree, INDEX_COPY_FAILED, indexCopyFailed, SNAPSHOT_IDENTITY, STATE_CHANGED_EXIT, tempIndexName, UNCHANGED_GUARD_SCRIPT, type Snapshot } from './snapshot.js';

export interface StashRequest {
  host: Host;
  snapshot: Snapshot;
  id: string;
  /** Where the work went, for the stash message (e.g. 'vega'). */
  targetLabel: string;
  /** Leave the source files as they are. */
  keepSourceChanges?: boolean;
  /**
   * The stash commit, built earlier by `prepareStash` while the agent starts on the target (it writes only
   * unreferenced objects). Used only when the working state is still the snapshot's.
   */
  prepared?: Promise<PreparedStash | null>;
}

/** A stash commit and the untracked files it holds (which the reset then removes). */
export interface PreparedStash {
  commit: string;
  untracked: string[];
}

/** The stash message for a handoff. */
export function stashMessage(id: string, targetLabel: string): string {
  return `agent-handoff ${id} → ${targetLabel}`;
}

/**
 * Build the stash commit of the snapshot's working state ahead of time; null when there is
 * nothing to stash or it could not be built (the stash step then builds it itself).
 */
export function prepareStash(host: Host, snap: Snapshot, id: string, targetLabel: string): Promise<PreparedStash | null> {
  if (!snap.snapshot) return Promise.resolve(null);
  return stashCommit(host, snap, stashMessage(id, targetLabel)).catch(() => null);
}

export interface StashResult {
  stashed: boolean;
  /** The stash commit (`stash@{0}` right after), when stashed. */
  stash: string | null;
  message: string | null;
  /** Why nothing was stashed. */
  reason: 'stashed' | 'keep_requested' | 'nothing_uncommitted' | 'changed_after_snapshot';
  /** Files that changed after the snapshot (kept in place, not on the target). */
  changedAfterSnapshot: string[];
  /** A sentence for the result. */
  note: string;
}

/** The fields of a result that stashed nothing. */
const NOT_STASHED = { stashed: false, stash: null, message: null, changedAfterSnapshot: [] as string[] } as const;

export async function stashSourceChanges(req: StashRequest): Promise<StashResult> {
  const { host, snapshot: snap } = req;
  if (req.keepSourceChanges) {
    return { ...NOT_STASHED, reason: 'keep_requested', note: 'The uncommitted changes were left in the source checkout as asked.' };
  }
  if (!snap.snapshot) {
    // Nothing to stash; whether anything changed since is still worth saying.
    const now = await headAndWorkingTree(host, snap.repoRoot);
    if (`${now.head}:${now.tree}` !== snap.fingerprint) return changedAfterSnapshot(host, snap, now);
    return { ...NOT_STASHED, reason: 'nothing_uncommitted', note: 'There were no uncommitted changes to stash.' };
  }
  const message = stashMessage(req.id, req.targetLabel);
  // Built from the snapshot's working state; stored only if that is still the state (the guard below).
  const { commit: stash, untracked } = (await req.prepared) ?? (await stashCommit(host, snap, message));
  const changed = await storeAndReset(host, snap, message, stash, untracked);
  if (changed) return changedAfterSnapshot(host, snap, changed);
  return {
    stashed: true,
    stash,
    message,
    reason: 'stashed',
    changedAfterSnapshot: [],
    note: `The source changes were stashed (${message}); \`git stash pop\` in ${snap.repoRoot} brings them back.`,
  };
}

/** Nothing stashed: HEAD or the files changed after the snapshot (and did not move). */
async function changedAfterSnapshot(host: Host, snap: Snapshot, now: { head: string; tree: string }): Promise<StashResult> {
  const changed = await changedTrees(host, snap.repoRoot, snap.tree, now.tree);
  return {
    ...NOT_STASHED,
    reason: 'changed_after_snapshot',
    changedAfterSnapshot: changed,
    note:
      now.head !== snap.head
        ? `HEAD of the source checkout moved after the snapshot (${snap.head.slice(0, 12)} → ${now.head.slice(0, 12)}); the source files were left as they are.`
        : `Files in the source checkout changed after the snapshot and did not move; the source files were left as they are: ${changed.slice(0, 10).join(', ')}${changed.length > 10 ? ', …' : ''}.`,
  };
}

async function changedTrees(host: Host, repo: string, from: string, to: string): Promise<string[]> {
  const out = splitNul((await git(host, repo, ['diff-tree', '-r', '-z', '--no-renames', '--name-only', from, to])).stdout);
  return out;
}

/**
 * $1 the real index, $2 a temporary index, $3 a temporary list file (both in the git folder),
 * $4 HEAD, $5 the short description (`branch: abc1234`), $6 the message, then git's base
 * options; run at the checkout's top. Builds a commit shaped like `git stash push
 * --include-untracked` makes it: parents HEAD, the index state (its own commit on HEAD), and —
 * when there are any — the untracked, non-ignored files (a root commit); its tree is the tracked
 * files as they are in the worktree. Answers the commit on a line, then the untracked files
 * (NUL-separated). One program, so a remote source pays one round trip for it. The real index
 * is never written (a copy of it is: TREE_FROM_TEMP_INDEX in snapshot.ts says why `cp -p`), and
 * both temporary files are removed.
 */
export const STASH_COMMIT_SCRIPT = [
  'i=$1; t=$2; u=$3; h=$4; s=$5; m=$6; shift 6',
  'c=$(',
  // Listed against the real index, before the temporary one is set.
  '  git "$@" ls-files -z --others --exclude-standard >"$u" || exit $?',
  `  if [ -e "$i" ]; then cp -p -- "$i" "$t" || exit ${INDEX_COPY_FAILED}; fi`,
  '  GIT_INDEX_FILE=$t; export GIT_INDEX_FILE',
  '  it=$(git "$@" write-tree) || exit $?',
  '  ic=$(git "$@" commit-tree --no-gpg-sign -p "$h" -m "index on $s" "$it") || exit $?',
  '  git "$@" add -u -- :/ || exit $?',
  '  wt=$(git "$@" write-tree) || exit $?',
  '  if [ ! -s "$u" ]; then exec git "$@" commit-tree --no-gpg-sign -p "$h" -p "$ic" -m "$m" "$wt"; fi',
  '  rm -f -- "$t"',
  '  git "$@" update-index --add -z --stdin <"$u" || exit $?',
  '  ut=$(git "$@" write-tree) || exit $?',
  '  uc=$(git "$@" commit-tree --no-gpg-sign -m "untracked files on $s" "$ut") || exit $?',
  '  exec git "$@" commit-tree --no-gpg-sign -p "$h" -p "$ic" -p "$uc" -m "$m" "$wt"',
  '); rc=$?',
  'rm -f -- "$t"',
  '[ "$rc" -eq 0 ] || { rm -f -- "$u"; exit "$rc"; }',
  'printf "%s\\n" "$c"',
  'cat -- "$u"; rc=$?',
  'rm -f -- "$u"; exit "$rc"',
].join('\n');

/** Build the stash commit (STASH_COMMIT_SCRIPT) of the checkout's working state. */
async function stashCommit(host: Host, snap: Snapshot, message: string): Promise<PreparedStash> {
  const { repoRoot, gitDir, head } = snap;
  const short = `${snap.branch ?? '(no branch)'}: ${head.slice(0, 7)}`;
  const realIndex = path.posix.join(gitDir, 'index');
  const argv = ['/bin/sh', '-c', STASH_COMMIT_SCRIPT, 'sh', realIndex, tempName(gitDir, 'stash-index'), tempName(gitDir, 'untracked'), head, short, message, ...GIT_BASE_CONFIG];
  const r = await host.run(argv, { cwd: repoRoot, env: { ...GIT_BASE_ENV, ...SNAPSHOT_IDENTITY } });
  const nl = r.stdout.indexOf('\n');
  const commit = r.stdout.slice(0, Math.max(nl, 0));
  if (r.exitCode === INDEX_COPY_FAILED) throw indexCopyFailed(host, realIndex, r);
  if (r.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(commit)) throw gitFailed(host, repoRoot, ['commit-tree'], r);
  return { commit, untracked: splitNul(r.stdout.slice(nl + 1)) };
}

/**
 * Store the stash, then the files, index and untracked (non-ignored) files back to HEAD, as
 * `git stash push -u` leaves them: one program (commands in order, stopping at the first that
 * fails, so nothing is reset unless the stash was stored). It begins with a guard: HEAD and the
 * working tree must still be the snapshot's (anything written after it did not reach the target,
 * and a reset would destroy it). Returns what they are instead when they are not; else null.
 */
async function storeAndReset(host: Host, snap: Snapshot, message: string, stash: string, untracked: readonly string[]): Promise<{ head: string; tree: string } | null> {
  const repoRoot = snap.repoRoot;
  const gitCommand = (args: string[]) => ({ cwd: repoRoot, argv: ['git', ...GIT_BASE_CONFIG, ...args], args });
  const guard = ['/bin/sh', '-c', UNCHANGED_GUARD_SCRIPT, 'sh', snap.fingerprint, tempIndexName(), ...GIT_BASE_CONFIG];
  const commands = [{ cwd: repoRoot, argv: guard, args: ['add', '-A', '--', ':/'] }, gitCommand(['stash', 'store', '-m', message, stash]), gitCommand(['reset', '--hard', '-q', 'HEAD'])];
  for (let i = 0; i < untracked.length; i += 500) {
    commands.push(gitCommand(['clean', '-f', '-q', '--', ...untracked.slice(i, i + 500).map((p) => `:(literal)${p}`)]));
  }
  // Folders that held only untracked files are left empty by the clean above.
  const dirs = new Set<string>();
  for (const f of untracked) {
    const parts = f.split('/');
    for (let i = parts.length - 1; i > 0; i--) dirs.add(parts.slice(0, i).join('/'));
  }
  const deepestFirst = [...dirs].sort((a, b) => b.split('/').length - a.split('/').length);
  for (let i = 0; i < deepestFirst.length; i += 500) {
    const script = ['sh', '-c', 'for d do rmdir "./$d" 2>/dev/null; done; exit 0', 'sh', ...deepestFirst.slice(i, i + 500)];
    commands.push({ cwd: repoRoot, argv: script, args: script });
  }
  const out = await runInOrder(host, commands, { env: GIT_BASE_ENV });
  if (out.done === 0 && out.failed?.exitCode === STATE_CHANGED_EXIT) {
    // The guard's two lines come last (git may have warned before them).
    const [head = '', tree = ''] = out.failed.stderr.split('\n').filter((l) => /^[0-9a-f]{40,64}$/.test(l)).slice(-2);
    return { head, tree };
  }
  const failed = commands[out.done];
  if (out.failed && failed) throw gitFailed(host, repoRoot, failed.args, { exitCode: out.failed.exitCode, stdout: '', stderr: out.failed.stderr, durationMs: 0 });
  return null;
}
