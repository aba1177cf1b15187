// Running git on a Host: argv only (never a shell), a clear error when it fails, and the few
// helpers every git step shares (temporary files next to the repository, NUL-split output).
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { HandoffError } from '../errors.js';
import type { Host, RunResult } from '../host/host.js';

export interface GitRunOptions {
  env?: Record<string, string>;
  stdin?: string | Buffer | Readable;
  stdout?: Writable;
  timeoutMs?: number;
  /** Exit codes that are answers rather than failures (e.g. 1 for `merge-base --is-ancestor`). */
  okCodes?: readonly number[];
}

/**
 * Settings that keep git's output machine-readable and its behaviour independent of the user's
 * configuration where that matters for us: no pager, no colour, no optional locks taken by
 * read-only commands (a `git status` of ours must not race the user's own git), paths unquoted.
 */
export const GIT_BASE_CONFIG = ['-c', 'core.quotePath=false', '-c', 'color.ui=false', '-c', 'advice.detachedHead=false'];
export const GIT_BASE_ENV: Record<string, string> = { GIT_PAGER: 'cat', GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };

/** `git <args>` in `cwd` on `host`; rejects with `git_failed` unless the exit code is 0 or in okCodes. */
export async function git(host: Host, cwd: string, args: readonly string[], opts: GitRunOptions = {}): Promise<RunResult> {
  const r = await host.run(['git', ...GIT_BASE_CONFIG, ...args], {
    cwd,
    env: { ...GIT_BASE_ENV, ...opts.env },
    ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
    ...(opts.stdout ? { stdout: opts.stdout } : {}),
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  });
  if (r.exitCode !== 0 && !(opts.okCodes ?? []).includes(r.exitCode)) throw gitFailed(host, cwd, args, r);
  return r;
}

export function gitFailed(host: Host, cwd: string, args: readonly string[], r: RunResult): HandoffError {
  const sub = args.find((a) => !a.startsWith('-')) ?? 'git';
  const detail = r.stderr.trim().split('\n').slice(-3).join(' / ') || `exit code ${r.exitCode}`;
  const missing = r.exitCode === 127;
  return new HandoffError(missing ? 'git_missing' : 'git_failed', missing ? `git is not installed on ${host.label}.` : `\`git ${sub}\` failed in ${cwd} on ${host.label}: ${detail}`, {
    fix: missing ? `Install git on ${host.label}.` : 'See the message from git above; fix the repository state and retry.',
    details: { host: host.label, address: host.address, cwd, args: [...args], exitCode: r.exitCode, stderr: r.stderr.slice(-2000) },
  });
}

/** Split NUL-terminated output (`-z`) into its records, dropping the empty tail. */
export function splitNul(out: string): string[] {
  const parts = out.split('\0');
  if (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** Trimmed single-line output. */
export function line(r: RunResult): string {
  return r.stdout.trim();
}

/** A name for a temporary file inside `dir` that no other run will pick. */
export function tempName(dir: string, what: string): string {
  return path.posix.join(dir, `agent-handoff-${what}-${process.pid}-${randomBytes(6).toString('hex')}`);
}

export const ZERO_OID = '0000000000000000000000000000000000000000';

/** Full ref name of a branch. */
export function branchRef(branch: string): string {
  return `refs/heads/${branch}`;
}

/** True when `ancestor` is an ancestor of (or equal to) `descendant` in the repository at `cwd`. */
export async function isAncestor(host: Host, cwd: string, ancestor: string, descendant: string): Promise<boolean> {
  const r = await git(host, cwd, ['merge-base', '--is-ancestor', ancestor, descendant], { okCodes: [1] });
  return r.exitCode === 0;
}
