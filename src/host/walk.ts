// Every regular file below a folder with its size, mode and time (Host.walk). Over ssh one
// program: a session folder of a dozen files is one round trip, where a listing and then a
// stat of each cost two or more. Symlinks are neither followed nor listed (a unit never leaves
// its store through one). The host's own `stat` is asked, GNU's and busybox's `-c` or BSD's `-f`;
// without either the program exits WALK_NO_STAT and the caller walks with list and stat.
//
// Output per file: `size mode mtime` (mode in octal, mtime in whole seconds, as SFTP has it),
// NUL, the path, NUL.
import { HandoffError } from '../errors.js';
import type { DirEntry, FileStat, WalkedFile } from './host.js';

export const WALK_NOT_A_FOLDER = 66;
export const WALK_NO_STAT = 69;

/** $1 the folder (not a symlink to one). */
export const WALK_SCRIPT = [
  "if stat -c '%s' / >/dev/null 2>&1; then attrs() { stat -c '%s %a %Y' -- \"$1\"; }",
  "elif stat -f '%z' / >/dev/null 2>&1; then attrs() { stat -f '%z %Lp %m' -- \"$1\"; }",
  `else exit ${WALK_NO_STAT}; fi`,
  `{ [ -d "$1" ] && [ ! -L "$1" ]; } || exit ${WALK_NOT_A_FOLDER}`,
  // `f` is shared by every level; each level's loop has its words already, so that is harmless.
  'walk() {',
  '  for f in "$1"/* "$1"/.[!.]* "$1"/..?*; do',
  '    if [ -L "$f" ]; then continue',
  '    elif [ -d "$f" ]; then walk "$f"',
  '    elif [ -f "$f" ] && a=$(attrs "$f"); then printf "%s\\0%s\\0" "$a" "$f"',
  '    fi',
  '  done',
  '}',
  'walk "$1"',
].join('\n');

/** WALK_SCRIPT's output → the files; an entry that does not parse is left out. */
export function walkedFiles(stdout: string): WalkedFile[] {
  const fields = stdout.split('\0');
  const out: WalkedFile[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const m = /^(\d+) ([0-7]+) (\d+)$/.exec(fields[i]!.trim());
    if (!m) continue;
    out.push({ path: fields[i + 1]!, stat: { type: 'file', size: Number(m[1]), mode: parseInt(m[2]!, 8) & 0o7777, mtimeMs: Number(m[3]) * 1000 } });
  }
  return out;
}

/**
 * The same walk by listing each folder and stat'ing its files, side by side (LocalHost; an ssh
 * host without a `stat` program). `ops.list` rejects with `not_found` for a missing folder.
 */
export async function walkByListing(ops: { stat(p: string): Promise<FileStat | null>; list(dir: string): Promise<DirEntry[]> }, dir: string): Promise<WalkedFile[]> {
  if ((await ops.stat(dir))?.type !== 'dir') return [];
  const below = async (d: string): Promise<WalkedFile[]> => {
    const entries = await ops.list(d).catch((err: unknown) => {
      if (err instanceof HandoffError && err.code === 'not_found') return [];
      throw err;
    });
    const found = await Promise.all(
      entries.map(async (e): Promise<WalkedFile[]> => {
        const p = d.endsWith('/') ? `${d}${e.name}` : `${d}/${e.name}`;
        if (e.type === 'dir') return below(p);
        if (e.type !== 'file') return [];
        const st = await ops.stat(p);
        return st?.type === 'file' ? [{ path: p, stat: st }] : [];
      }),
    );
    return found.flat();
  };
  return below(dir);
}
