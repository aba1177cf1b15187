// CACHE_LISTS_SCRIPT (src/git/checkout-cache.ts), the look's question "does the target's cache
// list these checkouts already?", under each POSIX shell, with hostile folder names as data: the
// cache as saveCache writes it answers yes, one missing folder (or a folder that is only the
// prefix of a listed one) no, a missing file no, and nothing in a name is ever run.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CACHE_LISTS_SCRIPT, cacheListsQuestion, withEntry } from '../../src/git/checkout-cache.js';
import { POSIX_SHELLS, runUnder } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { hostileArgs } from '../host/hostile-args.js';

const tempDir = tempDirs('ah-cache-lists-');

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('CACHE_LISTS_SCRIPT under %s', (_name, shell) => {
  const ask = (file: string, key: string, paths: readonly string[]): string => {
    const argv = cacheListsQuestion(file, key, paths).program.argv;
    // The question's argv is `/bin/sh -c SCRIPT sh …args`: run the same arguments under this shell.
    expect(argv.slice(0, 4)).toEqual(['/bin/sh', '-c', CACHE_LISTS_SCRIPT, 'sh']);
    return runUnder(shell, CACHE_LISTS_SCRIPT, argv.slice(4)).trim();
  };

  it('answers yes only when every folder is listed, spelled as the JSON spells it', () => {
    const dir = tempDir();
    const canaries = path.join(dir, 'canaries');
    fs.mkdirSync(canaries);
    const folders = [...hostileArgs(canaries), '-e', '--', '-rf', '/home/vega/code/api', '/home/vega/code/api-v2'].map((f) => (f.startsWith('/') ? f : `/home/vega/${f}`));
    const key = 'github.com/acme/api';
    const file = path.join(dir, 'repos.json');
    fs.writeFileSync(file, JSON.stringify(withEntry({ version: 1, remotes: {} }, key, folders), null, 2) + '\n');

    expect(ask(file, key, folders)).toBe('yes');
    expect(ask(file, key, [folders[7]!, folders[0]!])).toBe('yes');
    expect(ask(file, key, [...folders, '/home/vega/code/other'])).toBe('no');
    // A prefix of a listed folder is not that folder.
    expect(ask(file, key, ['/home/vega/code/ap'])).toBe('no');
    expect(ask(file, 'github.com/acme/web', [folders[0]!])).toBe('no');
    expect(ask(path.join(dir, 'missing.json'), key, [folders[0]!])).toBe('no');
    expect(fs.readdirSync(canaries)).toEqual([]);
  });
});
