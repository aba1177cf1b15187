// The incremental core of the rewriter: feed bytes, get rewritten bytes.
//
// Between chunks it keeps `maxLen + 16` bytes of tail, so no chunk boundary splits a match or
// hides a boundary character; memory is constant whatever the line length.
import { LOOKAHEAD, type RewriteMatcher } from './rewrite-matcher.js';

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
