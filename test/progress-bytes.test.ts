// Long transfers show progress: a step that moves more than a few MB shows bytes, rate and (with
// a known total) the time left on the terminal's progress line; small ones and piped stderr do not.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress, SHOW_BYTES_FROM, stepBytes, transferText } from '../src/progress.js';

function terminal(tty: boolean): { out: PassThrough & { isTTY?: boolean }; text: () => string } {
  const out = new PassThrough() as PassThrough & { isTTY?: boolean };
  out.isTTY = tty;
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  return { out, text: () => text };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('transferText', () => {
  it('bytes, rate and time left', () => {
    expect(transferText(12e6, 40e6, 3000)).toBe('12 MB of 40 MB · 4.0 MB/s · ~7 s left');
    expect(transferText(5e6, null, 2000)).toBe('5.0 MB · 2.5 MB/s');
  });
  it('nothing while the transfer is small', () => {
    expect(transferText(SHOW_BYTES_FROM - 1, null, 1000)).toBe('');
    expect(transferText(1000, 2000, 1000)).toBe('');
    expect(transferText(0, 40e6, 1000)).toBe('');
  });
});

describe('the running step’s byte meter', () => {
  it('is there only inside a step', async () => {
    expect(stepBytes()).toBeUndefined();
    const p = createProgress(terminal(false).out, { quiet: true });
    await p.step('x', async () => {
      await sleep(1);
      expect(stepBytes()).toBeTypeOf('function');
    });
  });

  it('on a terminal, a big transfer shows its figures on the progress line', async () => {
    const t = terminal(true);
    const p = createProgress(t.out, { quiet: false });
    await p.step('copying the pi session', async () => {
      const meter = stepBytes(20e6)!;
      for (let i = 0; i < 5; i++) {
        meter(2e6);
        await sleep(60);
      }
      await sleep(150);
    });
    expect(t.text()).toMatch(/copying the pi session \(10 MB of 20 MB · [\d.]+ MB\/s · ~\d+ s left\)/);
    expect(t.text()).toMatch(/✓ copying the pi session \(\d\.\ds\)/);
  });

  it('a small transfer, or stderr that is not a terminal, shows no figures', async () => {
    for (const [tty, bytes] of [[true, 1000], [false, 50e6]] as const) {
      const t = terminal(tty);
      const p = createProgress(t.out, { quiet: false });
      await p.step('sending commits to vega', async () => {
        stepBytes()!(bytes);
        await sleep(250);
      });
      expect(t.text()).not.toContain('MB');
    }
  });
});
