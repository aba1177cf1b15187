// gzip for file streams that cross an ssh link: the bytes are cut into blocks, each compressed as
// a gzip member of its own on libuv's thread pool, several at once, and the members go out in
// order. Concatenated members are one valid gzip stream (RFC 1952 §2.2): `gzip -dc` on any POSIX
// machine, busybox included, gives back the concatenated bytes. One deflate stream compresses on
// one thread at ~40–90 MB/s, slower than the rewriter and than the link over a LAN; blocks use
// every core the controller has. Level 1: session text still shrinks ~3×, at the least CPU.
// Memory stays bounded: at most `parallel` blocks are in flight, and a full queue holds the writer.
import os from 'node:os';
import { Transform, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';

/** Input bytes per member: large enough that a fresh dictionary costs little ratio (<1%). */
export const GZIP_BLOCK = 1024 * 1024;

export interface GzipBlocksOptions {
  level?: number;
  block?: number;
  /** Blocks compressed at once (default: one per core beyond the main thread, 2–3; the pool has 4 threads, fs needs one). */
  parallel?: number;
}

export class GzipBlocks extends Transform {
  private readonly level: number;
  private readonly block: number;
  private readonly parallel: number;
  /** The member taking input now, and how much it has taken. */
  private current: Member | null = null;
  /** Members being compressed, in input order (the current one last). */
  private readonly inFlight: Member[] = [];

  constructor(opts: GzipBlocksOptions = {}) {
    super();
    this.level = opts.level ?? 1;
    this.block = opts.block ?? GZIP_BLOCK;
    this.parallel = opts.parallel ?? Math.min(3, Math.max(2, os.availableParallelism() - 1));
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    const m = (this.current ??= this.startMember());
    // The member's own stream takes the chunk as is (no block is assembled: no copy), and
    // compresses it on the pool while we go on.
    m.z.write(chunk);
    m.bytes += chunk.length;
    if (m.bytes < this.block) return cb();
    m.z.end();
    this.current = null;
    this.drainTo(this.parallel - 1).then(() => cb(), cb);
  }

  override _flush(cb: TransformCallback): void {
    // No bytes at all is still one (empty) member: the other end expects a gzip stream.
    if (this.inFlight.length === 0) this.current = this.startMember();
    this.current?.z.end();
    this.current = null;
    this.drainTo(0).then(() => cb(), cb);
  }

  override _destroy(err: Error | null, cb: (error?: Error | null) => void): void {
    for (const m of this.inFlight.splice(0)) m.z.destroy();
    cb(err);
  }

  private startMember(): Member {
    // Output in chunks about the size a member compresses to: few allocations, little slack.
    const z = zlib.createGzip({ level: this.level, chunkSize: OUT_CHUNK });
    const out: Buffer[] = [];
    z.on('data', (d: Buffer) => out.push(d));
    const done = new Promise<Buffer[]>((resolve, reject) => {
      z.on('end', () => resolve(out));
      z.on('error', reject);
    });
    done.catch(() => undefined); // awaited in order by drainTo
    const m = { z, bytes: 0, done };
    this.inFlight.push(m);
    return m;
  }

  /** Push finished members, oldest first, until at most `n` are in flight. */
  private async drainTo(n: number): Promise<void> {
    while (this.inFlight.length > n) {
      const m = this.inFlight[0]!;
      for (const d of await m.done) this.push(d);
      this.inFlight.shift();
    }
  }
}

interface Member {
  z: zlib.Gzip;
  bytes: number;
  done: Promise<Buffer[]>;
}

const OUT_CHUNK = 128 * 1024;
