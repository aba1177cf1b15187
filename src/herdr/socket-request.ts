// One NDJSON exchange on a connection: herdr answers one request per connection, with one line.
import type { Duplex } from 'node:stream';
import type { Host } from '../host/host.js';

/**
 * A new connection to `socket` with `request` sent as it opens (herdr 0.8.2 reads a new
 * connection at once and, finding nothing, sleeps 100 ms: see Host.connectSocket's `first`).
 * Give it to socketRequest with `{ sent: true }` (requestOnNewConnection does both).
 */
export function connectWithRequest(host: Host, socket: string, request: string): Promise<Duplex> {
  return host.connectSocket(socket, { first: `${request}\n` });
}

/** One NDJSON request on a new connection to `socket`, sent as it opens, and its one-line answer. */
export function requestOnNewConnection(host: Host, socket: string, request: string, timeoutMs: number): Promise<string> {
  return socketRequest(connectWithRequest(host, socket, request), request, timeoutMs, { sent: true });
}

/**
 * One NDJSON request and its one-line answer on a socket connection, bounded by `timeoutMs`.
 * `sent`: the request went with the connection (connectWithRequest); else it is written now.
 */
export async function socketRequest(connection: Promise<Duplex>, request: string, timeoutMs: number, opts: { sent?: boolean } = {}): Promise<string> {
  const stream = await connection;
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const done = (err: Error | null, value?: string): void => {
      clearTimeout(timer);
      stream.removeAllListeners('data');
      stream.destroy();
      if (err) reject(err);
      else resolve(value ?? '');
    };
    const timer = setTimeout(() => done(new Error(`no answer from herdr's socket within ${timeoutMs} ms`)), timeoutMs);
    stream.on('data', (d: Buffer) => {
      chunks.push(d);
      const all = Buffer.concat(chunks);
      const nl = all.indexOf(0x0a);
      if (nl >= 0) done(null, all.subarray(0, nl).toString('utf8'));
    });
    stream.on('error', (e: Error) => done(e));
    stream.on('end', () => done(new Error("herdr's socket closed without an answer")));
    if (!opts.sent) stream.write(`${request}\n`);
  });
}
