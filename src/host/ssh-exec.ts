// Running one command header (remote-command.ts) on the connection: on an idle command shell
// when it is small (one round trip), else on its own exec channel (two: the channel's open, then
// the exec request carrying the header; stdin streamed, stdout collected or piped with
// backpressure); either way bounded by a timeout.
import { randomBytes } from 'node:crypto';
import { Readable, type Writable } from 'node:stream';
import { HostError } from '../errors.js';
import type { RunOptions } from './host.js';
import { buildHeader, StartMarkFilter, type HeaderSpec } from './remote-command.js';
import { exitStatusOf, killChannel, signalExit } from './ssh-channel-end.js';
import type { SshLink } from './ssh-link.js';
import type { ShellPool } from './ssh-shell-pool.js';
import { SHELL_STDIN_MAX } from './ssh-shell.js';

export interface ExecOutcome {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
}

export interface ExecOptions {
  stdin?: RunOptions['stdin'];
  stdout?: Writable;
  timeoutMs: number;
  /** The program, as timeout messages name it. */
  what: string;
}

export class ExecRunner {
  /** Printed right before the program starts; stdout before it came from shell start-up files. */
  readonly mark = `AHGO${randomBytes(8).toString('hex')}`;

  constructor(
    private readonly link: SshLink,
    private readonly shells: ShellPool,
    private readonly commandTimeoutMs: number,
  ) {}

  /** Run a header; collect or pipe stdout; bounded by timeoutMs. Small commands go through a command shell. */
  async header(spec: HeaderSpec, o: ExecOptions): Promise<ExecOutcome> {
    const input = o.stdin;
    const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.isBuffer(input) ? input : undefined;
    if (!o.stdout && (input === undefined || (bytes && bytes.length <= SHELL_STDIN_MAX))) {
      const shell = this.shells.take();
      if (shell) {
        try {
          // The login environment is the shell's to export (once); the header carries the rest.
          const exports = spec.baseEnv ? shell.baseEnvLine(spec.baseEnv) : '';
          const header = buildHeader({ ...spec, baseEnv: {} });
          this.link.counts.commands++;
          return await shell.run(header, bytes, o.timeoutMs, o.what, exports);
        } catch (err) {
          throw err instanceof HostError && err.code === 'command_timeout' ? err : (this.link.lost ?? err);
        } finally {
          this.shells.release(shell);
        }
      }
      this.shells.openBeside();
    }
    // The login environment (paths only: LOGIN_ENV_VARS) may ride in the exec request; a
    // caller's own variables go on stdin (see SshLink.openExec).
    const own = Object.keys(spec.env ?? {}).length > 0;
    return this.channel({ ...spec, startMark: this.mark }, o, own);
  }

  /** A file helper script (bare remote PATH is enough for sh, cat, chmod, touch, rm, mv). */
  script(script: string, args: string[], what: string): Promise<ExecOutcome> {
    return this.header({ argv: ['/bin/sh', '-c', script, 'sh', ...args] }, { timeoutMs: this.commandTimeoutMs, what });
  }

  /** Run a header on its own exec channel. */
  private async channel(spec: HeaderSpec, o: ExecOptions, privateHeader: boolean): Promise<ExecOutcome> {
    const ch = await this.link.openExec(spec, { private: privateHeader });
    return new Promise<ExecOutcome>((resolve, reject) => {
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      let timedOut = false;
      const onLost = (e: HostError): void => {
        clearTimeout(timer);
        reject(e);
      };
      this.link.onLost.add(onLost);
      const timer = setTimeout(() => {
        timedOut = true;
        killChannel(ch);
        this.link.onLost.delete(onLost);
        // Do not wait for the server to confirm: a dead peer never would.
        reject(new HostError('command_timeout', `\`${o.what}\` on ${this.link.label} did not finish within ${Math.round(o.timeoutMs / 100) / 10} s.`, {
          fix: 'Check that the machine is not overloaded, or raise --timeout.',
        }));
      }, o.timeoutMs);
      ch.on('error', () => undefined); // writes after the program exited; the exit status tells.
      ch.stderr.on('data', (d: Buffer) => errOut.push(d));
      const filter = new StartMarkFilter(this.mark);
      const sink = o.stdout;
      const onData = (d: Buffer): void => {
        const rest = filter.feed(d);
        if (!filter.found) return;
        if (!sink) {
          out.push(rest);
          return;
        }
        // From here on a plain pipe, with backpressure.
        ch.removeListener('data', onData);
        if (rest.length) sink.write(rest);
        ch.pipe(sink);
      };
      ch.on('data', onData);
      ch.on('close', () => {
        clearTimeout(timer);
        this.link.onLost.delete(onLost);
        if (o.stdin instanceof Readable) o.stdin.unpipe(ch);
        if (timedOut) return;
        const exitCode = exitStatusOf(ch);
        if (exitCode === undefined && this.link.lost) return reject(this.link.lost);
        // The program never started (cd failed, not found): nothing was piped, end the sink as a pipe would.
        if (sink && !filter.found) sink.end();
        resolve({ exitCode: exitCode ?? signalExit(undefined), stdout: Buffer.concat(out), stderr: Buffer.concat(errOut) });
      });
      const input = o.stdin;
      if (input === undefined) ch.end();
      else if (typeof input === 'string' || Buffer.isBuffer(input)) ch.end(input);
      else {
        input.on('error', () => ch.close());
        input.pipe(ch);
      }
    });
  }
}
