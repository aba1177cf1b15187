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
  return {
    timings,
    note(text) {
      write(out.isTTY ? `  ${text}\n` : `${stamp()} ${text}\n`);
    },
    async step(name, fn) {
      const started = Date.now();
      let timer: NodeJS.Timeout | undefined;
      if (out.isTTY && !opts.quiet) {
        let i = 0;
        timer = setInterval(() => write(`\r${FRAMES[i++ % FRAMES.length]} ${name}`), 100);
        timer.unref();
      } else {
        write(`${stamp()} ${name} …\n`);
      }
      const finish = (ok: boolean) => {
        if (timer) clearInterval(timer);
        const ms = Date.now() - started;
        timings.push({ step: name, ms, ok });
        const secs = (ms / 1000).toFixed(1);
        write(out.isTTY ? `\r${ok ? '✓' : '✗'} ${name} (${secs}s)\x1b[K\n` : `${stamp()} ${name} ${ok ? 'done' : 'FAILED'} (${secs}s)\n`);
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
