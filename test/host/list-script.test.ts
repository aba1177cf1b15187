// LIST_SCRIPT (src/host/ssh-sftp.ts), a folder's entries over ssh in one round trip, under each
// POSIX shell: every name but . and .. (dot files too, hostile names as they are), each with the
// type of the entry itself (a link is a link, even to a folder or to nothing), nothing in a name
// ever run; a missing folder is exit 66 (not_found), a file is an error of its own.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LIST_SCRIPT, listedEntries } from '../../src/host/ssh-sftp.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { canaryFolder, hostileArgs } from './hostile-args.js';

const tempDir = tempDirs('ah-list-script-');

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('LIST_SCRIPT under %s', (_name, shell) => {
  const list = (dir: string) => spawnSync(shell[0]!, [...shell.slice(1), '-c', LIST_SCRIPT, 'sh', dir], { encoding: 'utf8' });

  it('lists every entry with its own type, hostile names as they are', () => {
    const root = tempDir();
    const canaries = canaryFolder(root);
    const dir = path.join(root, 'it\'s a "folder" $(touch x)');
    fs.mkdirSync(dir);
    const hostile = hostileArgs(canaries).map((n) => n.replace(/\//g, '_').slice(0, 200));
    const names = [...new Set([...hostile, '.hidden', '..two', '...', '-rf', '*', '?', '[a]'])].filter((n) => n !== '' && n !== '.' && n !== '..');
    for (const n of names) fs.writeFileSync(path.join(dir, n), '');
    fs.mkdirSync(path.join(dir, 'sub dir'));
    fs.symlinkSync('sub dir', path.join(dir, 'to-dir'));
    fs.symlinkSync('nowhere', path.join(dir, 'dangling'));
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    const r = list(dir);
    expect(r.status, r.stderr).toBe(0);
    const got = listedEntries(r.stdout).sort((a, b) => (a.name < b.name ? -1 : 1));
    const want = [
      ...names.map((name) => ({ name, type: 'file' })),
      { name: 'sub dir', type: 'dir' },
      { name: 'to-dir', type: 'symlink' },
      { name: 'dangling', type: 'symlink' },
      { name: 'fifo', type: 'other' },
    ].sort((a, b) => (a.name < b.name ? -1 : 1));
    expect(got).toEqual(want);
    // As node reads the folder.
    expect(got.map((e) => e.name).sort()).toEqual(fs.readdirSync(dir).sort());
    expect(fs.readdirSync(canaries)).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'x'))).toBe(false);
  });

  it('an empty folder is no entries; a missing one exit 66; a file an error; a link to a folder its entries', () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, 'empty'));
    expect(listedEntries(list(path.join(root, 'empty')).stdout)).toEqual([]);
    expect(list(path.join(root, 'missing')).status).toBe(66);
    fs.writeFileSync(path.join(root, 'file'), '');
    const f = list(path.join(root, 'file'));
    expect([0, 66]).not.toContain(f.status);
    fs.mkdirSync(path.join(root, 'real'));
    fs.writeFileSync(path.join(root, 'real', 'a'), '');
    fs.symlinkSync('real', path.join(root, 'link'));
    expect(listedEntries(list(path.join(root, 'link')).stdout)).toEqual([{ name: 'a', type: 'file' }]);
  });
});
