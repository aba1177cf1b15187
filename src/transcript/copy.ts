// Copy a session unit from a source Host to a target Host through the path rewriter.
//
// Bytes flow source read stream → rewriter (unless verbatim) → target write stream; the Host
// implementations carry them (over the one ssh connection when remote). Every destination is
// computed under the target config root and checked to stay there (no `..`, no symlinked parent
// leading out). Files are written to a temp name and renamed into place, with the source's mode
// and mtime (pickers sort by mtime). A file the target already has is only extended — when the
// rewritten source continues it (a session coming back) — after comparing a hash of the prefix
// computed on the target itself (`head -c N | sha256sum`; the target has no node). A file that is
// byte-identical to what an earlier handoff left there (its ledger, left-ledger.ts) is replaced
// whole, with a private backup until the handoff is verified: agents that rewrite their files in
// place make that the usual case of a session coming back. Anything else the target holds is a
// conflict unless `overwrite` is set (its backup is kept). The returned record lists every file
// written, so a failed handoff can undo it and a finished one can verify it.
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path/posix';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { HandoffError } from '../errors.js';
import type { Host } from '../host/host.js';
import type { ByteRange, FileStat } from '../host/host.js';
import { arrivalVerdicts, ContentHasher, describeFile, type ContentFacts, type Verdict } from './arrivals.js';
import { inspectFolders, makeFolders, type FolderState } from './folders.js';
import { HASH_FN, isAsLeft, MISSING_HASH_TOOL, readLeft, type LeftLook, type LeftState } from './left-ledger.js';
import { createRewriteStream, matcherFor, RewriteMatcher, type RewritePlan } from './rewrite.js';

/** One file of a unit (the shape `UnitEntry` of adapters/adapter.ts has). */
export interface CopyEntry {
  /** Absolute path on the source. */
  source: string;
  /** Destination relative to the target config root. */
  dest: string;
  verbatim: boolean;
  padFirstLine?: boolean;
  /** Size on the source when the unit was read (for messages). */
  size?: number;
  mode: number;
  mtimeMs: number;
}

export interface CopyRequest {
  source: Host;
  target: Host;
  entries: readonly CopyEntry[];
  /** Target config root (absolute); every destination must stay below it. */
  targetRoot: string;
  plan: RewritePlan | RewriteMatcher;
  /** Replace target files whose content the source does not continue and that changed since they were left (the old one is kept as a backup). */
  overwrite?: boolean;
  /** The target's ledger of what earlier handoffs left there (left-ledger.ts): a file as it was left is replaced. */
  ledgerDir?: string;
  /** That ledger as read just before (lookLeft, with the files' hashes then): the files it names are not hashed again. */
  left?: LeftLook;
  /** The source's ledger of what handoffs wrote there (arrivals.ts): what it still holds of that need not be sent. */
  arrivalsDir?: string;
  /** Distinguishes this run's temp and backup names (default: random). */
  tag?: string;
  /** The destinations as looked at just before (see lookAtDestinations), so they are not asked again. */
  looked?: Promise<DestinationLook>;
  /** Told the bytes read from the source as they go (progress). */
  onBytes?: (bytes: number) => void;
}

/** `replaced`: a file as an earlier handoff left it (backup dropped once verified); `overwritten`: forced by `overwrite` (backup kept). */
export type CopyAction = 'created' | 'appended' | 'unchanged' | 'replaced' | 'overwritten';

export interface CopiedFile {
  /** Absolute path on the target. */
  path: string;
  action: CopyAction;
  /** sha256 (hex) and size of the file as it now is on the target. */
  sha256: string;
  size: number;
  verbatim: boolean;
  /** Size, mode and mtime before we touched it (appended, unchanged, replaced, overwritten). */
  previous: { size: number; mode: number; mtimeMs: number } | null;
  /** Where the replaced file was kept (replaced, overwritten). */
  backup: string | null;
  /** The source file as it left (its own bytes, before the rewrite): what the source's ledger records. */
  source?: { path: string; sha256: string; size: number; mtimeMs: number };
  /** The file as it now is on the target (what the target's arrival ledger records). */
  content?: ContentFacts;
  /** Bytes of this file that crossed from the source (a delta sends only what is new). */
  sent?: number;
  /** Paths replaced by the rewriter (0 for verbatim files). */
  replacements: number;
}

export interface CopyRecord {
  targetRoot: string;
  files: CopiedFile[];
  /** Folders we created, parents first. */
  createdDirs: string[];
}

// ---------------------------------------------------------------------------------------------
// Destinations

/** The absolute destination of a relative path under `root`, refusing anything that could leave it. */
export function destinationUnder(root: string, rel: string): string {
  const bad = (why: string) =>
    new HandoffError('unsafe_destination', `Refusing to write ${JSON.stringify(rel)} under ${root}: ${why}.`, {
      fix: 'This is a bug in the agent adapter or a tampered session; report it with the session path.',
    });
  if (!root.startsWith('/')) throw bad('the config root is not absolute');
  if (rel === '' || rel.startsWith('/')) throw bad('not a relative path');
  if (rel.includes('\0')) throw bad('it contains a NUL byte');
  const parts = rel.split('/');
  if (parts.some((p) => p === '..' || p === '.' || p === '')) throw bad('it has an empty, `.` or `..` component');
  return path.join(root, rel);
}

function isUnder(child: string, parent: string): boolean {
  return parent === '/' ? true : child === parent || child.startsWith(parent + '/');
}

/** What the target holds where a unit will go: its folders (the root first) and the files. */
export interface DestinationLook {
  root: string;
  dests: readonly string[];
  /** The root and each destination's folder, once each. */
  dirs: string[];
  states: FolderState[];
  stats: (FileStat | null)[];
}

/** One round trip: one program inspects the folders while the files are stat'ed. Read-only. */
export async function lookAtDestinations(host: Host, root: string, dests: readonly string[]): Promise<DestinationLook> {
  const dirs = [...new Set([root, ...dests.map((f) => path.dirname(f))])];
  const [states, stats] = await Promise.all([inspectFolders(host, dirs), Promise.all(dests.map((f) => host.stat(f)))]);
  return { root, dests, dirs, states, stats };
}

/**
 * Make the config root and every destination folder (0700); records the folders created, parents
 * first, and returns the destinations' current stats. The nearest existing ancestor of each
 * folder inside the root must resolve inside it BEFORE anything is created, and every folder
 * again after, so a symlinked folder in the store can neither make us create folders elsewhere
 * nor lead a write out of it.
 */
async function prepareFolders(host: Host, root: string, dests: string[], record: CopyRecord, looked?: Promise<DestinationLook>): Promise<(FileStat | null)[]> {
  const asked = looked ? await looked : null;
  const { dirs, states, stats } = asked && asked.root === root && asked.dests.join('\0') === dests.join('\0') ? asked : await lookAtDestinations(host, root, dests);
  const rootState = states[0]!;
  for (const st of states) {
    if (!st.existingIsDir) {
      throw new HandoffError('unsafe_destination', `${st.existing} on ${host.label} is not a folder.`, { fix: `Move ${st.existing} out of the way, then run the handoff again.` });
    }
  }
  if (rootState.missing.length === 0) {
    for (const st of states.slice(1)) {
      // Ancestors above the root are the user's business; from the root down they must stay inside.
      if (isUnder(st.existing, root) && !isUnder(st.existingReal, rootState.existingReal)) {
        throw new HandoffError('unsafe_destination', `Refusing to write below ${st.existing} on ${host.label}: it resolves to ${st.existingReal}, outside ${rootState.existingReal}.`, {
          fix: "Remove the symlink that leads out of the agent's config folder.",
        });
      }
    }
  }
  const toMake = states.filter((st) => st.missing.length > 0);
  for (const st of toMake) for (const d of st.missing) if (!record.createdDirs.includes(d)) record.createdDirs.push(d);
  const reals = toMake.length > 0 ? await makeFolders(host, dirs) : states.map((st) => st.existingReal);
  const rootReal = reals[0]!;
  for (const [i, real] of reals.entries()) {
    if (i > 0 && !isUnder(real, rootReal)) {
      throw new HandoffError('unsafe_destination', `Refusing to write into ${dirs[i]} on ${host.label}: it resolves to ${real}, outside ${rootReal}.`, {
        fix: `Remove the symlink that leads out of ${root}.`,
      });
    }
  }
  return stats;
}

// ---------------------------------------------------------------------------------------------
// Hashes on the target, with its own tools

/**
 * sha256 of the first `n` bytes of `file` on `host`, computed there with its own tool
 * (`sha256sum` on GNU and busybox, `shasum -a 256` on macOS): one program, one round trip.
 */
export async function remotePrefixHash(host: Host, file: string, n: number): Promise<string> {
  // The path and count are positional parameters: the shell never parses them.
  const r = await host.run(['/bin/sh', '-c', PREFIX_HASH_SCRIPT, 'sh', String(n), file]);
  if (r.exitCode === MISSING_HASH_TOOL) {
    throw new HandoffError('missing_tool', `Neither sha256sum nor shasum is installed on ${host.label}.`, { fix: `Install coreutils (sha256sum) on ${host.label}.` });
  }
  const hex = /^([0-9a-f]{64})\b/.exec(r.stdout.trim())?.[1];
  if (r.exitCode !== 0 || !hex) {
    throw new HandoffError('hash_failed', `Could not hash ${file} on ${host.label}: ${r.stderr.trim() || r.stdout.trim() || `exit ${r.exitCode}`}.`, {
      fix: `Check that ${file} is readable on ${host.label}.`,
    });
  }
  return hex;
}

const PREFIX_HASH_SCRIPT = [
  'n=$1; f=$2',
  '[ -f "$f" ] || { printf "not a regular file: %s\\n" "$f" >&2; exit 66; }',
  HASH_FN,
  'head -c "$n" <"$f" | h',
].join('\n');

/** $2 given the ISO time $3 (atime and mtime alike: one touch), then renamed to $4 ('' = stay). */
const TIMES_AND_RENAME = 'touch -d "$3" -- "$2" && { [ -z "$4" ] || mv -f -- "$2" "$4"; }';
/** $1 mode (octal), $2 file, $3 ISO time for atime and mtime, $4 where to rename it ('' = stay). */
const INSTALL_SCRIPT = `chmod -- "$1" "$2" && ${TIMES_AND_RENAME}`;
/**
 * The same, after writing stdin to $2 (private until the chmod, which a private file does not
 * need); nothing is left behind on failure.
 */
const WRITE_AND_INSTALL_SCRIPT = `umask 077; { cat >"$2" && { [ "$1" = 600 ] || chmod -- "$1" "$2"; } && ${TIMES_AND_RENAME}; } || { rm -f -- "$2"; exit 1; }`;

/** Mode and times to give a written file, and where to rename it ('' = it stays where written). */
interface Install {
  mode: number;
  mtimeMs: number;
  to: string;
}

function installArgs(i: Install, file: string): string[] {
  return [i.mode.toString(8), file, new Date(i.mtimeMs).toISOString(), i.to];
}

async function runOk(host: Host, argv: string[], what: string): Promise<void> {
  const r = await host.run(argv);
  if (r.exitCode !== 0) throw new HandoffError('copy_failed', `${what} failed on ${host.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`);
}

// ---------------------------------------------------------------------------------------------
// Streaming one file

async function write(ws: Writable, chunk: Buffer): Promise<void> {
  if (!ws.write(chunk)) await once(ws, 'drain');
}

/** What a read of the source saw of its own bytes (valid once the stream has ended). */
interface SourceSeen {
  sha256: () => string;
  size: () => number;
}

/** The (rewritten) bytes of an entry as a stream, how many replacements it made, and the source's own bytes' hash. */
async function sourceBytes(req: CopyRequest, matcher: RewriteMatcher, e: CopyEntry, part?: { range: ByteRange; padFirstLine: boolean }): Promise<{ stream: Readable; counted: () => number; seen: SourceSeen }> {
  // Session files are text: they may cross compressed (the host decides; we see the file's bytes).
  const raw = await req.source.readStream(e.source, part?.range, { compress: true });
  const hash = createHash('sha256');
  let size = 0;
  raw.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    size += chunk.length;
    req.onBytes?.(chunk.length);
  });
  let digest: string | null = null;
  const seen = { sha256: () => (digest ??= hash.digest('hex')), size: () => size };
  if (e.verbatim) return { stream: raw, counted: () => 0, seen };
  const rw = createRewriteStream(matcher, { padFirstLine: part ? part.padFirstLine : (e.padFirstLine ?? false) });
  raw.on('error', (err) => rw.destroy(err));
  return { stream: raw.pipe(rw), counted: () => rw.replacements, seen };
}

function sourceOf(e: CopyEntry, seen: SourceSeen): NonNullable<CopiedFile['source']> {
  return { path: e.source, sha256: seen.sha256(), size: seen.size(), mtimeMs: e.mtimeMs };
}

/** Up to this many bytes a temp file goes in one write (one round trip over ssh) instead of a stream. */
const SMALL_FILE_BYTES = 12 * 1024;

/**
 * A temp file beside `file`, written chunk by chunk. The first SMALL_FILE_BYTES are held back, so
 * a small file goes in one write; a larger one opens a stream and goes on with constant memory.
 */
class TempFile {
  readonly path: string;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private out: { stream: Writable; done: Promise<void> } | null = null;

  constructor(
    private readonly target: Host,
    file: string,
    tag: string,
    private readonly mode: number,
  ) {
    this.path = path.join(path.dirname(file), `.${path.basename(file)}.ah-${tag}.tmp`);
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.out) return write(this.out.stream, chunk);
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes <= SMALL_FILE_BYTES) return;
    this.out = await this.target.writeStream(this.path, { mode: this.mode, compress: true });
    for (const c of this.held.splice(0)) await write(this.out.stream, c);
  }

  /**
   * Close the file. With `install`, a small file is written, given its mode and times and renamed
   * in the same program (one round trip for the whole file); returns whether that was done.
   */
  async finish(install?: Install): Promise<boolean> {
    if (!this.out) {
      if (!install) {
        await this.target.writeFile(this.path, Buffer.concat(this.held), { mode: this.mode });
        return false;
      }
      const r = await this.target.run(['/bin/sh', '-c', WRITE_AND_INSTALL_SCRIPT, 'sh', ...installArgs(install, this.path)], { stdin: Buffer.concat(this.held) });
      if (r.exitCode !== 0) throw new HandoffError('copy_failed', `Writing ${install.to || this.path} failed on ${this.target.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`);
      return true;
    }
    this.out.stream.end();
    await this.out.done;
    return false;
  }

  /** Stop writing and remove whatever was written. */
  async abort(): Promise<void> {
    this.out?.stream.destroy();
    await this.out?.done.catch(() => undefined);
    await this.target.remove(this.path);
  }
}

/**
 * Write the whole (rewritten) entry into a temp file beside `file`; returns its hash and size, and
 * whether `install` was done with the write (small files; see TempFile.finish). With
 * `unlessEmpty` (the target holds an empty file there), empty bytes are not written at all:
 * `written` says so.
 */
async function writeWhole(req: CopyRequest, matcher: RewriteMatcher, e: CopyEntry, file: string, tag: string, install?: Install, unlessEmpty = false) {
  const { stream, counted, seen } = await sourceBytes(req, matcher, e);
  const out = new TempFile(req.target, file, tag, e.mode & 0o7777);
  const hash = new ContentHasher();
  let content: ContentFacts;
  let written: boolean;
  let installed = false;
  try {
    await pipeline(stream, async (src: AsyncIterable<Buffer>) => {
      for await (const chunk of src) {
        hash.update(chunk);
        await out.write(chunk);
      }
    });
    content = hash.digest();
    // Nothing has reached the target yet: a TempFile holds its first bytes back.
    written = !(unlessEmpty && content.size === 0);
    if (written) installed = await out.finish(install);
  } catch (err) {
    await out.abort();
    throw err;
  }
  return { tmp: out.path, sha256: content.sha256, size: content.size, content, replacements: counted(), installed, written, source: sourceOf(e, seen) };
}

type Extend =
  | { kind: 'conflict'; reason: string }
  | { kind: 'unchanged'; sha256: string; size: number; content: ContentFacts; replacements: number; source: NonNullable<CopiedFile['source']> }
  | { kind: 'appended'; tail: string; sha256: string; size: number; content: ContentFacts; replacements: number; source: NonNullable<CopiedFile['source']> };

/**
 * The target holds `have` bytes of `file`: does the (rewritten) source continue them? Sends only
 * the rest. `hashThere`: those bytes' sha256 when already known (a file as it was left).
 */
async function extend(req: CopyRequest, matcher: RewriteMatcher, e: CopyEntry, file: string, have: number, tag: string, hashThere?: string): Promise<Extend> {
  const targetHash = hashThere ?? (await remotePrefixHash(req.target, file, have));
  const { stream, counted, seen: raw } = await sourceBytes(req, matcher, e);
  const prefix = createHash('sha256');
  const whole = new ContentHasher();
  let seen = 0;
  let tail: TempFile | null = null;
  let verdict: Extend | null = null;
  const tailFile = path.join(path.dirname(file), `${path.basename(file)}.tail`);
  try {
    await pipeline(stream, async (src: AsyncIterable<Buffer>) => {
      for await (let chunk of src) {
        whole.update(chunk);
        if (seen < have) {
          const take = Math.min(have - seen, chunk.length);
          prefix.update(chunk.subarray(0, take));
          seen += take;
          chunk = chunk.subarray(take);
          if (seen === have && prefix.digest('hex') !== targetHash) {
            verdict = { kind: 'conflict', reason: 'its content differs from the session being sent' };
            return;
          }
        }
        if (chunk.length === 0) continue;
        tail ??= new TempFile(req.target, tailFile, tag, 0o600);
        seen += chunk.length;
        await tail.write(chunk);
      }
    });
    await (tail as TempFile | null)?.finish();
  } catch (err) {
    await (tail as TempFile | null)?.abort();
    throw err;
  }
  if (verdict) return verdict;
  if (seen < have) return { kind: 'conflict', reason: `it is longer (${have} bytes) than the session being sent (${seen} bytes)` };
  const content = whole.digest();
  if (!tail) return { kind: 'unchanged', sha256: content.sha256, size: seen, content, replacements: counted(), source: sourceOf(e, raw) };
  return { kind: 'appended', tail: (tail as TempFile).path, sha256: content.sha256, size: seen, content, replacements: counted(), source: sourceOf(e, raw) };
}

/** A part of the source file, rewritten, into a temp file on the target; its size and replacements. */
async function writePart(req: CopyRequest, matcher: RewriteMatcher, e: CopyEntry, range: ByteRange, padFirstLine: boolean, tmp: TempFile): Promise<{ read: number; replacements: number }> {
  const { stream, counted, seen } = await sourceBytes(req, matcher, e, { range, padFirstLine });
  try {
    await pipeline(stream, async (src: AsyncIterable<Buffer>) => {
      for await (const chunk of src) await tmp.write(chunk);
    });
    await tmp.finish();
  } catch (err) {
    await tmp.abort();
    throw err;
  }
  return { read: seen.size(), replacements: counted() };
}

/** $1 a new first line, then $2 without its own first line, then $3, into $4. */
const REBUILD_SCRIPT = 'hl=$(head -n 1 <"$2" | wc -c | tr -d " ") && { cat -- "$1" && tail -c "+$((hl + 1))" -- "$2" && cat -- "$3"; } > "$4"';

/**
 * The target holds exactly what an earlier handoff left there, and the source still holds what
 * that handoff wrote plus a tail (`append`), or that with its first line rewritten (`head`): only
 * the tail (and the first line) cross. `append` extends the target's file; `head` builds the new
 * one from the first line, the target's own bytes after its first line, and the tail.
 */
async function delta(req: CopyRequest, matcher: RewriteMatcher, e: CopyEntry, file: string, verdict: Extract<Verdict, { kind: 'append' | 'head' }>, tag: string) {
  const { target } = req;
  const dir = path.dirname(file);
  const { arrived } = verdict;
  const tailTmp = new TempFile(target, path.join(dir, `${path.basename(file)}.tail`), tag, 0o600);
  const headTmp = new TempFile(target, path.join(dir, `${path.basename(file)}.head`), tag, 0o600);
  const built = path.join(dir, `.${path.basename(file)}.ah-${tag}.tmp`);
  try {
    // The tail starts on a line of its own (what arrived ended with a newline): rewritten alone.
    const tail = await writePart(req, matcher, e, { start: arrived.size }, false, tailTmp);
    let read = tail.read;
    let replacements = tail.replacements;
    if (verdict.kind === 'append') {
      await runOk(target, ['sh', '-c', 'cat -- "$1" "$2" > "$3"', 'sh', file, tailTmp.path, built], `Extending ${file}`);
    } else {
      const head = await writePart(req, matcher, e, { start: 0, length: arrived.headLength }, e.padFirstLine ?? false, headTmp);
      read += head.read;
      replacements += head.replacements;
      // The target's first line is as long as it is there (measured by the same program): its
      // own bytes after it are kept.
      await runOk(target, ['sh', '-c', REBUILD_SCRIPT, 'sh', headTmp.path, file, tailTmp.path, built], `Rebuilding ${file}`);
    }
    return { built, read, replacements };
  } finally {
    await Promise.all([target.remove(tailTmp.path), target.remove(headTmp.path)]);
  }
}

// ---------------------------------------------------------------------------------------------
// The unit

/** The file on the target against what is being sent: both sizes and mtimes, and what was left there. */
export interface ConflictFacts {
  file: string;
  there: { size: number; mtimeMs: number };
  sending: { size: number; mtimeMs: number };
  left: LeftState['left'];
}

const when = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** A session file on the target that an agent-handoff copy cannot take over: someone wrote it there. */
export function sessionConflict(host: Host, facts: ConflictFacts, reason: string): HandoffError {
  const { file, there, sending, left } = facts;
  const history = left
    ? ` It changed since handoff ${left.handoff} took the session to ${left.to} at ${left.at} (then ${left.size} bytes), so the session was resumed there too.`
    : ' No handoff recorded leaving it there, so it may hold work of its own.';
  return new HandoffError(
    'session_conflict',
    `${file} already exists on ${host.label} (${there.size} bytes, modified ${when(there.mtimeMs)}) and ${reason}; the session being sent is ${sending.size} bytes, modified ${when(sending.mtimeMs)}.${history}`,
    {
      fix: `Move ${file} aside on ${host.label} and run the handoff again, or pass --overwrite to replace it (the copy there is kept beside it as a backup).`,
      details: { file, there, sending, left },
    },
  );
}

/** The ledger's state of each held file: as `req.left` says for those it names (the same ledger), read now for the rest. */
async function leftStatesOf(target: Host, req: CopyRequest, held: readonly string[]): Promise<Map<string, LeftState>> {
  if (!req.ledgerDir) return new Map();
  const given = req.left?.dir === req.ledgerDir ? req.left.states : new Map<string, LeftState>();
  const unknown = held.filter((f) => !given.has(f));
  const read = await readLeft(target, req.ledgerDir, unknown);
  const states = new Map(unknown.map((f, i) => [f, read[i]!]));
  for (const f of held) if (given.has(f)) states.set(f, given.get(f)!);
  return states;
}

export async function copyUnit(req: CopyRequest): Promise<CopyRecord> {
  const { target } = req;
  const tag = req.tag ?? randomBytes(4).toString('hex');
  const matcher = req.plan instanceof RewriteMatcher ? req.plan : matcherFor(req.plan);
  const record: CopyRecord = { targetRoot: req.targetRoot, files: [], createdDirs: [] };

  // Validate every destination before writing anything.
  const dests = req.entries.map((e) => destinationUnder(req.targetRoot, e.dest));
  const existingOf = await prepareFolders(target, req.targetRoot, dests, record, req.looked);
  // What earlier handoffs left where this one finds files: one program for them all.
  const held = dests.filter((_, i) => existingOf[i]?.type === 'file' && existingOf[i]!.size > 0);
  const leftOf = await leftStatesOf(target, req, held);
  // Files the target holds as they were left: does the source still hold what arrived there
  // (plus a tail, or with a new first line)? Asked of the source, which hashes its own bytes.
  const asLeftEntries = req.entries.filter((e, i) => {
    const st = existingOf[i];
    return st?.type === 'file' && st.size > 0 && isAsLeft(leftOf.get(dests[i]!) ?? { left: null, sha256Now: null }, st.size);
  });
  const verdicts = req.arrivalsDir && asLeftEntries.length > 0 ? await arrivalVerdicts(req.source, req.arrivalsDir, asLeftEntries.map((e) => e.source)) : [];
  const verdictOf = new Map(asLeftEntries.map((e, i) => [e, verdicts[i]!]));

  for (const [i, e] of req.entries.entries()) {
    const file = dests[i]!;
    const dir = path.dirname(file);
    const existing = existingOf[i] ?? null;
    if (existing && existing.type !== 'file') {
      throw new HandoffError('unsafe_destination', `${file} on ${target.label} exists and is not a regular file (${existing.type}).`, { fix: `Move ${file} out of the way, then run the handoff again.` });
    }
    const mode = e.mode & 0o7777;
    // Mode and times, then (when `to` is given) the atomic rename into place: one program.
    const finish = async (p: string, to = '') => {
      await runOk(target, ['/bin/sh', '-c', INSTALL_SCRIPT, 'sh', ...installArgs({ mode, mtimeMs: e.mtimeMs, to }, p)], `Installing ${file}`);
    };

    if (existing && existing.size > 0) {
      const previous = { size: existing.size, mode: existing.mode, mtimeMs: existing.mtimeMs };
      const v = verdictOf.get(e);
      if (v && v.kind !== 'none' && v.arrived.endsWithNewline) {
        const source = { path: e.source, sha256: v.sha256Now, size: v.sizeNow, mtimeMs: e.mtimeMs };
        if (v.kind === 'append' && v.sizeNow === v.arrived.size) {
          // The source holds just what arrived there and the target what left it: the same
          // session, nothing to send (extending by nothing would only reinstall the file).
          const content = await describeFile(target, file);
          record.files.push({ path: file, action: 'unchanged', sha256: content.sha256, size: content.size, verbatim: e.verbatim, previous, backup: null, replacements: 0, source, content, sent: 0 });
          continue;
        }
        const d = await delta(req, matcher, e, file, v, tag);
        if (v.kind === 'append') {
          await finish(d.built, file);
          const content = await describeFile(target, file);
          record.files.push({ path: file, action: 'appended', sha256: content.sha256, size: content.size, verbatim: e.verbatim, previous, backup: null, replacements: d.replacements, source, content, sent: d.read });
        } else {
          const backup = backupName(file, tag);
          await finish(d.built);
          await target.rename(file, backup);
          await target.rename(d.built, file);
          const content = await describeFile(target, file);
          record.files.push({ path: file, action: 'replaced', sha256: content.sha256, size: content.size, verbatim: e.verbatim, previous, backup, replacements: d.replacements, source, content, sent: d.read });
        }
        continue;
      }
      // A file as it was left was hashed whole with the ledger: that hash is its prefix's.
      const state = leftOf.get(file);
      const ext = await extend(req, matcher, e, file, existing.size, tag, state?.sha256Now && isAsLeft(state, existing.size) ? state.sha256Now : undefined);
      if (ext.kind === 'unchanged') {
        record.files.push({ path: file, action: 'unchanged', sha256: ext.sha256, size: ext.size, verbatim: e.verbatim, previous, backup: null, replacements: ext.replacements, source: ext.source, content: ext.content, sent: ext.source.size });
        continue;
      }
      if (ext.kind === 'appended') {
        // Build the extended file beside it from the target's own bytes + the tail, then swap it in.
        const tmp = path.join(dir, `.${path.basename(file)}.ah-${tag}.tmp`);
        try {
          await runOk(target, ['sh', '-c', 'cat -- "$1" "$2" > "$3"', 'sh', file, ext.tail, tmp], `Extending ${file}`);
          await finish(tmp, file);
        } finally {
          await target.remove(ext.tail);
          await target.remove(tmp);
        }
        record.files.push({ path: file, action: 'appended', sha256: ext.sha256, size: ext.size, verbatim: e.verbatim, previous, backup: null, replacements: ext.replacements, source: ext.source, content: ext.content, sent: ext.source.size });
        continue;
      }
      const asLeft = isAsLeft(leftOf.get(file) ?? { left: null, sha256Now: null }, existing.size);
      if (!asLeft && !req.overwrite) {
        const size = e.size ?? (await req.source.stat(e.source))?.size ?? 0;
        throw sessionConflict(target, { file, there: existing, sending: { size, mtimeMs: e.mtimeMs }, left: leftOf.get(file)?.left ?? null }, ext.reason);
      }
      // Built beside it, then swapped in: the old file is the backup until the handoff is verified
      // (kept for good when it was forced: someone else's writes).
      const w = await writeWhole(req, matcher, e, file, tag);
      const backup = backupName(file, tag);
      await finish(w.tmp);
      await target.rename(file, backup);
      await target.rename(w.tmp, file);
      record.files.push({ path: file, action: asLeft ? 'replaced' : 'overwritten', sha256: w.sha256, size: w.size, verbatim: e.verbatim, previous, backup, replacements: w.replacements, source: w.source, content: w.content, sent: w.source.size });
      continue;
    }

    // An empty file there (grok's `*.lock`) stays as it is when the source's is empty too.
    const w = await writeWhole(req, matcher, e, file, tag, { mode, mtimeMs: e.mtimeMs, to: file }, existing !== null);
    if (w.written && !w.installed) await finish(w.tmp, file);
    const previous = existing ? { size: 0, mode: existing.mode, mtimeMs: existing.mtimeMs } : null;
    const action: CopyAction = !existing ? 'created' : w.written ? 'overwritten' : 'unchanged';
    record.files.push({ path: file, action, sha256: w.sha256, size: w.size, verbatim: e.verbatim, previous, backup: null, replacements: w.replacements, source: w.source, content: w.content, sent: w.source.size });
  }
  return record;
}

/** Check every written file on the target against the recorded hash and size (hashed there). */
export async function verifyCopy(target: Host, record: CopyRecord): Promise<{ ok: boolean; mismatches: string[] }> {
  const mismatches: string[] = [];
  for (const f of record.files) {
    const st = await target.stat(f.path);
    if (st?.type !== 'file' || st.size !== f.size || (await remotePrefixHash(target, f.path, f.size)) !== f.sha256) mismatches.push(f.path);
  }
  return { ok: mismatches.length === 0, mismatches };
}

/** Put the target back as it was before `copyUnit` (a failed handoff). Safe to call twice. */
export async function undoCopy(target: Host, record: CopyRecord): Promise<void> {
  for (const f of [...record.files].reverse()) {
    if (f.action === 'created') {
      await target.remove(f.path);
    } else if (f.action === 'appended' && f.previous) {
      if ((await target.stat(f.path))?.size === f.previous.size) continue;
      const tmp = `${f.path}.ah-undo.tmp`;
      await runOk(target, ['sh', '-c', 'head -c "$1" < "$2" > "$3"', 'sh', String(f.previous.size), f.path, tmp], `Restoring ${f.path}`);
      await target.chmod(tmp, f.previous.mode);
      await target.utimes(tmp, f.previous.mtimeMs, f.previous.mtimeMs);
      await target.rename(tmp, f.path);
    } else if (f.action === 'overwritten' || f.action === 'replaced') {
      if (f.backup && (await target.stat(f.backup))) await target.rename(f.backup, f.path);
      else if (f.previous?.size === 0) {
        await target.writeFile(f.path, Buffer.alloc(0), { mode: f.previous.mode });
        await target.utimes(f.path, f.previous.mtimeMs, f.previous.mtimeMs);
      }
    }
  }
  // Folders we made, deepest first; `rmdir` leaves any that something else has filled meanwhile.
  for (const d of [...record.createdDirs].reverse()) await target.run(['rmdir', '--', d]).catch(() => undefined);
}

/** Where a replaced file is kept until the handoff is verified (`tag`: the copy's). */
export function backupName(file: string, tag: string): string {
  return `${file}.ah-backup-${tag}`;
}

/** After a verified handoff: drop the backups of files as an earlier handoff left them (forced ones stay). Returns those kept. */
export async function discardBackups(target: Host, record: CopyRecord): Promise<string[]> {
  const replaced = record.files.filter((f) => f.action === 'replaced' && f.backup);
  if (replaced.length > 0) await target.run(['rm', '-f', '--', ...replaced.map((f) => f.backup!)]);
  return record.files.filter((f) => f.action === 'overwritten' && f.backup).map((f) => f.backup!);
}
