// A command shell: one long-lived exec channel running a small POSIX sh loop that runs one
// command header after another. An ordinary exec costs three round trips (channel open, exec
// request, result); a command on an open shell costs one, which is what makes a handoff's
// dozens of small remote commands cheap over real latency.
//
// Protocol (ours on both ends; the remote side is the loop below, started through the usual
// shell-agnostic header). The loop's ready line is its mark, then `+` when it has `dd`. Per
// command we send two lines:
//   1. an input line, eval'd by the loop itself: it writes the command's stdin bytes to the loop's
//      private input file, or empties it — and, before the first command and whenever it
//      changes, exports the login environment every command inherits. The bytes are printf
//      escapes on that line, or, when that costs more (binary bytes: a pack, a gzip stream),
//      they follow the second line as they are and `dd` reads exactly that many;
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
    // Raw input needs dd; without it the loop must never be sent raw bytes (it would read them as commands).
    'r=; if command -v dd >/dev/null 2>&1; then r=+; fi',
    `printf '%s%s\\n' ${mark} "$r"`,
    // Both sizes from one `wc` (names relative to the folder: its path may hold spaces).
    `while IFS= read -r s && IFS= read -r h; do eval "$s"; ( umask "$u"; eval "$h" ) <"$d/i" >"$d/o" 2>"$d/e"; c=$?; set -- $(cd "$d" && wc -c o e); printf '%s %s %s %s\\n' ${mark} "$c" "$1" "$3"; cat "$d/o" "$d/e"; done`,
  ].join('; ');
}

/**
 * The input line for one command, and the raw bytes to send after its header: its stdin bytes
 * into the loop's input file. Raw (when the loop has dd) only where escaping would cost more.
 * dd reads one byte at a time, so never past the command's own bytes; `count` input blocks
 * are collected into one write. Should dd fail, the loop ends rather than read what is left of
 * the bytes as commands.
 */
export function commandInput(stdin: Buffer | undefined, rawInput: boolean): { line: string; raw?: Buffer } {
  if (!stdin || stdin.length === 0) return { line: ': >"$d/i"' };
  const escaped = `printf '${printfOctalBytes(stdin)}' >"$d/i"`;
  if (!rawInput || stdin.length > SHELL_STDIN_MAX) return { line: escaped };
  const raw = `dd ibs=1 obs=${SHELL_STDIN_MAX} count=${stdin.length} of="$d/i" 2>/dev/null || exit 1`;
  return raw.length + stdin.length < escaped.length ? { line: raw, raw: stdin } : { line: escaped };
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
  /** What the ready line says after the mark (null until it has come whole). */
  ready: string | null = null;

  constructor(private readonly mark: string) {
    this.start = new StartMarkFilter(mark);
  }

  /** Feed bytes; returns the answers completed by them. */
  feed(chunk: Buffer): ShellOutcome[] {
    let data = chunk;
    if (!this.start.found) {
      data = this.start.feed(chunk);
      if (!this.start.found) return [];
    }
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
    const done: ShellOutcome[] = [];
    if (this.ready === null) {
      const nl = this.buf.indexOf(0x0a);
      if (nl < 0) return done;
      const ready = this.buf.subarray(0, nl).toString('latin1');
      if (ready !== '' && ready !== '+') throw new Error(`unexpected ready line: ${JSON.stringify(ready.slice(0, 80))}`);
      this.ready = ready;
      this.buf = this.buf.subarray(nl + 1);
    }
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

  private readonly parser: AnswerParser;

  constructor(
    private readonly ch: ClientChannel,
    mark: string,
    private readonly label: string,
    private readonly kill: (ch: ClientChannel) => void,
  ) {
    this.parser = new AnswerParser(mark);
    ch.on('data', (d: Buffer) => {
      let answers: ShellOutcome[];
      try {
        answers = this.parser.feed(d);
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
      // Raw bytes only once the loop has said it has dd (a command may be sent before its ready line).
      const input = commandInput(stdin, this.parser.ready === '+');
      this.ch.write(`${exports ? `${exports}; ` : ''}${input.line}\n${header}\n`);
      if (input.raw) this.ch.write(input.raw);
    });
  }

  close(): void {
    this.dead ??= new HostError('connection_closed', `The command shell on ${this.label} was closed.`);
    this.ch.end();
  }
}
