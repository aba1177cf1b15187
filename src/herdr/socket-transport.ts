// The server's API socket as a transport for a client, once a probe or a ping found it. The CLI
// prints exactly the socket's response line, so the same schemas parse it, and a request spares
// a process start (and, over ssh, a program on the remote side). Reads that fail here answer
// null and the caller runs the CLI; changes are never sent twice.
import type { Duplex } from 'node:stream';
import type { z } from 'zod';
import type { Host } from '../host/host.js';
import { ErrorEnvelope, OkResult, PongResult } from './schemas.js';
import { envelopeError, HerdrError } from './herdr-error.js';
import { checkHerdrVersion } from './version.js';
import { connectWithRequest, requestOnNewConnection, socketRequest } from './socket-request.js';

export class HerdrSocket {
  /** The server's API socket, once a probe found a running, compatible server. */
  private socket: string | null = null;
  private requests = 0;
  /**
   * Over ssh, connections to the socket opened ahead of the next requests (oldest first; one
   * unless more were asked for): opening a streamlocal channel is a round trip of its own, so with
   * a spare ready a request costs one round trip and no remote program at all. (herdr answers one
   * request per connection.)
   */
  private spares: Spare[] = [];
  /** The socket that answered a ping. */
  private pingedSocket: string | null = null;

  constructor(
    private readonly host: Host,
    private readonly timeoutMs: number,
  ) {}

  /** Whether a socket is known (requests go to it). */
  get known(): boolean {
    return this.socket !== null;
  }

  /** The socket requests go to, if one is known. */
  get current(): string | null {
    return this.socket;
  }

  /** The socket that answered `ping`, if one did. */
  get pinged(): string | null {
    return this.pingedSocket;
  }

  /** The socket a CLI probe named (null: none usable): it is the authority over a pinged one. */
  use(socket: string | null): void {
    if (socket !== this.socket) {
      this.socket = socket;
      this.spares = socket && this.host.socketsCostARoundTrip ? [this.openSpare(socket)] : [];
    }
  }

  /** Have `count` spares ready, for as many requests about to go side by side. */
  prepareSpares(count: number): void {
    const socket = this.socket;
    if (!socket || !this.host.socketsCostARoundTrip) return;
    while (this.spares.length < count) this.spares.push(this.openSpare(socket));
  }

  /**
   * The oldest spare, replaced by a new one opened ahead when it was the last. `fresh`: only one
   * opened moments ago (else it is dropped and null returned), for a request that cannot be sent twice.
   */
  private takeSpare(socket: string, fresh: boolean): Promise<Duplex> | null {
    const spare = this.spares.shift();
    if (this.spares.length === 0 && this.host.socketsCostARoundTrip) this.spares.push(this.openSpare(socket));
    if (!spare) return null;
    if (fresh && Date.now() - spare.openedAt > SPARE_FRESH_MS) {
      spare.connection.then((c) => c.destroy()).catch(() => undefined);
      return null;
    }
    return spare.connection;
  }

  /** The server's version when `socket` answers a ping with a supported one (and requests then use it); else null. */
  async ping(socket: string): Promise<string | null> {
    const request = this.requestLine('ping', {});
    const pong = await requestOnNewConnection(this.host, socket, request, this.socketTimeoutMs)
      .then((line) => PongResult.safeParse(JSON.parse(line)))
      .catch(() => null);
    if (!pong?.success || !checkHerdrVersion(pong.data.result.version).ok) return null;
    this.pingedSocket = socket;
    // A CLI probe that finished meanwhile has set these: it is the authority.
    if (!this.socket) {
      this.socket = socket;
      if (this.host.socketsCostARoundTrip) this.spares = [this.openSpare(socket)];
    }
    return pong.data.result.version;
  }

  /**
   * One request on the API socket, its response line parsed like the CLI's output; null when
   * the socket is unknown or failed (the caller then runs the CLI, which will say what is wrong).
   */
  async read<S extends z.ZodTypeAny>(method: string, params: Record<string, unknown>, schema: S, what: string): Promise<z.infer<S> | null> {
    const socket = this.socket;
    if (!socket) return null;
    const request = this.requestLine(method, params);
    const timeoutMs = this.socketTimeoutMs;
    let line: string;
    try {
      const spare = this.takeSpare(socket, false);
      // A spare the server has closed meanwhile: one retry on a fresh connection.
      const fresh = () => requestOnNewConnection(this.host, socket, request, timeoutMs);
      line = await (spare ? socketRequest(spare, request, timeoutMs) : fresh()).catch((err: unknown) => {
        if (!spare) throw err;
        return fresh();
      });
    } catch {
      this.socket = null;
      this.spares = [];
      return null;
    }
    const answer = this.parsed(line, schema, what);
    if (answer === null) this.socket = null;
    return answer;
  }

  /** A response line parsed like the CLI's output; null when it is not JSON. herdr's own errors throw. */
  private parsed<S extends z.ZodTypeAny>(line: string, schema: S, what: string): z.infer<S> | null {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return null;
    }
    const err = ErrorEnvelope.safeParse(parsed);
    if (err.success) throw envelopeError(err.data.error, this.host.label);
    const res = schema.safeParse(parsed);
    if (!res.success) throw new HerdrError('herdr_bad_output', `herdr's ${what} answered with unexpected JSON: ${res.error.message.slice(0, 300)}`, this.host.label);
    return res.data;
  }

  /**
   * One read on a socket that is not (yet) known to be the server's, on a fresh connection: for a
   * read sent beside the probe that finds it. Null when nothing answered; herdr's own errors throw.
   */
  async readAt<S extends z.ZodTypeAny>(socket: string, method: string, params: Record<string, unknown>, schema: S, what: string): Promise<z.infer<S> | null> {
    let line: string;
    try {
      const request = this.requestLine(method, params);
      line = await requestOnNewConnection(this.host, socket, request, this.socketTimeoutMs);
    } catch {
      return null;
    }
    return this.parsed(line, schema, what);
  }

  /**
   * A request that changes something (keys, text, a workspace) on the socket, its answer parsed
   * like the CLI's output. Null — and the caller runs the CLI — only when nothing was sent (no
   * socket known, or no connection); once the request may have reached the server it is never
   * sent again: a lost answer is an error. So it goes on the spare only when that was opened
   * moments ago (SPARE_FRESH_MS: the server cannot have closed it as idle), else on a new
   * connection (a spare the server closed might or might not have read what was written there).
   */
  async change<S extends z.ZodTypeAny>(method: string, params: Record<string, unknown>, schema: S, what: string): Promise<z.infer<S> | null> {
    const socket = this.socket;
    if (!socket) return null;
    const request = this.requestLine(method, params);
    // On a new connection the request goes with its opening: when that fails, nothing was sent.
    let connection: { stream: Duplex; sent: boolean };
    try {
      const spare = await this.takeSpare(socket, true)?.catch(() => null);
      connection = spare ? { stream: spare, sent: false } : { stream: await connectWithRequest(this.host, socket, request), sent: true };
    } catch {
      return null;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(await socketRequest(Promise.resolve(connection.stream), request, this.socketTimeoutMs, { sent: connection.sent }));
    } catch (err) {
      throw new HerdrError('herdr_failed', `herdr's ${what} got no answer on its socket: ${err instanceof Error ? err.message : String(err)}`, this.host.label);
    }
    const failed = ErrorEnvelope.safeParse(parsed);
    if (failed.success) throw envelopeError(failed.data.error, this.host.label);
    const res = schema.safeParse(parsed);
    if (!res.success) throw new HerdrError('herdr_bad_output', `herdr's ${what} answered with unexpected JSON: ${res.error.message.slice(0, 300)}`, this.host.label);
    return res.data;
  }

  /** An ok-only change (see change): false when nothing was sent. */
  async write(method: string, params: Record<string, unknown>, what: string): Promise<boolean> {
    return (await this.change(method, params, OkResult, what)) !== null;
  }

  /** One NDJSON request with this client's next id. */
  private requestLine(method: string, params: Record<string, unknown>): string {
    return JSON.stringify({ id: `agent-handoff:${++this.requests}`, method, params });
  }

  /** A socket request answers at once or not at all: its own, shorter bound. */
  private get socketTimeoutMs(): number {
    return Math.min(this.timeoutMs, 10_000);
  }

  private openSpare(socket: string): Spare {
    const openedAt = Date.now();
    const connection = this.host.connectSocket(socket).then((stream) => {
      stream.on('error', () => undefined);
      return stream;
    });
    connection.catch(() => undefined);
    return { connection, openedAt };
  }
}

/** A connection opened ahead, and when it was asked for. */
interface Spare {
  connection: Promise<Duplex>;
  openedAt: number;
}

/**
 * herdr (0.8.2) closes a connection that has sent nothing for 5 s; a spare younger than this is
 * still open when a request written now reaches it, whatever the link's round trip.
 */
export const SPARE_FRESH_MS = 2_000;
