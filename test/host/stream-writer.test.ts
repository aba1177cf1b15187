// StreamWriter: a wait for 'drain' ends with the host's failure, the stream's error or its close,
// and leaves no listener behind.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HostError } from '../../src/errors.js';
import { StreamWriter } from '../../src/host/stream-writer.js';

/** A stream that takes one chunk and then never calls back (a transport that is gone). */
function stuck(): Writable {
  return new Writable({ highWaterMark: 4, write: () => undefined });
}

function settleable() {
  let fail!: (err: Error) => void;
  let end!: () => void;
  const done = new Promise<void>((resolve, reject) => {
    fail = reject;
    end = resolve;
  });
  return { done, fail, end };
}

describe('StreamWriter', () => {
  it('ends a wait for drain when done fails, with done\'s error', async () => {
    const stream = stuck();
    const d = settleable();
    const w = new StreamWriter({ stream, done: d.done });
    const waiting = w.write(Buffer.alloc(8));
    const lost = new HostError('connection_lost', 'Lost the ssh connection to vega.');
    d.fail(lost);
    await expect(waiting).rejects.toBe(lost);
    // Later writes fail at once.
    await expect(w.write(Buffer.alloc(1))).rejects.toBe(lost);
    for (const ev of ['drain', 'error', 'close']) expect(stream.listenerCount(ev)).toBe(0);
  });

  it('ends it when the stream errors or is closed, or when done ends first', async () => {
    const a = stuck();
    const errored = new StreamWriter({ stream: a, done: settleable().done }).write(Buffer.alloc(8));
    a.destroy(new Error('boom'));
    await expect(errored).rejects.toThrow('boom');

    const b = stuck();
    const closed = new StreamWriter({ stream: b, done: settleable().done }).write(Buffer.alloc(8));
    b.destroy();
    await expect(closed).rejects.toMatchObject({ code: 'io_failed' });

    const d = settleable();
    const ended = new StreamWriter({ stream: stuck(), done: d.done }).write(Buffer.alloc(8));
    d.end();
    await expect(ended).rejects.toMatchObject({ code: 'io_failed' });
  });

  it('waits for drain with backpressure and keeps no listener per wait', async () => {
    let pending: (() => void) | null = null;
    const stream = new Writable({
      highWaterMark: 4,
      write: (_c, _e, cb) => {
        pending = cb;
      },
    });
    const w = new StreamWriter({ stream, done: settleable().done });
    const base = ['drain', 'error', 'close'].map((ev) => stream.listenerCount(ev));
    for (let i = 0; i < 1000; i++) {
      const p = w.write(Buffer.alloc(8));
      setImmediate(() => pending?.());
      await p;
    }
    expect(['drain', 'error', 'close'].map((ev) => stream.listenerCount(ev))).toEqual(base);
  });
});
