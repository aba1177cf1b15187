// young-garbage.ts: V8's collector reached at run time (this test fails if that way breaks), and
// the sweeper's cadence.
import { describe, expect, it } from 'vitest';
import { youngCollector, youngGarbageSweeper } from '../src/young-garbage.js';

describe('young garbage', () => {
  it("reaches V8's collector: a collection frees buffers that are no longer held", () => {
    const gc = youngCollector();
    expect(typeof gc).toBe('function');
    // A young collection alone is what the copy uses; whether it frees a given buffer depends on
    // whether one of V8's own came between (then the buffer is old): a full one here proves the
    // function is the collector.
    gc!({ type: 'minor' });
    gc!({ type: 'major' });
    const before = process.memoryUsage().arrayBuffers;
    // 40 MB in 64 KB chunks, each dropped at once, as a stream's stages drop theirs (left to
    // itself, V8 holds about 8 MB of them here until its next collection).
    let sum = 0;
    for (let i = 0; i < 640; i++) sum += Buffer.allocUnsafe(64 * 1024).length;
    expect(sum).toBe(40 * 1024 * 1024);
    gc!({ type: 'minor' });
    gc!({ type: 'major' });
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(2 * 1024 * 1024);
  });

  it('collects once per `every` bytes of stream, however the chunks fall', () => {
    let collected = 0;
    const sweep = youngGarbageSweeper(100, () => collected++);
    for (const n of [30, 30, 30]) sweep(n);
    expect(collected).toBe(0);
    sweep(10);
    expect(collected).toBe(1);
    sweep(250);
    expect(collected).toBe(2);
    for (let i = 0; i < 99; i++) sweep(1);
    expect(collected).toBe(2);
    sweep(1);
    expect(collected).toBe(3);
  });
});
