// One file of a unit, streamed: the source's bytes (raw, hashed) through the rewriter into a temp
// file on the target — whole, or only what the target lacks (a tail; a new first line), after
// checking that what it holds is what the source continues.
import { createHash } from 'node:crypto';
import path from 'node:path/posix';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ByteRange } from '../host/host.js';
import { ContentHasher, type ContentFacts, type Verdict } from './arrivals.js';
import type { CopiedFile, CopyEntry, CopyRequest } from './copy-types.js';
import { createRewriteStream } from './rewrite.js';
import type { RewriteMatcher } from './rewrite-matcher.js';
import { remotePrefixHash, runOk, TempFile, type Install } from './target-files.js';
import { youngGarbageSweeper } from '../young-garbage.js';

/** What a read of the source saw of its own bytes (valid once the stream has ended). */
interface SourceSeen {
  sha256: () => string;
  size: () => number;
}

/** The (rewritten) bytes of an entry as a stream, how many replacements it made, and the source's own bytes' hash. */
export async function sourceBytes(req: CopyRequest, matcher: RewriteMatcher, e: CopyEntry, part?: { range: ByteRange; padFirstLine: boolean }): Promise<{ stream: Readable; counted: () => number; seen: SourceSeen }> {
  // Session files are text: they may cross compressed (the host decides; we see the file's bytes).
  const ahead = (await req.readAhead?.catch(() => null))?.get(e.source);
  const raw = ahead ? bytesIn(ahead, part?.range) : await req.source.readStream(e.source, part?.range, { compress: true });
  const hash = createHash('sha256');
  let size = 0;
  // Every chunk leaves dead buffers at each stage behind it: collected as they go (young-garbage.ts).
  const sweep = youngGarbageSweeper();
  raw.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    size += chunk.length;
    req.onBytes?.(chunk.length);
    sweep(chunk.length);
  });
  let digest: string | null = null;
  const seen = { sha256: () => (digest ??= hash.digest('hex')), size: () => size };
  if (e.verbatim) return { stream: raw, counted: () => 0, seen };
  const rw = createRewriteStream(matcher, { padFirstLine: part ? part.padFirstLine : (e.padFirstLine ?? false) });
  raw.on('error', (err) => rw.destroy(err));
  return { stream: raw.pipe(rw), counted: () => rw.replacements, seen };
}

/** A file read ahead, as the stream readStream would have given for this range. */
function bytesIn(bytes: Buffer, range?: ByteRange): Readable {
  const part = range ? bytes.subarray(range.start, range.length === undefined ? undefined : range.start + range.length) : bytes;
  return Readable.from(part.length > 0 ? [part] : [], { objectMode: false });
}

function sourceOf(e: CopyEntry, seen: SourceSeen): NonNullable<CopiedFile['source']> {
  return { path: e.source, sha256: seen.sha256(), size: seen.size(), mtimeMs: e.mtimeMs };
}

/**
 * Write the whole (rewritten) entry into a temp file beside `file`; returns its hash and size, and
 * whether `install` was done with the write (small files; see TempFile.finish). With
 * `unlessEmpty` (the target holds an empty file there), empty bytes are not written at all:
 * `written` says so.
 */
export async function writeWhole(req: CopyRequest, matcher: RewriteMatcher, e: CopyEntry, file: string, tag: string, install?: Install, unlessEmpty = false) {
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
export async function extend(req: CopyRequest, matcher: RewriteMatcher, e: CopyEntry, file: string, have: number, tag: string, hashThere?: string): Promise<Extend> {
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
export async function delta(req: CopyRequest, matcher: RewriteMatcher, e: CopyEntry, file: string, verdict: Extract<Verdict, { kind: 'append' | 'head' }>, tag: string) {
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
