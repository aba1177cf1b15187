// What a handoff left behind: when a session leaves a host, each of its files there is recorded
// (path, sha256, size, mtime) in a small private file on that same host. A session coming back
// later — driven from this machine or any other — finds its old copy there; a copy byte-identical
// to what was left is ours to replace, even if the agent rewrote it in place on the other side
// (omp's padded title line, grok's JSON files), so that is no conflict. A copy that changed since
// it was left means someone resumed the old session there: a real conflict.
//
// Layout: <state>/left/<sha256 of the path, 32 hex>.json, one JSON object on one line, 0600.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { HandoffError } from '../errors.js';
import type { Host, RunResult } from '../host/host.js';

export const LeftFile = z.object({
  path: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.number().int().nonnegative(),
  mtimeMs: z.number(),
  /** The handoff that took the session away, where to and when. */
  handoff: z.string(),
  to: z.string(),
  at: z.string(),
});
export type LeftFile = z.infer<typeof LeftFile>;

export function ledgerDir(stateDir: string): string {
  return `${stateDir}/left`;
}

/** The ledger file's name for a session file (the path itself may hold anything). */
export function ledgerName(file: string): string {
  return `${createHash('sha256').update(file).digest('hex').slice(0, 32)}.json`;
}

/**
 * $1 the ledger folder, then pairs of (file name, one-line JSON): each written to a temp name
 * and renamed into place, private through the umask. All data is positional.
 */
export const RECORD_LEFT_PROGRAM = [
  'umask 077',
  'd=$1; shift',
  'mkdir -p -- "$d" || exit 1',
  'while [ "$#" -ge 2 ]; do',
  '  printf "%s\\n" "$2" >"$d/.$1.tmp" && mv -f -- "$d/.$1.tmp" "$d/$1" || { rm -f -- "$d/.$1.tmp"; exit 1; }',
  '  shift 2',
  'done',
].join('\n');

/** Record, on `host`, the session files as they are when they leave it. One program. */
export async function recordLeft(host: Host, dir: string, files: readonly LeftFile[]): Promise<void> {
  if (files.length === 0) return;
  const pairs = files.flatMap((f) => [ledgerName(f.path), JSON.stringify(LeftFile.parse(f))]);
  const r = await host.run(['/bin/sh', '-c', RECORD_LEFT_PROGRAM, 'sh', dir, ...pairs]);
  if (r.exitCode !== 0) {
    throw new HandoffError('copy_failed', `Could not record the session files that left ${host.label} under ${dir}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`, {
      fix: `Check that ${dir} on ${host.label} is writable.`,
    });
  }
}

export const MISSING_HASH_TOOL = 69;

/**
 * sh: `h` reads stdin and prints its sha256 as 64 hex digits, with the host's own tool
 * (`sha256sum` on GNU and busybox, `shasum -a 256` on macOS); exits MISSING_HASH_TOOL without one.
 */
export const HASH_FN = [
  'if command -v sha256sum >/dev/null 2>&1; then h() { sha256sum | cut -c1-64; }',
  `elif command -v shasum >/dev/null 2>&1; then h() { shasum -a 256 | cut -c1-64; }; else exit ${MISSING_HASH_TOOL}; fi`,
].join('\n');

/**
 * $1 the ledger folder, then pairs of (session file, its ledger name). For each pair, two lines:
 * the ledger entry (or `-` when there is none) and, when there is one, the file's sha256 now
 * (`-` when it is not a regular file; no hash is computed without a ledger entry).
 */
export const READ_LEFT_PROGRAM = [
  HASH_FN,
  'd=$1; shift',
  'while [ "$#" -ge 2 ]; do',
  '  if [ -f "$d/$2" ] && [ -r "$d/$2" ]; then',
  '    head -n 1 <"$d/$2" | tr -d "\\n"; echo',
  '    if [ -f "$1" ]; then h <"$1"; else echo -; fi',
  '  else printf -- "-\\n-\\n"; fi',
  '  shift 2',
  'done',
].join('\n');

/** What the ledger says of a file on the host, and the file's hash there now. */
export interface LeftState {
  left: LeftFile | null;
  /** sha256 of the file now (null: no ledger entry, so not hashed; or not a regular file). */
  sha256Now: string | null;
}

/** For each file on `host`: what left it (if recorded) and its hash now. One program. */
export async function readLeft(host: Host, dir: string, files: readonly string[]): Promise<LeftState[]> {
  if (files.length === 0) return [];
  return leftStatesOf(host, dir, files, await host.run(readLeftArgv(dir, files)));
}

/** READ_LEFT_PROGRAM for these files (its answer goes to leftStatesOf). */
export function readLeftArgv(dir: string, files: readonly string[]): string[] {
  return ['/bin/sh', '-c', READ_LEFT_PROGRAM, 'sh', dir, ...files.flatMap((f) => [f, ledgerName(f)])];
}

/** READ_LEFT_PROGRAM's answer; throws when the host has no hash tool or the ledger cannot be read. */
export function leftStatesOf(host: Host, dir: string, files: readonly string[], r: RunResult): LeftState[] {
  if (r.exitCode === MISSING_HASH_TOOL) {
    throw new HandoffError('missing_tool', `Neither sha256sum nor shasum is installed on ${host.label}.`, { fix: `Install coreutils (sha256sum) on ${host.label}.` });
  }
  if (r.exitCode !== 0) throw new HandoffError('copy_failed', `Could not read ${dir} on ${host.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`);
  return parseLeft(r.stdout, files);
}

/**
 * What the ledger `dir` said of some files, with their hashes then: one readLeft, made before the
 * agent quit (the plan's refusal), that the copy uses instead of hashing the same files again.
 */
export interface LeftLook {
  dir: string;
  states: ReadonlyMap<string, LeftState>;
}

/** readLeft, kept by path for whoever comes next. */
export async function lookLeft(host: Host, dir: string, files: readonly string[]): Promise<LeftLook> {
  const states = await readLeft(host, dir, files);
  return { dir, states: new Map(files.map((f, i) => [f, states[i]!])) };
}

/** READ_LEFT_PROGRAM's answer → one state per file; an entry that does not parse, or names another path, counts as none. */
export function parseLeft(stdout: string, files: readonly string[]): LeftState[] {
  // Each entry is two lines: the ledger's first line (or `-`), then the hash (or `-`).
  const lines = stdout.split('\n');
  const out: LeftState[] = [];
  let i = 0;
  for (const file of files) {
    const first = lines[i++] ?? '-';
    let left: LeftFile | null = null;
    if (first !== '-') {
      try {
        const parsed = LeftFile.safeParse(JSON.parse(first));
        if (parsed.success && parsed.data.path === file) left = parsed.data;
      } catch {
        left = null;
      }
    }
    const hash = lines[i++] ?? '-';
    out.push({ left, sha256Now: left && /^[0-9a-f]{64}$/.test(hash) ? hash : null });
  }
  return out;
}

/** Is the file on the host exactly what an earlier handoff left there? */
export function isAsLeft(state: LeftState, size: number): boolean {
  return state.left !== null && state.left.size === size && state.sha256Now === state.left.sha256;
}
