import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GzipBlocks } from '../../src/host/gzip-blocks.js';

async function compress(chunks: Buffer[], opts: ConstructorParameters<typeof GzipBlocks>[0] = {}): Promise<Buffer> {
  const out: Buffer[] = [];
  await pipeline(
    Readable.from(chunks),
    new GzipBlocks(opts),
    new Writable({
      write(c: Buffer, _e, cb) {
        out.push(c);
        cb();
      },
    }),
  );
  return Buffer.concat(out);
}

describe('GzipBlocks', () => {
  const text = Buffer.from(Array.from({ length: 30_000 }, (_, i) => `{"n":${i},"text":"line ${i * 7} of a session"}\n`).join(''));
  const data = Buffer.concat([text, randomBytes(100_000), text]);
  // Odd chunk sizes, so blocks end inside chunks' runs and members are many.
  const chunks: Buffer[] = [];
  for (let at = 0, n = 1; at < data.length; at += n, n = (n * 7 + 13) % 90_000) chunks.push(data.subarray(at, at + n));

  it('gives one gzip stream of members, in order, that node and the gzip program both undo', async () => {
    const gz = await compress(chunks, { block: 64 * 1024, parallel: 3 });
    expect(gz.length).toBeLessThan(data.length / 2);
    expect(gunzipSync(gz).equals(data)).toBe(true);
    // The program on the other end of a link (concatenated members, RFC 1952).
    expect(execFileSync('gzip', ['-dc'], { input: gz, maxBuffer: 64 << 20 }).equals(data)).toBe(true);
  });

  it('no bytes is still a valid (empty) gzip stream', async () => {
    const gz = await compress([]);
    expect(gz.length).toBeGreaterThan(0);
    expect(gunzipSync(gz).length).toBe(0);
    expect(execFileSync('gzip', ['-dc'], { input: gz }).length).toBe(0);
  });

  it('one block at a time gives the same bytes back', async () => {
    expect(gunzipSync(await compress(chunks, { block: 100_000, parallel: 1 })).equals(data)).toBe(true);
  });
});
