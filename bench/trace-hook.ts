// Diagnostic preload for the benchmark (AH_BENCH_TRACE=1): loaded into agent-handoff with
// `node --import`, it wraps the Host methods of both host kinds and prints one stderr line per
// call — `AHTRACE <host> <op> <ms> <what>`, a run's with `[argv/stdin/stdout bytes]` first — so
// the benchmark can tell which calls each step makes and what they cost. It changes no behaviour. Product code is only wrapped, never edited.
import { appendFileSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { LocalHost } from '../src/host/local.js';
import { SshHost } from '../src/host/ssh.js';

/** AH_BENCH_TRACE_ARGV: a file (writable by the laptop's user) that gets each run's whole argv, a JSON line each. */
const ARGV_FILE = process.env.AH_BENCH_TRACE_ARGV;

const OPS = ['run', 'readFile', 'readFiles', 'writeFile', 'readStream', 'writeStream', 'connectSocket', 'stat', 'list', 'walk', 'mkdirp', 'makeFolderWith', 'rename', 'remove', 'realpath', 'chmod', 'utimes', 'which'] as const;

function describe(op: string, args: unknown[]): string {
  const first = args[0];
  const text = Array.isArray(first) ? first.map(String).join(' ') : String(first);
  return `${op === 'run' ? '' : `${op} `}${text}`.replace(/\s+/g, ' ').slice(0, 160);
}

/** For a run: the bytes of its program and arguments, its stdin and its stdout (`[up/in/out] `). */
function sizes(op: string, args: unknown[], result: unknown): string {
  if (op !== 'run' || !Array.isArray(args[0])) return '';
  const argv = (args[0] as unknown[]).reduce<number>((n, a) => n + Buffer.byteLength(String(a)) + 1, 0);
  const stdin = (args[1] as { stdin?: unknown } | undefined)?.stdin;
  const input = typeof stdin === 'string' ? Buffer.byteLength(stdin) : Buffer.isBuffer(stdin) ? stdin.length : stdin ? -1 : 0;
  const stdout = (result as { stdout?: unknown } | undefined)?.stdout;
  const output = typeof stdout === 'string' ? Buffer.byteLength(stdout) : Buffer.isBuffer(stdout) ? stdout.length : 0;
  return `[${argv}/${input}/${output}] `;
}

function wrap(proto: Record<string, unknown>, host: string): void {
  for (const op of OPS) {
    const original = proto[op];
    if (typeof original !== 'function') continue;
    proto[op] = async function (this: unknown, ...args: unknown[]) {
      const started = Date.now();
      let result: unknown;
      try {
        result = await (original as (...a: unknown[]) => Promise<unknown>).apply(this, args);
        return result;
      } finally {
        if (ARGV_FILE && op === 'run') appendFileSync(ARGV_FILE, `${JSON.stringify({ host, argv: args[0] })}\n`);
        process.stderr.write(`AHTRACE ${host} ${op} ${Date.now() - started} ${sizes(op, args, result)}${describe(op, args)}\n`);
      }
    };
  }
}

/**
 * Each request written to a socket connection (herdr's API: one request per connection), as one
 * more line when its answer begins: `socket-request`, from the write to the answer, and its method.
 */
function traceRequests(proto: Record<string, unknown>, host: string): void {
  const open = proto.connectSocket as (...a: unknown[]) => Promise<Duplex>;
  proto.connectSocket = async function (this: unknown, ...args: unknown[]) {
    // A request sent with the connection (its `first`) counts from the call.
    const first = (args[1] as { first?: string } | undefined)?.first;
    const called = Date.now();
    const stream = await open.apply(this, args);
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    let sent = first ? called : 0;
    let method = first ? (/"method":"([^"]+)"/.exec(first)?.[1] ?? '?') : '';
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (!sent) {
        sent = Date.now();
        method = /"method":"([^"]+)"/.exec(String(chunk))?.[1] ?? '?';
      }
      return write(chunk, ...rest);
    }) as Duplex['write'];
    stream.once('data', () => {
      if (sent) process.stderr.write(`AHTRACE ${host} socket-request ${Date.now() - sent} ${method}\n`);
    });
    return stream;
  };
}

wrap(SshHost.prototype as unknown as Record<string, unknown>, 'ssh');
wrap(LocalHost.prototype as unknown as Record<string, unknown>, 'local');
traceRequests(SshHost.prototype as unknown as Record<string, unknown>, 'ssh');
traceRequests(LocalHost.prototype as unknown as Record<string, unknown>, 'local');
