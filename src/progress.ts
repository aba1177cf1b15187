// Progress on stderr: each step as it happens with the time it took. A spinner on a TTY,
// plain timestamped lines otherwise, nothing with --quiet. stdout stays one JSON object.
//
// A step that moves bytes (the pack, the session copy) reports them with the meter of the step
// it runs in (stepBytes, found through the async context, so the code between progress and the
// transfer need not pass it along); on a TTY a step past a few MB shows bytes, rate and, when the
// total is known, the time left.
import { AsyncLocalStorage } from 'node:async_hooks';

/** Adds bytes moved to the running step's count. */
export type ByteMeter = (bytes: number) => void;

interface Metered {
  bytes: number;
  total: number | null;
  since: number;
}

const running = new AsyncLocalStorage<Metered>();

/** The byte meter of the step this code runs in (undefined outside a step); `total` when known. */
export function stepBytes(total?: number): ByteMeter | undefined {
  const m = running.getStore();
  if (!m) return undefined;
  if (total !== undefined && total > 0) m.total = total;
  return (n) => {
    m.bytes += n;
  };
}

/** Below this, a transfer is over before its figures could be read: the line stays as it was. */
export const SHOW_BYTES_FROM = 4 * 1000 * 1000;

function mb(n: number): string {
  return `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)} MB`;
}

/** "12 MB of 40 MB · 4.1 MB/s · ~7 s left" (no total: "12 MB · 4.1 MB/s"); "" while small. */
export function transferText(bytes: number, total: number | null, elapsedMs: number): string {
  if (Math.max(bytes, total ?? 0) < SHOW_BYTES_FROM || bytes === 0) return '';
  const rate = elapsedMs > 0 ? bytes / (elapsedMs / 1000) : 0;
  const parts = [total ? `${mb(bytes)} of ${mb(total)}` : mb(bytes), `${(rate / 1e6).toFixed(1)} MB/s`];
  if (total && rate > 0 && bytes < total) parts.push(`~${Math.max(1, Math.round((total - bytes) / rate))} s left`);
  return parts.join(' · ');
}

export interface Progress {
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  note(text: string): void;
  /** Steps run so far with their durations, for the result. */
  readonly timings: { step: string; ms: number; ok: boolean }[];
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export function createProgress(out: NodeJS.WritableStream & { isTTY?: boolean }, opts: { quiet: boolean }): Progress {
  const timings: { step: string; ms: number; ok: boolean }[] = [];
  const write = (s: string) => {
    if (!opts.quiet) out.write(s);
  };
  const stamp = () => new Date().toISOString().slice(11, 19);
  // On a TTY one spinner line shows every step running now (some run side by side).
  const spinning = out.isTTY === true && !opts.quiet;
  const active: string[] = [];
  const meters = new Map<string, Metered>();
  let frame = 0;
  let timer: NodeJS.Timeout | undefined;
  // Once a transfer's figures were shown, the line is erased to its end at each frame (figures
  // may get shorter); before that it only grows between finishes (each ends its own line).
  let figures = false;
  const shown = (name: string) => {
    const m = meters.get(name);
    const t = m ? transferText(m.bytes, m.total, Date.now() - m.since) : '';
    if (t) figures = true;
    return t ? `${name} (${t})` : name;
  };
  const draw = () => {
    const line = active.map(shown).join(' · ');
    write(`\r${FRAMES[frame++ % FRAMES.length]} ${line}${figures ? '\x1b[K' : ''}`);
  };
  return {
    timings,
    note(text) {
      write(out.isTTY ? `  ${text}\n` : `${stamp()} ${text}\n`);
    },
    async step(name, fn) {
      const started = Date.now();
      if (spinning) {
        active.push(name);
        if (!timer) {
          timer = setInterval(draw, 100);
          timer.unref();
        }
      } else {
        write(`${stamp()} ${name} …\n`);
      }
      const meter: Metered = { bytes: 0, total: null, since: started };
      meters.set(name, meter);
      const finish = (ok: boolean) => {
        meters.delete(name);
        const ms = Date.now() - started;
        timings.push({ step: name, ms, ok });
        const secs = (ms / 1000).toFixed(1);
        if (!spinning) {
          write(`${stamp()} ${name} ${ok ? 'done' : 'FAILED'} (${secs}s)\n`);
          return;
        }
        active.splice(active.indexOf(name) >>> 0, 1);
        if (active.length === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
        write(`\r${ok ? '✓' : '✗'} ${name} (${secs}s)\x1b[K\n`);
      };
      try {
        const r = await running.run(meter, fn);
        finish(true);
        return r;
      } catch (err) {
        finish(false);
        throw err;
      }
    },
  };
}
