// The destination folders of a session copy, checked and made in two programs on the target
// (one round trip each over ssh) instead of a stat/realpath per path component.
//
// 1. Inspect (read-only): for each folder, the missing components and the nearest existing
//    ancestor with its physical path. The caller refuses an ancestor that is not a folder or
//    that resolves outside the config root BEFORE anything is created.
// 2. Make: `mkdir -p` (0700, through umask) and the physical path of each folder afterwards,
//    so a symlink swapped in meanwhile is still caught.
// Paths travel as positional parameters and come back NUL-separated: no shell ever parses them.
import { HandoffError } from '../errors.js';
import type { Host } from '../host/host.js';

export interface FolderState {
  dir: string;
  /** Components that do not exist, outermost first. */
  missing: string[];
  /** Nearest existing ancestor (the folder itself when it exists). */
  existing: string;
  /** Whether that ancestor is a folder (a symlink to a folder counts). */
  existingIsDir: boolean;
  /** Its physical path (symlinks resolved), '' when it could not be entered. */
  existingReal: string;
}

const INSPECT_SCRIPT = [
  'for d do',
  '  a=$d; printf "D\\0%s\\0" "$d"',
  '  while [ ! -e "$a" ] && [ ! -L "$a" ]; do printf "M\\0%s\\0" "$a"; a=${a%/*}; [ -n "$a" ] || a=/; done',
  '  if [ -d "$a" ]; then t=dir; else t=other; fi',
  '  printf "A\\0%s\\0%s\\0" "$a" "$t"; (cd -P -- "$a" 2>/dev/null && pwd -P); printf "\\0"',
  'done',
].join('\n');

const MAKE_SCRIPT = ['umask 077', 'mkdir -p -- "$@" || exit 1', 'for d do (cd -P -- "$d" && pwd -P); printf "\\0"; done'].join('\n');

/** One trailing newline (from pwd) off. */
function chompOne(s: string): string {
  return s.endsWith('\n') ? s.slice(0, -1) : s;
}

export async function inspectFolders(host: Host, dirs: readonly string[]): Promise<FolderState[]> {
  if (dirs.length === 0) return [];
  const r = await host.run(['/bin/sh', '-c', INSPECT_SCRIPT, 'sh', ...dirs]);
  if (r.exitCode !== 0) throw new HandoffError('copy_failed', `Could not inspect the session folders on ${host.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`);
  const fields = r.stdout.split('\0');
  const out: FolderState[] = [];
  let cur: FolderState | null = null;
  for (let i = 0; i < fields.length - 1; ) {
    const tag = fields[i++];
    if (tag === 'D') {
      cur = { dir: fields[i++]!, missing: [], existing: '', existingIsDir: false, existingReal: '' };
      out.push(cur);
    } else if (tag === 'M' && cur) {
      cur.missing.unshift(fields[i++]!);
    } else if (tag === 'A' && cur) {
      cur.existing = fields[i++]!;
      cur.existingIsDir = fields[i++] === 'dir';
      cur.existingReal = chompOne(fields[i++] ?? '');
    } else {
      throw new HandoffError('copy_failed', `Unexpected answer while inspecting the session folders on ${host.label}.`);
    }
  }
  if (out.length !== dirs.length) throw new HandoffError('copy_failed', `Incomplete answer while inspecting the session folders on ${host.label}.`);
  return out;
}

/** mkdir -p each folder (0700); returns their physical paths, in order. */
export async function makeFolders(host: Host, dirs: readonly string[]): Promise<string[]> {
  if (dirs.length === 0) return [];
  const r = await host.run(['/bin/sh', '-c', MAKE_SCRIPT, 'sh', ...dirs]);
  if (r.exitCode !== 0) throw new HandoffError('copy_failed', `Could not create ${dirs.join(', ')} on ${host.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`);
  const reals = r.stdout.split('\0').slice(0, dirs.length).map(chompOne);
  if (reals.length !== dirs.length || reals.some((p) => !p.startsWith('/'))) {
    throw new HandoffError('copy_failed', `Could not resolve ${dirs.join(', ')} on ${host.label} after creating them.`);
  }
  return reals;
}
