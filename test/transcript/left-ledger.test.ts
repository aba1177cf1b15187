// The ledger's two sh programs, run directly under each POSIX shell here, with hostile paths: the
// data stays data (no canary file appears), entries round-trip, and the reader's answer parses.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalHost } from '../../src/host/local.js';
import { isAsLeft, ledgerName, parseLeft, READ_LEFT_PROGRAM, readLeft, RECORD_LEFT_PROGRAM, recordLeft, type LeftFile } from '../../src/transcript/left-ledger.js';
import { canaryFolder, hostileArgs } from '../host/hostile-args.js';
import { POSIX_SHELLS, runUnder } from '../helpers/posix-shells.js';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});
function tempDir(): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-ledger-')));
  temps.push(d);
  return d;
}

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');


describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('the ledger programs under %s', (_name, shell) => {
  it('record and read hostile paths as data', () => {
    const dir = tempDir();
    const canaries = canaryFolder(dir);
    const store = path.join(dir, 'store');
    fs.mkdirSync(store);
    // Names usable as file names (no NUL, no slash) become session files with those names.
    const names = hostileArgs(canaries).filter((n) => n !== '' && !n.includes('/') && !n.includes('\0') && n !== '.' && n !== '..' && Buffer.byteLength(n) < 200);
    const files = names.map((n) => path.join(store, n));
    const entries: LeftFile[] = files.map((f, i) => {
      fs.writeFileSync(f, `content ${i}\n`);
      return { path: f, sha256: sha(`content ${i}\n`), size: `content ${i}\n`.length, mtimeMs: 1, handoff: 'h', to: '$(touch x)', at: 'now' };
    });
    const ledger = path.join(dir, 'led ger', '$(x)');
    runUnder(shell, RECORD_LEFT_PROGRAM, [ledger, ...entries.flatMap((e) => [ledgerName(e.path), JSON.stringify(e)])]);
    expect(fs.statSync(ledger).mode & 0o777).toBe(0o700);
    for (const e of entries) expect(fs.statSync(path.join(ledger, ledgerName(e.path))).mode & 0o777).toBe(0o600);
    // one file missing, one changed, one not recorded at all
    fs.rmSync(files[0]!);
    fs.appendFileSync(files[1]!, 'more');
    const unrecorded = path.join(store, 'never left');
    fs.writeFileSync(unrecorded, 'x');
    const asked = [...files, unrecorded];
    const states = parseLeft(runUnder(shell, READ_LEFT_PROGRAM, [ledger, ...asked.flatMap((f) => [f, ledgerName(f)])]), asked);
    expect(states[0]).toEqual({ left: entries[0], sha256Now: null });
    expect(states[1]!.left).toEqual(entries[1]);
    expect(states[1]!.sha256Now).toBe(sha(fs.readFileSync(files[1]!)));
    expect(isAsLeft(states[1]!, fs.statSync(files[1]!).size)).toBe(false);
    for (const [i, st] of states.slice(2, -1).entries()) expect(isAsLeft(st, entries[i + 2]!.size)).toBe(true);
    expect(states.at(-1)).toEqual({ left: null, sha256Now: null });
    expect(fs.readdirSync(canaries)).toEqual([]);
  });
});

describe('readLeft and recordLeft on a Host', () => {
  it('round-trip, and a ledger entry without its trailing newline reads the same', async () => {
    const dir = tempDir();
    const host = new LocalHost();
    const f = path.join(dir, 's.jsonl');
    fs.writeFileSync(f, 'abc');
    const entry: LeftFile = { path: f, sha256: sha('abc'), size: 3, mtimeMs: 5, handoff: 'h2', to: 'vega', at: '2026-12-01T00:00:00Z' };
    const ledger = path.join(dir, 'left');
    await recordLeft(host, ledger, [entry]);
    expect(await readLeft(host, ledger, [f])).toEqual([{ left: entry, sha256Now: sha('abc') }]);
    fs.writeFileSync(path.join(ledger, ledgerName(f)), JSON.stringify(entry));
    expect(await readLeft(host, ledger, [f, path.join(dir, 'missing')])).toEqual([
      { left: entry, sha256Now: sha('abc') },
      { left: null, sha256Now: null },
    ]);
  });

  it('parseLeft takes a short or garbled answer as no entry', () => {
    expect(parseLeft('', ['/a', '/b'])).toEqual([
      { left: null, sha256Now: null },
      { left: null, sha256Now: null },
    ]);
    expect(parseLeft('{"path":"/a"}\nnothex\n', ['/a'])).toEqual([{ left: null, sha256Now: null }]);
  });
});
