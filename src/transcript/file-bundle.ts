// The new files of a unit in one program: their rewritten bytes cross as one (gzipped) tar stream,
// are unpacked into a private folder beside them, and each is given its mode and times and renamed
// into place. Grok's session is a dozen small files: one program each cost a round trip or two
// apiece, one program for them all costs one. The archive names its members 0, 1, 2…: no path from
// a session ever reaches tar; the destinations are the program's positional arguments.
import path from 'node:path/posix';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { packTar, type TarEntry } from 'modern-tar';
import { HandoffError } from '../errors.js';
import { ContentHasher } from './arrivals.js';
import type { CopiedFile, CopyEntry, CopyRequest } from './copy-types.js';
import { sourceBytes } from './file-copy.js';
import type { RewriteMatcher } from './rewrite-matcher.js';

const gzip = promisify(zlib.gzip);

/** A file up to this size (on the source) may go in a bundle; larger ones stream on their own. */
export const BUNDLE_FILE_MAX = 1024 * 1024;
/** A bundle is held in memory whole: its files together stay under this. */
export const BUNDLE_TOTAL_MAX = 8 * 1024 * 1024;

/** The target lacks tar (or gzip for a compressed bundle): nothing was written, the files go one by one. */
export const BUNDLE_NO_TOOLS = 69;

/** A folder could not be made; one made resolves outside the config root (a symlink leads out). */
export const BUNDLE_FOLDER_FAILED = 74;
export const BUNDLE_FOLDER_OUTSIDE = 75;

/**
 * $1 the folder to unpack in (made, private; one of an earlier attempt is replaced), $2 1 when
 * stdin is gzipped, $3 how many folders follow to make first: the config root, then the
 * destinations' folders (each must resolve under the root once made; a root whose physical path
 * ends in a newline is refused); then per member i (0, 1, …) three arguments: its mode (octal),
 * its time (ISO, atime and mtime alike) and its destination. Prints each member's number once it is
 * in place; on a failure the members not printed were not installed. The unpacking folder is
 * removed when it ends (and by the session's undo, should the program be killed). Kept short:
 * it travels in every handoff's exec request.
 */
export const BUNDLE_INSTALL_SCRIPT = [
  'umask 077',
  't=$1 z=$2 n=$3; shift 3',
  `command -v tar >/dev/null 2>&1 || exit ${BUNDLE_NO_TOOLS}`,
  `[ "$z" != 1 ] || command -v gzip >/dev/null 2>&1 || exit ${BUNDLE_NO_TOOLS}`,
  'r=',
  'while [ "$n" -gt 0 ]; do',
  `  mkdir -p -- "$1" && d=$(cd -P -- "$1" && pwd -P) || exit ${BUNDLE_FOLDER_FAILED}`,
  `  if [ -z "$r" ]; then r=$d; elif [ "$r" != / ]; then case $d in "$r" | "$r"/*) ;; *) printf '%s resolves to %s, outside %s\\n' "$1" "$d" "$r" >&2; exit ${BUNDLE_FOLDER_OUTSIDE} ;; esac; fi`,
  '  shift; n=$((n - 1))',
  'done',
  'rm -rf -- "$t" && mkdir -- "$t" || exit 70',
  "trap 'rm -rf -- \"$t\"' EXIT",
  'if [ "$z" = 1 ]; then gzip -dc; else cat; fi | (cd -- "$t" && tar -xof -) || exit 71',
  'i=0',
  'while [ $# -ge 3 ]; do',
  '  chmod -- "$1" "$t/$i" && touch -d "$2" -- "$t/$i" && mv -f -- "$t/$i" "$3" || exit 72',
  '  echo $i; i=$((i + 1)); shift 3',
  'done',
].join('\n');

/** Where a bundle is unpacked: a private folder beside its first file, named by the copy's tag. */
export function bundleFolder(dir: string, tag: string): string {
  return path.join(dir, `.ah-bundle-${tag}`);
}

/** One new file of the unit: its entry and its absolute destination on the target. */
export interface BundleMember {
  entry: CopyEntry;
  file: string;
}

/** What the bundle did: the files now in place, and the failure that stopped the rest (if any). */
export type BundleOutcome = { kind: 'done'; files: CopiedFile[]; error: HandoffError | null } | { kind: 'no_tools' };

/**
 * The members worth one program: new files small enough to hold, in the unit's order, while they
 * fit together. Fewer than `fewest` gain nothing over the file's own program (one does when the
 * bundle makes the folders too).
 */
export function bundleMembers<T extends { entry: CopyEntry }>(candidates: readonly T[], fewest = 2): T[] {
  const chosen: T[] = [];
  let total = 0;
  for (const c of candidates) {
    const size = c.entry.size;
    if (size === undefined || size > BUNDLE_FILE_MAX || total + size > BUNDLE_TOTAL_MAX) continue;
    chosen.push(c);
    total += size;
  }
  return chosen.length >= fewest ? chosen : [];
}

/** The member's rewritten bytes, read whole. */
async function memberBytes(req: CopyRequest, matcher: RewriteMatcher, e: CopyEntry) {
  const { stream, counted, seen } = await sourceBytes(req, matcher, e);
  const hash = new ContentHasher();
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    hash.update(chunk);
    chunks.push(chunk);
  }
  return { bytes: Buffer.concat(chunks), content: hash.digest(), replacements: counted(), source: { path: e.source, sha256: seen.sha256(), size: seen.size(), mtimeMs: e.mtimeMs } };
}

/** The program's argv: the folder to unpack in, whether stdin is gzipped, the folders to make first (the config root first), and each member's install. */
export function bundleArgv(folder: string, gzipped: boolean, members: readonly BundleMember[], folders: readonly string[] = []): string[] {
  const installs = members.flatMap((m) => [(m.entry.mode & 0o7777).toString(8), new Date(m.entry.mtimeMs).toISOString(), m.file]);
  return ['/bin/sh', '-c', BUNDLE_INSTALL_SCRIPT, 'sh', folder, gzipped ? '1' : '0', String(folders.length), ...folders, ...installs];
}

/**
 * Write `members` (new files) on the target with one program; `folder` is where it unpacks them
 * (bundleFolder). `folders`: the config root and the destinations' folders, to make first (empty
 * when they exist).
 */
export async function installBundle(req: CopyRequest, matcher: RewriteMatcher, members: readonly BundleMember[], folder: string, folders: readonly string[] = []): Promise<BundleOutcome> {
  const read = await Promise.all(members.map((m) => memberBytes(req, matcher, m.entry)));
  const tarEntries: TarEntry[] = read.map((r, i) => ({ header: { name: String(i), size: r.bytes.length, type: 'file', mode: 0o600, uid: 0, gid: 0 }, body: r.bytes }));
  const archive = Buffer.from(await packTar(tarEntries));
  // Session text shrinks ~4× (the target's gzip undoes it; without one the files go one by one).
  const stdin = await gzip(archive, { level: 6 });
  const r = await req.target.run(bundleArgv(folder, true, members, folders), { stdin });
  if (r.exitCode === BUNDLE_NO_TOOLS) return { kind: 'no_tools' };
  const said = r.stderr.trim();
  if (r.exitCode === BUNDLE_FOLDER_OUTSIDE) throw new HandoffError('unsafe_destination', `Refusing to write there on ${req.target.label}: ${said}.`, { fix: `Remove the symlink that leads out of ${req.targetRoot}.` });
  if (r.exitCode === BUNDLE_FOLDER_FAILED) throw new HandoffError('copy_failed', `Making the session folders failed on ${req.target.label}: ${said || `exit ${r.exitCode}`}.`);
  const placed = new Set(r.stdout.split('\n').filter((l) => /^\d+$/.test(l)).map(Number));
  const files = members.flatMap((m, i): CopiedFile[] => {
    if (!placed.has(i)) return [];
    const { content, replacements, source } = read[i]!;
    return [{ path: m.file, action: 'created', sha256: content.sha256, size: content.size, verbatim: m.entry.verbatim, previous: null, backup: null, replacements, source, content, sent: source.size }];
  });
  const error = r.exitCode === 0 && files.length === members.length ? null : new HandoffError('copy_failed', `Writing the session files from ${folder} failed on ${req.target.label}: ${said || `exit ${r.exitCode}`}.`);
  return { kind: 'done', files, error };
}
