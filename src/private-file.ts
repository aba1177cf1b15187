// Small private files of this machine's state (hints kept between handoffs): read with a schema
// (a missing or foreign file is no file), replaced whole (written beside it and renamed into
// place, so a reader sees the old text or the new one, never half of either), their entries kept
// in recency order under a cap.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';

/** The file's JSON as `schema` reads it; null when it is missing, unreadable or not that shape. */
export function readPrivateJson<S extends z.ZodTypeAny>(file: string, schema: S): z.infer<S> | null {
  try {
    const parsed = schema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    return parsed.success ? (parsed.data as z.infer<S>) : null;
  } catch {
    return null;
  }
}

/** Write `text` to `file` (mode 0600, its folder made 0700 when missing), atomically. */
export async function replacePrivateFile(file: string, text: string): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  await fs.promises.writeFile(tmp, text, { mode: 0o600 });
  await fs.promises.rename(tmp, file).catch(async (err: unknown) => {
    await fs.promises.rm(tmp, { force: true });
    throw err;
  });
}

/**
 * `entries` with `key` set to `value` as the newest (undefined: removed), keeping the `max`
 * newest: key order is the recency order the cap drops by.
 */
export function newestLast<T>(entries: Readonly<Record<string, T>>, key: string, value: T | undefined, max: number): Record<string, T> {
  const rest = Object.entries(entries).filter(([k]) => k !== key);
  return Object.fromEntries([...rest, ...(value === undefined ? [] : [[key, value] as const])].slice(-max));
}
