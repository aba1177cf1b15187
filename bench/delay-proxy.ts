// A loopback TCP proxy that delays every chunk in each direction, standing in for a WAN link
// (netem is not available on these machines). 25 ms each way ≈ 50 ms round trip. It also counts
// connections (= SSH handshakes through it) and bytes.
import net from 'node:net';

export interface DelayProxy {
  port: number;
  connections: number;
  bytesUp: number;
  bytesDown: number;
  close(): Promise<void>;
}

export async function startDelayProxy(target: { host: string; port: number }, oneWayDelayMs: number, listenHost = '127.0.0.1'): Promise<DelayProxy> {
  const sockets = new Set<net.Socket>();
  const stats = { connections: 0, bytesUp: 0, bytesDown: 0 };
  // Keep order: each direction is a queue released after the delay.
  const pipeDelayed = (from: net.Socket, to: net.Socket, count: (n: number) => void) => {
    from.on('data', (chunk) => {
      count(chunk.length);
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, oneWayDelayMs);
    });
    from.on('end', () => setTimeout(() => to.end(), oneWayDelayMs));
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
