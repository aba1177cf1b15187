// Writing into a Host's write stream (`writeStream`'s { stream, done }) with backpressure. A wait
// for 'drain' also ends when the stream errors or closes, or when `done` settles first (the host
// gave up on the file: a lost connection, a failed remote program): a stream whose transport is
// gone is never drained, and a writer waiting only for 'drain' would hang.
import type { Writable } from 'node:stream';
import { HostError } from '../errors.js';

export interface WriteTarget {
  stream: Writable;
  done: Promise<void>;
}

export class StreamWriter {
  private failure: Error | null = null;
  /** Ends the current wait for 'drain', if any (one at a time: writes are awaited in turn). */
  private wake: (() => void) | null = null;

  constructor(private readonly out: WriteTarget) {
    // One reaction for the writer's whole life, not one per wait: memory stays constant.
    out.done.then(
      () => this.fail(closedEarly()),
      (err: unknown) => this.fail(err instanceof Error ? err : new Error(String(err))),
    );
  }

  /** Write `chunk`; when the stream is full, resolve once it drains, reject once it cannot. */
  async write(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    const ws = this.out.stream;
    if (ws.destroyed) throw ws.errored ?? closedEarly();
    if (ws.write(chunk)) return;
    await new Promise<void>((resolve, reject) => {
      const settle = (err?: Error | null): void => {
        ws.off('drain', onDrain);
        ws.off('error', settle);
        ws.off('close', onClose);
        this.wake = null;
        // The host's reason wins: it names the host and says what happened (connection_lost).
        const why = this.failure ?? err;
        if (why) reject(why);
        else resolve();
      };
      const onDrain = (): void => settle();
      const onClose = (): void => settle(ws.errored ?? closedEarly());
      ws.on('drain', onDrain);
      ws.on('error', settle);
      ws.on('close', onClose);
      this.wake = () => settle();
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.wake?.();
  }
}

function closedEarly(): HostError {
  return new HostError('io_failed', 'The file stream was closed before all of its bytes were written.');
}
