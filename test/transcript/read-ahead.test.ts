// read-ahead.ts: which of a unit's files are read ahead, and the early read after the quit kept
// only where the unit's stat confirms each file's size.
import { describe, expect, it } from 'vitest';
import type { FileStat, Host } from '../../src/host/host.js';
import { ARRIVAL_MIN_BYTES } from '../../src/transcript/arrivals.js';
import type { DestinationLook } from '../../src/transcript/destinations.js';
import { aheadPaths, readAhead, readEarly } from '../../src/transcript/read-ahead.js';

const KB = 1024;
const held = (size: number): FileStat => ({ type: 'file', size, mode: 0o600, mtimeMs: 0 }) as FileStat;

/** A source whose readFiles answers from `files` (as READ_FILES_SCRIPT would: each at most `max`), noting each call's paths. */
function source(files: Record<string, string>) {
  const calls: string[][] = [];
  const host = {
    readFiles: async (paths: readonly string[], max: number) => {
      calls.push([...paths]);
      return new Map(paths.flatMap((p) => (files[p] !== undefined && files[p]!.length <= max ? [[p, Buffer.from(files[p]!)] as const] : [])));
    },
  } as unknown as Host;
  return { host, calls };
}

const look = (dests: string[], stats: (FileStat | null)[]): Promise<DestinationLook> => Promise.resolve({ root: '/t', dests, dirs: ['/t'], states: [], stats });

describe('aheadPaths', () => {
  it('takes small files new to the target, and files too small for an arrival entry whatever the target holds', () => {
    const entries = [
      { source: '/s/new', size: 10 * KB },
      { source: '/s/held-big', size: ARRIVAL_MIN_BYTES },
      { source: '/s/held-tiny', size: ARRIVAL_MIN_BYTES - 1 },
      { source: '/s/unsized' },
      { source: '/s/huge', size: 256 * KB + 1 },
    ];
    expect(aheadPaths(entries, [null, held(1), held(1), null, null])).toEqual(['/s/new', '/s/held-tiny']);
  });

  it('stops at 1 MB in all, skipping what would pass it', () => {
    const entries = [200, 200, 200, 200, 200, 100].map((k, i) => ({ source: `/s/${i}`, size: k * KB }));
    expect(aheadPaths(entries, entries.map(() => null))).toEqual(['/s/0', '/s/1', '/s/2', '/s/3', '/s/4']);
  });
});

describe('readEarly', () => {
  it('reads what the planned unit would read ahead, one program', async () => {
    const { host, calls } = source({ '/s/a': 'aa', '/s/b': 'bbbb' });
    const got = await readEarly(host, [{ source: '/s/a', size: 2, dest: 'a' }, { source: '/s/b', size: 4, dest: 'b' }], '/t', look(['/t/a', '/t/b'], [null, held(1)]));
    expect(calls).toEqual([['/s/a', '/s/b']]);
    expect([...got.keys()]).toEqual(['/s/a', '/s/b']);
  });

  it('reads nothing without the look at those very destinations', async () => {
    const { host, calls } = source({ '/s/a': 'aa' });
    const planned = [{ source: '/s/a', size: 2, dest: 'a' }];
    expect((await readEarly(host, planned, '/t', Promise.resolve(null))).size).toBe(0);
    expect((await readEarly(host, planned, '/t', look(['/t/elsewhere'], [null]))).size).toBe(0);
    expect((await readEarly(host, planned, '/t', Promise.reject(new Error('look failed')))).size).toBe(0);
    expect(calls).toEqual([]);
  });
});

describe('readAhead', () => {
  it('keeps each early file whose size the unit confirms, and reads only the others', async () => {
    const { host, calls } = source({ '/s/same': 'same', '/s/grew': 'grew more', '/s/new': 'new' });
    const early = Promise.resolve(new Map([['/s/same', Buffer.from('same')], ['/s/grew', Buffer.from('grew')]]));
    const entries = [
      { source: '/s/same', size: 4 },
      { source: '/s/grew', size: 9 },
      { source: '/s/new', size: 3 },
    ];
    const got = await readAhead(host, entries, [null, null, null], early);
    expect(calls).toEqual([['/s/grew', '/s/new']]);
    expect(Object.fromEntries([...got].map(([p, b]) => [p, b.toString()]))).toEqual({ '/s/same': 'same', '/s/grew': 'grew more', '/s/new': 'new' });
  });

  it('asks nothing more when the early read holds every file', async () => {
    const { host, calls } = source({});
    const got = await readAhead(host, [{ source: '/s/a', size: 2 }], [null], Promise.resolve(new Map([['/s/a', Buffer.from('aa')]])));
    expect(calls).toEqual([]);
    expect(got.get('/s/a')?.toString()).toBe('aa');
  });

  it('reads them all when the early read failed or there was none; an early file the unit no longer has is dropped', async () => {
    const { host, calls } = source({ '/s/a': 'aa' });
    await readAhead(host, [{ source: '/s/a', size: 2 }], [null], Promise.reject(new Error('lost')));
    await readAhead(host, [{ source: '/s/a', size: 2 }], [null]);
    const dropped = await readAhead(host, [{ source: '/s/a', size: 2 }], [held(1)], Promise.resolve(new Map([['/s/gone', Buffer.from('x')]])));
    expect(calls).toEqual([['/s/a'], ['/s/a'], ['/s/a']]);
    expect([...dropped.keys()]).toEqual(['/s/a']);
  });
});
