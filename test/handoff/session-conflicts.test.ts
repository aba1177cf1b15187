// The plan's look at the target's ledger (refuseChangedSessionFiles) refuses a session file that
// changed since it was left there, before the quit; what it read serves the copy, which then does
// not hash the same files again.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { UnitEntry } from '../../adapters/adapter.js';
import { HandoffError } from '../../src/errors.js';
import { hostStateDir } from '../../src/handoff/marker.js';
import { refuseChangedSessionFiles } from '../../src/handoff/session-conflicts.js';
import type { RunOptions } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { copyUnit, discardBackups } from '../../src/transcript/copy.js';
import { HASH_FN, ledgerDir, READ_LEFT_PROGRAM, recordLeft } from '../../src/transcript/left-ledger.js';
import { buildRewritePlan } from '../../src/transcript/rewrite-plan.js';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});

function tempDir(): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-conflicts-')));
  temps.push(d);
  return d;
}

/** A LocalHost that keeps the argv of every program it runs. */
class RecordingHost extends LocalHost {
  runs: string[][] = [];
  override async run(argv: readonly string[], opts?: RunOptions) {
    this.runs.push([...argv]);
    return super.run(argv, opts);
  }
  /** Programs that read the ledger and hashed `file` (READ_LEFT_PROGRAM). */
  ledgerReadsOf(file: string): number {
    return this.runs.filter((a) => a[2] === READ_LEFT_PROGRAM && a.includes(file)).length;
  }
  /** Programs given `file` that hash something (HASH_FN: the ledger's, a prefix's, a description's). */
  hashesOf(file: string): number {
    return this.runs.filter((a) => a[2]?.includes(HASH_FN) && a.includes(file)).length;
  }
}

const MTIME = Date.UTC(2026, 11, 1, 10, 0, 0);
const back = buildRewritePlan({ repo: { source: ['/dst/wt'], target: '/src/repo' } });

/** laptop left `sessions/s.jsonl` for vega (its ledger says so); vega's copy comes back rewritten in place. */
function leftOnLaptop() {
  const home = tempDir();
  const info = { home, user: 'laptop', hostname: 'laptop', platform: process.platform, shell: '/bin/sh', tmpdir: os.tmpdir(), loginEnv: {} };
  const laptop = new RecordingHost({ env: { ...process.env, HOME: home } });
  const root = path.join(home, 'agent');
  const file = path.join(root, 'sessions/s.jsonl');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const left = '{"type":"title","title":"first","pad":"     "}\n{"cwd":"/src/repo"}\n';
  fs.writeFileSync(file, left, { mode: 0o600 });
  const vega = tempDir();
  const coming = path.join(vega, 's.jsonl');
  fs.writeFileSync(coming, '{"type":"title","title":"later","pad":"     "}\n{"cwd":"/dst/wt"}\n{"turn":"on vega"}\n', { mode: 0o600 });
  const entry: UnitEntry = { source: coming, dest: 'sessions/s.jsonl', verbatim: false, padFirstLine: true, size: fs.statSync(coming).size, mode: 0o600, mtimeMs: MTIME };
  const record = () =>
    recordLeft(laptop, ledgerDir(hostStateDir(info)), [{ path: file, sha256: createHash('sha256').update(fs.readFileSync(file)).digest('hex'), size: fs.statSync(file).size, mtimeMs: MTIME - 1000, handoff: 'h1', to: 'vega', at: '2026-12-01T09:00:00Z' }]);
  return { laptop, side: { host: laptop, info }, root, file, entry, record, source: new LocalHost({ env: { ...process.env, HOME: vega } }) };
}

describe('refuseChangedSessionFiles', () => {
  it('refuses a file that changed since it was left, before anything is written', async () => {
    const t = leftOnLaptop();
    await t.record();
    fs.appendFileSync(t.file, '{"turn":"on laptop too"}\n');
    const err = await refuseChangedSessionFiles(t.side, t.root, [t.entry]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HandoffError);
    expect((err as HandoffError).code).toBe('session_conflict');
    expect((err as HandoffError).message).toContain(t.file);
    expect(t.laptop.ledgerReadsOf(t.file)).toBe(1);
  });

  it("hands what it read to the copy: a file as it was left is hashed once, and replaced with a backup as before", async () => {
    const t = leftOnLaptop();
    await t.record();
    const before = fs.readFileSync(t.file);
    const look = await refuseChangedSessionFiles(t.side, t.root, [t.entry]);
    expect(look.states.get(t.file)).toMatchObject({ left: { path: t.file, handoff: 'h1' }, sha256Now: createHash('sha256').update(before).digest('hex') });
    const rec = await copyUnit({ source: t.source, target: t.laptop, entries: [t.entry], targetRoot: t.root, plan: back, ledgerDir: look.dir, left: look, tag: 'c1' });
    expect(rec.files[0]).toMatchObject({ action: 'replaced', backup: `${t.file}.ah-backup-c1`, previous: { size: before.length } });
    expect(fs.readFileSync(`${t.file}.ah-backup-c1`)).toEqual(before);
    expect(fs.readFileSync(t.file, 'utf8')).toContain('{"cwd":"/src/repo"}\n{"turn":"on vega"}\n');
    expect(t.laptop.ledgerReadsOf(t.file)).toBe(1);
    // Nor is its hash asked again to see whether the session continues it.
    expect(t.laptop.hashesOf(t.file)).toBe(1);
    expect(await discardBackups(t.laptop, rec)).toEqual([]);
  });

  it('the copy reads the ledger itself for what the look does not cover (another ledger, another file)', async () => {
    const t = leftOnLaptop();
    await t.record();
    const look = await refuseChangedSessionFiles(t.side, t.root, [t.entry]);
    const elsewhere = { dir: path.join(t.root, 'another-ledger'), states: look.states };
    await copyUnit({ source: t.source, target: t.laptop, entries: [t.entry], targetRoot: t.root, plan: back, ledgerDir: look.dir, left: elsewhere, tag: 'c2' });
    expect(t.laptop.ledgerReadsOf(t.file)).toBe(2);
    fs.renameSync(`${t.file}.ah-backup-c2`, t.file);
    await copyUnit({ source: t.source, target: t.laptop, entries: [t.entry], targetRoot: t.root, plan: back, ledgerDir: look.dir, left: { dir: look.dir, states: new Map() }, tag: 'c3' });
    expect(t.laptop.ledgerReadsOf(t.file)).toBe(3);
  });
});
