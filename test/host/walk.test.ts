// WALK_SCRIPT (src/host/walk.ts), every regular file below a folder with its stat in one
// program, under each POSIX shell: hostile names are data (no canary appears), dot files and
// nested folders are walked, symlinks neither followed nor listed; the answer is what the walk
// by listing (LocalHost) finds, to the second; not a folder is 66, a host without `stat` 69.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalHost } from '../../src/host/local.js';
import { walkByListing, walkedFiles, WALK_NO_STAT, WALK_NOT_A_FOLDER, WALK_SCRIPT } from '../../src/host/walk.js';
import type { WalkedFile } from '../../src/host/host.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { canaryFolder, hostileFileNames } from './hostile-args.js';

const tempDir = tempDirs('ah-walk-');

/** A store with hostile names, dot files, nested and empty folders, links and a fifo; its root and canary folder. */
function store(): { root: string; dir: string; canaries: string } {
  const root = fs.realpathSync(tempDir());
  const canaries = canaryFolder(root);
  const dir = path.join(root, "it's a \"store\" $(touch x)");
  const names = hostileFileNames(canaries);
  for (const [i, sub] of ['', 'a b', 'a b/.deeper', '..c'].entries()) {
    fs.mkdirSync(path.join(dir, sub), { recursive: true });
    for (const [j, n] of names.entries()) if (j % 4 === i) fs.writeFileSync(path.join(dir, sub, n), 'x'.repeat(j), { mode: j % 2 ? 0o600 : 0o640 });
  }
  fs.writeFileSync(path.join(dir, '.hidden'), 'h');
  fs.writeFileSync(path.join(dir, '-rf'), '');
  fs.mkdirSync(path.join(dir, 'empty'));
  fs.utimesSync(path.join(dir, '.hidden'), 1_700_000_000.75, 1_700_000_000.75);
  fs.symlinkSync('a b', path.join(dir, 'link to a folder'));
  fs.symlinkSync('.hidden', path.join(dir, 'link to a file'));
  fs.symlinkSync('nowhere', path.join(dir, 'dangling'));
  execFileSync('mkfifo', [path.join(dir, 'fifo')]);
  return { root, dir, canaries };
}

const sorted = (files: WalkedFile[]) => [...files].sort((a, b) => (a.path < b.path ? -1 : 1));
const toTheSecond = (files: WalkedFile[]) => sorted(files).map((f) => ({ ...f, stat: { ...f.stat, mtimeMs: Math.floor(f.stat.mtimeMs / 1000) * 1000 } }));

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('WALK_SCRIPT under %s', (_name, shell) => {
  // By its full path: the test without `stat` runs with a PATH that finds nothing.
  const sh = execFileSync('/bin/sh', ['-c', 'command -v "$1"', 'sh', shell[0]!], { encoding: 'utf8' }).trim();
  const walk = (dir: string, env?: NodeJS.ProcessEnv) => spawnSync(sh, [...shell.slice(1), '-c', WALK_SCRIPT, 'sh', dir], { encoding: 'utf8', ...(env ? { env } : {}) });

  it('finds what the walk by listing finds, hostile names as they are, links left out', async () => {
    const { root, dir, canaries } = store();
    const r = spawnSync(shell[0]!, [...shell.slice(1), '-c', WALK_SCRIPT, 'sh', dir], { encoding: 'utf8', cwd: canaries });
    expect(r.status, r.stderr).toBe(0);
    const got = sorted(walkedFiles(r.stdout));
    const want = toTheSecond(await walkByListing(new LocalHost(), dir));
    expect(got).toEqual(want);
    expect(got.length).toBeGreaterThan(30);
    expect(got.find((f) => f.path === path.join(dir, '.hidden'))?.stat).toEqual({ type: 'file', size: 1, mode: fs.statSync(path.join(dir, '.hidden')).mode & 0o7777, mtimeMs: 1_700_000_000_000 });
    expect(new Set(got.map((f) => f.stat.mode))).toEqual(new Set([0o600, 0o640, fs.statSync(path.join(dir, '.hidden')).mode & 0o7777]));
    expect(got.some((f) => f.path.includes('link') || f.path.endsWith('fifo') || f.path.endsWith('dangling'))).toBe(false);
    expect(fs.readdirSync(canaries)).toEqual([]);
    expect(fs.readdirSync(root).sort()).toEqual(['canaries', path.basename(dir)].sort());
  });

  it(`exits ${WALK_NOT_A_FOLDER} for what is no folder (missing, a file, a link to a folder), ${WALK_NO_STAT} without stat`, () => {
    const { dir } = store();
    for (const p of [path.join(dir, 'missing'), path.join(dir, '.hidden'), path.join(dir, 'link to a folder')]) expect(walk(p).status, p).toBe(WALK_NOT_A_FOLDER);
    expect(walk(path.join(dir, 'empty'))).toMatchObject({ status: 0, stdout: '' });
    // (HOME: bash started on a socket pair reads ~/.bashrc, as under sshd.)
    expect(walk(dir, { PATH: '/nonexistent', HOME: dir }).status).toBe(WALK_NO_STAT);
  });
});

describe('walkByListing', () => {
  it('is empty for a missing folder, a file and a link to a folder', async () => {
    const { dir } = store();
    const host = new LocalHost();
    for (const p of [path.join(dir, 'missing'), path.join(dir, '.hidden'), path.join(dir, 'link to a folder')]) expect(await walkByListing(host, p)).toEqual([]);
    expect(await walkByListing(host, path.join(dir, 'empty'))).toEqual([]);
  });
});
