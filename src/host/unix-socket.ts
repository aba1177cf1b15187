// A connection to a Unix-domain socket on this machine, with the bytes that open the conversation
// already waiting when the server first looks.
//
// herdr 0.8.2 hands each accepted connection to a thread of its own, which reads it at once
// (non-blocking) and, finding nothing, sleeps 100 ms before it looks again. Node writes what is
// given before 'connect' only when its event loop comes round, after the server's first look in
// most runs: a local herdr request then took 100 ms instead of 1 (every one in a traced send,
// about half in a quiet loop). A Unix socket's connect() is done by the time net.connect
// returns, so the first bytes are written on its descriptor right then.
// (test/host/unix-socket.test.ts fails if node stops exposing it.)
import fs from 'node:fs';
import net from 'node:net';

/** The descriptor under a socket node is connecting, if node exposes it (`_handle.fd`, not public API). */
function descriptorOf(socket: net.Socket): number | null {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : null;
}

/**
 * Bytes of `first` written on the socket's descriptor now (0 when it cannot be: no descriptor, a
 * connect that failed, a full buffer); the caller writes the rest through the socket as usual.
 */
export function writeAtConnect(socket: net.Socket, first: Buffer): number {
  const fd = descriptorOf(socket);
  if (fd === null) return 0;
  try {
    return fs.writeSync(fd, first);
  } catch {
    return 0;
  }
}

/** A connection to the socket at `path`, `first` sent with it; resolves once connected. */
export function connectUnixSocket(path: string, first?: string): Promise<net.Socket> {
  return new Promise<net.Socket>((resolve, reject) => {
    // Made before the connect: nothing but the write may come between them.
    const bytes = first === undefined ? null : Buffer.from(first, 'utf8');
    const sock = net.connect(path);
    if (bytes) {
      const written = writeAtConnect(sock, bytes);
      if (written < bytes.length) sock.write(bytes.subarray(written));
    }
    sock.once('connect', () => {
      sock.removeListener('error', reject);
      resolve(sock);
    });
    sock.once('error', reject);
  });
}
