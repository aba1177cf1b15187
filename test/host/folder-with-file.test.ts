// FOLDER_WITH_FILE_PROGRAM (src/host/folder-with-file.ts, Host.makeFolderWith over ssh): a lock's
// folder made and its owner written in one program, under each POSIX shell, with hostile folder
// names and owner texts as data: private modes, exactly one winner of many, no folder made in a
// missing parent.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FOLDER_NOT_MADE as LOCK_NOT_MADE, FOLDER_WITH_FILE_PROGRAM } from '../../src/host/folder-with-file.js';
import { canaryFolder, hostileArgs } from './hostile-args.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tempDir = tempDirs('ah-take-lock-');

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('FOLDER_WITH_FILE_PROGRAM under %s', (_name, shell) => {
  const take = (dir: string, owner: string, cwd: string) => spawnSync(shell[0]!, [...shell.slice(1), '-c', FOLDER_WITH_FILE_PROGRAM, 'sh', dir, 'owner.json', owner], { encoding: 'utf8', cwd });

  it('makes the folder and writes the owner, private, hostile names and texts as data; a second take is refused', () => {
    const root = tempDir();
    const canaries = canaryFolder(root);
    const locks = path.join(root, 'locks');
    fs.mkdirSync(locks);
    for (const [i, text] of hostileArgs(canaries).entries()) {
      const name = text.replace(/\//g, '_').slice(0, 200);
      if (name === '' || name === '.' || name === '..' || name.includes('\0')) continue;
      const dir = path.join(locks, name);
      const owner = JSON.stringify({ handoff: text, n: i });
      const r = take(dir, owner, canaries);
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
      expect(fs.statSync(path.join(dir, 'owner.json')).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(path.join(dir, 'owner.json'), 'utf8')).toBe(`${owner}\n`);
      expect(take(dir, '{"other":1}', canaries).status).toBe(LOCK_NOT_MADE);
      expect(fs.readFileSync(path.join(dir, 'owner.json'), 'utf8')).toBe(`${owner}\n`);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('of many at once exactly one takes it; none makes a missing parent', async () => {
    const root = tempDir();
    const dir = path.join(root, 'lock');
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        new Promise<number | null>((resolve) => {
          spawn(shell[0]!, [...shell.slice(1), '-c', FOLDER_WITH_FILE_PROGRAM, 'sh', dir, 'owner.json', `{"n":${i}}`]).on('exit', (code) => resolve(code));
        }),
      ),
    );
    expect(runs.filter((c) => c === 0)).toHaveLength(1);
    expect(runs.filter((c) => c === LOCK_NOT_MADE)).toHaveLength(7);
    expect(take(path.join(root, 'no parent', 'lock'), '{}', root).status).toBe(LOCK_NOT_MADE);
    expect(fs.existsSync(path.join(root, 'no parent'))).toBe(false);
  });
});
