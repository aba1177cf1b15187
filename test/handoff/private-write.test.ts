// WRITE_PRIVATE (src/handoff/private-write.ts), a small private file in one program, under each
// POSIX shell: the text exactly, mode 0600, missing folders made 0700, an existing file replaced
// whole, nothing left beside it on failure, and no path ever run.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { WRITE_PRIVATE, writePrivate } from '../../src/handoff/private-write.js';
import { LocalHost } from '../../src/host/local.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { hostileArgs } from '../host/hostile-args.js';

const tempDir = tempDirs('ah-private-write-');

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('WRITE_PRIVATE under %s', (_name, shell) => {
  const write = (file: string, text: string) => spawnSync(shell[0]!, [...shell.slice(1), '-c', WRITE_PRIVATE, 'sh', file], { input: text, encoding: 'utf8' });

  it('writes each hostile path privately, replacing what was there', () => {
    const root = tempDir();
    const canaries = path.join(root, 'canaries');
    fs.mkdirSync(canaries);
    for (const [i, word] of hostileArgs(canaries).entries()) {
      const name = word.replace(/\//g, '_').slice(0, 200) || 'empty';
      const file = path.join(root, `state ${i}`, name, `${name}.json`);
      expect(write(file, 'old\n').status).toBe(0);
      const r = write(file, `{"w":${JSON.stringify(word.slice(0, 1000))}}\n`);
      expect(r.status, r.stderr).toBe(0);
      expect(fs.readFileSync(file, 'utf8')).toBe(`{"w":${JSON.stringify(word.slice(0, 1000))}}\n`);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
      expect(fs.readdirSync(path.dirname(file))).toEqual([path.basename(file)]);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('a folder that cannot be made: exit 1, nothing written', () => {
    const root = tempDir();
    fs.writeFileSync(path.join(root, 'a-file'), '');
    expect(write(path.join(root, 'a-file', 'x.json'), 'text').status).not.toBe(0);
    expect(fs.readdirSync(root)).toEqual(['a-file']);
  });
});

describe('writePrivate', () => {
  it('says what it could not write', async () => {
    const root = tempDir();
    fs.writeFileSync(path.join(root, 'a-file'), '');
    await expect(writePrivate(new LocalHost(), path.join(root, 'a-file', 'x.json'), '{}', 'the moved note')).rejects.toThrow(/could not write the moved note/);
    await writePrivate(new LocalHost(), path.join(root, 'ok', 'x.json'), '{}\n', 'the moved note');
    expect(fs.readFileSync(path.join(root, 'ok', 'x.json'), 'utf8')).toBe('{}\n');
  });
});
