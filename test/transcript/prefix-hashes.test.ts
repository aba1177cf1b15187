// remotePrefixHashes (src/transcript/target-files.ts), verify's one program for every session
// file's prefix hash, under each POSIX shell: hostile file names are only data, each line answers
// its own file (a missing one or a folder with `-`), and the prefix is the count asked for.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Host, RunOptions } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { remotePrefixHashes } from '../../src/transcript/target-files.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { hostileArgs } from '../host/hostile-args.js';

const tempDir = tempDirs('ah-prefix-hashes-');
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A LocalHost whose `/bin/sh -c` programs run under `shell` instead. */
function under(shell: readonly string[]): Host {
  const host = new LocalHost();
  const run = host.run.bind(host);
  host.run = (argv: readonly string[], opts?: RunOptions) => run(argv[0] === '/bin/sh' ? [...shell, ...argv.slice(1)] : argv, opts);
  return host;
}

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('remotePrefixHashes under %s', (_name, shell) => {
  it('hashes each file up to its count with hostile names as data; null for what is not a regular file', async () => {
    const dir = tempDir();
    const canaries = path.join(dir, 'canaries');
    fs.mkdirSync(canaries);
    const names = [...new Set(hostileArgs(canaries).map((a) => a.replaceAll('/', '∕')).filter((a) => a !== '' && Buffer.byteLength(a) < 200))];
    const files = names.map((n, i) => {
      const p = path.join(dir, n);
      const bytes = Buffer.from(`line ${i} of ${n}\n\0\xff tail`, 'latin1');
      fs.writeFileSync(p, bytes);
      return { path: p, size: i % 3 === 0 ? bytes.length : 5, bytes };
    });
    fs.mkdirSync(path.join(dir, 'a folder'));
    const asked = [...files, { path: path.join(dir, 'missing'), size: 3, bytes: null }, { path: path.join(dir, 'a folder'), size: 0, bytes: null }];
    const hashes = await remotePrefixHashes(under(shell), asked);
    expect(hashes).toEqual(asked.map((f) => (f.bytes ? sha(f.bytes.subarray(0, f.size)) : null)));
    expect(fs.readdirSync(canaries)).toEqual([]);
  });
});

describe('remotePrefixHashes', () => {
  it('asks nothing for no files', async () => {
    const host = new LocalHost();
    host.run = () => Promise.reject(new Error('asked'));
    expect(await remotePrefixHashes(host, [])).toEqual([]);
  });
});
