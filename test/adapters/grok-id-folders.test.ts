// GROK_ID_FOLDERS_PROGRAM (adapters/grok.ts, locating a grok session by its id): one program that
// names each project folder of grok's sessions folder holding the id, under each POSIX shell, with
// hostile folder names (the sessions folder's own among them) as data.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GROK_ID_FOLDERS_PROGRAM } from '../../adapters/grok.js';
import { canaryFolder, hostileFileNames } from '../host/hostile-args.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tempDir = tempDirs('ah-grok-ids-');
const ID = '01a24b7a-2ee5-7491-b9aa-f6dde7cf490a';

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('GROK_ID_FOLDERS_PROGRAM under %s', (_name, shell) => {
  const find = (sessions: string, cwd: string) => {
    const r = spawnSync(shell[0]!, [...shell.slice(1), '-c', GROK_ID_FOLDERS_PROGRAM, 'sh', sessions, ID], { encoding: 'utf8', cwd });
    return { status: r.status, stderr: r.stderr, found: r.stdout.split('\0').filter((p) => p !== '') };
  };

  it('names every project folder holding the id, hidden ones too, and nothing else; names are data', () => {
    const root = tempDir();
    const canaries = canaryFolder(root);
    const names = hostileFileNames(canaries).filter((n) => !n.includes('\0'));
    for (const [i, hostile] of names.slice(0, 12).entries()) {
      const sessions = path.join(root, `${i} ${hostile}`, 'sessions');
      const want: string[] = [];
      for (const [j, name] of names.entries()) {
        const project = path.join(sessions, name);
        fs.mkdirSync(project, { recursive: true });
        // Every third holds the id as a folder, every third as a file (not a session), the rest nothing.
        if (j % 3 === 0) {
          fs.mkdirSync(path.join(project, ID));
          want.push(path.join(project, ID));
        } else if (j % 3 === 1) fs.writeFileSync(path.join(project, ID), 'not a session');
      }
      fs.mkdirSync(path.join(sessions, '.hidden', ID), { recursive: true });
      want.push(path.join(sessions, '.hidden', ID));
      fs.mkdirSync(path.join(sessions, '..two dots', ID), { recursive: true });
      want.push(path.join(sessions, '..two dots', ID));
      const r = find(sessions, canaries);
      expect(r.status, r.stderr).toBe(0);
      expect(r.found.sort()).toEqual(want.sort());
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('names nothing, and succeeds, for a sessions folder that is empty or missing', () => {
    const root = tempDir();
    fs.mkdirSync(path.join(root, 'sessions'));
    expect(find(path.join(root, 'sessions'), root)).toMatchObject({ status: 0, found: [] });
    expect(find(path.join(root, 'missing'), root)).toMatchObject({ status: 0, found: [] });
  });
});
