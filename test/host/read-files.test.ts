// READ_FILES_SCRIPT (src/host/read-files.ts), several small files in one program, under each
// POSIX shell, plain and through gzip: hostile names are data (no canary appears), every small
// regular file comes back byte for byte, the rest (missing, a folder, a fifo, too big) is left
// out; and parseReadFiles refuses output that does not frame exactly.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parseReadFiles, READ_FILES_SCRIPT } from '../../src/host/read-files.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { canaryFolder, hostileFileNames } from './hostile-args.js';

const tempDir = tempDirs('ah-read-files-');
const MAX = 5000;

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('READ_FILES_SCRIPT under %s', (_name, shell) => {
  it.each([['plain', ''], ['gzip', 'gzip'], ['a compressor it lacks', 'no-such-zip']])('sends small files whole and leaves the rest out (%s)', (_how, z) => {
    const root = tempDir();
    const canaries = canaryFolder(root);
    const dir = path.join(root, "it's a \"folder\" $(touch x)");
    fs.mkdirSync(dir);
    const names = hostileFileNames(canaries);
    const want = new Map<string, Buffer>();
    for (const [i, n] of names.entries()) {
      const p = path.join(dir, n);
      const bytes = i % 3 === 0 ? Buffer.concat([randomBytes(i * 10), Buffer.from(`\n${i}\n-\n`)]) : Buffer.from(i % 3 === 1 ? `${n}\n` : '');
      fs.writeFileSync(p, bytes);
      want.set(p, bytes);
    }
    fs.writeFileSync(path.join(dir, 'the most'), Buffer.alloc(MAX, 0x61));
    want.set(path.join(dir, 'the most'), Buffer.alloc(MAX, 0x61));
    fs.writeFileSync(path.join(dir, 'one more'), Buffer.alloc(MAX + 1, 0x62));
    fs.mkdirSync(path.join(dir, 'sub'));
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    const left = ['one more', 'sub', 'fifo', 'missing'].map((n) => path.join(dir, n));
    const paths = [...want.keys(), ...left].sort(() => Math.random() - 0.5);
    const r = spawnSync(shell[0]!, [...shell.slice(1), '-c', READ_FILES_SCRIPT, 'sh', String(MAX), z, ...paths], { cwd: canaries, maxBuffer: 64 * 1024 * 1024 });
    expect(r.status, r.stderr.toString()).toBe(0);
    expect(String.fromCharCode(r.stdout[0]!)).toBe(z === 'gzip' ? 'z' : '-');
    const got = parseReadFiles(r.stdout, paths, MAX);
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [p, bytes] of want) expect(got.get(p)!.equals(bytes), p).toBe(true);
    expect(fs.readdirSync(canaries)).toEqual([]);
    expect(fs.readdirSync(root).sort()).toEqual(['canaries', path.basename(dir)].sort());
  });
});

describe('parseReadFiles', () => {
  const frame = (...parts: (string | Buffer)[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));

  it('reads plain and gzipped frames, and left-out files', () => {
    const body = frame('3\nabc', '-\n', '0\n', '2\n\n\n');
    const want = new Map([['/a', Buffer.from('abc')], ['/c', Buffer.alloc(0)], ['/d', Buffer.from('\n\n')]]);
    expect(parseReadFiles(frame('-', body), ['/a', '/b', '/c', '/d'], 10)).toEqual(want);
    expect(parseReadFiles(frame('z', gzipSync(body)), ['/a', '/b', '/c', '/d'], 10)).toEqual(want);
  });

  it.each<[string, Buffer, number]>([
    ['nothing at all', Buffer.alloc(0), 10],
    ['no flag', frame('3\nabc'), 10],
    ['a frame missing', frame('-', '3\nabc'), 10],
    ['a short frame', frame('-', '3\nabc', '5\nab'), 10],
    ['bytes after the last frame', frame('-', '3\nabc', '-\nx'), 10],
    ['a length that is no number', frame('-', '3\nabc', ' 1\nx'), 10],
    ['a file larger than asked', frame('-', '3\nabc', '11\n01234567890'), 10],
    ['a corrupt gzip stream', frame('z', 'not gzip'), 10],
  ])('refuses %s', (_what, out, max) => {
    expect(() => parseReadFiles(out, ['/a', '/b'], max)).toThrow();
  });
});
