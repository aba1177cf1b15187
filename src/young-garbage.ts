// Streaming a large session allocates a buffer for every chunk at every stage (read, rewrite,
// gzip, ssh packets), each dead a moment later. V8 frees such buffers only when it collects its
// young generation, which fills with small JS objects slowly: between two collections tens of MB
// of dead buffers pile up, and the process's peak RSS rises by that much (measured: +42 MB on a
// 200 MB session). A young-generation collection every few MB of stream keeps the pile small for
// about a millisecond each. V8's `gc` is reached the documented way for a process started without
// --expose-gc: the flag set at run time, and the function taken from a fresh context.
import v8 from 'node:v8';
import vm from 'node:vm';

type GcFunction = (opts?: { type?: 'minor' | 'major' }) => void;

let gc: GcFunction | null | undefined;

/** V8's gc function, or null where it cannot be had (then nothing is collected early). */
export function youngCollector(): GcFunction | null {
  if (gc !== undefined) return gc;
  try {
    v8.setFlagsFromString('--expose-gc');
    const found: unknown = vm.runInNewContext('typeof gc === "function" ? gc : null');
    gc = typeof found === 'function' ? (found as GcFunction) : null;
  } catch {
    gc = null;
  }
  return gc;
}

/** Bytes of stream between two collections. */
export const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;

/**
 * A byte counter for a stream: collects the young generation each time `every` more bytes went
 * by. (Every 1 MB was measured worse than every 4 MB: what is alive at two collections in a row
 * moves to the old generation, which is freed far more seldom.)
 */
export function youngGarbageSweeper(every = COLLECT_EVERY_BYTES, collect: () => void = () => youngCollector()?.({ type: 'minor' })): (bytes: number) => void {
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < every) return;
    since = 0;
    collect();
  };
}
