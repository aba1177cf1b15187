// Progress on stderr: each step as it happens with the time it took. A spinner on a TTY,
// plain timestamped lines otherwise, nothing with --quiet. stdout stays one JSON object.
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
  let frame = 0;
  let timer: NodeJS.Timeout | undefined;
  // The line only grows between finishes (each ends its own line), so nothing needs erasing.
  const draw = () => write(`\r${FRAMES[frame++ % FRAMES.length]} ${active.join(' · ')}`);
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
      const finish = (ok: boolean) => {
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
        const r = await fn();
        finish(true);
        return r;
      } catch (err) {
        finish(false);
        throw err;
      }
    },
  };
}
