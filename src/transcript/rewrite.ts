// The streaming one-pass path rewriter.
//
// Session files name absolute paths of the source machine (repo, config root, HOME, the agent's
// own per-project folder). We replace them with the target's in ONE pass over the raw bytes —
// never parsing and re-serialising JSON, so every other byte stays as the agent wrote it (Codex
// checks each line's `ordinal`; omp's line 1 is fixed-width).
//
// The rules: rewrite-plan.ts (which folders), path-spellings.ts (how they are written),
// rewrite-matcher.ts (where they match), path-rewriter.ts (across chunks). Here: the stream and the
// whole-buffer form, with omp's fixed-width first line.
import { Transform, type TransformCallback } from 'node:stream';
import { fitFirstLine } from './first-line.js';
import type { RewritePlan } from './rewrite-plan.js';
import { matcherFor, RewriteMatcher } from './rewrite-matcher.js';
import { PathRewriter } from './path-rewriter.js';

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
