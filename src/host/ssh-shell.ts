// A command shell: one long-lived exec channel running a small POSIX sh loop that runs one
// command header after another. An ordinary exec costs three round trips (channel open, exec
// request, result); a command on an open shell costs one, which is what makes a handoff's
// dozens of small remote commands cheap over real latency.
//
// Protocol (ours on both ends; the remote side is the loop below, started through the usual
// shell-agnostic header). Per command we send two lines:
//   1. an input line, eval'd by the loop itself: it writes the command's stdin bytes (printf
//      escapes built here) to the loop's private input file, or empties it — and, before the
//      first command and whenever it changes, exports the login environment every command inherits;
//   2. the command header (remote-command.ts), run as `( eval "$h" )` with stdin from that
//      file and stdout/stderr into private files, so no output of the program can be mistaken
//      for our framing.
// The loop answers `<mark> <exit code> <stdout bytes> <stderr bytes>\n` followed by both
// outputs, byte for byte.
import type { ClientChannel } from 'ssh2';
import { HostError } from '../errors.js';
import { exportsLine, printfOctalBytes, StartMarkFilter } from './remote-command.js';

/** Stdin larger than this goes through a plain exec channel instead (it travels escaped: binary bytes 4×). */
export const SHELL_STDIN_MAX = 16 * 1024;

export interface ShellOutcome {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
}

/** The loop, as one line for the header's eval. `mark` is alphanumeric. */
export function shellLoop(mark: string): string {
  if (!/^[A-Za-z0-9]+$/.test(mark)) throw new Error('internal: shell mark must be alphanumeric');
  return [
    // The loop's files are private (umask 077); each command runs with the umask the loop found
    // (files a command makes, e.g. a worktree's, get the user's usual modes).
    'u=$(umask); umask 077',
    // A private folder for the three files; removed when the loop ends however it ends (short of
    // a KILL, which is why a command given up on gets a TERM).
    'd=$(mktemp -d "${TMPDIR:-/tmp}/agent-handoff.XXXXXX") || exit 1',
    `trap 'rm -rf "$d"' EXIT`,
    `trap 'exit 129' HUP`,
    `trap 'exit 143' TERM`,
    // Writing an answer to a channel that was closed (a command given up on): leave through the
    // EXIT trap too. (A trap, not an ignore: the commands keep the default.)
    `trap 'exit 141' PIPE`,
    ': >"$d/i" || exit 1',
    `printf '%s\\n' ${mark}`,
    // Both sizes from one `wc` (names relative to the folder: its path may hold spaces).
    `while IFS= read -r s && IFS= read -r h; do eval "$s"; ( umask "$u"; eval "$h" ) <"$d/i" >"$d/o" 2>"$d/e"; c=$?; set -- $(cd "$d" && wc -c o e); printf '%s %s %s %s\\n' ${mark} "$c" "$1" "$3"; cat "$d/o" "$d/e"; done`,
  ].join('; ');
}

/** The input line for one command: its stdin bytes into the loop's input file. */
export function inputLine(stdin: Buffer | undefined): string {
  if (!stdin || stdin.length === 0) return ': >"$d/i"';
  return `printf '${printfOctalBytes(stdin)}' >"$d/i"`;
}

interface Pending {
  resolve(o: ShellOutcome): void;
  reject(e: Error): void;
}

/** Parses the loop's answers out of its stdout stream. */
class AnswerParser {
  private buf: Buffer = Buffer.alloc(0);
  private readonly start: StartMarkFilter;
  private need: { exitCode: number; out: number; err: number } | null = null;

  constructor(private readonly mark: string) {
    this.start = new StartMarkFilter(mark);
  }

  /** Feed bytes; returns the answers completed by them. */
  feed(chunk: Buffer): ShellOutcome[] {
    let data = chunk;
    if (!this.start.found) {
      data = this.start.feed(chunk);
      if (!this.start.found) return [];
      // The ready line ends right after the mark.
      if (data[0] === 0x0a) data = data.subarray(1);
    }
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
    const done: ShellOutcome[] = [];
    for (;;) {
      if (!this.need) {
        const nl = this.buf.indexOf(0x0a);
        if (nl < 0) return done;
        const line = this.buf.subarray(0, nl).toString('latin1');
        const m = new RegExp(`^${this.mark} (\\d+) (\\d+) (\\d+)$`).exec(line);
        if (!m) throw new Error(`unexpected shell answer: ${JSON.stringify(line.slice(0, 80))}`);
        this.need = { exitCode: Number(m[1]), out: Number(m[2]), err: Number(m[3]) };
        this.buf = this.buf.subarray(nl + 1);
      }
      const { exitCode, out, err } = this.need;
      if (this.buf.length < out + err) return done;
      done.push({ exitCode, stdout: Buffer.from(this.buf.subarray(0, out)), stderr: Buffer.from(this.buf.subarray(out, out + err)) });
      this.buf = this.buf.subarray(out + err);
      this.need = null;
    }
  }
}

export class CommandShell {
  busy = false;
  dead: Error | undefined;
  private pending: Pending | undefined;
  /** The login environment the loop has exported (every command inherits it), once one was. */
  private base: Record<string, string> | null = null;

  constructor(
    private readonly ch: ClientChannel,
    mark: string,
    private readonly label: string,
    private readonly kill: (ch: ClientChannel) => void,
  ) {
    const parser = new AnswerParser(mark);
    ch.on('data', (d: Buffer) => {
      let answers: ShellOutcome[];
      try {
        answers = parser.feed(d);
      } catch (err) {
        this.fail(new HostError('channel_failed', `The command shell on ${label} sent something unexpected: ${(err as Error).message}`));
        return;
      }
      for (const a of answers) {
        const p = this.pending;
        this.pending = undefined;
        p?.resolve(a);
      }
    });
    ch.stderr.resume(); // login-file noise; commands' stderr goes through the framing
    ch.on('error', () => undefined);
    ch.on('close', () => this.fail(new HostError('channel_failed', `The command shell on ${label} ended.`)));
  }

  /** Fail the command in flight (if any) and retire the shell. */
  fail(err: Error): void {
    if (!this.dead) this.dead = err;
    const p = this.pending;
    this.pending = undefined;
    p?.reject(err);
  }

  /**
   * What makes the loop's exported environment `env` (empty when it is already): sent on the
   * next command's input line, so a header need not carry the login environment every time.
   */
  baseEnvLine(env: Record<string, string>): string {
    const base = this.base ?? {};
    const changed = Object.fromEntries(Object.entries(env).filter(([k, v]) => base[k] !== v));
    const gone = Object.keys(base).filter((k) => !(k in env));
    this.base = { ...env };
    return exportsLine(changed, gone);
  }

  /** Run one command header (after `exports`, a baseEnvLine). The caller holds `busy`. */
  run(header: string, stdin: Buffer | undefined, timeoutMs: number, what: string, exports = ''): Promise<ShellOutcome> {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise<ShellOutcome>((resolve, reject) => {
      const timer = setTimeout(() => {
        const err = new HostError('command_timeout', `\`${what}\` on ${this.label} did not finish within ${Math.round(timeoutMs / 100) / 10} s.`, {
          fix: 'Check that the machine is not overloaded, or raise --timeout.',
        });
        this.fail(err);
        this.kill(this.ch);
      }, timeoutMs);
      this.pending = {
        resolve: (o) => {
          clearTimeout(timer);
          resolve(o);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.ch.write(`${exports ? `${exports}; ` : ''}${inputLine(stdin)}\n${header}\n`);
    });
  }

  close(): void {
    this.dead ??= new HostError('connection_closed', `The command shell on ${this.label} was closed.`);
    this.ch.end();
  }
}
