// BUNDLE_INSTALL_SCRIPT (src/transcript/file-bundle.ts), the program that puts a unit's new files in
// place from one tar stream, under each POSIX shell: hostile destination names are only data, each
// file gets its bytes, mode and time (with GNU tar as root and as a user, and with BusyBox's tar),
// members bound for several folders land in each, a failure part-way says which files are in
// place, a target without tar is told apart before anything is written, and the unpacking folder
// never stays.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BUNDLE_FOLDER_OUTSIDE, BUNDLE_INSTALL_SCRIPT, BUNDLE_NO_TOOLS, bundleArchive, bundleArgv, bundleFolder, bundleMembers, BUNDLE_FILE_MAX, BUNDLE_TOTAL_MAX } from '../../src/transcript/file-bundle.js';
import type { CopyEntry } from '../../src/transcript/copy-types.js';
import type { BundleMember } from '../../src/transcript/file-bundle.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { hostileArgs } from '../host/hostile-args.js';

const tempDir = tempDirs('ah-file-bundle-');
const MTIME = Date.UTC(2026, 10, 30, 16, 1, 13, 250);

const entry = (size: number, mode = 0o600, mtimeMs = MTIME): CopyEntry => ({ source: '/src/x', dest: 'x', verbatim: false, size, mode, mtimeMs });

/** The bundle of `members` holding `contents`, as installBundle packs it. */
async function archive(members: readonly BundleMember[], contents: readonly Buffer[], gzipped: boolean): Promise<Buffer> {
  const tar = await bundleArchive(members, contents);
  return gzipped ? zlib.gzipSync(tar) : tar;
}

const which = (program: string) => execFileSync('sh', ['-c', 'command -v "$1"', 'sh', program], { encoding: 'utf8' }).trim();

/** Run the program under `shell` as installBundle does; exit code, stdout and stderr. */
function run(shell: readonly string[], argv: readonly string[], stdin: Buffer, env: NodeJS.ProcessEnv = process.env) {
  expect(argv.slice(0, 4)).toEqual(['/bin/sh', '-c', BUNDLE_INSTALL_SCRIPT, 'sh']);
  try {
    const stdout = execFileSync(which(shell[0]!), [...shell.slice(1), '-c', BUNDLE_INSTALL_SCRIPT, 'sh', ...argv.slice(4)], { input: stdin, env, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
    return { code: 0, stdout, stderr: '' };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Hostile names usable as one file name each (no '/', not empty, not too long, no '.'/'..'). */
function hostileNames(canaries: string): string[] {
  const names = hostileArgs(canaries).map((a) => a.replaceAll('/', '∕')).filter((a) => a !== '' && a !== '.' && a !== '..' && Buffer.byteLength(a) < 200);
  return [...new Set(names)];
}

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('BUNDLE_INSTALL_SCRIPT under %s', (_name, shell) => {
  it.each([true, false])('puts each file in place under a hostile name, with its bytes, mode and time (gzipped: %s)', async (gzipped) => {
    const dir = tempDir();
    const canaries = path.join(dir, 'canaries');
    fs.mkdirSync(canaries);
    const into = path.join(dir, 'session dir $(x)');
    fs.mkdirSync(into);
    const names = hostileNames(canaries);
    const contents = names.map((n, i) => (i % 7 === 3 ? Buffer.alloc(0) : Buffer.from(`{"n":${i},"name":${JSON.stringify(n)}}\n\0\xff`, 'latin1')));
    const members = names.map((n, i) => ({ entry: entry(contents[i]!.length, i % 2 ? 0o644 : 0o600, MTIME - i * 1250), file: path.join(into, n) }));
    const r = run(shell, bundleArgv(bundleFolder(into, 'c0ffee'), gzipped, members), await archive(members, contents, gzipped));
    expect(r).toEqual({ code: 0, stdout: names.map((_, i) => `${i}\n`).join(''), stderr: '' });
    names.forEach((n, i) => {
      const f = path.join(into, n);
      expect(fs.readFileSync(f)).toEqual(contents[i]);
      expect(fs.statSync(f).mode & 0o777).toBe(i % 2 ? 0o644 : 0o600);
      expect(fs.statSync(f).mtimeMs).toBe(MTIME - i * 1250);
    });
    expect(fs.readdirSync(into).sort()).toEqual([...names].sort());
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('stops at a file it cannot place: those before are in place and named, the rest are not, nothing is left unpacked', async () => {
    const dir = tempDir();
    const into = path.join(dir, 'in');
    fs.mkdirSync(into);
    const files = [path.join(into, 'a'), path.join(into, 'b'), path.join(dir, 'missing folder', 'c'), path.join(into, 'd')];
    const contents = files.map((f) => Buffer.from(`bytes of ${f}\n`));
    const members = files.map((file, i) => ({ entry: entry(contents[i]!.length), file }));
    const r = run(shell, bundleArgv(bundleFolder(into, 'c0ffee'), true, members), await archive(members, contents, true));
    expect(r.code).toBe(72);
    expect(r.stdout).toBe('0\n1\n');
    expect(fs.readdirSync(into).sort()).toEqual(['a', 'b']);
  });

  it('places members bound for several folders, one group per run of a folder, each in its own', async () => {
    const dir = tempDir();
    const [f, g] = [path.join(dir, 'f $(x)'), path.join(dir, 'g\nnl')];
    for (const d of [f, g]) fs.mkdirSync(d);
    const files = [path.join(f, 'a'), path.join(f, 'b'), path.join(g, 'a'), path.join(f, 'c'), path.join(g, 'z')];
    const contents = files.map((file) => Buffer.from(`bytes of ${file}\n`));
    const members = files.map((file, i) => ({ entry: entry(contents[i]!.length, 0o600, MTIME + i), file }));
    const r = run(shell, bundleArgv(bundleFolder(f, 'c0ffee'), true, members), await archive(members, contents, true));
    expect(r).toEqual({ code: 0, stdout: '0\n1\n2\n3\n4\n', stderr: '' });
    files.forEach((file, i) => {
      expect(fs.readFileSync(file)).toEqual(contents[i]);
      expect(fs.statSync(file).mtimeMs).toBe(MTIME + i);
    });
    expect(fs.readdirSync(f).sort()).toEqual(['a', 'b', 'c']);
    expect(fs.readdirSync(g).sort()).toEqual(['a', 'z']);
  });

  it('names the members a group placed when its mv fails for one of them, and stops there', async () => {
    const dir = tempDir();
    const [into, later] = [path.join(dir, 'in'), path.join(dir, 'later')];
    for (const d of [into, later]) fs.mkdirSync(d);
    // A folder where a file should go: mv cannot replace it.
    fs.mkdirSync(path.join(into, 'b'));
    fs.writeFileSync(path.join(into, 'b', 'kept'), 'kept');
    const files = [path.join(into, 'a'), path.join(into, 'b'), path.join(into, 'c'), path.join(later, 'd')];
    const contents = files.map((file) => Buffer.from(`bytes of ${file}\n`));
    const members = files.map((file, i) => ({ entry: entry(contents[i]!.length), file }));
    const r = run(shell, bundleArgv(bundleFolder(into, 'c0ffee'), true, members), await archive(members, contents, true));
    expect(r.code).toBe(72);
    expect(r.stdout).toBe('0\n2\n');
    expect(fs.readFileSync(path.join(into, 'a'))).toEqual(contents[0]);
    expect(fs.readFileSync(path.join(into, 'c'))).toEqual(contents[2]);
    expect(fs.readFileSync(path.join(into, 'b', 'kept'), 'utf8')).toBe('kept');
    expect(fs.readdirSync(into).sort()).toEqual(['a', 'b', 'c']);
    expect(fs.readdirSync(later)).toEqual([]);
  });

  it('replaces the unpacking folder an attempt killed part-way left behind', async () => {
    const dir = tempDir();
    const folder = bundleFolder(dir, 'c0ffee');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, '0'), 'stale');
    const contents = [Buffer.from('a\n'), Buffer.from('b\n')];
    const members = ['a', 'b'].map((n, i) => ({ entry: entry(contents[i]!.length), file: path.join(dir, n) }));
    const r = run(shell, bundleArgv(folder, false, members), await archive(members, contents, false));
    expect(r).toEqual({ code: 0, stdout: '0\n1\n', stderr: '' });
    expect(fs.readFileSync(path.join(dir, 'a'), 'utf8')).toBe('a\n');
    expect(fs.readdirSync(dir).sort()).toEqual(['a', 'b']);
  });

  it('makes the folders first (private), then places the files in them', async () => {
    const dir = tempDir();
    const root = path.join(dir, 'store $(x)');
    const deep = path.join(root, 'sessions', '%2Fhome%2Fvega\nnl', 'id');
    const contents = [Buffer.from('a\n'), Buffer.from('')];
    const members = ['a.jsonl', 'a.jsonl.lock'].map((n, i) => ({ entry: entry(contents[i]!.length), file: path.join(deep, n) }));
    const r = run(shell, bundleArgv(bundleFolder(deep, 'c0ffee'), true, members, [root, deep]), await archive(members, contents, true));
    expect(r).toEqual({ code: 0, stdout: '0\n1\n', stderr: '' });
    expect(fs.readFileSync(path.join(deep, 'a.jsonl'), 'utf8')).toBe('a\n');
    for (const d of [root, path.join(root, 'sessions'), deep]) expect(fs.statSync(d).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(deep).sort()).toEqual(['a.jsonl', 'a.jsonl.lock']);
  });

  it('refuses a folder that resolves outside the root once made (a symlink leads out), writing nothing', async () => {
    const dir = tempDir();
    const root = path.join(dir, 'store');
    const outside = path.join(dir, 'elsewhere');
    fs.mkdirSync(root);
    fs.mkdirSync(outside);
    fs.symlinkSync(outside, path.join(root, 'sessions'));
    const deep = path.join(root, 'sessions', 'g');
    const members = ['a', 'b'].map((n) => ({ entry: entry(2), file: path.join(deep, n) }));
    const r = run(shell, bundleArgv(bundleFolder(deep, 'c0ffee'), true, members, [root, deep]), await archive(members, [Buffer.from('a\n'), Buffer.from('b\n')], true));
    expect(r.code).toBe(BUNDLE_FOLDER_OUTSIDE);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`resolves to ${path.join(outside, 'g')}, outside ${root}`);
    expect(fs.readdirSync(path.join(outside, 'g'))).toEqual([]);
  });

  it('refuses a stream that is not the bundle, placing nothing', () => {
    const dir = tempDir();
    const r = run(shell, bundleArgv(bundleFolder(dir, 'c0ffee'), true, [{ entry: entry(3), file: path.join(dir, 'a') }, { entry: entry(3), file: path.join(dir, 'b') }]), Buffer.from('not gzip at all'));
    expect(r.code).toBe(71);
    expect(r.stdout).toBe('');
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it(`answers ${BUNDLE_NO_TOOLS} before writing anything where there is no tar`, async () => {
    const dir = tempDir();
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    for (const tool of ['mktemp', 'gzip', 'cat', 'chmod', 'touch', 'mv', 'rm']) fs.symlinkSync(which(tool), path.join(bin, tool));
    const into = path.join(dir, 'in');
    fs.mkdirSync(into);
    // HOME: bash reads ~/.bashrc when its stdin is a socket, as node's pipes are.
    const members = [{ entry: entry(1), file: path.join(into, 'a') }];
    const r = run(shell, bundleArgv(bundleFolder(into, 'c0ffee'), true, members), await archive(members, [Buffer.from('a')], true), { PATH: bin, HOME: dir });
    expect(r).toEqual({ code: BUNDLE_NO_TOOLS, stdout: "", stderr: "" });
    expect(fs.readdirSync(into)).toEqual([]);
  });
});

describe('BUNDLE_INSTALL_SCRIPT on other targets', () => {
  const contents = [Buffer.from('{"a":1}\n'), Buffer.from('{"b":2}\n'), Buffer.from('')];
  const members = (into: string) => contents.map((c, i) => ({ entry: entry(c.length, [0o600, 0o644, 0o640][i], MTIME - i * 1250), file: path.join(into, `f${i}.json`) }));

  // A BusyBox target (Alpine): its tar keeps the mode and the whole second (it skips pax's fraction).
  it.runIf(POSIX_SHELLS.some((s) => s[0] === 'busybox'))("with BusyBox's tar: bytes, modes, and the time to the second", async () => {
    const dir = tempDir();
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    for (const tool of ['gzip', 'cat', 'mv', 'rm', 'mkdir']) fs.symlinkSync(which(tool), path.join(bin, tool));
    fs.symlinkSync(which('busybox'), path.join(bin, 'tar'));
    const into = path.join(dir, 'in');
    fs.mkdirSync(into);
    const r = run(['dash'], bundleArgv(bundleFolder(into, 'c0ffee'), true, members(into)), await archive(members(into), contents, true), { PATH: bin, HOME: dir });
    expect(r).toEqual({ code: 0, stdout: '0\n1\n2\n', stderr: '' });
    members(into).forEach((m, i) => {
      expect(fs.readFileSync(m.file)).toEqual(contents[i]);
      expect(fs.statSync(m.file).mode & 0o777).toBe(m.entry.mode);
      expect(fs.statSync(m.file).mtimeMs).toBe(Math.floor(m.entry.mtimeMs / 1000) * 1000);
    });
    expect(fs.readdirSync(into).sort()).toEqual(['f0.json', 'f1.json', 'f2.json']);
  });

  // As a user (GNU tar applies the umask to modes unless told otherwise; root's keeps them anyway).
  it.runIf(process.getuid?.() === 0 && fs.existsSync('/usr/bin/setpriv'))('as a user who is not root: the modes as given, the times to the millisecond', async () => {
    const dir = tempDir();
    fs.chmodSync(dir, 0o755);
    const into = path.join(dir, 'in');
    fs.mkdirSync(into);
    fs.chownSync(into, 65534, 65534);
    const argv = bundleArgv(bundleFolder(into, 'c0ffee'), true, members(into));
    const stdout = execFileSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'dash', '-c', BUNDLE_INSTALL_SCRIPT, ...argv.slice(3)], { input: await archive(members(into), contents, true), cwd: '/', env: { PATH: process.env.PATH, HOME: '/nonexistent' }, encoding: 'utf8' });
    expect(stdout).toBe('0\n1\n2\n');
    members(into).forEach((m, i) => {
      expect(fs.readFileSync(m.file)).toEqual(contents[i]);
      expect(fs.statSync(m.file).mode & 0o777).toBe(m.entry.mode);
      expect(fs.statSync(m.file).mtimeMs).toBe(m.entry.mtimeMs);
      expect(fs.statSync(m.file).uid).toBe(65534);
    });
  });
});

describe('bundleMembers', () => {
  const c = (size: number | undefined) => ({ entry: { ...entry(0), size } as CopyEntry });

  it('takes the small files, in order, while they fit together; two at least, or none', () => {
    expect(bundleMembers([c(10), c(20), c(30)]).map((m) => m.entry.size)).toEqual([10, 20, 30]);
    expect(bundleMembers([c(10)])).toEqual([]);
    expect(bundleMembers([c(10)], 1).map((m) => m.entry.size)).toEqual([10]);
    expect(bundleMembers([c(10), c(BUNDLE_FILE_MAX + 1)])).toEqual([]);
    expect(bundleMembers([c(10), c(undefined), c(5)]).map((m) => m.entry.size)).toEqual([10, 5]);
    const many = Array.from({ length: 10 }, () => c(BUNDLE_FILE_MAX));
    expect(bundleMembers(many)).toHaveLength(BUNDLE_TOTAL_MAX / BUNDLE_FILE_MAX);
  });
});
