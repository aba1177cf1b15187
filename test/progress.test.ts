// Progress on stderr in its three modes: spinner on a terminal, timestamped lines otherwise,
// silence with --quiet. A fake stream records what would reach the user's terminal.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress } from '../src/progress.js';

class FakeStream extends Writable {
  chunks: string[] = [];
  constructor(readonly isTTY: boolean) {
    super();
  }
  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: () => void): void {
    this.chunks.push(chunk.toString());
    done();
  }
  get text(): string {
    return this.chunks.join('');
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('progress', () => {
  it('on a terminal: spins while a step runs, then marks it done or failed with its time', async () => {
    const out = new FakeStream(true);
    const p = createProgress(out, { quiet: false });
    const value = await p.step('copying the session', async () => {
      await pause(350);
      return 42;
    });
    expect(value).toBe(42);
    await expect(p.step('starting pi', () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    p.note('a note');
    // At least a few spinner frames were drawn in place (carriage return, no newline).
    const frames = out.chunks.filter((c) => /^\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] copying the session$/.test(c));
    expect(frames.length).toBeGreaterThanOrEqual(2);
    expect(out.text).toMatch(/\r✓ copying the session \(0\.[3-9]s\)\x1b\[K\n/);
    expect(out.text).toMatch(/\r✗ starting pi \(0\.\ds\)\x1b\[K\n/);
    expect(out.text).toContain('  a note\n');
    // No timestamped line-mode output on a terminal.
    expect(out.text).not.toMatch(/\d\d:\d\d:\d\d/);
    expect(p.timings.map((t) => [t.step, t.ok])).toEqual([
      ['copying the session', true],
      ['starting pi', false],
    ]);
    expect(p.timings[0]!.ms).toBeGreaterThanOrEqual(340);
  });

  it('on a terminal: steps side by side share one spinner line, each marked when it ends', async () => {
    const out = new FakeStream(true);
    const p = createProgress(out, { quiet: false });
    await Promise.all([p.step('placing main', () => pause(250)), p.step('copying the pi session', () => pause(450))]);
    expect(out.chunks.some((c) => /^\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] placing main · copying the pi session$/.test(c))).toBe(true);
    // After the first ends, the spinner goes on with the other only.
    const afterFirst = out.text.slice(out.text.indexOf('✓ placing main'));
    expect(afterFirst).toMatch(/\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] copying the pi session\r✓ copying the pi session/);
    expect(p.timings.map((t) => t.step)).toEqual(['placing main', 'copying the pi session']);
  });

  it('not a terminal: one timestamped line when a step starts and one when it ends', async () => {
    const out = new FakeStream(false);
    const p = createProgress(out, { quiet: false });
    await p.step('quitting the pi agent', () => pause(120));
    await expect(p.step('placing main', () => Promise.reject(new Error('conflict')))).rejects.toThrow('conflict');
    p.note('left the changes stashed');
    const lines = out.text.split('\n').filter(Boolean);
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d quitting the pi agent …$/);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d quitting the pi agent done \(0\.\ds\)$/);
    expect(lines[2]).toMatch(/^\d\d:\d\d:\d\d placing main …$/);
    expect(lines[3]).toMatch(/^\d\d:\d\d:\d\d placing main FAILED \(0\.\ds\)$/);
    expect(lines[4]).toMatch(/^\d\d:\d\d:\d\d left the changes stashed$/);
    // No spinner frames or escape codes in a log file.
    expect(out.text).not.toMatch(/[\r\x1b]/);
  });

  it('--quiet: nothing at all, on a terminal or not, but the timings are still kept', async () => {
    for (const isTTY of [true, false]) {
      const out = new FakeStream(isTTY);
      const p = createProgress(out, { quiet: true });
      await p.step('connecting', () => pause(250));
      await expect(p.step('planning', () => Promise.reject(new Error('x')))).rejects.toThrow('x');
      p.note('quiet please');
      expect(out.chunks).toEqual([]);
      expect(p.timings.map((t) => t.ok)).toEqual([true, false]);
    }
  });
});
