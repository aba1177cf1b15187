import { describe, expect, it } from 'vitest';
import { SideWork } from '../../src/handoff/side-work.js';

/** A promise settled from outside. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('SideWork', () => {
  it('hands back the very promise it keeps, its value and its failure for whoever awaits it', async () => {
    const side = new SideWork();
    const ok = Promise.resolve(7);
    expect(side.add(ok)).toBe(ok);
    await expect(side.add(Promise.reject(new Error('boom')))).rejects.toThrow('boom');
  });

  it('leaves no unhandled rejection behind for work nobody awaits', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const side = new SideWork();
      side.add(Promise.reject(new Error('nobody awaits this')));
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('settles once everything kept has, failures included', async () => {
    const side = new SideWork();
    const a = deferred();
    const b = deferred();
    side.add(a.promise);
    side.add(b.promise);
    let done = false;
    const settling = side.settled(10_000).then(() => (done = true));
    a.resolve();
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    b.reject(new Error('failed beside'));
    await settling;
    expect(done).toBe(true);
  });

  it('also waits for work started as other work settled (the panes opened once the work is placed)', async () => {
    const side = new SideWork();
    const placed = deferred();
    const pane = deferred();
    side.add(
      placed.promise.then(() => {
        side.add(pane.promise);
      }),
    );
    let done = false;
    const settling = side.settled(10_000).then(() => (done = true));
    placed.resolve();
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    pane.resolve();
    await settling;
    expect(done).toBe(true);
  });

  it('does not wait for ever for work that hangs: each round is bounded', async () => {
    const side = new SideWork();
    side.add(new Promise(() => undefined));
    const began = Date.now();
    await side.settled(50);
    expect(Date.now() - began).toBeGreaterThanOrEqual(45);
    expect(Date.now() - began).toBeLessThan(2_000);
  });

  it('with nothing kept, settles at once', async () => {
    const began = Date.now();
    await new SideWork().settled(10_000);
    expect(Date.now() - began).toBeLessThan(100);
  });
});
