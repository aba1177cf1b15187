// The streaming one-pass path rewriter.
//
// Session files name absolute paths of the source machine (repo, config root, HOME, the agent's
// own per-project folder). We replace them with the target's in ONE pass over the raw bytes —
// never parsing and re-serialising JSON, so every other byte stays as the agent wrote it (Codex
// checks each line's `ordinal`; omp's line 1 is fixed-width).
//
// Matching rules (tested in test/transcript/rewrite.test.ts):
// - All sources (every spelling, every escaping level) are matched together in one scan: at each
//   position the longest source whose boundaries hold wins, matches never overlap, and the scan
//   continues after the replaced text, so output is never rewritten twice.
// - A source matches only at path-component boundaries:
//   before it: start of stream, or any character that cannot end a path component — i.e. NOT
//     `A–Z a–z 0–9 . _ ~ + % # $ ! / -` and not a byte ≥ 0x80 — or a JSON escape `\n \r \t \b \f`
//     (a path right after an escaped newline in a JSON string);
//   after it: end of stream, `/`, or any character that cannot continue a path component — i.e.
//     NOT `A–Z a–z 0–9 _ ~ + % # $ ! @ -`, a byte ≥ 0x80, or `.` followed by one of those
//     (a sentence's full stop is a boundary; `/x/repo.old` is another file) — and not a JSON
//     `\uXXXX` escape (an escaped non-ASCII character continuing the name).
// - It works on raw bytes; anything that is not a match is copied as is (binary included).
// - Streaming keeps `maxLen + 16` bytes of tail between chunks, so no chunk boundary splits a
//   match or hides a boundary character; memory is constant whatever the line length.
import { Transform, type TransformCallback } from 'node:stream';
import path from 'node:path/posix';
import { fitFirstLine } from './first-line.js';

export interface PathMapping {
  from: string;
  to: string;
}

export interface RewritePlan {
  /** Absolute source → target paths, most specific first (before spelling variants). */
  mappings: PathMapping[];
}

export interface RewritePlanInput {
  /** Every spelling of the source repo root (git toplevel, its realpath, herdr cwd minus the relative part). */
  repo?: { source: readonly string[]; target: string };
  configRoot?: { source: readonly string[]; target: string };
  home?: { source: readonly string[]; target: string };
  /** The adapter's folder renames (`Placement.renames`), and anything else specific. */
  renames?: readonly PathMapping[];
}

function normalise(p: string): string {
  const n = path.normalize(p);
  return n.length > 1 ? n.replace(/\/+$/, '') : n;
}

/** macOS spells temp and var folders both ways (`/private/tmp` is where `/tmp` points). */
function aliases(p: string): string[] {
  const out = [p];
  const m = /^\/private(\/(?:tmp|var|etc)(?:\/.*)?)$/.exec(p);
  if (m) out.push(m[1]!);
  else if (/^\/(?:tmp|var|etc)(?:\/|$)/.test(p)) out.push(`/private${p}`);
  return out;
}

/**
 * A pure function: the mappings a session needs, most specific first. Identity mappings and
 * the root `/` are dropped; a source spelling already mapped keeps its first (more specific) target.
 */
export function buildRewritePlan(input: RewritePlanInput): RewritePlan {
  const groups: { sources: readonly string[]; target: string }[] = [];
  for (const r of input.renames ?? []) groups.push({ sources: [r.from], target: r.to });
  if (input.repo) groups.push({ sources: input.repo.source, target: input.repo.target });
  if (input.configRoot) groups.push({ sources: input.configRoot.source, target: input.configRoot.target });
  if (input.home) groups.push({ sources: input.home.source, target: input.home.target });
  const seen = new Map<string, string>();
  for (const g of groups) {
    const to = normalise(g.target);
    for (const s of g.sources) {
      if (!s.startsWith('/')) continue;
      for (const from of aliases(normalise(s))) {
        if (from === '/' || seen.has(from)) continue;
        seen.set(from, to);
      }
    }
  }
  const mappings = [...seen].filter(([from, to]) => from !== to).map(([from, to]) => ({ from, to }));
  mappings.sort((a, b) => b.from.length - a.from.length);
  return { mappings };
}

// ---------------------------------------------------------------------------------------------
// Spellings: how one path may appear in the bytes of a session file.

/** JSON string body with minimal escaping (as JSON.stringify / serde write it). */
const jsonMin = (s: string) => JSON.stringify(s).slice(1, -1);
/** JSON string body with non-ASCII as `\uXXXX` (Python's default). */
const jsonAscii = (s: string) => jsonMin(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** `/` written as `\/` (allowed by JSON, used by some writers). */
const slashEsc = (s: string) => s.replace(/\//g, '\\/');

/** A file URL's path: percent-encode bytes outside the URL path set (Rust `url`/WHATWG rules), keep `/`. */
export function fileUrlPath(p: string): string {
  let out = '';
  for (const b of Buffer.from(p, 'utf8')) {
    const keep = b > 0x20 && b < 0x7f && !'"#<>`?{}%'.includes(String.fromCharCode(b));
    out += keep ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

type Spelling = (s: string) => string;

/** Every spelling: plain and `file://` URL, each raw, JSON-escaped, and JSON-in-JSON escaped. */
const SPELLINGS: Spelling[] = (() => {
  const base: Spelling[] = [(s) => s, (s) => `file://${fileUrlPath(s)}`];
  const level1: Spelling[] = [jsonMin, jsonAscii, (s) => slashEsc(jsonMin(s)), (s) => slashEsc(jsonAscii(s))];
  const level2: Spelling[] = [jsonMin, jsonAscii];
  const out: Spelling[] = [];
  for (const b of base) {
    out.push(b);
    for (const l1 of level1) {
      out.push((s) => l1(b(s)));
      for (const l2 of level2) out.push((s) => l2(l1(b(s))));
    }
  }
  return out;
})();

const toBytes = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

export interface Replacement {
  /** Source spelling as a latin1 string of its UTF-8 bytes. */
  from: string;
  to: string;
}

/** All byte-level replacements of a plan, longest first, each source spelling once. */
export function replacementsOf(plan: RewritePlan): Replacement[] {
  const seen = new Map<string, string>();
  for (const m of plan.mappings) {
    for (const spell of SPELLINGS) {
      const from = toBytes(spell(m.from));
      if (!seen.has(from)) seen.set(from, toBytes(spell(m.to)));
    }
  }
  return [...seen].filter(([f, t]) => f !== t).map(([from, to]) => ({ from, to })).sort((a, b) => b.from.length - a.from.length || (a.from < b.from ? -1 : 1));
}

// ---------------------------------------------------------------------------------------------
// The matcher: works on Buffers (no string conversion per chunk). Candidates are found with
// Buffer#indexOf on an "anchor" — the longest run of name characters in a source spelling, so
// `/home/a`, `\/home\/a` and `file:///home/a` share the anchor `home` — then checked in full.

/** Byte classes: 1 = may end a path component (before a source), 2 = may continue one (after). */
const ENDS_COMPONENT = 1;
const CONTINUES_COMPONENT = 2;
const CLASS = (() => {
  const t = new Uint8Array(256);
  const set = (chars: string, bit: number) => {
    for (const c of chars) t[c.charCodeAt(0)]! |= bit;
  };
  const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  set(alnum + '._~+%#$!/-', ENDS_COMPONENT);
  set(alnum + '_~+%#$!@-', CONTINUES_COMPONENT);
  for (let b = 0x80; b < 0x100; b++) t[b]! |= ENDS_COMPONENT | CONTINUES_COMPONENT;
  return t;
})();
const isJsonEscapeLetter = (c: number) => c === 0x6e || c === 0x72 || c === 0x74 || c === 0x62 || c === 0x66; // n r t b f
const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** How many bytes past a match the boundary check may inspect (`\\\\\\\\u00e9`). */
const LOOKAHEAD = 16;

/** The longest run of [A-Za-z0-9._-] in a spelling (whole spelling when it has no run of 3). */
function anchorOf(s: string): { anchor: string; offset: number } {
  let best = { anchor: '', offset: 0 };
  for (const m of s.matchAll(/[A-Za-z0-9._-]+/g)) if (m[0].length > best.anchor.length) best = { anchor: m[0], offset: m.index };
  return best.anchor.length >= 3 ? best : { anchor: s, offset: 0 };
}

interface AnchorGroup {
  anchor: Buffer;
  members: { src: number; offset: number }[];
  maxOffset: number;
}

export interface Match {
  at: number;
  /** Index into `RewriteMatcher.sources`. */
  src: number;
}

export class RewriteMatcher {
  /** Source spellings, longest first, and their targets. */
  readonly sources: Buffer[];
  readonly targets: Buffer[];
  readonly groups: AnchorGroup[];
  readonly maxLen: number;

  constructor(replacements: readonly Replacement[]) {
    const reps = [...replacements].sort((a, b) => b.from.length - a.from.length);
    this.sources = reps.map((r) => Buffer.from(r.from, 'latin1'));
    this.targets = reps.map((r) => Buffer.from(r.to, 'latin1'));
    this.maxLen = this.sources.reduce((n, s) => Math.max(n, s.length), 0);
    const byAnchor = new Map<string, AnchorGroup>();
    reps.forEach((r, src) => {
      const { anchor, offset } = anchorOf(r.from);
      let g = byAnchor.get(anchor);
      if (!g) byAnchor.set(anchor, (g = { anchor: Buffer.from(anchor, 'latin1'), members: [], maxOffset: 0 }));
      g.members.push({ src, offset });
      g.maxOffset = Math.max(g.maxOffset, offset);
    });
    this.groups = [...byAnchor.values()];
  }

  /** May a source start at `i`? (`atStart`: `i` is the start of the stream.) */
  boundaryBefore(buf: Buffer, i: number, atStart: boolean): boolean {
    if (i === 0) return atStart;
    const prev = buf[i - 1]!;
    if (!(CLASS[prev]! & ENDS_COMPONENT)) return true;
    // right after a JSON escape such as `\n` (a path starting a new line inside a JSON string)
    return i >= 2 && buf[i - 2] === 0x5c && isJsonEscapeLetter(prev);
  }

  /** May a source end at `j`? (`buf` ends at the end of the stream or ≥ LOOKAHEAD past `j`.) */
  boundaryAfter(buf: Buffer, j: number): boolean {
    if (j >= buf.length) return true;
    const c = buf[j]!;
    if (c === 0x2e) {
      // `.`: a full stop ends the path; `.old` continues it
      return j + 1 >= buf.length || !(CLASS[buf[j + 1]!]! & CONTINUES_COMPONENT);
    }
    if (c === 0x5c) {
      // `\uXXXX` (at any escaping level): an escaped non-ASCII character continuing the name
      let k = j;
      while (k < buf.length && k - j < 8 && buf[k] === 0x5c) k++;
      if (buf[k] !== 0x75) return true;
      for (let h = 1; h <= 4; h++) if (!isHex(buf[k + h] ?? 0)) return true;
      return false;
    }
    return !(CLASS[c]! & CONTINUES_COMPONENT);
  }

  /**
   * Matches starting in [from, cut) of `buf`, left to right, longest first at each position,
   * never overlapping. Every match lies inside `buf`, and its boundaries are decided.
   */
  scan(buf: Buffer, from: number, cut: number, atStart: boolean): Match[] {
    const cands: Match[] = [];
    for (const g of this.groups) {
      const limit = cut + g.maxOffset;
      for (let q = buf.indexOf(g.anchor, from); q >= 0 && q < limit; q = buf.indexOf(g.anchor, q + 1)) {
        for (const mem of g.members) {
          const at = q - mem.offset;
          if (at < from || at >= cut) continue;
          const s = this.sources[mem.src]!;
          if (at + s.length <= buf.length && buf.compare(s, 0, s.length, at, at + s.length) === 0) cands.push({ at, src: mem.src });
        }
      }
    }
    if (cands.length === 0) return cands;
    // sources are sorted longest first, so a lower index is a longer source
    cands.sort((a, b) => a.at - b.at || a.src - b.src);
    const out: Match[] = [];
    let pos = from;
    let checkedBefore = -1;
    let beforeOk = false;
    for (const c of cands) {
      if (c.at < pos) continue;
      if (c.at !== checkedBefore) {
        checkedBefore = c.at;
        beforeOk = this.boundaryBefore(buf, c.at, atStart && c.at === 0);
      }
      if (!beforeOk) continue;
      const end = c.at + this.sources[c.src]!.length;
      if (!this.boundaryAfter(buf, end)) continue;
      out.push(c);
      pos = end;
    }
    return out;
  }
}

/** Largest scratch buffer a rewriter keeps (bigger chunks are joined in a buffer of their own). */
const SCRATCH_MAX = 1 << 20;

/** The incremental core: feed bytes, get rewritten bytes; holds back a bounded tail. */
export class PathRewriter {
  private readonly m: RewriteMatcher;
  /** Up to two already-emitted source bytes, for the boundary check. */
  private ctx: Buffer = Buffer.alloc(0);
  private pending: Buffer = Buffer.alloc(0);
  private atStart = true;
  /**
   * Where the held-back bytes and the next chunk are put together: reused, so each chunk costs
   * one new buffer (its output) instead of two. Garbage buffers are what a long stream's memory
   * is made of (they wait for a GC), not the bytes in flight.
   */
  private scratch: Buffer = Buffer.alloc(0);
  replacements = 0;

  constructor(matcher: RewriteMatcher) {
    this.m = matcher;
  }

  /** ctx + pending + chunk, in the scratch buffer when it fits (then the output must be copied out). */
  private join(chunk: Buffer): { all: Buffer; borrowed: boolean } {
    const held = this.ctx.length + this.pending.length;
    if (held === 0) return { all: chunk, borrowed: false };
    const total = held + chunk.length;
    if (total > SCRATCH_MAX) return { all: Buffer.concat([this.ctx, this.pending, chunk]), borrowed: false };
    if (this.scratch.length < total) this.scratch = Buffer.allocUnsafe(Math.min(SCRATCH_MAX, Math.max(total, 2 * this.scratch.length)));
    this.ctx.copy(this.scratch, 0);
    this.pending.copy(this.scratch, this.ctx.length);
    chunk.copy(this.scratch, held);
    return { all: this.scratch.subarray(0, total), borrowed: true };
  }

  /** Rewrite what is certain; hold back the tail that could still be (part of) a match. */
  push(chunk: Buffer, final = false): Buffer {
    const m = this.m;
    const base = this.ctx.length;
    const { all, borrowed } = this.join(chunk);
    const cut = final ? all.length : all.length - (m.maxLen + LOOKAHEAD);
    if (cut <= base && !final) {
      this.pending = Buffer.from(all.subarray(base));
      return Buffer.alloc(0);
    }
    const parts: Buffer[] = [];
    let pos = base;
    for (const hit of m.scan(all, base, cut, this.atStart && base === 0)) {
      parts.push(all.subarray(pos, hit.at), m.targets[hit.src]!);
      pos = hit.at + m.sources[hit.src]!.length;
      this.replacements++;
    }
    const emitEnd = Math.max(cut, pos);
    parts.push(all.subarray(pos, emitEnd));
    if (emitEnd > base) this.atStart = false;
    // copies: `all` may be the caller's chunk, and the tail must not pin a large buffer
    this.ctx = Buffer.from(all.subarray(Math.max(0, emitEnd - 2), emitEnd));
    this.pending = Buffer.from(all.subarray(emitEnd));
    // Buffer.concat copies even one part: nothing handed out points into the scratch buffer.
    return parts.length === 1 && !borrowed ? parts[0]! : Buffer.concat(parts);
  }

  end(): Buffer {
    return this.push(Buffer.alloc(0), true);
  }
}

export interface RewriteOptions {
  /** Keep line 1's byte length, by its `"pad":"   "` run and its title (omp's in-place title record; see first-line.ts). */
  padFirstLine?: boolean;
}

/** Longest first line we hold whole for the padding rule (omp's is 256 bytes). */
const FIRST_LINE_MAX = 1 << 20;

/** The first line (whole, with its newline) rewritten, at its own byte length. */
function rewriteFirstLine(core: PathRewriter, matcher: RewriteMatcher, line: Buffer): Buffer {
  return fitFirstLine(line, core.push(line, true), matcher.targets);
}

export class RewriteStream extends Transform {
  private readonly matcher: RewriteMatcher;
  private readonly core: PathRewriter;
  private firstLine: Buffer[] | null;
  private firstLineSize = 0;

  constructor(plan: RewritePlan | RewriteMatcher, opts: RewriteOptions = {}) {
    super();
    this.matcher = plan instanceof RewriteMatcher ? plan : matcherFor(plan);
    this.core = new PathRewriter(this.matcher);
    this.firstLine = opts.padFirstLine ? [] : null;
  }

  get replacements(): number {
    return this.core.replacements;
  }

  /** The first line, whole: it ends with its newline, so emitting it decides every match in it. */
  private firstLineOut(line: Buffer): Buffer {
    return rewriteFirstLine(this.core, this.matcher, line);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    try {
      if (this.firstLine) {
        const nl = chunk.indexOf(0x0a);
        if (nl < 0 && this.firstLineSize + chunk.length < FIRST_LINE_MAX) {
          this.firstLine.push(chunk);
          this.firstLineSize += chunk.length;
          return cb();
        }
        const head = Buffer.concat([...this.firstLine, chunk]);
        this.firstLine = null;
        const lineEnd = head.indexOf(0x0a);
        if (lineEnd >= 0) {
          this.push(this.firstLineOut(head.subarray(0, lineEnd + 1)));
          chunk = head.subarray(lineEnd + 1);
        } else {
          chunk = head;
        }
      }
      const out = this.core.push(chunk);
      if (out.length > 0) this.push(out);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }

  override _flush(cb: TransformCallback): void {
    try {
      if (this.firstLine) {
        const line = Buffer.concat(this.firstLine);
        this.firstLine = null;
        const out = this.firstLineOut(line);
        if (out.length > 0) this.push(out);
      }
      const out = this.core.end();
      if (out.length > 0) this.push(out);
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }
}

/** The matcher for a plan (build once, share across the files of a unit). */
export function matcherFor(plan: RewritePlan): RewriteMatcher {
  return new RewriteMatcher(replacementsOf(plan));
}

/** A Transform that rewrites a session file's bytes with constant memory. */
export function createRewriteStream(plan: RewritePlan | RewriteMatcher, opts: RewriteOptions = {}): RewriteStream {
  return new RewriteStream(plan, opts);
}

/** Whole-buffer convenience (tests, small files); same rules as the stream. */
export function rewriteBuffer(plan: RewritePlan | RewriteMatcher, input: Buffer, opts: RewriteOptions = {}): { output: Buffer; replacements: number } {
  const matcher = plan instanceof RewriteMatcher ? plan : matcherFor(plan);
  const core = new PathRewriter(matcher);
  const parts: Buffer[] = [];
  let rest = input;
  if (opts.padFirstLine) {
    const nl = input.indexOf(0x0a);
    const line = nl >= 0 ? input.subarray(0, nl + 1) : input;
    parts.push(rewriteFirstLine(core, matcher, line));
    rest = input.subarray(line.length);
  }
  parts.push(core.push(rest), core.end());
  return { output: Buffer.concat(parts), replacements: core.replacements };
}
