// The first bytes of a local socket connection, written the moment it is made (src/host/unix-socket.ts):
// the node internal it rests on, and what it buys against the real herdr 0.8.2, which reads a new
// connection once at accept and, finding nothing, sleeps 100 ms before it reads again.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWithRequest, socketRequest } from '../../src/herdr/socket-request.js';
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

  it('is answered at once, not after herdr’s 100 ms sleep', { timeout: 20_000 }, async () => {
    const host = new LocalHost({ env: { ...h.env } });
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const request = JSON.stringify({ id: `t${i}`, method: 'ping', params: {} });
      const started = performance.now();
      const line = await socketRequest(connectWithRequest(host, h.socket, request), request, 5_000, { sent: true });
      times.push(performance.now() - started);
      expect(JSON.parse(line)).toMatchObject({ id: `t${i}`, result: { type: 'pong' } });
    }
    // herdr sleeps 100 ms after an empty first read; a request written once connected lost that
    // race in about half the runs here, one written at connect in one or two of a hundred.
    const quick = times.filter((t) => t < 80).length;
    expect(quick, times.map((t) => t.toFixed(1)).join(' ')).toBeGreaterThanOrEqual(14);
  });
});
