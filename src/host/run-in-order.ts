// Several commands that must run one after another, stopping at the first that fails, in ONE
// program on the host (one round trip over ssh instead of one per command). Each command's argv
// reaches the runner as positional parameters and is run by `exec "${1}" "${2}" …` built from
// numbers only, so no shell ever parses a path, branch or name. The runner says on stdout which
// commands succeeded, so the caller can record exactly what was done even when a later one fails.
import { randomBytes } from 'node:crypto';
import type { Host } from './host.js';

export interface OrderedCommand {
  argv: readonly string[];
  /** Folder to run it in. */
  cwd: string;
}

export interface InOrderResult {
  /** How many commands succeeded (the first `done` of them). */
  done: number;
  /** The command that failed (index `done`), with its exit code and its own stderr. */
  failed: { exitCode: number; stderr: string } | null;
}

// $1 a mark for stderr, then per command: its folder, its argument count, its arguments.
// After each success: "ok <k>" on stdout; on a failure: "failed <k> <exit code>", then exit 1.
// Everything the commands print goes to stderr, each command's part after "<mark> <k>".
const RUNNER = `mark=$1; shift; k=0
while [ $# -gt 0 ]; do
  d=$1; n=$2; shift 2
  refs=; i=1
  while [ "$i" -le "$n" ]; do refs="$refs \\"\\\${$i}\\""; i=$((i + 1)); done
  printf '%s %s\\n' "$mark" "$k" >&2
  ( cd -- "$d" && eval "exec $refs" ) >&2
  rc=$?
  if [ "$rc" -ne 0 ]; then printf 'failed %s %s\\n' "$k" "$rc"; exit 1; fi
  shift "$n"
  printf 'ok %s\\n' "$k"
  k=$((k + 1))
done
exit 0`;

/**
 * Run `commands` in order on `host` until one fails. A lost connection or a timeout rejects (what
 * ran is then unknown to the caller, as with any single command cut short).
 */
export async function runInOrder(host: Host, commands: readonly OrderedCommand[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<InOrderResult> {
  // One program per ARGS_PER_PROGRAM bytes of arguments (a command line has a size limit).
  let done = 0;
  for (const batch of batches(commands)) {
    const out = await runBatch(host, batch, opts);
    done += out.done;
    if (out.failed) return { done, failed: out.failed };
  }
  return { done, failed: null };
}

/** Well below the smallest ARG_MAX of the systems we run on (and what a pipe line should carry). */
const ARGS_PER_PROGRAM = 96 * 1024;

function batches(commands: readonly OrderedCommand[]): OrderedCommand[][] {
  const out: OrderedCommand[][] = [];
  let cur: OrderedCommand[] = [];
  let size = 0;
  for (const c of commands) {
    const bytes = c.argv.reduce((n, a) => n + Buffer.byteLength(a) + 1, Buffer.byteLength(c.cwd) + 8);
    if (cur.length > 0 && size + bytes > ARGS_PER_PROGRAM) {
      out.push(cur);
      cur = [];
      size = 0;
    }
    cur.push(c);
    size += bytes;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

async function runBatch(host: Host, commands: readonly OrderedCommand[], opts: { env?: Record<string, string>; timeoutMs?: number }): Promise<InOrderResult> {
  if (commands.length === 0) return { done: 0, failed: null };
  const mark = `AHSTEP${randomBytes(6).toString('hex')}`;
  const args = commands.flatMap((c) => [c.cwd, String(c.argv.length), ...c.argv]);
  const r = await host.run(['/bin/sh', '-c', RUNNER, 'sh', mark, ...args], { ...(opts.env ? { env: opts.env } : {}), ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) });
  let done = 0;
  let failedCode: number | null = null;
  for (const l of r.stdout.split('\n')) {
    const ok = /^ok (\d+)$/.exec(l);
    if (ok) done = Math.max(done, Number(ok[1]) + 1);
    const bad = /^failed (\d+) (\d+)$/.exec(l);
    if (bad) failedCode = Number(bad[2]);
  }
  if (failedCode === null && r.exitCode === 0 && done === commands.length) return { done, failed: null };
  // The failing command's own stderr: what follows its mark line.
  const at = r.stderr.lastIndexOf(`${mark} ${done}\n`);
  const stderr = at >= 0 ? r.stderr.slice(at + `${mark} ${done}\n`.length) : r.stderr;
  return { done, failed: { exitCode: failedCode ?? r.exitCode, stderr } };
}
