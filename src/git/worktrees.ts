// The worktrees of a repository (`git worktree list --porcelain`), and the pure naming rules for
// the branch and folder a handoff lands in.
import path from 'node:path';
import type { Host } from '../host/host.js';
import { git } from './git.js';

export interface Worktree {
  path: string;
  head: string | null;
  /** Branch name without refs/heads/, or null (detached, bare). */
  branch: string | null;
  bare: boolean;
  /** git marks a worktree whose folder is gone as prunable. */
  prunable: boolean;
}

/** Parse `git worktree list --porcelain` (records separated by blank lines). */
export function parseWorktreeList(out: string): Worktree[] {
  const list: Worktree[] = [];
  let cur: Worktree | null = null;
  for (const l of out.split('\n')) {
    if (l.startsWith('worktree ')) {
      cur = { path: l.slice('worktree '.length), head: null, branch: null, bare: false, prunable: false };
      list.push(cur);
    } else if (!cur) {
      continue;
    } else if (l.startsWith('HEAD ')) {
      cur.head = l.slice(5);
    } else if (l.startsWith('branch ')) {
      const ref = l.slice(7);
      cur.branch = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ref;
    } else if (l === 'bare') {
      cur.bare = true;
    } else if (l.startsWith('prunable')) {
      cur.prunable = true;
    }
  }
  return list;
}

export async function listWorktrees(host: Host, repo: string): Promise<Worktree[]> {
  return parseWorktreeList((await git(host, repo, ['worktree', 'list', '--porcelain'])).stdout);
}

/** A folder name for a branch: `/` → `-`, anything outside [A-Za-z0-9._-] → `-`, no leading dot or dash. */
export function branchSlug(branch: string): string {
  const slug = branch
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+/, '')
    .replace(/[-.]+$/, '')
    .slice(0, 80);
  return slug || 'branch';
}

/** `name`, else `name-2`, `name-3`… — the first that `taken` does not reject. */
export function firstFree(name: string, taken: (candidate: string) => boolean): string {
  if (!taken(name)) return name;
  for (let n = 2; ; n++) {
    const candidate = `${name}-${n}`;
    if (!taken(candidate)) return candidate;
  }
}

/**
 * True when creating branch `name` would clash with existing branches: the same name, or a
 * file/folder clash in the ref store (`a` exists and we want `a/b`, or the reverse).
 */
export function branchTaken(name: string, existing: ReadonlySet<string>): boolean {
  if (existing.has(name)) return true;
  const parts = name.split('/');
  for (let i = 1; i < parts.length; i++) if (existing.has(parts.slice(0, i).join('/'))) return true;
  for (const b of existing) if (b.startsWith(`${name}/`)) return true;
  return false;
}

/** Where a new worktree for `branch` goes: beside the main checkout, `<main>.worktrees/<slug>`. */
export function worktreeHome(mainPath: string): string {
  return `${mainPath.replace(/\/+$/, '')}.worktrees`;
}

/** A new worktree's path before any -2, -3… suffix: `<main>.worktrees/<slug>`. */
export function firstWorktreePath(mainPath: string, branch: string): string {
  return `${worktreeHome(mainPath)}/${branchSlug(branch)}`;
}

/** True when `p` is `dir` or inside it. */
export function isInside(p: string, dir: string): boolean {
  const rel = path.posix.relative(dir, p);
  return rel === '' || (!rel.startsWith('..') && !path.posix.isAbsolute(rel));
}
