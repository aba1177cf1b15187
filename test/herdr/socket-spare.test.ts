// The socket's spare connection (src/herdr/socket-transport.ts) against a throwaway real herdr
// 0.8.2: where a connection costs a round trip, a request that changes something goes on the
// spare when it was opened moments ago, and on a new connection when it is older; and the fact
// that bound rests on — herdr closes a connection idle for 5 s, not sooner — checked on the server.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HerdrClient } from '../../src/herdr/client.js';
import { SPARE_FRESH_MS } from '../../src/herdr/socket-transport.js';
import { LinkedHost } from '../helpers/linked-host.js';
import { startThrowaway, type Throwaway } from './throwaway.js';

let h: Throwaway;

beforeAll(async () => {
  h = await startThrowaway('real');
});

afterAll(async () => {
  await h?.stop();
});

describe('the spare connection to herdr\'s socket', () => {
  it('takes a change (workspace create) when opened moments ago, and a new connection when older', { timeout: 15_000 }, async () => {
    const host = new LinkedHost({ env: { ...h.env } });
    const client = new HerdrClient(host);
    expect(await client.ping()).toBe(true);
    // The ping found the socket and opened a spare: a workspace made now goes on it.
    await new Promise((r) => setTimeout(r, 50));
    const before = host.connections;
    const first = await client.workspaceCreate({ cwd: h.dir, label: 'spare-fresh', focus: false });
    expect(host.connections - before).toBe(1); // the next spare only
    // A spare older than the bound is not written to: a new connection, and the next spare.
    await new Promise((r) => setTimeout(r, SPARE_FRESH_MS + 100));
    const again = host.connections;
    const second = await client.workspaceCreate({ cwd: h.dir, label: 'spare-stale', focus: false });
    expect(host.connections - again).toBe(2);
    expect(second.workspace.workspace_id).not.toBe(first.workspace.workspace_id);
    const panes = (await client.paneList()).map((p) => p.workspace_id);
    expect(panes).toEqual(expect.arrayContaining([first.workspace.workspace_id, second.workspace.workspace_id]));
  });

  it('has a spare ready for each of the requests it was told go side by side', { timeout: 15_000 }, async () => {
    const host = new LinkedHost({ env: { ...h.env } });
    const client = new HerdrClient(host);
    expect(await client.ping()).toBe(true);
    const { paneId } = await client.workspaceCreate({ cwd: h.dir, label: 'spare-two', focus: false });
    client['socket'].prepareSpares(2);
    await new Promise((r) => setTimeout(r, 50));
    // Each of the two takes a spare opened ahead; only the next spare is opened (without the
    // second one, the second request would wait for a connection of its own).
    const before = host.connections;
    const [listed, screen] = await Promise.all([client.agentList(), client.read(paneId, { source: 'visible' })]);
    expect(Array.isArray(listed)).toBe(true);
    expect(typeof screen).toBe('string');
    expect(host.connections - before).toBe(1);
  });

  it(`herdr keeps an idle connection open well past ${SPARE_FRESH_MS} ms and closes it at 5 s`, async () => {
    const c = net.connect(h.socket);
    await new Promise<void>((resolve, reject) => c.once('connect', resolve).once('error', reject));
    let closedAt = 0;
    const opened = Date.now();
    c.on('close', () => (closedAt = Date.now()));
    c.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, SPARE_FRESH_MS + 1_500));
    expect(closedAt).toBe(0);
    await new Promise((r) => setTimeout(r, 6_500 - SPARE_FRESH_MS - 1_500));
    expect(closedAt).toBeGreaterThan(0);
    expect(closedAt - opened).toBeGreaterThanOrEqual(SPARE_FRESH_MS + 1_500);
    c.destroy();
  }, 15_000);
});
