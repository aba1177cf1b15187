// The first TCP connect of a `send`, begun by bin/agent-handoff.js before the bundle loads: the
// launcher dials the address this target's `ssh -G` gave last time (dial-memory.ts), so the TCP
// handshake and the server's banner come while the bundle loads. Only the bytes of TCP's own
// handshake go before the takeover; the socket is used only when this run's `ssh -G` resolves
// the target to that same address (then the host key is verified on it as on any other).
// Kept free of zod and ssh2: it runs before the TCP connect.
import type net from 'node:net';

/** What the launcher leaves on globalThis under this key (bin/agent-handoff.js: dialFirst). */
const SLOT = Symbol.for('agent-handoff.early-dial');

interface LauncherDial {
  target: string;
  host: string;
  port: number;
  socket: net.Socket;
  /** Set by the launcher's error listener. */
  error?: Error;
}

function isLauncherDial(v: unknown): v is LauncherDial {
  const d = v as LauncherDial | undefined;
  return typeof d === 'object' && d !== null && typeof d.target === 'string' && typeof d.host === 'string' && typeof d.port === 'number' && typeof d.socket?.once === 'function';
}

/**
 * The launcher's socket when it dialed `target` at `host`:`port` (what this run resolved for the
 * first hop), once connected; undefined when it dialed nothing, another target or another
 * address, or its connect failed (the caller then connects itself, and reports that attempt's
 * error). Taken at most once; one dialed elsewhere is closed here.
 */
export function takeLauncherSocket(target: string, host: string, port: number): Promise<net.Socket | undefined> | undefined {
  const slot = globalThis as { [SLOT]?: unknown };
  const dial = slot[SLOT];
  if (!isLauncherDial(dial) || dial.target !== target) return undefined;
  delete slot[SLOT];
  if (dial.host !== host || dial.port !== port || dial.error || dial.socket.destroyed) {
    dial.socket.destroy();
    return undefined;
  }
  const socket = dial.socket;
  socket.setNoDelay(true);
  if (!socket.connecting) return Promise.resolve(socket);
  return new Promise((resolve) => {
    const connected = (): void => {
      socket.off('error', failed);
      resolve(socket);
    };
    const failed = (): void => {
      socket.off('connect', connected);
      socket.destroy();
      resolve(undefined);
    };
    socket.once('connect', connected);
    socket.once('error', failed);
  });
}
