// The look at a unit's destinations: the folders inspected by one program, and only files in
// folders that exist stat'ed (a session's first arrival asks nothing more).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalHost } from '../../src/host/local.js';
import { lookAtDestinations } from '../../src/transcript/destinations.js';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});

/** A LocalHost that keeps the paths it was asked to stat. */
class StatCounting extends LocalHost {
  statted: string[] = [];
  override async stat(p: string) {
    this.statted.push(p);
    return super.stat(p);
  }
}

function store(): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-dests-')));
  temps.push(d);
  return d;
}

describe('lookAtDestinations', () => {
  it('stats no file when the folders it would go in do not exist', async () => {
    const root = store();
    const host = new StatCounting();
    const dests = ['a.jsonl', 'a.jsonl.lock', 'usage.json'].map((n) => path.join(root, 'sessions', '%2Fhome%2Fme', 'id', n));
    const look = await lookAtDestinations(host, root, dests);
    expect(host.statted).toEqual([]);
    expect(look.stats).toEqual([null, null, null]);
    expect(look.states.map((s) => s.missing.length)).toEqual([0, 3]);
  });

  it('stats the files of folders that exist, and tells the present from the absent', async () => {
    const root = store();
    const here = path.join(root, 'sessions', 'id');
    fs.mkdirSync(here, { recursive: true });
    fs.writeFileSync(path.join(here, 's.jsonl'), 'x\n', { mode: 0o600 });
    const host = new StatCounting();
    const dests = [path.join(here, 's.jsonl'), path.join(here, 'new.json'), path.join(root, 'other', 'f')];
    const look = await lookAtDestinations(host, root, dests);
    expect(host.statted).toEqual(dests.slice(0, 2));
    expect(look.stats[0]).toMatchObject({ type: 'file', size: 2, mode: 0o600 });
    expect(look.stats.slice(1)).toEqual([null, null]);
  });
});
