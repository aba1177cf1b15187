// A small private file of this machine's state, replaced whole: written beside it and renamed
// into place, so a reader sees the old text or the new one, never half of either.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

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
