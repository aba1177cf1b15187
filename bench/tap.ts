// A counting TCP tap in front of the delay proxy. It sees the client's traffic undelayed, so it can
// tell when the client sent something *because* an answer came back (a round trip), and it adds
// the round trip a real TCP connect costs (the delay proxy forwards data only, so without this a
// fresh connection would look free).
//
// Round-trip estimate: a "request burst" is client→server data that comes after at least `gapMs`
// of client silence on that connection, with server→client data seen since the client last sent.
// Each new connection adds one more (its TCP handshake). Data the client sends while thinking
// locally, with no answer in between, is not a round trip and is not counted.
import net from 'node:net';

export interface TapEvent {
  /** Date.now() when it happened. */
  at: number;
  /** A connection, a request burst (a round trip), or bytes that passed (`up` client → server, `down` back). */
  kind: 'connect' | 'burst' | 'bytes';
  up?: number;
  down?: number;
}

/** A connection or a request burst: what counts as a round trip. */
export function isRoundTrip(e: TapEvent): boolean {
  return e.kind === 'connect' || e.kind === 'burst';
}

export interface Tap {
  port: number;
  readonly connections: number;
  readonly bursts: number;
  readonly bytesUp: number;
  readonly bytesDown: number;
  /** Every connect and burst with its time, to attribute them to steps. */
  readonly events: readonly TapEvent[];
  close(): Promise<void>;
}

export interface TapOptions {
  /** How long a new connection waits before it reaches the server (one RTT, as a TCP connect). */
  connectDelayMs: number;
  /** Client silence that makes its next data a new request burst. */
  gapMs: number;
}

export async function startTap(target: { host: string; port: number }, opts: TapOptions): Promise<Tap> {
  const sockets = new Set<net.Socket>();
  const stats = { connections: 0, bursts: 0, bytesUp: 0, bytesDown: 0 };
  const events: TapEvent[] = [];
  const server = net.createServer((client) => {
    stats.connections++;
    events.push({ at: Date.now(), kind: 'connect' });
    client.setNoDelay(true);
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    let lastUp = 0;
    let answeredSinceUp = false;
    let upstream: net.Socket | undefined;
    const pending: Buffer[] = [];
    let clientEnded = false;
    client.on('data', (chunk: Buffer) => {
      const now = Date.now();
      stats.bytesUp += chunk.length;
      events.push({ at: now, kind: 'bytes', up: chunk.length });
      if (answeredSinceUp && now - lastUp >= opts.gapMs) {
        stats.bursts++;
        events.push({ at: now, kind: 'burst' });
      }
      answeredSinceUp = false;
      lastUp = now;
      if (upstream?.readyState === 'open') upstream.write(chunk);
      else pending.push(chunk);
    });
    client.on('end', () => {
      clientEnded = true;
      if (upstream?.readyState === 'open') upstream.end();
    });
    client.on('error', () => upstream?.destroy());
    client.on('close', () => upstream?.destroy());
    setTimeout(() => {
      if (client.destroyed) return;
      const up = net.connect(target.port, target.host);
      upstream = up;
      up.setNoDelay(true);
      sockets.add(up);
      up.on('close', () => {
        sockets.delete(up);
        client.destroy();
      });
      up.on('error', () => client.destroy());
      up.on('connect', () => {
        for (const c of pending.splice(0)) up.write(c);
        if (clientEnded) up.end();
      });
      up.on('data', (chunk: Buffer) => {
        stats.bytesDown += chunk.length;
        events.push({ at: Date.now(), kind: 'bytes', down: chunk.length });
        answeredSinceUp = true;
        if (!client.destroyed) client.write(chunk);
      });
      up.on('end', () => client.end());
    }, opts.connectDelayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    port,
    get connections() {
      return stats.connections;
    },
    get bursts() {
      return stats.bursts;
    },
    get bytesUp() {
      return stats.bytesUp;
    },
    get bytesDown() {
      return stats.bytesDown;
    },
    events,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
