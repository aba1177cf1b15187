// Several independent programs at once, in ONE program on the host: one round trip over ssh for
// what would otherwise be one channel (and a round trip or two) each. Each program's argv reaches
// the runner as positional parameters and is started by `exec "${1}" "${2}" …` built from numbers
// only, so no shell ever parses a path, branch or name. Every program's exit code, stdout and
// stderr come back whole and apart (byte counts frame them, so any byte may appear in them).
import { PassThrough } from 'node:stream';
import type { Host, RunResult } from './host.js';

export interface SideProgram {
  argv: readonly string[];
  /** Folder to run it in (default: the host's default, the login home over ssh). */
  cwd?: string;
  /** Variables for this program alone, as data (`env NAME=value … argv`). */
  env?: Record<string, string>;
}

// Per program: its folder ('' for none), its argument count, its arguments. Each runs in the
// background with its output in a private temporary folder; once all have ended, per program:
// a line "<exit code> <stdout bytes> <stderr bytes>", then those bytes of stdout and of stderr.
// A folder that cannot be entered is exit code 126 with the shell's message as stderr.
export const SIDE_BY_SIDE_PROGRAM = `umask 077
t=$(mktemp -d "\${TMPDIR:-/tmp}/ah-side.XXXXXX") || exit 70
trap 'rm -rf -- "$t"' EXIT
k=0; pids=
while [ $# -gt 0 ]; do
  d=$1; n=$2; shift 2
  refs=; i=1
  while [ "$i" -le "$n" ]; do refs="$refs \\"\\\${$i}\\""; i=$((i + 1)); done
  ( if [ -n "$d" ]; then cd -- "$d" || exit 126; fi; eval "exec $refs" ) </dev/null >"$t/$k.out" 2>"$t/$k.err" &
  pids="$pids $!"
  shift "$n"
  k=$((k + 1))
done
k=0
for p in $pids; do
  wait "$p"; echo "$?" >"$t/$k.rc"
  k=$((k + 1))
done
k=0
for p in $pids; do
  printf '%s %s %s\\n' "$(cat "$t/$k.rc")" "$(wc -c <"$t/$k.out" | tr -d ' ')" "$(wc -c <"$t/$k.err" | tr -d ' ')"
  cat "$t/$k.out" "$t/$k.err"
  k=$((k + 1))
done`;

/** The runner's argv for `programs` (exported for its table test). */
export function sideBySideArgv(programs: readonly SideProgram[]): string[] {
  const args = programs.flatMap((p) => {
    const argv = p.env && Object.keys(p.env).length > 0 ? ['env', ...Object.entries(p.env).map(([k, v]) => `${k}=${v}`), ...p.argv] : [...p.argv];
    return [p.cwd ?? '', String(argv.length), ...argv];
  });
  return ['/bin/sh', '-c', SIDE_BY_SIDE_PROGRAM, 'sh', ...args];
}

/** The runner's stdout → one result per program (in order); throws when it is cut short. */
export function parseSideBySide(stdout: Buffer, count: number, durationMs = 0): RunResult[] {
  const out: RunResult[] = [];
  let at = 0;
  for (let k = 0; k < count; k++) {
    const nl = stdout.indexOf(0x0a, at);
    const head = nl < 0 ? null : /^(\d+) (\d+) (\d+)$/.exec(stdout.subarray(at, nl).toString('latin1'));
    if (!head) throw new Error(`program ${k} of ${count}: no header in the runner's output`);
    const [outLen, errLen] = [Number(head[2]), Number(head[3])];
    const body = nl + 1;
    if (body + outLen + errLen > stdout.length) throw new Error(`program ${k} of ${count}: output cut short`);
    out.push({ durationMs, exitCode: Number(head[1]), stdout: stdout.subarray(body, body + outLen).toString('utf8'), stderr: stdout.subarray(body + outLen, body + outLen + errLen).toString('utf8') });
    at = body + outLen + errLen;
  }
  return out;
}

/**
 * Run `programs` side by side on `host`, in one program; each one's result as `host.run` would
 * give it. Rejects as `host.run` does (lost connection, timeout), or when the runner itself fails
 * (no temporary folder).
 */
export async function runSideBySide(host: Host, programs: readonly SideProgram[], opts: { timeoutMs?: number } = {}): Promise<RunResult[]> {
  if (programs.length === 0) return [];
  const chunks: Buffer[] = [];
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) => chunks.push(c));
  const r = await host.run(sideBySideArgv(programs), { stdout: sink, ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) });
  if (r.exitCode !== 0) throw new Error(`the side-by-side runner failed on ${host.label} (exit ${r.exitCode}): ${r.stderr.trim().slice(-300)}`);
  // Each program's own duration is not measured: the runner's stands for all.
  return parseSideBySide(Buffer.concat(chunks), programs.length, r.durationMs);
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
  send(host: Host, opts: { timeoutMs?: number } = {}): void {
    this.sent = true;
    const ran = runSideBySide(host, this.asked.map((a) => a.q.program), opts);
    ran.catch(() => undefined);
    this.asked.forEach((a, i) => a.settle(ran.then((results) => results[i]!)));
  }
}
