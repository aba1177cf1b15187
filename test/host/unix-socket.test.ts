// The first bytes of a local socket connection, written the moment it is made (src/host/unix-socket.ts):
// the node internal it rests on, that they wait for a server's first look (the real herdr 0.8.2
// reads a new connection once at accept and, finding nothing, sleeps 100 ms), and that herdr
// takes a request so sent.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestOnNewConnection } from '../../src/herdr/socket-request.js';
import { LocalHost } from '../../src/host/local.js';
import { connectUnixSocket, writeAtConnect } from '../../src/host/unix-socket.js';
import { startThrowaway, type Throwaway } from '../herdr/throwaway.js';

describe('writing at connect', () => {
  let dir: string;
  let server: net.Server;
  const received: string[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-unix-'));
    server = net.createServer((c) => {
      let text = '';
      c.on('data', (d) => (text += d.toString('utf8')));
      c.on('end', () => {
        received.push(text);
        c.end();
      });
    });
    await new Promise<void>((r) => server.listen(path.join(dir, 's.sock'), r));
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("finds node's descriptor of a socket still connecting and writes on it (fails if node stops exposing it)", async () => {
    const sock = net.connect(path.join(dir, 's.sock'));
    expect(sock.connecting).toBe(true);
    expect(writeAtConnect(sock, Buffer.from('at once\n'))).toBe(8);
    await new Promise((r) => sock.once('connect', r));
    sock.end('then the rest\n');
    await new Promise((r) => sock.once('close', r));
    expect(received).toContain('at once\nthen the rest\n');
  });

  it("has the first bytes waiting when the server first looks, as herdr does the moment it accepts", async () => {
    // A server that does not read by itself: its first look is one non-blocking read at accept,
    // on a later turn of this process's loop than the connect (the order herdr's thread races).
    const looked = new Promise<string>((resolve) => {
      const peer = net.createServer({ pauseOnConnect: true }, (c) => {
        const fd = (c as unknown as { _handle: { fd: number } })._handle.fd;
        const buf = Buffer.alloc(256);
        let seen: string;
        try {
          seen = buf.subarray(0, fs.readSync(fd, buf)).toString('utf8');
        } catch (err) {
          seen = `nothing yet (${(err as NodeJS.ErrnoException).code})`;
        }
        c.destroy();
        peer.close();
        resolve(seen);
      });
      peer.listen(path.join(dir, 'peer.sock'), () => {
        void connectUnixSocket(path.join(dir, 'peer.sock'), '{"id":"x","method":"ping"}\n').then((sock) => sock.on('error', () => undefined));
      });
    });
    expect(await looked).toBe('{"id":"x","method":"ping"}\n');
  });

  it('writes nothing on a socket that could not connect, and the connection fails as before', async () => {
    await expect(connectUnixSocket(path.join(dir, 'missing.sock'), 'lost\n')).rejects.toThrow(/ENOENT/);
  });
});

describe('a request to the real herdr sent with its connection', () => {
  let h: Throwaway;
  beforeAll(async () => {
    h = await startThrowaway('real');
  });
  afterAll(async () => {
    await h?.stop();
  });

  // How soon it answers is the bench's to say: on a busy machine this process can lose the core
  // between the connect and the write, and herdr's thread looks first.
  it('is answered, request after request', { timeout: 20_000 }, async () => {
    const host = new LocalHost({ env: { ...h.env } });
    for (let i = 0; i < 20; i++) {
      const request = JSON.stringify({ id: `t${i}`, method: 'ping', params: {} });
      const line = await requestOnNewConnection(host, h.socket, request, 5_000);
      expect(JSON.parse(line)).toMatchObject({ id: `t${i}`, result: { type: 'pong' } });
    }
  });
});
