// A session copy whose ssh connection drops mid-file fails promptly with the host's
// connection_lost error (never hangs waiting for a 'drain' or an end that cannot come), and
// installs nothing. The link goes through a proxy the test stalls (bytes stop: backpressure
// builds up) and then cuts (both sockets destroyed), like a network that dies under a transfer.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HandoffError } from '../../src/errors.js';
import { LocalHost } from '../../src/host/local.js';
import { copyUnit, type CopyEntry } from '../../src/transcript/copy.js';
import { buildRewritePlan } from '../../src/transcript/rewrite-plan.js';
import { useWorld } from '../helpers/world.js';
import type { World } from '../world/machines.js';
import { connectThrough, cuttableProxy, makeSshFixture, type SshFixture } from '../host/ssh-fixtures.js';

let world: World;
let fx: SshFixture;
const temps: string[] = [];

beforeAll(async () => {
  world = await useWorld();
  fx = makeSshFixture(world);
});

afterAll(() => {
  fs.rmSync(fx.dir, { recursive: true, force: true });
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});

/** Session text that gzip level 1 shrinks little (random ids), so megabytes really cross. */
function sessionText(bytes: number): Buffer {
  const lines: string[] = [];
  let n = 0;
  for (let size = 0; size < bytes; ) {
    const line = `{"type":"message","n":${n++},"cwd":"/src/repo","id":"${randomBytes(96).toString('base64')}"}\n`;
    lines.push(line);
    size += line.length;
  }
  return Buffer.from(lines.join(''));
}

const plan = buildRewritePlan({ renames: [], repo: { source: ['/src/repo'], target: '/dst/wt' }, home: { source: ['/src/home'], target: '/dst/home' } });

/**
 * Run `copy`, stall the link once `stallAt` source bytes were read, wait until the bytes stop
 * (the writer is held by backpressure), then cut it. Resolves with the copy's error and how long
 * it took to come after the cut; rejects when the copy hangs.
 */
async function cutMidCopy(copy: (onBytes: (n: number) => void) => Promise<unknown>, proxy: { stall: () => void; cut: () => void }, stallAt: number): Promise<{ err: unknown; afterCutMs: number; readAtCut: number }> {
  let read = 0;
  let stalled = false;
  let settled = false;
  const outcome = copy((n) => {
    read += n;
    if (!stalled && read >= stallAt) {
      stalled = true;
      proxy.stall();
    }
  }).then(
    () => new Error('the copy succeeded through a cut connection'),
    (e: unknown) => e,
  );
  outcome.finally(() => (settled = true)).catch(() => undefined);
  // Stalled, and no source byte read for 300 ms: the transfer is held up; cut.
  await new Promise<void>((resolve, reject) => {
    let last = -1;
    const t = setInterval(() => {
      if (settled) {
        clearInterval(t);
        reject(new Error('the copy ended before the link was cut'));
      } else if (stalled && read === last) {
        clearInterval(t);
        resolve();
      }
      last = read;
    }, 300);
  });
  const readAtCut = read;
  const cutAt = Date.now();
  proxy.cut();
  const hung = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the copy still hangs 10 s after the cut (${read} source bytes read)`)), 10_000).unref());
  const err = await Promise.race([outcome, hung]);
  return { err, afterCutMs: Date.now() - cutAt, readAtCut };
}

function expectLost(err: unknown): void {
  expect(err, String(err)).toBeInstanceOf(HandoffError);
  expect((err as HandoffError).code).toBe('connection_lost');
  expect((err as HandoffError).message).toMatch(/Lost the ssh connection to ah-cut/);
}

const FILE_BYTES = 12 << 20;

describe('a connection that drops in the middle of a session file', () => {
  for (const [kind, opts] of [
    ['gzipped', {}],
    ['plain', { streamCompressor: 'ah-no-such-gzip' }],
  ] as const) {
    it(`writing to the target (${kind}): fails promptly with connection_lost, installs nothing`, async () => {
      const src = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-drop-src-')));
      temps.push(src);
      const file = path.join(src, 'session.jsonl');
      fs.writeFileSync(file, sessionText(FILE_BYTES), { mode: 0o600 });
      const entry: CopyEntry = { source: file, dest: 'projects/-dst-wt/s.jsonl', verbatim: false, mode: 0o600, mtimeMs: Date.now() };
      const root = path.join(world.users.vega!.home, `.ah-drop-${kind}-${process.pid}`);
      temps.push(root);
      const proxy = await cuttableProxy(world);
      const target = await connectThrough(world, fx, proxy, opts);
      try {
        const { err, afterCutMs, readAtCut } = await cutMidCopy((onBytes) => copyUnit({ source: new LocalHost(), target, entries: [entry], targetRoot: root, plan, onBytes, tag: 'drop' }), proxy, 3 << 20);
        expectLost(err);
        expect(afterCutMs).toBeLessThan(3000);
        // Cut in the middle: the source was not read to its end.
        expect(readAtCut).toBeLessThan(FILE_BYTES);
        // Nothing installed; the partial temp file beside it stays (removing it needed the
        // connection): a hidden name of this run's tag, never the session's own.
        const dir = path.join(root, 'projects/-dst-wt');
        expect(fs.readdirSync(dir)).toEqual(['.s.jsonl.ah-drop.tmp']);
        expect(fs.statSync(path.join(dir, '.s.jsonl.ah-drop.tmp')).size).toBeLessThan(FILE_BYTES);
      } finally {
        await target.close();
        await proxy.close();
      }
    });

    it(`reading from the source (${kind}): fails promptly with connection_lost, installs nothing`, async () => {
      const vega = world.users.vega!;
      const srcDir = path.join(vega.home, `.ah-drop-src-${kind}-${process.pid}`);
      temps.push(srcDir);
      fs.mkdirSync(srcDir, { mode: 0o700 });
      const file = path.join(srcDir, 'session.jsonl');
      fs.writeFileSync(file, sessionText(FILE_BYTES), { mode: 0o600 });
      for (const p of [srcDir, file]) fs.chownSync(p, vega.uid, vega.gid);
      const entry: CopyEntry = { source: file, dest: 'projects/-dst-wt/s.jsonl', verbatim: false, mode: 0o600, mtimeMs: Date.now() };
      const root = path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-drop-dst-'))), 'store');
      temps.push(path.dirname(root));
      const proxy = await cuttableProxy(world);
      const source = await connectThrough(world, fx, proxy, opts);
      try {
        const { err, afterCutMs, readAtCut } = await cutMidCopy((onBytes) => copyUnit({ source, target: new LocalHost(), entries: [entry], targetRoot: root, plan, onBytes, tag: 'drop' }), proxy, 3 << 20);
        expectLost(err);
        expect(afterCutMs).toBeLessThan(3000);
        expect(readAtCut).toBeLessThan(FILE_BYTES);
        // The local target removed its temp file: nothing at all is left in the folder.
        expect(fs.readdirSync(path.join(root, 'projects/-dst-wt'))).toEqual([]);
      } finally {
        await source.close();
        await proxy.close();
      }
    });
  }
});
