// The arrival ledger's sh programs under each POSIX shell here: verdicts for append / head /
// none, hostile paths as data, and entries whose numbers are not numbers never reach arithmetic.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalHost } from '../../src/host/local.js';
import { ARRIVAL_VERDICT_PROGRAM, ContentHasher, DESCRIBE_PROGRAM, describeFile, parseVerdicts, recordArrivals, type Arrival } from '../../src/transcript/arrivals.js';
import { ledgerName, RECORD_LEFT_PROGRAM } from '../../src/transcript/left-ledger.js';
import { canaryFolder, hostileArgs } from '../host/hostile-args.js';
import { POSIX_SHELLS, runUnder } from '../helpers/posix-shells.js';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});
function tempDir(): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-arrivals-')));
  temps.push(d);
  return d;
}
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

function facts(text: string) {
  const h = new ContentHasher();
  // in odd chunks, so a first line split across chunks is found
  for (let i = 0; i < text.length; i += 7) h.update(Buffer.from(text.slice(i, i + 7)));
  return h.digest();
}

describe('ContentHasher', () => {
  it.each([
    ['lines', '{"a":1}\n{"b":2}\n'],
    ['no newline at all', 'abc'],
    ['no newline at the end', 'a\nb'],
    ['empty', ''],
    ['a first line longer than a chunk', `${'x'.repeat(30)}\ny\n`],
  ])('%s', (_what, text) => {
    const nl = text.indexOf('\n');
    const head = nl === -1 ? text.length : nl + 1;
    expect(facts(text)).toEqual({ size: text.length, sha256: sha(text), headLength: head, restSha256: sha(text.slice(head)), endsWithNewline: text.endsWith('\n') });
  });
});

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('the arrival programs under %s', (_name, shell) => {
  it('tell append, head and none, with hostile paths as data', () => {
    const dir = tempDir();
    const canaries = canaryFolder(dir);
    const store = path.join(dir, 'store');
    fs.mkdirSync(store);
    const names = hostileArgs(canaries).filter((n) => n !== '' && !n.includes('/') && !n.includes('\0') && n !== '.' && n !== '..' && Buffer.byteLength(n) < 200);
    const ledger = path.join(dir, 'arrived $(x)');
    const arrived = 'title   \nline one\nline two\n';
    const files = names.map((n) => path.join(store, n));
    const entries: Arrival[] = files.map((f) => ({ path: f, ...facts(arrived), handoff: 'h' }));
    for (const f of files) fs.writeFileSync(f, arrived);
    // Entries as written now (one line, the path as JSON after the numbers) and as written before (the JSON on line 2).
    const entryText = (a: Arrival, i: number) =>
      `${a.size} ${a.headLength} ${a.sha256} ${a.restSha256} 1${i % 2 ? ` ${JSON.stringify({ path: a.path, handoff: a.handoff })}` : `\n${JSON.stringify(a)}`}`;
    runUnder(shell, RECORD_LEFT_PROGRAM, [ledger, ...entries.flatMap((a, i) => [ledgerName(a.path), entryText(a, i)])]);
    // what each file becomes: appended, first line rewritten (+tail), cut, untouched
    fs.appendFileSync(files[0]!, 'tail\n');
    fs.writeFileSync(files[1]!, 'TITLE   \nline one\nline two\nmore\n');
    fs.writeFileSync(files[2]!, 'title   \nline one\n');
    const args = [ledger, ...files.flatMap((f) => [f, ledgerName(f)])];
    const v = parseVerdicts(runUnder(shell, ARRIVAL_VERDICT_PROGRAM, args), files.length);
    expect(v[0]).toEqual({ kind: 'append', sizeNow: arrived.length + 5, sha256Now: sha(fs.readFileSync(files[0]!)), arrived: { size: arrived.length, headLength: 9, endsWithNewline: true } });
    expect(v[1]).toMatchObject({ kind: 'head', sizeNow: arrived.length + 5 });
    expect(v[2]).toEqual({ kind: 'none' });
    for (const x of v.slice(3)) expect(x).toMatchObject({ kind: 'append', sizeNow: arrived.length });
    // describe: the same facts the hasher computes, on the host
    for (const f of files.slice(0, 3)) {
      const [n, hl, s, rs, nl] = runUnder(shell, DESCRIBE_PROGRAM, [f]).trim().split(' ');
      const want = facts(fs.readFileSync(f, 'utf8'));
      expect({ size: Number(n), headLength: Number(hl), sha256: s, restSha256: rs, endsWithNewline: nl === '1' }).toEqual(want);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('an entry whose numbers are not digits is no entry, and runs nothing', () => {
    const dir = tempDir();
    const canary = path.join(dir, 'canary');
    const f = path.join(dir, 's.jsonl');
    fs.writeFileSync(f, 'a\nb\n');
    const ledger = path.join(dir, 'arrived');
    fs.mkdirSync(ledger);
    const bad = [`a[$(touch ${canary})] 1 x y 1`, `4 b[$(touch ${canary})] x y 1`, '4 2 x y $(id)', '-1 2 x y 1', ' 2 x y 1', '4  x y 1'];
    for (const line of bad) {
      fs.writeFileSync(path.join(ledger, ledgerName(f)), `${line}\n{}\n`);
      expect(parseVerdicts(runUnder(shell, ARRIVAL_VERDICT_PROGRAM, [ledger, f, ledgerName(f)]), 1)).toEqual([{ kind: 'none' }]);
    }
    expect(fs.existsSync(canary)).toBe(false);
  });
});

describe('on a Host', () => {
  it('recordArrivals then describeFile agree with what was recorded', async () => {
    const dir = tempDir();
    const host = new LocalHost();
    const f = path.join(dir, 'x.jsonl');
    fs.writeFileSync(f, 'one\ntwo\n');
    const a: Arrival = { path: f, ...facts('one\ntwo\n'), handoff: 'h' };
    await recordArrivals(host, path.join(dir, 'arrived'), [a]);
    const entry = fs.readFileSync(path.join(dir, 'arrived', ledgerName(f)), 'utf8');
    expect(entry).toBe(`${a.size} ${a.headLength} ${a.sha256} ${a.restSha256} 1 ${JSON.stringify({ path: f, handoff: 'h' })}\n`);
    expect(fs.statSync(path.join(dir, 'arrived', ledgerName(f))).mode & 0o777).toBe(0o600);
    const { handoff: _h, path: _p, ...rest } = a;
    expect(await describeFile(host, f)).toEqual(rest);
  });
});
