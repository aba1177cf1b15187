// Diagnostic preload for the benchmark (AH_BENCH_TRACE=1): loaded into agent-handoff with
// `node --import`, it wraps the Host methods of both host kinds and prints one stderr line per
// call — `AHTRACE <host> <op> <ms> <what>` — so the benchmark can tell which calls each step makes
// and what they cost. It changes no behaviour. Product code is only wrapped, never edited.
import type { Duplex } from 'node:stream';
import { LocalHost } from '../src/host/local.js';
import { SshHost } from '../src/host/ssh.js';

const OPS = ['run', 'readFile', 'writeFile', 'readStream', 'writeStream', 'connectSocket', 'stat', 'list', 'mkdirp', 'mkdirOnce', 'rename', 'remove', 'realpath', 'chmod', 'utimes', 'which'] as const;

function describe(op: string, args: unknown[]): string {
  const first = args[0];
  const text = Array.isArray(first) ? first.map(String).join(' ') : String(first);
  return `${op === 'run' ? '' : `${op} `}${text}`.replace(/\s+/g, ' ').slice(0, 160);
}

function wrap(proto: Record<string, unknown>, host: string): void {
  for (const op of OPS) {
    const original = proto[op];
    if (typeof original !== 'function') continue;
    proto[op] = async function (this: unknown, ...args: unknown[]) {
      const started = Date.now();
      try {
        return await (original as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      } finally {
        process.stderr.write(`AHTRACE ${host} ${op} ${Date.now() - started} ${describe(op, args)}\n`);
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
    const stream = await open.apply(this, args);
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    let sent = 0;
    let method = '';
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
