// The adapter contract: everything agent-specific a handoff needs, and nothing else.
// Facts: /work/shared/agents.md. Each kind answers the same questions in its own file.
import path from 'node:path/posix';
import { HandoffError } from '../src/errors.js';
import type { FileStat, Host, HostInfo } from '../src/host/host.js';
import type { QuitPlan } from '../src/handoff/quit.js';
import type { ScreenClassifier, ScreenReading } from '../src/handoff/screens.js';
import type { HookTrust } from './hook-trust.js';

export type { QuitPlan, ScreenClassifier, ScreenReading };

export type AgentKind = 'claude' | 'codex' | 'pi' | 'omp' | 'grok';
export const AGENT_KINDS: readonly AgentKind[] = ['claude', 'codex', 'pi', 'omp', 'grok'];

/** herdr's `agent_session` ref, or a `--session` value turned into one. */
export interface SessionHandle {
  kind: 'id' | 'path';
  value: string;
}

/** What an adapter needs to know about one side (source or target). */
export interface SideCtx {
  /** HOME as the agent sees it. */
  home: string;
  /** realpath(HOME) (grok's default root; omp's relative folder names). Defaults to `home`. */
  homeReal?: string;
  /** The login environment (`HostInfo.loginEnv`): agent config variables, TMPDIR. */
  env: Record<string, string>;
  /** realpath of the temp folder (`HostInfo.tmpdir`). */
  tmpdir: string;
}

/** Learn a side's context from its Host (login environment, realpath'd HOME). */
export async function sideCtx(host: Host): Promise<SideCtx> {
  const info = await host.info();
  return sideCtxOf(info, info.homeReal ?? (await host.realpath(info.home).catch(() => info.home)));
}

/** A side's context from what its login probe told and its home's real path. */
export function sideCtxOf(info: HostInfo, homeReal: string): SideCtx {
  return { home: info.home, homeReal, env: info.loginEnv, tmpdir: info.tmpdir };
}

export interface SessionRef {
  kind: AgentKind;
  /** Full session id (a UUID). */
  id: string;
  /** Config root the session lives under (absolute, on the source). */
  configRoot: string;
  /** The main file: claude/pi/omp transcript, codex rollout, grok `updates.jsonl`. */
  file: string;
  /** grok: the session directory; others: the folder holding `file`. */
  dir: string;
  /** Path of the session's per-project folder relative to `configRoot` (codex: its dated folder). */
  folderRel: string;
}

export interface UnitEntry {
  /** Absolute path on the source. */
  source: string;
  /** Destination relative to the target config root (posix, never `..`). */
  dest: string;
  /** Copied byte for byte (user file contents), else streamed through the path rewriter. */
  verbatim: boolean;
  /** Keep line 1's length by adjusting its `"pad"` (omp's fixed-width title record). */
  padFirstLine?: boolean;
  size: number;
  mode: number;
  mtimeMs: number;
}

export interface PathRename {
  from: string;
  to: string;
}

export interface Placement {
  /** Target config root (absolute). */
  configRoot: string;
  /** Target per-project folder relative to the target config root (codex: the same dated folder). */
  folderRel: string;
  /** Absolute path of the main file on the target. */
  file: string;
  /** What to hand to `resumeArgv`: the full UUID, or (pi, omp) the absolute file path. */
  handle: string;
  /** Absolute folder renames the rewriter must apply (source folder → target folder). */
  renames: PathRename[];
}

export interface GuessInput {
  /** The agent's working directory on the source (realpath). */
  cwd: string;
  /** When the agent process started (ms since epoch). */
  startedAtMs: number;
  ctx: SideCtx;
}

export interface Adapter {
  readonly kind: AgentKind;
  /** herdr's agent kind (`agent start --kind`) — also the executable herdr types. */
  readonly herdrKind: string;
  /** herdr integration target name (`herdr integration install <name>`). */
  readonly integration: string;
  /** The variable that moves the config root (pi and omp share PI_CODING_AGENT_DIR). */
  readonly configVar: string;
  configRoot(env: Record<string, string | undefined>, home: string, homeReal?: string): string;
  /** Per-project folder name for a cwd (null for codex: dated folders). */
  projectFolderName(cwd: string, ctx: SideCtx): string | null;
  locate(host: Host, handle: SessionHandle, ctx: SideCtx): Promise<SessionRef>;
  guess(host: Host, input: GuessInput): Promise<SessionRef>;
  unit(host: Host, ref: SessionRef, place: Placement): Promise<UnitEntry[]>;
  placement(ref: SessionRef, target: SideCtx & { cwd: string }): Placement;
  resumeArgv(handle: string, extraArgs?: readonly string[]): string[];
  readonly quit: QuitPlan & { mustBeIdle: boolean };
  classifyScreen: ScreenClassifier;
  /** Kinds that hold a new hook for review (codex): carrying the trust of herdr's hook. */
  readonly hookTrust?: HookTrust;
}

// ---------------------------------------------------------------------------------------------
// Shared helpers for the kinds.

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const UUID_IN_TEXT = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

export function expandTilde(p: string, home: string): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.join(home, p.slice(2));
  return p;
}

/** `env[name]` when set and non-empty (a leading `~` expanded), else `fallback`. */
export function rootFrom(env: Record<string, string | undefined>, name: string, home: string, fallback: string): string {
  const v = env[name];
  if (v && v.trim() !== '') return path.normalize(expandTilde(v, home)).replace(/(.)\/+$/, '$1');
  return fallback;
}

/** Is `child` the same as or below `parent` (both absolute, normalised)? */
export function isUnder(child: string, parent: string): boolean {
  if (parent === '/') return child.startsWith('/');
  return child === parent || child.startsWith(parent + '/');
}

export function notFound(kind: AgentKind, what: string, fix: string, details?: Record<string, unknown>): HandoffError {
  return new HandoffError('session_not_found', `No ${kind} session ${what}.`, { fix, ...(details ? { details } : {}) });
}

export function ambiguous(kind: AgentKind, what: string, candidates: string[]): HandoffError {
  return new HandoffError('session_ambiguous', `Several ${kind} sessions ${what}: ${candidates.slice(0, 8).join(', ')}${candidates.length > 8 ? ', …' : ''}.`, {
    fix: 'Name the session with --session <full id or path>.',
    details: { candidates },
  });
}

/** List a folder; a missing folder is empty. */
export async function listOrEmpty(host: Host, dir: string) {
  try {
    return await host.list(dir);
  } catch (err) {
    if (err instanceof HandoffError && err.code === 'not_found') return [];
    throw err;
  }
}

export interface FoundFile {
  path: string;
  stat: FileStat;
}

/**
 * Files of a folder (not following symlinks) whose names pass `keep`, with their stat. The stats
 * are asked side by side: over ssh each is a round trip, which in turn would be one per file.
 */
export async function filesIn(host: Host, dir: string, keep: (name: string) => boolean): Promise<FoundFile[]> {
  const names = (await listOrEmpty(host, dir)).filter((e) => e.type === 'file' && keep(e.name)).map((e) => path.join(dir, e.name));
  const stats = await Promise.all(names.map((p) => host.stat(p)));
  return names.flatMap((p, i) => (stats[i]?.type === 'file' ? [{ path: p, stat: stats[i] }] : []));
}

/** Every regular file below `dir` (symlinks skipped: a unit never follows them out of the store). */
export async function walkFiles(host: Host, dir: string): Promise<FoundFile[]> {
  return host.walk(dir);
}

export function entryOf(found: FoundFile, dest: string, verbatim: boolean, extra: Partial<UnitEntry> = {}): UnitEntry {
  return { source: found.path, dest, verbatim, size: found.stat.size, mode: found.stat.mode, mtimeMs: found.stat.mtimeMs, ...extra };
}

/** Replace the leading folder `fromRel` of a relative path by `toRel`. */
export function relocate(rel: string, fromRel: string, toRel: string): string {
  if (rel === fromRel) return toRel;
  if (rel.startsWith(fromRel + '/')) return toRel + rel.slice(fromRel.length);
  return rel;
}

/**
 * The sessions written since the agent started: exactly one → it; none → not found; several →
 * ambiguous. A 2 s slack covers coarse mtimes and a session created just before herdr saw the pane.
 */
export function pickGuess<T extends { path: string; mtimeMs: number }>(kind: AgentKind, where: string, candidates: T[], startedAtMs: number): T {
  const since = candidates.filter((c) => c.mtimeMs >= startedAtMs - 2000).sort((a, b) => b.mtimeMs - a.mtimeMs);
  if (since.length === 0) {
    throw notFound(kind, `for ${where} was written since the agent started`, 'The agent may not have saved its session yet (send it one prompt first), or pass --session <id or path>.', {
      candidates: candidates.map((c) => c.path).slice(0, 20),
    });
  }
  if (since.length > 1) throw ambiguous(kind, `for ${where} were written since the agent started`, since.map((c) => c.path));
  return since[0]!;
}

// ---------------------------------------------------------------------------------------------
// Screens: pure recognisers over the visible text.

// The cursor before a numbered option: `❯`, `›`, `>`, `▶` or `→` (escaped: an all-ASCII bundle loads faster).
const OPTION_LINE = /^\s*([\u276F\u203A>\u25B6\u2192])?\s*(\d+)\.\s+(.+?)\s*$/u;

/** Numbered menu options on a screen, with the highlighted one (marked by a cursor glyph). */
export function parseOptions(text: string): { options: string[]; selectedIndex: number } {
  const options: string[] = [];
  let selectedIndex = -1;
  for (const line of text.split('\n')) {
    const m = OPTION_LINE.exec(line);
    if (!m) continue;
    if (Number(m[2]) !== options.length + 1) {
      // a new list starts (or a stray numbered line): keep the latest list
      if (Number(m[2]) !== 1) continue;
      options.length = 0;
      selectedIndex = -1;
    }
    if (m[1]) selectedIndex = options.length;
    options.push(m[3]!);
  }
  return { options, selectedIndex };
}

export interface ScreenRules {
  trust?: RegExp[];
  /** The option text that accepts trust (prefix match). */
  trustAccept?: string;
  first_run_setup?: RegExp[];
  login?: RegExp[];
  hook_review?: RegExp[];
}

/** Build a classifier from per-kind text patterns; trust wins over the rest (it shows first). */
export function screenClassifier(rules: ScreenRules): ScreenClassifier {
  const order = ['trust', 'hook_review', 'login', 'first_run_setup'] as const;
  return (text: string): ScreenReading => {
    const { options, selectedIndex } = parseOptions(text);
    for (const screen of order) {
      const pats = rules[screen];
      if (!pats?.some((re) => re.test(text))) continue;
      const acceptIndex = screen === 'trust' && rules.trustAccept ? options.findIndex((o) => o.startsWith(rules.trustAccept!)) : -1;
      return { screen, options, selectedIndex, acceptIndex };
    }
    return { screen: null, options, selectedIndex, acceptIndex: -1 };
  };
}

/** Read a file's first line (up to `max` bytes) without reading the rest. */
export async function readFirstLine(host: Host, file: string, max = 8 * 1024 * 1024): Promise<string> {
  const stream = await host.readStream(file);
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const nl = chunk.indexOf(0x0a);
      if (nl >= 0) {
        parts.push(chunk.subarray(0, nl));
        break;
      }
      parts.push(chunk);
      size += chunk.length;
      if (size >= max) break;
    }
  } finally {
    stream.destroy();
  }
  return Buffer.concat(parts).toString('utf8');
}

/** The basename's session id (a UUID at the end of a `.jsonl` name), or null. */
export function idFromFileName(name: string): string | null {
  const m = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i.exec(name);
  return m ? m[1]!.toLowerCase() : null;
}

/** A --session value that names a file rather than an id (the agents' own rule: a slash or `.jsonl`). */
export function looksLikePath(value: string): boolean {
  return value.includes('/') || value.includes('\\') || value.endsWith('.jsonl');
}

/** The session's main file as a unit entry, moved from the source folder to the target folder. */
export async function mainEntryFor(host: Host, ref: SessionRef, place: Placement, extra: Partial<UnitEntry> = {}): Promise<UnitEntry> {
  const st = await host.stat(ref.file);
  if (st?.type !== 'file') throw notFound(ref.kind, `at ${ref.file}`, 'The session file vanished; check the agent is still where herdr says.');
  return entryOf({ path: ref.file, stat: st }, relocate(path.relative(ref.configRoot, ref.file), ref.folderRel, place.folderRel), false, extra);
}

export function joinRoot(root: string, ...rel: string[]): string {
  return path.join(root, ...rel);
}

export { path as posix };
