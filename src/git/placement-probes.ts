// Read-only looks at the target's folders that a placement decision needs, each one program: the
// state of the worktree a branch is checked out in, and whether some paths exist.
import { HandoffError } from '../errors.js';
import type { Host, RunResult } from '../host/host.js';
import { runSideBySide, type SideProgram } from '../host/run-side-by-side.js';
import type { CheckedOutState } from './placement-decide.js';
import { GIT_BASE_CONFIG, GIT_BASE_ENV, gitFailed, splitNul } from './git.js';
import type { ChangedFile } from './snapshot.js';

// One line per argument: 1 when something is at that path (a dangling symlink too), else 0.
const PATHS_EXIST_SCRIPT = 'for p do if [ -e "$p" ] || [ -L "$p" ]; then echo 1; else echo 0; fi; done';

/** Whether something is at each path (as lstat sees it). */
export async function pathsExist(target: Host, paths: readonly string[]): Promise<boolean[]> {
  const r = await target.run(['/bin/sh', '-c', PATHS_EXIST_SCRIPT, 'sh', ...paths]);
  const answers = r.stdout.split('\n').filter((l) => l !== '');
  if (r.exitCode !== 0 || answers.length !== paths.length) throw new HandoffError('target_check_failed', `Could not check ${paths.join(', ')} on ${target.label}: ${r.stderr.trim() || `exit code ${r.exitCode}`}`);
  return answers.map((a) => a === '1');
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

/** Checks per clash program: each command line stays far below ARG_MAX and the ssh channel-request limit. */
const CHECKS_PER_PROGRAM = 500;

/**
 * The worktree's state, in one program: whether its folder is there, its uncommitted tracked
 * changes, and the untracked or ignored paths where `added` (the diff from its commit to the
 * final state) adds something. A very long `added` takes further programs.
 */
export async function checkedOutState(target: Host, worktree: string, added: readonly ChangedFile[]): Promise<CheckedOutState> {
  const checks = clashChecks(added);
  const clashPrograms = (from: number, to: number): SideProgram[] => {
    const out: SideProgram[] = [];
    for (let i = from; i < to; i += CHECKS_PER_PROGRAM) out.push({ cwd: worktree, argv: ['sh', '-c', CLASH_SCRIPT, 'sh', ...checks.slice(i, Math.min(i + CHECKS_PER_PROGRAM, to))] });
    return out;
  };
  const [there, status, ...clashRuns] = await runSideBySide(target, [
    { argv: ['/bin/sh', '-c', PATHS_EXIST_SCRIPT, 'sh', worktree] },
    { cwd: worktree, argv: ['git', ...GIT_BASE_CONFIG, 'status', '--porcelain=v1', '-z', '--untracked-files=no'], env: GIT_BASE_ENV },
    ...clashPrograms(0, Math.min(checks.length, CHECKS_PER_PROGRAM)),
  ]);
  if (there?.stdout.trim() !== '1') return { exists: false, dirty: [], inTheWay: [] };
  if (!status || status.exitCode !== 0) throw gitFailed(target, worktree, ['status', '--porcelain=v1', '-z', '--untracked-files=no'], status ?? { exitCode: -1, stdout: '', stderr: '', durationMs: 0 });
  // Rare: the rest of a very long list, each in its own program.
  if (checks.length > CHECKS_PER_PROGRAM) clashRuns.push(...(await Promise.all(clashPrograms(CHECKS_PER_PROGRAM, checks.length).map((p) => target.run(p.argv, { cwd: worktree })))));
  return { exists: true, dirty: dirtyFiles(status), inTheWay: clashRuns.flatMap((r) => clashesOf(target, worktree, r)) };
}

/** Tracked files with staged or unstaged changes, from `git status --porcelain=v1 -z`. */
function dirtyFiles(status: RunResult): string[] {
  const records = splitNul(status.stdout);
  const named = records.filter((r) => r.length > 3 && r[2] === ' ').map((r) => r.slice(3));
  // A rename's second record is its old name; any record at all means dirty.
  return named.length > 0 || records.length === 0 ? named : records;
}

function clashesOf(target: Host, worktree: string, r: RunResult): string[] {
  if (r.exitCode !== 0) throw new HandoffError('target_check_failed', `Could not check ${worktree} on ${target.label}: ${r.stderr.trim()}`);
  return splitNul(r.stdout);
}

/** The clash script's arguments for a change: each path it adds (`f:`), and each folder those need (`d:`). */
function clashChecks(changes: readonly ChangedFile[]): string[] {
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
  return checks;
}

function parents(p: string): string[] {
  const parts = p.split('/');
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join('/'));
  return out;
}
