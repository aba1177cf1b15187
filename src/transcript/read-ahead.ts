// The unit's small files, read from the source together (over ssh one program, where a stream
// each costs a channel of its own): those new to the target, and those too small for an arrival
// entry (worthAnArrival), which are read whole whatever the target holds. Larger files that the
// target may hold part of are streamed as they are needed (a tail, a new first line).
//
// After the quit they can be read beside the unit's stat, from the unit as planned (readEarly):
// over ssh that is a round trip sooner. The copy keeps each such file whose size the stat
// confirms and reads the rest as before.
import type { FileStat, Host } from '../host/host.js';
import { worthAnArrival } from './arrivals.js';
import type { CopyEntry } from './copy-types.js';
import { destinationUnder, isLookAt, type DestinationLook } from './destinations.js';

/** Most bytes of one file, and of all, read ahead together from the source. */
const READ_AHEAD_MAX_EACH = 256 * 1024;
const READ_AHEAD_MAX_TOTAL = 1024 * 1024;

type Sized = Pick<CopyEntry, 'source' | 'size'>;

/** The source files to read ahead, given what the target holds at each entry's destination. */
export function aheadPaths(entries: readonly Sized[], existingOf: readonly (FileStat | null)[]): string[] {
  let total = 0;
  return entries.flatMap((e, i) => {
    const size = e.size;
    if (size === undefined || size > READ_AHEAD_MAX_EACH || total + size > READ_AHEAD_MAX_TOTAL) return [];
    if (existingOf[i] !== null && worthAnArrival(size)) return [];
    total += size;
    return [e.source];
  });
}

/**
 * Read ahead the small files of `planned` (the unit before the quit, going under `root`) that the
 * look at their destinations says the copy will want. Nothing is read without that look.
 */
export async function readEarly(source: Host, planned: readonly Pick<CopyEntry, 'source' | 'size' | 'dest'>[], root: string, looked: Promise<DestinationLook | null>): Promise<ReadonlyMap<string, Buffer>> {
  const look = await looked.catch(() => null);
  if (!isLookAt(look, root, planned.map((e) => destinationUnder(root, e.dest)))) return new Map();
  const paths = aheadPaths(planned, look.stats);
  return paths.length > 0 ? source.readFiles(paths, READ_AHEAD_MAX_EACH) : new Map();
}

/** The files to read ahead for `entries` (the unit as the quit left it): those read early whose size it confirms, the rest read now. */
export async function readAhead(source: Host, entries: readonly Sized[], existingOf: readonly (FileStat | null)[], early?: Promise<ReadonlyMap<string, Buffer>>): Promise<ReadonlyMap<string, Buffer>> {
  const paths = aheadPaths(entries, existingOf);
  if (paths.length === 0) return new Map();
  const got = (await early?.catch(() => null)) ?? new Map<string, Buffer>();
  const sizeOf = new Map(entries.map((e) => [e.source, e.size]));
  const kept = new Map(paths.flatMap((p) => (got.get(p)?.length === sizeOf.get(p) ? [[p, got.get(p)!] as const] : [])));
  const rest = paths.filter((p) => !kept.has(p));
  const more = rest.length > 0 ? await source.readFiles(rest, READ_AHEAD_MAX_EACH) : new Map<string, Buffer>();
  return new Map([...kept, ...more]);
}
