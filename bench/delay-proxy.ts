// A loopback TCP proxy that delays every chunk in each direction, standing in for a WAN link
// (netem is not available on these machines). 25 ms each way ≈ 50 ms round trip; optionally a
// bandwidth (bytes per second, each direction). It also counts
// connections (= SSH handshakes through it) and bytes.
import net from 'node:net';

export interface DelayProxy {
  port: number;
  connections: number;
  bytesUp: number;
  bytesDown: number;
  close(): Promise<void>;
}

export async function startDelayProxy(target: { host: string; port: number }, oneWayDelayMs: number, listenHost = '127.0.0.1', opts: { bytesPerSecond?: number } = {}): Promise<DelayProxy> {
  const sockets = new Set<net.Socket>();
  const stats = { connections: 0, bytesUp: 0, bytesDown: 0 };
  const rate = opts.bytesPerSecond;
  // Keep order: each direction is a queue released after the delay (and, with a rate, after the
  // bytes before it have had their time on the wire).
  const pipeDelayed = (from: net.Socket, to: net.Socket, count: (n: number) => void) => {
    // One queue and one timer per direction: timers of different lengths that end in the same
    // millisecond may fire in either order, and reordered bytes break the SSH stream.
    const queue: { at: number; chunk: Buffer | null }[] = [];
    let timer: NodeJS.Timeout | null = null;
    let wireFree = 0;
    const release = () => {
      timer = null;
      const now = Date.now();
      while (queue.length > 0 && queue[0]!.at <= now) {
        const { chunk } = queue.shift()!;
        if (to.destroyed) continue;
        if (chunk) to.write(chunk);
        else to.end(); // the end, in its place after the bytes
      }
      if (queue.length > 0) timer = setTimeout(release, queue[0]!.at - now);
    };
    from.on('data', (chunk: Buffer) => {
      count(chunk.length);
      const now = Date.now();
      let at = now + oneWayDelayMs;
      if (rate) {
        wireFree = Math.max(now, wireFree) + (chunk.length / rate) * 1000;
        at = wireFree + oneWayDelayMs;
      }
      queue.push({ at, chunk });
      timer ??= setTimeout(release, at - now);
    });
    from.on('end', () => {
      const now = Date.now();
      const at = Math.max(now, wireFree) + oneWayDelayMs;
      queue.push({ at, chunk: null });
      timer ??= setTimeout(release, at - now);
    });
    from.on('error', () => to.destroy());
    from.on('close', () => setTimeout(() => to.destroy(), oneWayDelayMs + 5));
  };
  const server = net.createServer((client) => {
    stats.connections++;
    const upstream = net.connect(target.port, target.host);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    sockets.add(client);
    sockets.add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    pipeDelayed(client, upstream, (n) => (stats.bytesUp += n));
    pipeDelayed(upstream, client, (n) => (stats.bytesDown += n));
  });
  await new Promise<void>((resolve) => server.listen(0, listenHost, resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    port,
    get connections() {
      return stats.connections;
    },
    get bytesUp() {
      return stats.bytesUp;
    },
    get bytesDown() {
      return stats.bytesDown;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
