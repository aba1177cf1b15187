// The server's API socket as a transport for a client, once a probe or a ping found it. The CLI
// prints exactly the socket's response line, so the same schemas parse it, and on this machine a
// request spares a process start. Reads that fail here answer null and the caller runs the CLI;
// changes are never sent twice.
//
// Where a connection costs a round trip (ssh), reads and changes go to herdr's CLI on that host
// instead: herdr 0.8.2 reads a new connection once as it accepts it and, finding nothing, sleeps
// 100 ms before it reads again. A streamlocal channel's request follows sshd's connect by at
// least half a round trip (and one opened ahead waits for herdr's next wake), where the CLI on
// the host writes its request as it connects: a round trip and a process start, against a round
// trip and 0–100 ms more. (Agent start goes to the CLI there too, in the program that watches
// the agent: see HerdrClient.agentStart.)
import type { Duplex } from 'node:stream';
import type { z } from 'zod';
import type { Host } from '../host/host.js';
import { ErrorEnvelope, OkResult, PongResult } from './schemas.js';
import { envelopeError, HerdrError } from './herdr-error.js';
import { checkHerdrVersion } from './version.js';
import { connectWithRequest, socketRequest } from './socket-request.js';

export class HerdrSocket {
  /** The server's API socket, once a probe found a running, compatible server. */
  private socket: string | null = null;
  private requests = 0;
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
    this.socket = socket;
  }

  /** The server's version when `socket` answers a ping with a supported one (and requests then use it); else null. */
  async ping(socket: string): Promise<string | null> {
    const request = this.requestLine('ping', {});
    const pong = await socketRequest(connectWithRequest(this.host, socket, request), request, this.socketTimeoutMs, { sent: true })
      .then((line) => PongResult.safeParse(JSON.parse(line)))
      .catch(() => null);
    if (!pong?.success || !checkHerdrVersion(pong.data.result.version).ok) return null;
    this.pingedSocket = socket;
    // A CLI probe that finished meanwhile has set it: it is the authority.
    this.socket ??= socket;
    return pong.data.result.version;
  }

  /**
   * One read on the API socket, its response line parsed like the CLI's output; null when the
   * socket is unknown or failed, or a connection costs a round trip (the caller then runs the
   * CLI, which will say what is wrong).
   */
  read<S extends z.ZodTypeAny>(method: string, params: Record<string, unknown>, schema: S, what: string): Promise<z.infer<S> | null> {
    return this.host.socketsCostARoundTrip ? Promise.resolve(null) : this.ask(method, params, schema, what);
  }

  /**
   * herdr's `agent.start` on the API socket (over ssh too, where the program that watches the
   * agent could not run), its answer parsed; null when the socket is unknown or failed (the
   * caller then runs the CLI).
   */
  launch<S extends z.ZodTypeAny>(params: Record<string, unknown>, schema: S): Promise<z.infer<S> | null> {
    return this.ask('agent.start', params, schema, 'agent start');
  }

  /** One request, its answer parsed; null (and the socket forgotten) when it got no usable answer. */
  private async ask<S extends z.ZodTypeAny>(method: string, params: Record<string, unknown>, schema: S, what: string): Promise<z.infer<S> | null> {
    const socket = this.socket;
    if (!socket) return null;
    const request = this.requestLine(method, params);
    let line: string;
    try {
      line = await socketRequest(connectWithRequest(this.host, socket, request), request, this.socketTimeoutMs, { sent: true });
    } catch {
      this.socket = null;
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
   * read sent beside the probe that finds it. Null when nothing answered, or a connection costs a
   * round trip (see read); herdr's own errors throw.
   */
  async readAt<S extends z.ZodTypeAny>(socket: string, method: string, params: Record<string, unknown>, schema: S, what: string): Promise<z.infer<S> | null> {
    if (this.host.socketsCostARoundTrip) return null;
    let line: string;
    try {
      const request = this.requestLine(method, params);
      line = await socketRequest(connectWithRequest(this.host, socket, request), request, this.socketTimeoutMs, { sent: true });
    } catch {
      return null;
    }
    return this.parsed(line, schema, what);
  }

  /**
   * A request that changes something (keys, text, a workspace) on the socket, its answer parsed
   * like the CLI's output. Null — and the caller runs the CLI — only when nothing was sent (no
   * socket known, a connection that costs a round trip (see read), or no connection); once the
   * request may have reached the server it is never sent again: a lost answer is an error.
   */
  async change<S extends z.ZodTypeAny>(method: string, params: Record<string, unknown>, schema: S, what: string): Promise<z.infer<S> | null> {
    const socket = this.socket;
    if (!socket || this.host.socketsCostARoundTrip) return null;
    const request = this.requestLine(method, params);
    // The request goes with the connection's opening: when that fails, nothing was sent.
    let connection: Duplex;
    try {
      connection = await connectWithRequest(this.host, socket, request);
    } catch {
      return null;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(await socketRequest(Promise.resolve(connection), request, this.socketTimeoutMs, { sent: true }));
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
}
