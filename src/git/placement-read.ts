// What deciding a placement reads of the target checkout, in one program: its worktrees, every
// ref with its commit, and whether the likely new worktree folder and the worktree home exist.
// Read-only, so it can be asked ahead (in the plan's look, or while the agent quits).
import type { Host, RunResult } from '../host/host.js';
import { GIT_BASE_CONFIG, GIT_BASE_ENV, gitFailed } from './git.js';
import { firstWorktreePath, parseWorktreeList, worktreeHome, type Worktree } from './worktrees.js';

export interface PlacementReads {
  worktrees: Worktree[];
  refs: BranchRefs;
  /** Where a new worktree of the branch would most likely go, and whether something is there (null: not asked). */
  likely: { path: string; exists: boolean } | null;
  /** Whether `<repo>.worktrees` exists. */
  homeExists: boolean;
  /** Whether the likely branch tracks something (`branch.<name>.merge` is set); null: not asked or git could not say. */
  upstream: { branch: string; set: boolean } | null;
  /** When it was read (Date.now()): see isFresh. */
  readAt: number;
}

/**
 * A read young enough to stand for the target's state where nothing guards a change against an
 * older one (the upstream setting): a placement's own changes are conditional on what was read,
 * but a plan made before a long --wait is minutes old by then.
 */
export function isFresh(read: PlacementReads | null | undefined, now = Date.now()): read is PlacementReads {
  return read !== null && read !== undefined && now - read.readAt < FRESH_READ_MS;
}

const FRESH_READ_MS = 10_000;

/** Whether `branch` tracks something, as a fresh read of it says; undefined when none does (ask then). */
export function knownUpstream(read: PlacementReads | null | undefined, branch: string): boolean | undefined {
  return isFresh(read) && read.upstream?.branch === branch ? read.upstream.set : undefined;
}

/** The target's refs, as placing and sending need them. */
export interface BranchRefs {
  /** Local branch names. */
  branches: Set<string>;
  /** Local branch → its commit. */
  tips: Map<string, string>;
  /** Branches of origin (refs/remotes/origin/…), for upstreams. */
  origin: Set<string>;
  /** The commit of every ref: what the target has (a transfer sends only what it lacks). */
  all: string[];
}

// $1 the likely new worktree's path ('' for none), $2 the worktree home, $3 the likely branch ('' for
// none), then git's base options (run in the repository): a line each saying whether the two exist
// (1 or 0), a line saying whether the branch tracks something (1, 0, or - when not asked or git
// could not say), then the worktrees, a NUL, then every ref with its commit.
export const PLACEMENT_READ_PROGRAM = [
  'l=$1; h=$2; b=$3; shift 3',
  'if [ -n "$l" ] && { [ -e "$l" ] || [ -L "$l" ]; }; then echo 1; else echo 0; fi',
  'if [ -e "$h" ] || [ -L "$h" ]; then echo 1; else echo 0; fi',
  'if [ -z "$b" ]; then echo -; else git "$@" config --get "branch.$b.merge" >/dev/null; case $? in 0) echo 1;; 1) echo 0;; *) echo -;; esac; fi',
  'git "$@" worktree list --porcelain || exit',
  'printf "\\0"',
  'exec git "$@" for-each-ref "--format=%(objectname) %(refname)"',
].join('\n');

/** The program that reads what deciding a placement needs (see placementReadsOf for its answer). */
export function placementReadProgram(targetRepo: string, likelyBranch: string | null): { argv: string[]; cwd: string; env: Record<string, string> } {
  const likely = likelyBranch !== null ? firstWorktreePath(targetRepo, likelyBranch) : '';
  return { argv: ['/bin/sh', '-c', PLACEMENT_READ_PROGRAM, 'sh', likely, worktreeHome(targetRepo), likelyBranch ?? '', ...GIT_BASE_CONFIG], cwd: targetRepo, env: GIT_BASE_ENV };
}

/** The read program's answer; throws git_failed as git's own failure would. */
export function placementReadsOf(target: Host, targetRepo: string, likelyBranch: string | null, r: RunResult): PlacementReads {
  const lines = r.stdout.split('\n', 3);
  const rest = r.stdout.slice(lines.reduce((n, l) => n + l.length + 1, 0));
  const nul = rest.indexOf('\0');
  if (r.exitCode !== 0 || lines.length < 3 || nul < 0) throw gitFailed(target, targetRepo, nul < 0 ? ['worktree', 'list', '--porcelain'] : ['for-each-ref'], r);
  return {
    worktrees: parseWorktreeList(rest.slice(0, nul)),
    refs: branchRefsOf(rest.slice(nul + 1)),
    likely: likelyBranch !== null ? { path: firstWorktreePath(targetRepo, likelyBranch), exists: lines[0] === '1' } : null,
    homeExists: lines[1] === '1',
    upstream: likelyBranch !== null && (lines[2] === '1' || lines[2] === '0') ? { branch: likelyBranch, set: lines[2] === '1' } : null,
    readAt: Date.now(),
  };
}

/**
 * Read what deciding a placement needs of the target, in one program. `likelyBranch`: the branch
 * whose new worktree path to look at (null: a new branch will be named).
 */
export async function readPlacementState(target: Host, targetRepo: string, likelyBranch: string | null): Promise<PlacementReads> {
  const { argv, cwd, env } = placementReadProgram(targetRepo, likelyBranch);
  return placementReadsOf(target, targetRepo, likelyBranch, await target.run(argv, { cwd, env }));
}

/** `for-each-ref` lines (`<commit> <ref>`) → the target's refs. */
function branchRefsOf(out: string): BranchRefs {
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
