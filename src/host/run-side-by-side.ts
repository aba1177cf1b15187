// Several independent programs at once, in ONE program on the host: one round trip over ssh for
// what would otherwise be one channel (and a round trip or two) each. Each program's argv reaches
// the runner as positional parameters and is started by `exec "${1}" "${2}" …` built from numbers
// only, so no shell ever parses a path, branch or name. Every program's exit code, stdout and
// stderr come back whole and apart, framed by a random mark (text, as host.run gives it: the
// runner then fits a command shell, where a byte-exact answer would need a channel of its own).
import { randomBytes } from 'node:crypto';
import type { Host, RunOptions, RunResult } from './host.js';

export interface SideProgram {
  argv: readonly string[];
  /** Folder to run it in (default: the host's default, the login home over ssh). */
  cwd?: string;
  /** Variables for this program alone, as data (`env NAME=value … argv`). */
  env?: Record<string, string>;
  /**
   * Run it to its end before the programs after it start: a request to herdr's server (0.8.2)
   * is answered 100 ms late in a third to half of runs while other programs busy the host's CPU
   * (herdr's CLI loses the race with herdr's first read of its connection), and was not once in
   * 40 runs on a quiet one.
   */
  alone?: boolean;
}

// $1 a mark no output holds, then per program: `alone` or `-` (see SideProgram.alone), its folder
// ('' for none), its argument count, its arguments. Each runs in the background with its output
// in a private temporary folder (one alone is waited for before the next starts); once
// all have ended, per program: a line "<mark> <k> <exit code>", its stdout, a line "<mark>", its
// stderr (each mark line starts on a line of its own), and a last "<mark> end" — all by one
// `cat` (a process each would cost more than the programs on a busy host). A folder that
// cannot be entered is exit code 126 with the shell's message as stderr.
export const SIDE_BY_SIDE_PROGRAM = `umask 077
mark=$1; shift
t=$(mktemp -d "\${TMPDIR:-/tmp}/ah-side.XXXXXX") || exit 70
trap 'rm -rf -- "$t"' EXIT
k=0; pids=
while [ $# -gt 0 ]; do
  w=$1; d=$2; n=$3; shift 3
  refs=; i=1
  while [ "$i" -le "$n" ]; do refs="$refs \\"\\\${$i}\\""; i=$((i + 1)); done
  ( if [ -n "$d" ]; then cd -- "$d" || exit 126; fi; eval "exec $refs" ) </dev/null >"$t/$k.out" 2>"$t/$k.err" &
  p=$!
  if [ "$w" = alone ]; then wait "$p"; printf '%s\\n' "$?" >"$t/$k.rc"; p=ended; fi
  pids="$pids $p"
  shift "$n"
  k=$((k + 1))
done
k=0
for p in $pids; do
  if [ "$p" = ended ]; then read -r rc <"$t/$k.rc"; else wait "$p"; rc=$?; fi
  printf '\\n%s %s %s\\n' "$mark" "$k" "$rc" >"$t/$k.head"
  printf '\\n%s\\n' "$mark" >"$t/$k.mark"
  set -- "$@" "$t/$k.head" "$t/$k.out" "$t/$k.mark" "$t/$k.err"
  k=$((k + 1))
done
printf '\\n%s end\\n' "$mark" >"$t/end"
cat -- "$@" "$t/end"`;

/** The runner's argv for `programs`, with `mark` between their outputs (exported for its table test). */
export function sideBySideArgv(programs: readonly SideProgram[], mark: string): string[] {
  const args = programs.flatMap((p) => {
    const argv = p.env && Object.keys(p.env).length > 0 ? ['env', ...Object.entries(p.env).map(([k, v]) => `${k}=${v}`), ...p.argv] : [...p.argv];
    return [p.alone ? 'alone' : '-', p.cwd ?? '', String(argv.length), ...argv];
  });
  return ['/bin/sh', '-c', SIDE_BY_SIDE_PROGRAM, 'sh', mark, ...args];
}

/** The runner's stdout → one result per program (in order); throws when it is cut short or a mark is out of place. */
export function parseSideBySide(stdout: string, mark: string, count: number, durationMs = 0): RunResult[] {
  const parts = stdout.split(`\n${mark}`);
  if (parts.length !== 2 * count + 2 || parts[2 * count + 1] !== ' end\n') throw new Error(`the side-by-side runner's answer for ${count} programs does not frame them (${parts.length} parts)`);
  const out: RunResult[] = [];
  for (let k = 0; k < count; k++) {
    const head = /^ (\d+) (\d+)\n/.exec(parts[1 + 2 * k]!);
    const err = parts[2 + 2 * k]!;
    if (!head || Number(head[1]) !== k || !err.startsWith('\n')) throw new Error(`program ${k} of ${count}: no header in the runner's answer`);
    out.push({ durationMs, exitCode: Number(head[2]), stdout: parts[1 + 2 * k]!.slice(head[0].length), stderr: err.slice(1) });
  }
  return out;
}

/**
 * Run `programs` side by side on `host`, in one program (over ssh: on a command shell, one round
 * trip); each one's result as `host.run` would give it (text). Rejects as `host.run` does (lost
 * connection, timeout), or when the runner itself fails (no temporary folder).
 */
export async function runSideBySide(host: Host, programs: readonly SideProgram[], opts: Pick<RunOptions, 'timeoutMs' | 'loginEnv'> = {}): Promise<RunResult[]> {
  if (programs.length === 0) return [];
  const mark = `AHSIDE${randomBytes(12).toString('hex')}`;
  const r = await host.run(sideBySideArgv(programs, mark), opts);
  if (r.exitCode !== 0) throw new Error(`the side-by-side runner failed on ${host.label} (exit ${r.exitCode}): ${r.stderr.trim().slice(-300)}`);
  // Each program's own duration is not measured: the runner's stands for all.
  return parseSideBySide(r.stdout, mark, programs.length, r.durationMs);
}

/** A program and how to read its answer. */
export interface Question<T> {
  program: SideProgram;
  answer: (r: RunResult) => T | Promise<T>;
}

/**
 * Questions gathered from several modules, then asked in one program (runSideBySide). Each answer
 * settles on its own, so one that cannot be read fails only its own promise; the runner's own
 * failure (a lost connection) fails them all.
 */
export class QuestionBatch {
  private readonly asked: { q: Question<unknown>; settle: (r: Promise<RunResult>) => void }[] = [];
  private sent = false;

  ask<T>(q: Question<T>): Promise<T> {
    if (this.sent) throw new Error('QuestionBatch: asked after it was sent');
    const answer = new Promise<T>((resolve, reject) => {
      this.asked.push({ q, settle: (r) => r.then((res) => q.answer(res)).then(resolve as (v: unknown) => void, reject) });
    });
    answer.catch(() => undefined);
    return answer;
  }

  /** Ask everything gathered so far, in one program on `host`. */
  send(host: Host, opts: Pick<RunOptions, 'timeoutMs' | 'loginEnv'> = {}): void {
    this.sent = true;
    const ran = runSideBySide(host, this.asked.map((a) => a.q.program), opts);
    ran.catch(() => undefined);
    this.asked.forEach((a, i) => a.settle(ran.then((results) => results[i]!)));
  }
}
