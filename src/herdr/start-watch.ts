// The watch of a launched agent as ONE program on its host: herdr's CLI asked there, over and
// over, for the agent (`agent get`) and its pane's processes (`pane process-info`), each answer
// streamed back as it comes. Over ssh a poll from here costs a round trip and a channel (herdr
// answers one request per connection); the watch costs one program for the whole start, and each
// answer arrives half a round trip after herdr gave it. The decisions stay with the caller
// (start-wait.ts), which ends the watch by closing the program's stdin.
import { randomBytes } from 'node:crypto';
import { PassThrough, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { HostError } from '../errors.js';
import type { Host, RunResult } from '../host/host.js';
import { HerdrError } from './herdr-error.js';
import type { HerdrCli } from './cli-runner.js';
import { AgentInfoResult, ProcessInfoResult, type AgentInfo, type PaneProcessInfo } from './schemas.js';

/** One round of the watch: herdr's answer about the agent, about the pane's processes, and the pane's screen. */
export interface WatchRound {
  agent: { info: AgentInfo } | { err: unknown };
  processes: PaneProcessInfo | null;
  /** The visible screen, read in a round whose answer about the agent changed (null: not read, or unreadable). */
  screen: string | null;
}

/**
 * $1 herdr, $2 the agent's name, $3 its pane, $4 the mark, $5 the pause between rounds (s).
 * Each round asks both questions side by side and prints "<mark> A <exit>", the agent answer
 * (stdout and stderr), "<mark> P <exit>", the process answer, then "<mark> ." — each mark on a
 * line of its own. An answer the same as the one before is only "<mark> A <exit> =" (while the
 * agent launches, herdr says the same thing round after round). In a round whose agent answer
 * changed (the agent is ready, say), the pane's visible screen is read once it is given and
 * printed as "<mark> S <exit>" and the text, before the round's end: the caller then has the
 * agent's first screen without asking for it (a round trip and herdr's wait over ssh). It ends
 * when its stdin ends (the caller's word) or its output is closed. (A background job's stdin is
 * /dev/null unless given: the stdin watcher gets it as fd 3.)
 */
export const WATCH_START_PROGRAM = `umask 077
b=$1; name=$2; pane=$3; mark=$4; pause=$5
t=$(mktemp -d "\${TMPDIR:-/tmp}/ah-watch.XXXXXX") || exit 70
trap 'rm -rf -- "$t"' EXIT
trap 'exit 0' TERM HUP PIPE
main=$$
exec 3<&0
( cat <&3 >/dev/null; kill -TERM "$main" 2>/dev/null ) >/dev/null 2>&1 &
exec 3<&-
: >"$t/a0"; : >"$t/p0"; : >"$t/s0"
say() {
  if cmp -s "$t/$1" "$t/\${1}0"; then printf '%s %s %s =\\n' "$mark" "$2" "$3"
  else printf '%s %s %s\\n' "$mark" "$2" "$3"; cat "$t/$1"; printf '\\n'; cp "$t/$1" "$t/\${1}0"; fi
}
while :; do
  "$b" pane process-info --pane "$pane" >"$t/p" 2>&1 </dev/null & p=$!
  "$b" agent get "$name" >"$t/a" 2>&1 </dev/null; ra=$?
  rs=; cmp -s "$t/a" "$t/a0" || { "$b" pane read "$pane" --source visible >"$t/s" 2>&1 </dev/null; rs=$?; }
  wait "$p"; rp=$?
  { say a A "$ra" && say p P "$rp" && { [ -z "$rs" ] || say s S "$rs"; } && printf '%s .\\n' "$mark"; } || exit 0
  sleep "$pause" 2>/dev/null || sleep 1
done`;

/** The watch's argv (exported for its table test). */
export function watchStartArgv(bin: string, name: string, pane: string, mark: string, pauseS: number): string[] {
  return ['/bin/sh', '-c', WATCH_START_PROGRAM, 'sh', bin, name, pane, mark, String(pauseS)];
}

/** Rounds from the watch's output, as complete rounds arrive (the parser holds at most one round). */
export class WatchParser {
  private buffered = '';
  private round: { a?: { code: number; text: string }; p?: { code: number; text: string }; s?: { code: number; text: string } } = {};
  private part: { key: 'a' | 'p' | 's'; code: number; lines: string[] } | null = null;
  /** The last text of each answer, for one the watch says is the same again. */
  private last: { a: string; p: string; s: string } = { a: '', p: '', s: '' };

  constructor(
    private readonly mark: string,
    private readonly cli: Pick<HerdrCli, 'fail'>,
    private readonly onRound: (round: WatchRound) => void,
  ) {}

  push(chunk: string): void {
    this.buffered += chunk;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const text = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      this.line(text);
    }
  }

  private line(text: string): void {
    const head = text.startsWith(`${this.mark} `) ? text.slice(this.mark.length + 1) : null;
    const opened = head ? /^([APS]) (\d+)( =)?$/.exec(head) : null;
    if (head !== null && (opened || head === '.')) this.close();
    if (opened) {
      const key = opened[1] === 'A' ? 'a' : opened[1] === 'P' ? 'p' : 's';
      this.part = { key, code: Number(opened[2]), lines: opened[3] ? [this.last[key]] : [] };
    } else if (head === '.') this.finish();
    else this.part?.lines.push(text);
  }

  private close(): void {
    if (!this.part) return;
    const text = this.part.lines.join('\n');
    this.round[this.part.key] = { code: this.part.code, text };
    this.last[this.part.key] = text;
    this.part = null;
  }

  private finish(): void {
    const { a, p, s } = this.round;
    this.round = {};
    if (!a) return;
    this.onRound({ agent: this.agentOf(a), processes: p ? processesOf(p) : null, screen: s && s.code === 0 ? s.text : null });
  }

  /** The agent's answer as the CLI's own reading of it would give (herdr's error envelope → HerdrError). */
  private agentOf(a: { code: number; text: string }): WatchRound['agent'] {
    const r: RunResult = { exitCode: a.code, stdout: a.text, stderr: a.text, durationMs: 0 };
    try {
      if (a.code !== 0) this.cli.fail(r, ['agent', 'get']);
      return { info: AgentInfoResult.parse(JSON.parse(lastJsonLine(a.text))).result.agent };
    } catch (err) {
      return { err };
    }
  }
}

function processesOf(p: { code: number; text: string }): PaneProcessInfo | null {
  if (p.code !== 0) return null;
  try {
    return ProcessInfoResult.parse(JSON.parse(lastJsonLine(p.text))).result.process_info;
  } catch {
    return null;
  }
}

function lastJsonLine(text: string): string {
  return (
    text
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .pop() ?? ''
  );
}

/** A running watch: its rounds in order, and its end. */
export interface StartWatch {
  /** The next round (rejects when the watch ended without one). */
  next(): Promise<WatchRound>;
  /** End the watch (its program ends within a round). */
  stop(): void;
}

/** Start the watch of agent `name` in `pane` on `host`, herdr's CLI at `bin`. */
export function watchStart(host: Host, cli: Pick<HerdrCli, 'fail'>, bin: string, name: string, pane: string, opts: { pauseMs: number; timeoutMs: number }): StartWatch {
  const mark = `AHWATCH${randomBytes(12).toString('hex')}`;
  const rounds: WatchRound[] = [];
  const waiting: { resolve: (r: WatchRound) => void; reject: (e: unknown) => void }[] = [];
  let ended: unknown = null;
  const parser = new WatchParser(mark, cli, (round) => {
    const w = waiting.shift();
    if (w) w.resolve(round);
    else rounds.push(round);
  });
  // Decoded across chunks: a character of a name or folder may be cut between two.
  const decoder = new StringDecoder('utf8');
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      parser.push(decoder.write(chunk));
      done();
    },
  });
  const stdin = new PassThrough();
  const end = (why: unknown): void => {
    ended ??= why;
    for (const w of waiting.splice(0)) w.reject(ended);
  };
  host.run(watchStartArgv(bin, name, pane, mark, opts.pauseMs / 1000), { stdin, stdout: sink, timeoutMs: opts.timeoutMs }).then(
    (r) => end(new Error(`herdr's watch of ${name} on ${host.label} ended (exit ${r.exitCode}): ${r.stderr.trim().slice(-300) || 'no output'}`)),
    // Out of time is the agent's start out of time, as a poll from here would have found it.
    (err: unknown) => end(err instanceof HostError && err.code === 'command_timeout' ? new HerdrError('timeout', 'timed out waiting for agent startup', host.label) : err),
  );
  return {
    next: () => {
      const round = rounds.shift();
      if (round) return Promise.resolve(round);
      if (ended) return Promise.reject(ended);
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    stop: () => stdin.end(),
  };
}
