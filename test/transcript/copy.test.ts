import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HandoffError } from '../../src/errors.js';
import { LocalHost } from '../../src/host/local.js';
import type { RunOptions } from '../../src/host/host.js';
import { copyUnit, discardBackups, undoCopy, verifyCopy, type CopyEntry } from '../../src/transcript/copy.js';
import { destinationUnder } from '../../src/transcript/destinations.js';
import { BUNDLE_FILE_MAX } from '../../src/transcript/file-bundle.js';
import { remotePrefixHash } from '../../src/transcript/target-files.js';
import { buildRewritePlan } from '../../src/transcript/rewrite-plan.js';
import { rewriteBuffer } from '../../src/transcript/rewrite.js';
import { HASH_FN, lookLeft, recordLeft } from '../../src/transcript/left-ledger.js';
import { ARRIVAL_VERDICT_PROGRAM, recordArrivals, worthAnArrival } from '../../src/transcript/arrivals.js';
import { createHash } from 'node:crypto';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-copy-'));
  temps.push(d);
  return fs.realpathSync(d);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const MTIME = Date.UTC(2026, 10, 30, 16, 1, 13);

interface World {
  src: string;
  dst: string;
  source: LocalHost;
  target: LocalHost;
}

/** A LocalHost that counts the bytes written through writeStream and writeFile (what would cross the wire). */
class CountingHost extends LocalHost {
  written = 0;
  /** Programs that were given bytes on stdin (a small file is written and installed by one). */
  fedPrograms = 0;
  override async run(argv: readonly string[], opts?: RunOptions) {
    if (Buffer.isBuffer(opts?.stdin)) {
      this.written += opts.stdin.length;
      this.fedPrograms++;
    }
    return super.run(argv, opts);
  }
  override async writeFile(p: string, data: string | Buffer, opts?: { mode?: number }) {
    this.written += Buffer.byteLength(data);
    return super.writeFile(p, data, opts);
  }
  override async writeStream(p: string, opts?: { mode?: number }) {
    const w = await super.writeStream(p, opts);
    const orig = w.stream.write.bind(w.stream);
    w.stream.write = ((chunk: Buffer, ...rest: never[]) => {
      this.written += chunk.length;
      return orig(chunk, ...rest);
    }) as typeof w.stream.write;
    return w;
  }
}

function world(): World {
  const src = tempDir();
  const dst = tempDir();
  return { src, dst, source: new LocalHost({ env: { ...process.env, HOME: src } }), target: new LocalHost({ env: { ...process.env, HOME: dst } }) };
}

function put(file: string, data: string | Buffer, mode = 0o600, mtimeMs = MTIME): CopyEntry {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, data, { mode });
  fs.chmodSync(file, mode);
  fs.utimesSync(file, mtimeMs / 1000, mtimeMs / 1000);
  return { source: file, dest: '', verbatim: false, size: Buffer.byteLength(data), mode, mtimeMs };
}

const plan = buildRewritePlan({
  renames: [{ from: '/src/home/.claude/projects/-src-repo', to: '/dst/home/.claude/projects/-dst-wt' }],
  repo: { source: ['/src/repo'], target: '/dst/wt' },
  home: { source: ['/src/home'], target: '/dst/home' },
});
const rewritten = (s: string) => rewriteBuffer(plan, Buffer.from(s)).output;

const LINES = ['{"cwd":"/src/repo","n":1}\n', '{"file_path":"/src/repo/a.ts","n":2}\n', '{"p":"/src/home/.claude/projects/-src-repo/s/x","n":3}\n'];

function unitIn(w: World) {
  const main = put(path.join(w.src, 'projects/-src-repo/s.jsonl'), LINES.join(''));
  const sub = put(path.join(w.src, 'projects/-src-repo/s/subagents/agent-1.jsonl'), '{"cwd":"/src/repo/sub"}\n');
  const hist = put(path.join(w.src, 'file-history/s/0ca05dce0b0853a5@v1'), 'old /src/repo content\n', 0o644, MTIME - 5000);
  return [
    { ...main, dest: 'projects/-dst-wt/s.jsonl' },
    { ...sub, dest: 'projects/-dst-wt/s/subagents/agent-1.jsonl' },
    { ...hist, dest: 'file-history/s/0ca05dce0b0853a5@v1', verbatim: true },
  ];
}

const modeOf = (p: string) => fs.statSync(p).mode & 0o777;

describe('copyUnit between two hosts', () => {
  it('creates every file rewritten (verbatim ones byte for byte) with modes, mtimes and private folders', async () => {
    const w = world();
    const entries = unitIn(w);
    const root = path.join(w.dst, 'store');
    const rec = await copyUnit({ source: w.source, target: w.target, entries, targetRoot: root, plan });
    const main = path.join(root, 'projects/-dst-wt/s.jsonl');
    expect(fs.readFileSync(main, 'utf8')).toBe('{"cwd":"/dst/wt","n":1}\n{"file_path":"/dst/wt/a.ts","n":2}\n{"p":"/dst/home/.claude/projects/-dst-wt/s/x","n":3}\n');
    expect(fs.readFileSync(path.join(root, 'projects/-dst-wt/s/subagents/agent-1.jsonl'), 'utf8')).toBe('{"cwd":"/dst/wt/sub"}\n');
    expect(fs.readFileSync(path.join(root, 'file-history/s/0ca05dce0b0853a5@v1'), 'utf8')).toBe('old /src/repo content\n');
    expect(modeOf(main)).toBe(0o600);
    expect(modeOf(path.join(root, 'file-history/s/0ca05dce0b0853a5@v1'))).toBe(0o644);
    for (const d of ['', 'projects', 'projects/-dst-wt', 'projects/-dst-wt/s/subagents', 'file-history/s']) expect(modeOf(path.join(root, d))).toBe(0o700);
    expect(fs.statSync(main).mtimeMs).toBe(MTIME);
    expect(fs.statSync(path.join(root, 'file-history/s/0ca05dce0b0853a5@v1')).mtimeMs).toBe(MTIME - 5000);
    expect(rec.files.map((f) => [path.relative(root, f.path), f.action, f.replacements])).toEqual([
      ['projects/-dst-wt/s.jsonl', 'created', 3],
      ['projects/-dst-wt/s/subagents/agent-1.jsonl', 'created', 1],
      ['file-history/s/0ca05dce0b0853a5@v1', 'created', 0],
    ]);
    for (const f of rec.files) expect(f.sha256).toBe(sha(fs.readFileSync(f.path)));
    expect(rec.createdDirs[0]).toBe(root);
    expect(await verifyCopy(w.target, rec)).toEqual({ ok: true, mismatches: [] });
    // no temp files left behind
    const all = fs.readdirSync(root, { recursive: true }).map(String);
    expect(all.filter((n) => n.includes('.ah-'))).toEqual([]);
    // the source is untouched
    expect(fs.readFileSync(entries[0]!.source, 'utf8')).toBe(LINES.join(''));
  });

  it('writes a small file in one go and streams a large one, rewritten the same either way', async () => {
    const w = world();
    const root = path.join(w.dst, 'store');
    const big = Array.from({ length: 45_000 }, (_, i) => `{"cwd":"/src/repo","n":${i}}\n`).join('');
    expect(Buffer.byteLength(big)).toBeGreaterThan(BUNDLE_FILE_MAX);
    const entries = [
      { ...put(path.join(w.src, 'small.jsonl'), LINES.join('')), dest: 'small.jsonl' },
      { ...put(path.join(w.src, 'big.jsonl'), big), dest: 'big.jsonl' },
    ];
    const target = new CountingHost({ env: { ...process.env, HOME: w.dst } });
    const streamed: string[] = [];
    const writeStream = target.writeStream.bind(target);
    target.writeStream = (p, opts) => {
      streamed.push(path.basename(p));
      return writeStream(p, opts);
    };
    await copyUnit({ source: w.source, target, entries, targetRoot: root, plan });
    expect(streamed).toHaveLength(1);
    expect(streamed[0]).toMatch(/^\.big\.jsonl\.ah-.+\.tmp$/);
    expect(fs.readFileSync(path.join(root, 'small.jsonl'))).toEqual(rewritten(LINES.join('')));
    expect(fs.readFileSync(path.join(root, 'big.jsonl'))).toEqual(rewritten(big));
    expect(target.written).toBe(rewritten(LINES.join('')).length + rewritten(big).length);
    // The small file: written, given its mode and times, and renamed into place by one program.
    expect(target.fedPrograms).toBe(1);
    expect(modeOf(path.join(root, 'small.jsonl'))).toBe(0o600);
    expect(fs.statSync(path.join(root, 'small.jsonl')).mtimeMs).toBe(MTIME);
  });

  it('writes several new files with one program (grok\'s dozen small files), each with its mode and mtime, a large one streamed beside', async () => {
    const w = world();
    const root = path.join(w.dst, 'store');
    const big = Array.from({ length: 45_000 }, (_, i) => `{"cwd":"/src/repo","n":${i}}\n`).join('');
    const entries = [
      ...unitIn(w),
      { ...put(path.join(w.src, 's/summary.json.lock'), ''), dest: 'projects/-dst-wt/s/summary.json.lock' },
      { ...put(path.join(w.src, 's/tool_definitions.json'), '{"x":"/src/repo"}', 0o640, MTIME - 7000), dest: 'projects/-dst-wt/s/tool_definitions.json' },
      { ...put(path.join(w.src, 'big.jsonl'), big), dest: 'big.jsonl' },
    ];
    const target = new CountingHost({ env: { ...process.env, HOME: w.dst } });
    const rec = await copyUnit({ source: w.source, target, entries, targetRoot: root, plan });
    // The five small files: one program; the large one: its stream.
    expect(target.fedPrograms).toBe(1);
    expect(rec.files.map((f) => [path.relative(root, f.path), f.action])).toEqual(entries.map((e) => [e.dest, 'created']));
    expect(fs.readFileSync(path.join(root, 'projects/-dst-wt/s.jsonl'), 'utf8')).toBe(rewritten(LINES.join('')).toString());
    expect(fs.readFileSync(path.join(root, 'file-history/s/0ca05dce0b0853a5@v1'), 'utf8')).toBe('old /src/repo content\n');
    expect(fs.readFileSync(path.join(root, 'projects/-dst-wt/s/tool_definitions.json'), 'utf8')).toBe('{"x":"/dst/wt"}');
    expect(fs.readFileSync(path.join(root, 'projects/-dst-wt/s/summary.json.lock'), 'utf8')).toBe('');
    expect(fs.readFileSync(path.join(root, 'big.jsonl'))).toEqual(rewritten(big));
    expect(modeOf(path.join(root, 'projects/-dst-wt/s/tool_definitions.json'))).toBe(0o640);
    expect(fs.statSync(path.join(root, 'projects/-dst-wt/s/tool_definitions.json')).mtimeMs).toBe(MTIME - 7000);
    expect(fs.statSync(path.join(root, 'file-history/s/0ca05dce0b0853a5@v1')).mtimeMs).toBe(MTIME - 5000);
    for (const f of rec.files) expect(f.sha256).toBe(sha(fs.readFileSync(f.path)));
    expect(rec.files.find((f) => f.path.endsWith('tool_definitions.json'))?.replacements).toBe(1);
    expect(fs.readdirSync(root, { recursive: true }).map(String).filter((n) => n.includes('.ah-'))).toEqual([]);
    expect(await verifyCopy(target, rec)).toEqual({ ok: true, mismatches: [] });
    await undoCopy(target, rec);
    expect(fs.existsSync(root)).toBe(false);
  });

  it('writes the new files one by one on a target without tar', async () => {
    const w = world();
    const root = path.join(w.dst, 'store');
    // Every tool the programs use, but no tar.
    const bin = path.join(w.dst, 'bin-without-tar');
    fs.mkdirSync(bin);
    for (const tool of ['sh', 'cat', 'chmod', 'touch', 'mv', 'rm', 'mkdir', 'mktemp', 'gzip', 'head', 'sha256sum', 'cut', 'df', 'tail', 'wc', 'tr']) {
      const found = ['/usr/bin', '/bin'].map((d) => path.join(d, tool)).find((p) => fs.existsSync(p));
      if (found) fs.symlinkSync(found, path.join(bin, tool));
    }
    const target = new CountingHost({ env: { ...process.env, HOME: w.dst, PATH: bin } });
    const entries = unitIn(w);
    const rec = await copyUnit({ source: w.source, target, entries, targetRoot: root, plan });
    // The bundle's program answered "no tar" at once; then one program per file.
    expect(target.fedPrograms).toBe(1 + entries.length);
    expect(rec.files.map((f) => f.action)).toEqual(['created', 'created', 'created']);
    expect(fs.readFileSync(path.join(root, 'projects/-dst-wt/s.jsonl'), 'utf8')).toBe(rewritten(LINES.join('')).toString());
    expect(fs.statSync(path.join(root, 'file-history/s/0ca05dce0b0853a5@v1')).mtimeMs).toBe(MTIME - 5000);
  });

  it('is unchanged on a second run, and appends only the new tail when the session comes back longer', async () => {
    const w = world();
    const entries = unitIn(w);
    const root = path.join(w.dst, 'store');
    await copyUnit({ source: w.source, target: w.target, entries, targetRoot: root, plan });
    const again = await copyUnit({ source: w.source, target: w.target, entries, targetRoot: root, plan });
    expect(again.files.map((f) => f.action)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(again.createdDirs).toEqual([]);

    const main = path.join(root, 'projects/-dst-wt/s.jsonl');
    const before = fs.statSync(main);
    // The session went on at the source (e.g. it was handed back and used there).
    fs.appendFileSync(entries[0]!.source, '{"cwd":"/src/repo","n":4}\n');
    fs.utimesSync(entries[0]!.source, (MTIME + 60_000) / 1000, (MTIME + 60_000) / 1000);
    const counting = new CountingHost({ env: { ...process.env, HOME: w.dst } });
    const rec = await copyUnit({ source: w.source, target: counting, entries: [{ ...entries[0]!, mtimeMs: MTIME + 60_000 }], targetRoot: root, plan });
    expect(rec.files[0]).toMatchObject({ action: 'appended', previous: { size: before.size } });
    expect(counting.written).toBe(Buffer.byteLength('{"cwd":"/dst/wt","n":4}\n'));
    expect(fs.readFileSync(main)).toEqual(rewritten(LINES.join('') + '{"cwd":"/src/repo","n":4}\n'));
    expect(fs.statSync(main).mtimeMs).toBe(MTIME + 60_000);
    expect(await verifyCopy(w.target, rec)).toMatchObject({ ok: true });

    // undo brings back the exact previous bytes and mtime
    await undoCopy(w.target, rec);
    expect(fs.readFileSync(main)).toEqual(rewritten(LINES.join('')));
    expect(fs.statSync(main).mtimeMs).toBe(before.mtimeMs);
    expect(modeOf(main)).toBe(0o600);
  });

  it('leaves an empty file alone when the source has it empty too (grok\'s *.lock), and writes one that is not', async () => {
    const w = world();
    const root = path.join(w.dst, 'store');
    const lock = { ...put(path.join(w.src, 'sessions/g/s/updates.lock'), ''), dest: 'sessions/g/s/updates.lock' };
    const first = await copyUnit({ source: w.source, target: w.target, entries: [lock], targetRoot: root, plan });
    expect(first.files[0]).toMatchObject({ action: 'created', size: 0 });
    const there = path.join(root, 'sessions/g/s/updates.lock');
    // The target's own mode and mtime, which an unchanged file keeps.
    fs.chmodSync(there, 0o644);
    fs.utimesSync(there, (MTIME - 9000) / 1000, (MTIME - 9000) / 1000);
    const counting = new CountingHost({ env: { ...process.env, HOME: w.dst } });
    const runs: string[][] = [];
    const run = counting.run.bind(counting);
    counting.run = (argv, opts) => (runs.push([...argv]), run(argv, opts));
    const again = await copyUnit({ source: w.source, target: counting, entries: [lock], targetRoot: root, plan, tag: 'e1' });
    expect(again.files[0]).toMatchObject({ action: 'unchanged', size: 0, sha256: sha(Buffer.alloc(0)), backup: null, previous: { size: 0, mode: 0o644, mtimeMs: MTIME - 9000 }, sent: 0 });
    expect(counting.written).toBe(0);
    expect(runs.filter((argv) => argv.some((a) => a.includes('mv -f')))).toEqual([]);
    expect(fs.statSync(there).mtimeMs).toBe(MTIME - 9000);
    expect(modeOf(there)).toBe(0o644);
    expect(fs.readdirSync(path.dirname(there))).toEqual(['updates.lock']);
    expect(await verifyCopy(w.target, again)).toEqual({ ok: true, mismatches: [] });
    await undoCopy(w.target, again);
    expect(fs.existsSync(there)).toBe(true);

    // An empty file there and bytes at the source: written, as before.
    fs.writeFileSync(lock.source, 'pid 42\n');
    const written = await copyUnit({ source: w.source, target: w.target, entries: [lock], targetRoot: root, plan });
    expect(written.files[0]).toMatchObject({ action: 'overwritten', size: 7, previous: { size: 0 } });
    expect(fs.readFileSync(there, 'utf8')).toBe('pid 42\n');
  });

  it('refuses a target copy with content the source lacks, naming the file, and changes nothing', async () => {
    const w = world();
    const entries = unitIn(w);
    const root = path.join(w.dst, 'store');
    await copyUnit({ source: w.source, target: w.target, entries, targetRoot: root, plan });
    const main = path.join(root, 'projects/-dst-wt/s.jsonl');
    // the target's copy was continued on the target
    fs.appendFileSync(main, '{"n":"target only"}\n');
    const snapshot = fs.readFileSync(main);
    const err = await copyUnit({ source: w.source, target: w.target, entries, targetRoot: root, plan }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HandoffError);
    expect((err as HandoffError).code).toBe('session_conflict');
    expect((err as HandoffError).message).toContain(main);
    expect(fs.readFileSync(main)).toEqual(snapshot);

    // a diverged (same length, different bytes) copy is a conflict too
    fs.writeFileSync(main, Buffer.from(snapshot.toString().replace('/dst/wt', '/dst/WT')));
    const err2 = await copyUnit({ source: w.source, target: w.target, entries: [entries[0]!], targetRoot: root, plan }).catch((e: unknown) => e);
    expect((err2 as HandoffError).code).toBe('session_conflict');
    expect(fs.readdirSync(path.dirname(main)).filter((n) => n.includes('.ah-'))).toEqual([]);

    // with overwrite: replaced, the old copy kept until discarded, and undo puts it back
    const diverged = fs.readFileSync(main);
    const rec = await copyUnit({ source: w.source, target: w.target, entries: [entries[0]!], targetRoot: root, plan, overwrite: true, tag: 't1' });
    expect(rec.files[0]).toMatchObject({ action: 'overwritten', backup: `${main}.ah-backup-t1` });
    expect(fs.readFileSync(main)).toEqual(rewritten(LINES.join('')));
    await undoCopy(w.target, rec);
    expect(fs.readFileSync(main)).toEqual(diverged);
    // a forced backup holds someone else's writes: it stays after the handoff, and is reported
    const rec2 = await copyUnit({ source: w.source, target: w.target, entries: [entries[0]!], targetRoot: root, plan, overwrite: true, tag: 't2' });
    expect(await discardBackups(w.target, rec2)).toEqual([`${main}.ah-backup-t2`]);
    expect(fs.readFileSync(`${main}.ah-backup-t2`)).toEqual(diverged);
  });

  describe('a session going back and forth sends only what is new', () => {
    /** A LocalHost that counts the bytes read from it (what would cross the wire from a remote source) and keeps the programs it runs. */
    class ReadCounting extends LocalHost {
      read = 0;
      runs: string[][] = [];
      override async readStream(p: string, range?: { start: number; length?: number }) {
        const r = await super.readStream(p, range);
        r.on('data', (c: Buffer) => (this.read += c.length));
        return r;
      }
      override async run(argv: readonly string[], opts?: RunOptions) {
        this.runs.push([...argv]);
        return super.run(argv, opts);
      }
      /** Programs given `file` that hash something there. */
      hashesOf(file: string): number {
        return this.runs.filter((a) => a[2]?.includes(HASH_FN) && a.includes(file)).length;
      }
    }
    const there = buildRewritePlan({ repo: { source: ['/src/repo'], target: '/dst/wt' } });
    const back = buildRewritePlan({ repo: { source: ['/dst/wt'], target: '/src/repo' } });
    const title = (t: string) => `{"type":"title","title":"${t}","pad":"${' '.repeat(40 - t.length)}"}\n`;
    // ~3 MB of varied lines naming the repo, as a long transcript does.
    const body = Array.from({ length: 30_000 }, (_, i) => `{"n":${i},"cwd":"/src/repo","text":"${createHash('sha256').update(String(i)).digest('hex')}"}\n`).join('');

    /** Two machines' homes, each a host that counts what is read from it, their state folders and the session file's place on each. */
    function twoMachines() {
      const w = world();
      return {
        w,
        laptop: new ReadCounting({ env: { ...process.env, HOME: w.src } }),
        vega: new ReadCounting({ env: { ...process.env, HOME: w.dst } }),
        st: { laptop: path.join(w.src, 'state'), vega: path.join(w.dst, 'state') },
        onLaptop: path.join(w.src, 'agent', 'sessions/s.jsonl'),
        onVega: path.join(w.dst, 'agent', 'sessions/s.jsonl'),
      };
    }

    async function move(from: LocalHost, to: LocalHost, e: CopyEntry, root: string, plan: ReturnType<typeof buildRewritePlan>, state: { from: string; to: string }, tag: string) {
      // As a handoff does: the plan looks at the target's ledger, the copy uses what it saw.
      const left = await lookLeft(to, path.join(state.to, 'left'), [path.join(root, e.dest)]);
      const rec = await copyUnit({ source: from, target: to, entries: [e], targetRoot: root, plan, ledgerDir: left.dir, left, arrivalsDir: path.join(state.from, 'arrived'), tag });
      const f = rec.files[0]!;
      await recordLeft(from, path.join(state.from, 'left'), [{ ...f.source!, handoff: tag, to: 'x', at: 'now' }]);
      await recordArrivals(to, path.join(state.to, 'arrived'), [{ path: f.path, ...f.content!, handoff: tag }]);
      await discardBackups(to, rec);
      return f;
    }

    it.each([
      ['appends (pi, claude, codex)', false],
      ['rewrites its first line in place and appends (omp)', true],
    ])('there and back twice, an agent that %s', async (_what, rewritesTitle) => {
      const { w, laptop, vega, st, onLaptop, onVega } = twoMachines();
      const entry = (file: string, mtimeMs: number): CopyEntry => ({ source: file, dest: 'sessions/s.jsonl', verbatim: false, padFirstLine: true, mode: 0o600, mtimeMs });
      const turn = (file: string, title: string, text: string) => {
        const now = fs.readFileSync(file, 'utf8');
        const rest = now.slice(now.indexOf('\n') + 1);
        fs.writeFileSync(file, (rewritesTitle ? title : now.slice(0, now.indexOf('\n') + 1)) + rest + text);
      };
      put(onLaptop, title('first') + body);

      const first = await move(laptop, vega, entry(onLaptop, MTIME), path.join(w.dst, 'agent'), there, { from: st.laptop, to: st.vega }, 't1');
      expect(first.action).toBe('created');
      expect(laptop.read).toBe(fs.statSync(onLaptop).size);

      const tailVega = '{"turn":"on vega","cwd":"/dst/wt"}\n';
      turn(onVega, title('second'), tailVega);
      laptop.read = vega.read = 0;
      const second = await move(vega, laptop, entry(onVega, MTIME + 1000), path.join(w.src, 'agent'), back, { from: st.vega, to: st.laptop }, 't2');
      expect(second.action).toBe(rewritesTitle ? 'replaced' : 'appended');
      // Only the new first line (when rewritten) and the tail crossed.
      const changed = tailVega.length + (rewritesTitle ? title('second').length : 0);
      expect(vega.read).toBe(changed);
      expect(second.sent).toBe(changed);
      const home = fs.readFileSync(onLaptop, 'utf8');
      expect(home).toBe((rewritesTitle ? title('second') : title('first')) + body + '{"turn":"on vega","cwd":"/src/repo"}\n');
      expect(second.sha256).toBe(sha(Buffer.from(home)));
      expect(fs.readdirSync(path.dirname(onLaptop))).toEqual(['s.jsonl']);
      // The laptop hashed its file once as it was (the ledger's look) and once as it now is.
      expect(laptop.hashesOf(onLaptop)).toBe(2);

      const tailLaptop = '{"turn":"on laptop","cwd":"/src/repo"}\n';
      turn(onLaptop, title('third'), tailLaptop);
      laptop.read = vega.read = 0;
      const third = await move(laptop, vega, entry(onLaptop, MTIME + 2000), path.join(w.dst, 'agent'), there, { from: st.laptop, to: st.vega }, 't3');
      expect(third.action).toBe(rewritesTitle ? 'replaced' : 'appended');
      expect(laptop.read).toBe(tailLaptop.length + (rewritesTitle ? title('third').length : 0));
      expect(fs.readFileSync(onVega, 'utf8')).toBe(rewritedVega(rewritesTitle ? title('third') : title('first')));
      function rewritedVega(line1: string) {
        return line1 + rewriteBuffer(there, Buffer.from(body)).output.toString() + tailVega + '{"turn":"on laptop","cwd":"/dst/wt"}\n';
      }
    });

    it('a file that comes back as it went (nothing written there meanwhile) is unchanged: nothing crosses, nothing is reinstalled', async () => {
      const { w, laptop, vega, st, onLaptop, onVega } = twoMachines();
      const entry = (file: string): CopyEntry => ({ source: file, dest: 'sessions/s.jsonl', verbatim: false, mode: 0o600, mtimeMs: MTIME });
      put(onLaptop, title('first') + body);
      const before = fs.readFileSync(onLaptop);
      await move(laptop, vega, entry(onLaptop), path.join(w.dst, 'agent'), there, { from: st.laptop, to: st.vega }, 't1');
      // The laptop's copy is touched by nothing but this check (the target keeps its own times).
      fs.utimesSync(onLaptop, (MTIME - 7000) / 1000, (MTIME - 7000) / 1000);
      laptop.read = vega.read = 0;
      const back2 = await move(vega, laptop, entry(onVega), path.join(w.src, 'agent'), back, { from: st.vega, to: st.laptop }, 't2');
      expect(back2).toMatchObject({ action: 'unchanged', size: before.length, sha256: sha(before), sent: 0, backup: null, previous: { size: before.length } });
      expect(vega.read).toBe(0);
      // By hash: a deep toEqual of 3 MB Buffers takes ~16 s, past the test timeout on a busy machine.
      expect(sha(fs.readFileSync(onLaptop))).toBe(sha(before));
      expect(fs.statSync(onLaptop).mtimeMs).toBe(MTIME - 7000);
      expect(fs.readdirSync(path.dirname(onLaptop))).toEqual(['s.jsonl']);
      // And it goes on from there: a tail added on the laptop crosses alone.
      fs.appendFileSync(onLaptop, '{"turn":"on laptop","cwd":"/src/repo"}\n');
      laptop.read = 0;
      const again = await move(laptop, vega, entry(onLaptop), path.join(w.dst, 'agent'), there, { from: st.laptop, to: st.vega }, 't3');
      expect(again.action).toBe('appended');
      expect(laptop.read).toBe(Buffer.byteLength('{"turn":"on laptop","cwd":"/src/repo"}\n'));
    });

    it('sends the whole file when what arrived is no longer there (the file was cut and rewritten)', async () => {
      const { w, laptop, vega, st, onLaptop, onVega } = twoMachines();
      put(onLaptop, title('first') + body);
      await move(laptop, vega, { source: onLaptop, dest: 'sessions/s.jsonl', verbatim: false, mode: 0o600, mtimeMs: MTIME }, path.join(w.dst, 'agent'), there, { from: st.laptop, to: st.vega }, 't1');
      // compacted on vega: a new, shorter file
      fs.writeFileSync(onVega, title('compacted') + '{"summary":"/dst/wt"}\n');
      vega.read = 0;
      const back2 = await move(vega, laptop, { source: onVega, dest: 'sessions/s.jsonl', verbatim: false, mode: 0o600, mtimeMs: MTIME + 1 }, path.join(w.src, 'agent'), back, { from: st.vega, to: st.laptop }, 't2');
      expect(back2.action).toBe('replaced');
      expect(fs.readFileSync(onLaptop, 'utf8')).toBe(title('compacted') + '{"summary":"/src/repo"}\n');
    });

    it('a file too small for an arrival entry is not asked about where it comes from, and still comes back as a continuation', async () => {
      const { w, laptop, vega, st, onLaptop, onVega } = twoMachines();
      const entry = (file: string, mtimeMs: number): CopyEntry => ({ source: file, dest: 'sessions/s.jsonl', verbatim: false, size: fs.statSync(file).size, mode: 0o600, mtimeMs });
      put(onLaptop, title('first') + '{"n":1,"cwd":"/src/repo"}\n');
      await move(laptop, vega, entry(onLaptop, MTIME), path.join(w.dst, 'agent'), there, { from: st.laptop, to: st.vega }, 't1');
      expect(worthAnArrival(fs.statSync(onVega).size)).toBe(false);
      fs.appendFileSync(onVega, '{"turn":"on vega","cwd":"/dst/wt"}\n');
      vega.runs = [];
      const back2 = await move(vega, laptop, entry(onVega, MTIME + 1000), path.join(w.src, 'agent'), back, { from: st.vega, to: st.laptop }, 't2');
      expect(vega.runs.filter((a) => a[2] === ARRIVAL_VERDICT_PROGRAM)).toEqual([]);
      expect(back2.action).toBe('appended');
      expect(fs.readFileSync(onLaptop, 'utf8')).toBe(title('first') + '{"n":1,"cwd":"/src/repo"}\n{"turn":"on vega","cwd":"/src/repo"}\n');
    });
  });

  describe('a session coming back to a file that an earlier handoff left', () => {
    // laptop's file left for vega; vega's agent rewrote its first line in place (omp's padded
    // title) and appended a turn; the copy coming back is no continuation of what laptop holds.
    const there = buildRewritePlan({ repo: { source: ['/src/repo'], target: '/dst/wt' } });
    const back = buildRewritePlan({ repo: { source: ['/dst/wt'], target: '/src/repo' } });
    const title = (t: string) => `{"type":"title","title":"${t}","pad":"${' '.repeat(40 - t.length)}"}\n`;

    async function leftAndRewritten() {
      const w = world();
      const home = path.join(w.src, 'agent');
      const original = put(path.join(home, 'sessions/s.jsonl'), title('first') + '{"cwd":"/src/repo"}\n');
      const away = path.join(w.dst, 'agent');
      const out = await copyUnit({ source: w.source, target: w.target, entries: [{ ...original, dest: 'sessions/s.jsonl' }], targetRoot: away, plan: there });
      const ledger = path.join(w.src, 'state', 'left');
      await recordLeft(w.source, ledger, out.files.map((f) => ({ ...f.source!, handoff: 'h1', to: 'vega', at: '2026-12-01T10:00:00Z' })));
      const onVega = path.join(away, 'sessions/s.jsonl');
      const body = fs.readFileSync(onVega, 'utf8').split('\n').slice(1).join('\n');
      fs.writeFileSync(onVega, title('second turn') + body + '{"turn":"on vega"}\n');
      const coming = { ...put(onVega, fs.readFileSync(onVega), 0o600, MTIME + 60_000), dest: 'sessions/s.jsonl' };
      return { w, home, laptopFile: path.join(home, 'sessions/s.jsonl'), ledger, coming };
    }

    it('replaces a file byte-identical to what left, keeping a backup until verified', async () => {
      const { w, home, laptopFile, ledger, coming } = await leftAndRewritten();
      const before = fs.readFileSync(laptopFile);
      const rec = await copyUnit({ source: w.target, target: w.source, entries: [coming], targetRoot: home, plan: back, ledgerDir: ledger, tag: 'b1' });
      expect(rec.files[0]).toMatchObject({ action: 'replaced', backup: `${laptopFile}.ah-backup-b1`, previous: { size: before.length } });
      const now = fs.readFileSync(laptopFile, 'utf8');
      expect(now.startsWith(title('second turn'))).toBe(true);
      expect(now).toContain('{"cwd":"/src/repo"}');
      expect(now.endsWith('{"turn":"on vega"}\n')).toBe(true);
      expect(modeOf(laptopFile)).toBe(0o600);
      expect(fs.statSync(laptopFile).mtimeMs).toBe(MTIME + 60_000);
      expect(modeOf(`${laptopFile}.ah-backup-b1`)).toBe(0o600);
      expect(fs.readFileSync(`${laptopFile}.ah-backup-b1`)).toEqual(before);
      // undone (a failed handoff): the file as it was left is back
      await undoCopy(w.source, rec);
      expect(fs.readFileSync(laptopFile)).toEqual(before);
      // verified: the backup goes, nothing is reported kept
      const again = await copyUnit({ source: w.target, target: w.source, entries: [coming], targetRoot: home, plan: back, ledgerDir: ledger, tag: 'b2' });
      expect(again.files[0]!.action).toBe('replaced');
      expect(await discardBackups(w.source, again)).toEqual([]);
      expect(fs.readdirSync(path.dirname(laptopFile))).toEqual(['s.jsonl']);
    });

    it('refuses a file that changed since it was left, naming both sizes and mtimes, and changes nothing', async () => {
      const { w, home, laptopFile, ledger, coming } = await leftAndRewritten();
      // someone resumed the old session on laptop meanwhile
      fs.appendFileSync(laptopFile, '{"turn":"on laptop too"}\n');
      const before = fs.readFileSync(laptopFile);
      const err = await copyUnit({ source: w.target, target: w.source, entries: [coming], targetRoot: home, plan: back, ledgerDir: ledger }).catch((e: unknown) => e);
      expect((err as HandoffError).code).toBe('session_conflict');
      const msg = (err as HandoffError).message;
      expect(msg).toContain(laptopFile);
      expect(msg).toContain(`${before.length} bytes`);
      expect(msg).toContain(`the session being sent is ${fs.statSync(coming.source).size} bytes, modified 2026-11-30T16:02:13Z`);
      expect(msg).toContain('changed since handoff h1 took the session to vega');
      expect((err as HandoffError).fix).toContain('--overwrite');
      expect(fs.readFileSync(laptopFile)).toEqual(before);
      expect(fs.readdirSync(path.dirname(laptopFile))).toEqual(['s.jsonl']);
    });

    it('a ledger entry for another path, or one that does not parse, does not count', async () => {
      const { w, home, laptopFile, ledger, coming } = await leftAndRewritten();
      const name = fs.readdirSync(ledger)[0]!;
      const entry = JSON.parse(fs.readFileSync(path.join(ledger, name), 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(path.join(ledger, name), JSON.stringify({ ...entry, path: `${laptopFile}x` }) + '\n');
      const err = await copyUnit({ source: w.target, target: w.source, entries: [coming], targetRoot: home, plan: back, ledgerDir: ledger }).catch((e: unknown) => e);
      expect((err as HandoffError).code).toBe('session_conflict');
      fs.writeFileSync(path.join(ledger, name), '{not json\n');
      const err2 = await copyUnit({ source: w.target, target: w.source, entries: [coming], targetRoot: home, plan: back, ledgerDir: ledger }).catch((e: unknown) => e);
      expect((err2 as HandoffError).code).toBe('session_conflict');
    });
  });

  it('undo removes created files and the folders it made, but not folders that were there', async () => {
    const w = world();
    const entries = unitIn(w);
    const root = path.join(w.dst, 'store');
    fs.mkdirSync(path.join(root, 'projects'), { recursive: true });
    fs.writeFileSync(path.join(root, 'projects', 'keep.txt'), 'x');
    const rec = await copyUnit({ source: w.source, target: w.target, entries, targetRoot: root, plan });
    await undoCopy(w.target, rec);
    expect(fs.readdirSync(root).sort()).toEqual(['projects']);
    expect(fs.readdirSync(path.join(root, 'projects'))).toEqual(['keep.txt']);
  });

  it('keeps omp line 1 at its length through the copy', async () => {
    const w = world();
    const line1 = `{"type":"title","title":"/src/repo","pad":"${' '.repeat(30)}"}\n`;
    const e = put(path.join(w.src, 'sessions/-src-repo/x.jsonl'), line1 + '{"cwd":"/src/repo"}\n');
    const root = path.join(w.dst, 'agent');
    await copyUnit({ source: w.source, target: w.target, entries: [{ ...e, dest: 'sessions/-dst/x.jsonl', padFirstLine: true }], targetRoot: root, plan: buildRewritePlan({ repo: { source: ['/src/repo'], target: '/dst/a-longer-worktree' } }) });
    const out = fs.readFileSync(path.join(root, 'sessions/-dst/x.jsonl'), 'utf8').split('\n');
    expect(out[0]!.length + 1).toBe(line1.length);
    expect(out[1]).toBe('{"cwd":"/dst/a-longer-worktree"}');
  });

  it('hashes a prefix on the target with its own tools', async () => {
    const w = world();
    const f = path.join(w.dst, 'odd name $(x) ; "q".bin');
    fs.writeFileSync(f, Buffer.from([1, 2, 3, 4, 5, 0, 255]));
    expect(await remotePrefixHash(w.target, f, 4)).toBe(sha(Buffer.from([1, 2, 3, 4])));
    expect(await remotePrefixHash(w.target, f, 7)).toBe(sha(fs.readFileSync(f)));
  });
});

describe('destinations stay under the target config root', () => {
  it.each(['../x', 'a/../../x', '/etc/passwd', '', 'a//b', './a', 'a/./b', 'a/\0b'])('refuses %j', (rel) => {
    expect(() => destinationUnder('/root/store', rel)).toThrow(HandoffError);
  });

  it('accepts odd but safe names', () => {
    expect(destinationUnder('/r', 'sessions/%2Ftmp%2Fx/a b/..c')).toBe('/r/sessions/%2Ftmp%2Fx/a b/..c');
  });

  it('refuses to follow a symlinked folder out of the store, before creating anything there', async () => {
    const w = world();
    const root = path.join(w.dst, 'store');
    const outside = path.join(w.dst, 'outside');
    fs.mkdirSync(path.join(root, 'projects'), { recursive: true });
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(root, 'projects', 'evil'));
    const e = put(path.join(w.src, 's.jsonl'), '{}\n');
    const err = await copyUnit({ source: w.source, target: w.target, entries: [{ ...e, dest: 'projects/evil/deep/s.jsonl' }], targetRoot: root, plan }).catch((x: unknown) => x);
    expect((err as HandoffError).code).toBe('unsafe_destination');
    expect(fs.readdirSync(outside)).toEqual([]);
    const err2 = await copyUnit({ source: w.source, target: w.target, entries: [{ ...e, dest: '../s.jsonl' }], targetRoot: root, plan }).catch((x: unknown) => x);
    expect((err2 as HandoffError).code).toBe('unsafe_destination');
  });

  it('refuses to replace a symlink or folder at the destination', async () => {
    const w = world();
    const root = path.join(w.dst, 'store');
    fs.mkdirSync(root, { recursive: true });
    fs.symlinkSync('/etc/hostname', path.join(root, 's.jsonl'));
    const e = put(path.join(w.src, 's.jsonl'), '{}\n');
    const err = await copyUnit({ source: w.source, target: w.target, entries: [{ ...e, dest: 's.jsonl' }], targetRoot: root, plan }).catch((x: unknown) => x);
    expect((err as HandoffError).code).toBe('unsafe_destination');
  });
});
