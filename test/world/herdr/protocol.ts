// Wire protocol shared by the sim CLI and server: NDJSON over a Unix socket, herdr's envelopes.
import * as net from 'node:net';

export const VERSION = '0.8.0';
export const PROTOCOL = 19;
export const CAPABILITIES = { live_handoff: false, detached_server_daemon: false };

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json | undefined };
export type JsonObject = { [k: string]: Json | undefined };

export interface Request {
  id: string;
  method: string;
  params: JsonObject;
}

export type Response = { id: string; result: JsonObject } | { id: string; error: { code: string; message: string } };

/** A herdr error with its code; becomes an error envelope. */
export class HerdrError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class NotRunning extends Error {}

/** One request on a fresh connection; rejects with NotRunning when nobody listens. */
export function call(socket: string, req: Request): Promise<Response> {
  return new Promise((resolve, reject) => {
    const conn = net.createConnection(socket);
    let buf = '';
    let done = false;
    conn.setEncoding('utf8');
    conn.on('connect', () => conn.write(`${JSON.stringify(req)}\n`));
    conn.on('data', (chunk: string) => {
      buf += chunk;
      const nl = buf.indexOf('\n');
      if (nl >= 0 && !done) {
        done = true;
        conn.end();
        try {
          resolve(JSON.parse(buf.slice(0, nl)) as Response);
        } catch (err) {
          reject(err as Error);
        }
      }
    });
    conn.on('error', (err: NodeJS.ErrnoException) => {
      if (done) return;
      done = true;
      if (['ENOENT', 'ECONNREFUSED', 'ENOTSOCK', 'ENOTDIR'].includes(err.code ?? '')) reject(new NotRunning(err.message));
      else reject(err);
    });
    conn.on('close', () => {
      if (!done) {
        done = true;
        reject(new NotRunning('connection closed without a response'));
      }
    });
  });
}
