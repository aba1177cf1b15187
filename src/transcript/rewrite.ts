// The streaming one-pass path rewriter.
//
// Session files name absolute paths of the source machine (repo, config root, HOME, the agent's
// own per-project folder). We replace them with the target's in ONE pass over the raw bytes —
// never parsing and re-serialising JSON, so every other byte stays as the agent wrote it (Codex
// checks each line's `ordinal`; omp's line 1 is fixed-width).
//
// Matching rules (tested in test/transcript/rewrite.test.ts):
// - All sources (every spelling, every escaping level) form ONE alternation, longest first, so a
//   longer source wins over its own prefix and replaced text is never looked at again.
// - A source matches only at path-component boundaries:
//   before it: start of stream, or any character that cannot end a path component — i.e. NOT
//     `A–Z a–z 0–9 . _ ~ + % # $ ! / -` and not a byte ≥ 0x80 — or a JSON escape `\n \r \t \b \f`
//     (a path right after an escaped newline in a JSON string);
//   after it: end of stream, `/`, or any character that cannot continue a path component — i.e.
//     NOT `A–Z a–z 0–9 _ ~ + % # $ ! @ -`, a byte ≥ 0x80, or `.` followed by one of those
//     (a sentence's full stop is a boundary; `/x/repo.old` is another file) — and not a JSON
//     `\uXXXX` escape (an escaped non-ASCII character continuing the name).
// - Bytes are handled as latin1 strings (one char per byte), so any byte sequence round-trips.
import { Transform, type TransformCallback } from 'node:stream';
import path from 'node:path/posix';

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
// The matcher.

const CONT = 'A-Za-z0-9_~+%#$!@\\x80-\\xff\\-';
/** Characters that may end a path component (so a source right after them is inside a longer path). */
const BEFORE_PATH = /[A-Za-z0-9._~+%#$!/\x80-\xff-]/;
const JSON_ESCAPE_LETTER = /[nrtbf]/;
/** How many characters past a match the lookahead may inspect (`\\\\\\\\u00e9`). */
const LOOKAHEAD = 16;

function escapeRe(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
}

export class RewriteMatcher {
  readonly re: RegExp;
  readonly table: Map<string, string>;
  readonly maxLen: number;

  constructor(replacements: readonly Replacement[]) {
    this.table = new Map(replacements.map((r) => [r.from, r.to]));
    this.maxLen = replacements.reduce((n, r) => Math.max(n, r.from.length), 0);
    const alts = replacements.map((r) => escapeRe(r.from)).join('|');
    // The lookbehind is checked in code (it is the same for every alternative, and a regex
    // lookbehind at every position would be slow); the lookahead is part of the pattern.
    this.re = alts
      ? new RegExp(`(?:${alts})(?!\\\\{1,8}u[0-9a-fA-F]{4})(?=$|[^.${CONT}]|\\.(?![${CONT}]))`, 'g')
      : /(?!)/g;
  }

  /** May a source start at `i` of `text`? (`atStart`: `i` is the start of the stream.) */
  boundaryBefore(text: string, i: number, atStart: boolean): boolean {
    if (i === 0) return atStart;
    const prev = text[i - 1]!;
    if (!BEFORE_PATH.test(prev)) return true;
    return i >= 2 && text[i - 2] === '\\' && JSON_ESCAPE_LETTER.test(prev);
  }
}

/** The incremental core: feed latin1 text, get rewritten latin1 text; keeps a bounded tail. */
export class PathRewriter {
  private readonly m: RewriteMatcher;
  /** Up to two already-emitted source characters, for the boundary check. */
  private ctx = '';
  private pending = '';
  private atStart = true;
  replacements = 0;

  constructor(matcher: RewriteMatcher) {
    this.m = matcher;
  }

  /** Rewrite what is certain; hold back the tail that could still be (part of) a match. */
  push(text: string, final = false): string {
    const m = this.m;
    const all = this.ctx + this.pending + text;
    const base = this.ctx.length;
    const cut = final ? all.length : all.length - (m.maxLen + LOOKAHEAD);
    if (cut <= base && !final) {
      this.pending = all.slice(base);
      return '';
    }
    const out: string[] = [];
    let pos = base;
    const re = m.re;
    re.lastIndex = base;
    for (;;) {
      const hit = re.exec(all);
      if (!hit || hit.index >= cut) break;
      if (!m.boundaryBefore(all, hit.index, this.atStart && base === 0)) {
        re.lastIndex = hit.index + 1;
        continue;
      }
      out.push(all.slice(pos, hit.index), m.table.get(hit[0])!);
      pos = hit.index + hit[0].length;
      this.replacements++;
    }
    const emitEnd = Math.max(cut, pos);
    out.push(all.slice(pos, emitEnd));
    if (emitEnd > base) this.atStart = false;
    this.ctx = all.slice(Math.max(0, emitEnd - 2), emitEnd);
    this.pending = all.slice(emitEnd);
    return out.join('');
  }

  end(): string {
    return this.push('', true);
  }
}

export interface RewriteOptions {
  /** Keep line 1's byte length by adjusting its `"pad":"   "` run (omp's in-place title record). */
  padFirstLine?: boolean;
}

/** Longest first line we hold whole for the padding rule (omp's is 256 bytes). */
const FIRST_LINE_MAX = 1 << 20;

/** After rewriting a padded line, give back (or take) the length difference from its `"pad"` spaces. */
export function repad(original: string, rewritten: string): string {
  const delta = rewritten.length - original.length;
  if (delta === 0) return rewritten;
  const m = /"pad":"( *)"/.exec(rewritten);
  if (!m) return rewritten;
  const spaces = m[1]!.length;
  const newSpaces = Math.max(0, spaces - delta);
  const at = m.index + '"pad":"'.length;
  return rewritten.slice(0, at) + ' '.repeat(newSpaces) + rewritten.slice(at + spaces);
}

export class RewriteStream extends Transform {
  private readonly core: PathRewriter;
  private firstLine: Buffer[] | null;
  private firstLineSize = 0;

  constructor(plan: RewritePlan | RewriteMatcher, opts: RewriteOptions = {}) {
    super();
    const matcher = plan instanceof RewriteMatcher ? plan : new RewriteMatcher(replacementsOf(plan));
    this.core = new PathRewriter(matcher);
    this.firstLine = opts.padFirstLine ? [] : null;
  }

  get replacements(): number {
    return this.core.replacements;
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
          const line = head.subarray(0, lineEnd + 1).toString('latin1');
          // The line ends with its newline, so emitting it whole decides every match in it.
          const out = repad(line, this.core.push(line, true));
          this.push(Buffer.from(out, 'latin1'));
          chunk = head.subarray(lineEnd + 1);
        } else {
          chunk = head;
        }
      }
      const out = this.core.push(chunk.toString('latin1'));
      if (out) this.push(Buffer.from(out, 'latin1'));
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }

  override _flush(cb: TransformCallback): void {
    try {
      if (this.firstLine) {
        const line = Buffer.concat(this.firstLine).toString('latin1');
        this.firstLine = null;
        this.push(Buffer.from(repad(line, this.core.push(line, true)), 'latin1'));
      }
      const out = this.core.end();
      if (out) this.push(Buffer.from(out, 'latin1'));
      cb();
    } catch (err) {
      cb(err as Error);
    }
  }
}

/** A Transform that rewrites a session file's bytes with constant memory. */
export function createRewriteStream(plan: RewritePlan | RewriteMatcher, opts: RewriteOptions = {}): RewriteStream {
  return new RewriteStream(plan, opts);
}

/** Whole-buffer convenience (tests, small files); same rules as the stream. */
export function rewriteBuffer(plan: RewritePlan | RewriteMatcher, input: Buffer, opts: RewriteOptions = {}): { output: Buffer; replacements: number } {
  const matcher = plan instanceof RewriteMatcher ? plan : new RewriteMatcher(replacementsOf(plan));
  const core = new PathRewriter(matcher);
  let text = input.toString('latin1');
  let prefix = '';
  if (opts.padFirstLine) {
    const nl = text.indexOf('\n');
    const line = nl >= 0 ? text.slice(0, nl + 1) : text;
    prefix = repad(line, core.push(line, true));
    text = text.slice(line.length);
  }
  const out = prefix + core.push(text) + core.end();
  return { output: Buffer.from(out, 'latin1'), replacements: core.replacements };
}
