// The dial's signal (ssh-connect.ts: onDial, which `dialed()` waits for before a send loads its
// modules) comes once ssh2 has written its identification: ssh2 writes it only after its crypto
// set-up settles, and a signal sent before that let the module loading hold the first bytes back
// (a round trip's worth of the handshake, traced in issue #18). firstWrite is what tells it.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dialChain, firstWrite } from '../../src/host/ssh-connect.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
  vi.restoreAllMocks();
});

/** A TCP server on loopback that keeps what each connection sends and answers nothing. */
async function silentServer(): Promise<{ port: number; received: () => string }> {
  let received = '';
  const server = net.createServer((s) => s.on('data', (d: Buffer) => (received += d.toString('latin1'))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => server.close());
  const sockets = new Set<net.Socket>();
  server.on('connection', (s) => sockets.add(s));
  cleanups.push(() => sockets.forEach((s) => s.destroy()));
  return { port: (server.address() as net.AddressInfo).port, received: () => received };
}

describe('firstWrite', () => {
  it('settles at the first write, which still goes out, and leaves the socket as it was', async () => {
    const server = await silentServer();
    const socket = net.connect(server.port, '127.0.0.1');
    cleanups.push(() => socket.destroy());
    await new Promise((resolve) => socket.once('connect', resolve));
    let settled = false;
    const written = firstWrite(socket).then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(socket.write('one')).toBe(true);
    await written;
    expect(Object.hasOwn(socket, 'write')).toBe(false);
    expect(socket.write).toBe(net.Socket.prototype.write);
    socket.write('two');
    await vi.waitFor(() => expect(server.received()).toBe('onetwo'));
  });
});

describe("the first hop's dial signal", () => {
  it("comes once ssh2's identification is on the socket", async () => {
    const server = await silentServer();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-first-write-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const configFile = path.join(dir, 'config');
    fs.writeFileSync(configFile, `Host silent\n  HostName 127.0.0.1\n  Port ${server.port}\n  User nobody\n  UserKnownHostsFile ${path.join(dir, 'known_hosts')}\n  GlobalKnownHostsFile none\n`);
    const sockets: net.Socket[] = [];
    const connect = net.Socket.prototype.connect;
    vi.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (this: net.Socket, ...args: unknown[]) {
      sockets.push(this);
      return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
    });
    let writtenAtSignal: number | null = null;
    const dial = dialChain('silent', { configFile, agent: null, connectTimeoutMs: 3000, onDial: () => (writtenAtSignal = sockets[0]?.bytesWritten ?? 0) });
    dial.catch(() => undefined);
    await vi.waitFor(() => expect(writtenAtSignal).not.toBeNull());
    expect(writtenAtSignal).toBeGreaterThanOrEqual('SSH-2.0-\r\n'.length);
    await vi.waitFor(() => expect(server.received()).toMatch(/^SSH-2\.0-\S+\r\n/));
    // The server never answers: the dial ends at its deadline.
    await expect(dial).rejects.toMatchObject({ code: 'connect_timeout' });
  }, 20_000);
});
