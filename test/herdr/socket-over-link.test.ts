// herdr where a socket connection costs a round trip (src/herdr/socket-transport.ts, client.ts),
// against a throwaway real herdr 0.8.2: reads, changes and the agent's start go to herdr's CLI on
// the host, the start in the program that watches the agent; and the fact that rests on, checked
// on the server: herdr reads a new connection once at accept and then sleeps 100 ms.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HerdrClient } from '../../src/herdr/client.js';
import { WATCH_START_PROGRAM } from '../../src/herdr/start-watch.js';
import type { RunOptions, RunResult } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { startThrowaway, type Throwaway } from './throwaway.js';

/** A LocalHost taken for one across a link (sockets cost a round trip), counting its connections and programs. */
class LinkedHost extends LocalHost {
  override readonly socketsCostARoundTrip = true;
  connections = 0;
  readonly ran: string[][] = [];
  override connectSocket(p: string, opts?: { first?: string }): Promise<Duplex> {
    this.connections++;
    return super.connectSocket(p, opts);
  }
  override run(argv: readonly string[], opts?: RunOptions): Promise<RunResult> {
    this.ran.push([...argv]);
    return super.run(argv, opts);
  }
}

const FAKE_PI = `#!/usr/bin/env node
process.stdout.write('fake pi\\n> ');
process.stdin.resume();
`;

let h: Throwaway;

beforeAll(async () => {
  h = await startThrowaway('real');
  fs.writeFileSync(path.join(h.binDir, 'pi'), FAKE_PI, { mode: 0o755 });
  fs.symlinkSync(h.bin, path.join(h.binDir, 'herdr'));
});

afterAll(async () => {
  await h?.stop();
});

describe("herdr's socket across a link", () => {
  it('sends reads, changes and the start to the CLI on the host, the start with the watch of the agent', { timeout: 30_000 }, async () => {
    const host = new LinkedHost({ env: { ...h.env } });
    const client = new HerdrClient(host);
    expect((await client.probe()).server).toBe('running');
    const { paneId } = await client.workspaceCreate({ cwd: h.dir, label: 'linked', focus: false });
    expect(await client.agentList()).toEqual([]);
    await client.sendText(paneId, '');
    const clis = () => host.ran.map((argv) => argv.filter((a) => !a.startsWith('/')).slice(0, 2).join(' '));
    expect(clis()).toEqual(expect.arrayContaining(['workspace create', 'agent list', 'pane send-text']));
    const started = await client.agentStart('linked-pi', 'pi', paneId, ['--x', 'a b'], 20_000);
    expect(started).toMatchObject({ agent: { name: 'linked-pi', agent: 'pi', pane_id: paneId }, argv: ['pi', '--x', 'a b'] });
    // One program started the agent and watched it; no socket connection was opened.
    const watches = host.ran.filter((argv) => argv.includes(WATCH_START_PROGRAM));
    expect(watches).toHaveLength(1);
    expect(watches[0]!.slice(-4)).toEqual(['pi', '20000', '--x', 'a b']);
    expect(host.connections).toBe(0);
  });
});

describe('herdr 0.8.2 on a connection', () => {
  it('reads a new connection once at accept and, finding nothing, answers only about 100 ms later', async () => {
    const late: number[] = [];
    for (let i = 0; i < 3; i++) {
      const c = net.connect(h.socket);
      await new Promise<void>((resolve, reject) => c.once('connect', resolve).once('error', reject));
      // Well after herdr's first read of it.
      await new Promise((r) => setTimeout(r, 20));
      const sent = Date.now();
      c.write(`${JSON.stringify({ id: `late${i}`, method: 'ping', params: {} })}\n`);
      await new Promise((r) => c.once('data', r));
      late.push(Date.now() - sent);
      c.destroy();
    }
    // Written 20 ms in, read at herdr's next look, 100 ms after its first.
    for (const ms of late) expect(ms).toBeGreaterThanOrEqual(50);
  });
});
