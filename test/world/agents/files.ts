// Shared helpers for the fake agents: ids, timestamps, private files, JSONL, git facts and the
// per-root control file. Node built-ins only (the world copies this folder elsewhere).
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function uuidv4(): string {
  return randomUUID();
}

/** UUIDv7: 48-bit Unix ms timestamp, version 7, variant 10, random rest (pi, omp, codex, grok ids). */
export function uuidv7(now = Date.now()): string {
  const b = randomBytes(16);
  b.writeUIntBE(now, 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Short hex id like pi's entry ids. */
export function shortId(): string {
  return randomBytes(4).toString('hex');
}

export function iso(d = new Date()): string {
  return d.toISOString();
}

export function home(): string {
  return process.env.HOME || os.homedir();
}

export function realpathOr(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** Real agents keep their state private: 0700 directories. */
export function mkdirPrivate(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Create or replace a 0600 file (parent made 0700). */
export function writePrivate(file: string, text: string): void {
  mkdirPrivate(path.dirname(file));
  fs.writeFileSync(file, text, { mode: 0o600 });
}

export function appendJsonl(file: string, records: unknown[]): void {
  if (records.length === 0) return;
  mkdirPrivate(path.dirname(file));
  fs.appendFileSync(file, records.map((r) => JSON.stringify(r) + '\n').join(''), { mode: 0o600 });
}

/** Parse the JSON lines of a file, skipping torn or foreign lines (as the real readers do). */
export function readJsonl(file: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // a torn last line is not fatal for a reader
    }
  }
  return out;
}

export function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Narrowing helpers for the loosely typed records we read back. */
export function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Every file below `dir` (depth-first), for lookups by name. Missing dirs give nothing. */
export function walkFiles(dir: string, maxDepth = 8): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory() && depth < maxDepth) walk(p, depth + 1);
      else if (e.isFile()) out.push(p);
    }
  };
  walk(dir, 0);
  return out;
}

function git(cwd: string, args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** Top of the work tree containing `cwd`, or undefined outside git. */
export function gitTopLevel(cwd: string): string | undefined {
  return git(cwd, ['rev-parse', '--show-toplevel']);
}

/** The main checkout's root (for a linked worktree: the repository it belongs to). */
export function gitMainRoot(cwd: string): string | undefined {
  const common = git(cwd, ['rev-parse', '--path-format=absolute', '--git-common-dir']);
  if (!common) return undefined;
  return path.basename(common) === '.git' ? path.dirname(common) : gitTopLevel(cwd);
}

export function gitBranch(cwd: string): string {
  return git(cwd, ['rev-parse', '--abbrev-ref', 'HEAD']) ?? 'HEAD';
}

/** `dir` and each of its ancestors, nearest first. */
export function selfAndAncestors(dir: string): string[] {
  const out: string[] = [];
  let d = path.resolve(dir);
  for (;;) {
    out.push(d);
    const up = path.dirname(d);
    if (up === d) return out;
    d = up;
  }
}

/**
 * Screens and troubles on demand, from `<config root>/fake-agent.json`; unknown or malformed
 * content means "none". With `onlyIn` (folders), it applies only to agents whose cwd is one of
 * them, under one, or in one's `.worktrees`: tests running side by side share the world's users.
 */
export interface ControlFile {
  firstRun: boolean;
  loggedOut: boolean;
  crashOnStart: boolean;
  /** The agent will not quit (a background task holds it); read at each attempt. */
  holdQuit: boolean;
  /** A file (relative to its cwd) the agent appends a line to as it quits, as agents that write notes on exit do; '' = none. */
  writeOnQuit: string;
  /** Milliseconds before the first screen, as a real agent on a busy machine takes: herdr may
   *  call it ready before it has drawn anything. */
  slowStartMs: number;
}

export function readControl(root: string, cwd: string): ControlFile {
  let raw = readJson(path.join(root, 'fake-agent.json')) ?? {};
  if (Array.isArray(raw.onlyIn) && !raw.onlyIn.some((dir) => typeof dir === 'string' && within(cwd, dir))) raw = {};
  return {
    firstRun: raw.firstRun === true,
    loggedOut: raw.loggedOut === true,
    crashOnStart: raw.crashOnStart === true,
    holdQuit: raw.holdQuit === true,
    writeOnQuit: typeof raw.writeOnQuit === 'string' ? raw.writeOnQuit : '',
    slowStartMs: typeof raw.slowStartMs === 'number' && raw.slowStartMs > 0 ? raw.slowStartMs : 0,
  };
}

function within(cwd: string, dir: string): boolean {
  return cwd === dir || cwd.startsWith(`${dir}/`) || cwd.startsWith(`${dir}.worktrees/`);
}

/** Turn length: FAKE_AGENT_TURN_MS (default 300), or N seconds for a prompt `sleep N`. */
export function turnMs(prompt: string): number {
  const m = /^sleep\s+(\d+(?:\.\d+)?)$/.exec(prompt.trim());
  if (m) return Number(m[1]) * 1000;
  const env = Number(process.env.FAKE_AGENT_TURN_MS);
  return Number.isFinite(env) && env >= 0 && process.env.FAKE_AGENT_TURN_MS !== '' ? env : 300;
}

/** Thrown to end the program with a code and lines printed after the TUI is gone. */
export class AgentExit extends Error {
  constructor(
    readonly code: number,
    readonly lines: string[] = [],
    readonly toStderr = false,
  ) {
    super(lines.join('\n') || `exit ${code}`);
  }
}
