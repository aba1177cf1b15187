// The new files of a unit in one program: their rewritten bytes cross as one (gzipped) tar stream,
// are unpacked, with their modes and times, into a private folder beside them, and moved into
// place one folder at a time. Grok's session is a dozen small files: one program each cost a round
// trip or two apiece, one program for them all costs one. The archive names a member by its
// group's number and the file's own name (never a folder): tar writes only inside the private
// folder; the destination folders are the program's positional arguments.
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
 * destinations' folders (each must resolve under the root once made); then per group g (0, 1, …)
 * of members bound for one folder: that folder, how many names follow, and the names. The archive
 * (bundleArchive) holds member "g/name" with its mode and time, which tar sets as it writes (in
 * the private folder, under umask 0); one mv puts a group in place. A chmod, a touch and a mv per
 * file were each a process. Prints each member's number (counted across the groups) once it is
 * in place; on a failure the members not printed were not installed. The unpacking folder is
 * removed when it ends (and by the session's undo, should the program be killed). Kept short: it
 * travels in every handoff's exec request.
 */
export const BUNDLE_INSTALL_SCRIPT = [
  'umask 077',
  't=$1 z=$2 n=$3; shift 3',
  `command -v tar >/dev/null 2>&1 || exit ${BUNDLE_NO_TOOLS}`,
  `[ "$z" != 1 ] || command -v gzip >/dev/null 2>&1 || exit ${BUNDLE_NO_TOOLS}`,
  'r=',
  // cd -P sets PWD to the physical path (no subshell, no newline lost).
  'while [ "$n" -gt 0 ]; do',
  `  { [ -d "$1" ] || mkdir -p -- "$1"; } && cd -P -- "$1" && d=$PWD || exit ${BUNDLE_FOLDER_FAILED}`,
  `  if [ -z "$r" ]; then r=$d; elif [ "$r" != / ]; then case $d in "$r" | "$r"/*) ;; *) printf '%s resolves to %s, outside %s\\n' "$1" "$d" "$r" >&2; exit ${BUNDLE_FOLDER_OUTSIDE} ;; esac; fi`,
  '  shift; n=$((n - 1))',
  'done',
  'rm -rf -- "$t" && mkdir -- "$t" || exit 70',
  "trap 'rm -rf -- \"$t\"' EXIT",
  'if [ "$z" = 1 ]; then gzip -dc; else cat; fi | (cd -- "$t" && umask 0 && tar -xof -) || exit 71',
  'g=0 i=0',
  'while [ $# -ge 2 ]; do',
  '  d=$1 m=$2; shift 2',
  // The group's sources as references to the positional names, built from numbers only.
  '  s=; j=1',
  '  while [ "$j" -le "$m" ]; do s="$s \\"\\$t/\\$g/\\${$j}\\""; j=$((j + 1)); done',
  '  eval "mv -f -- $s \\"\\$d/\\""; ok=$?',
  '  while [ "$m" -gt 0 ]; do',
  '    [ -e "$t/$g/$1" ] || [ -L "$t/$g/$1" ] || echo $i',
  '    i=$((i + 1)); m=$((m - 1)); shift',
  '  done',
  '  [ "$ok" = 0 ] || exit 72',
  '  g=$((g + 1))',
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

/** The members bound for one folder, one after another: one mv there. */
interface BundleGroup {
  folder: string;
  names: string[];
}

/** Consecutive members bound for the same folder, in order (so a member's number is its place in `members`). */
function bundleGroups(members: readonly Pick<BundleMember, 'file'>[]): BundleGroup[] {
  const groups: BundleGroup[] = [];
  for (const { file } of members) {
    const folder = path.dirname(file);
    const name = path.basename(file);
    if (name === '' || name === '.' || name === '..' || file === folder) throw new Error(`bundle: ${JSON.stringify(file)} names no file`);
    const last = groups[groups.length - 1];
    if (last?.folder === folder && !last.names.includes(name)) last.names.push(name);
    else groups.push({ folder, names: [name] });
  }
  return groups;
}

/** The program's argv: the folder to unpack in, whether stdin is gzipped, the folders to make first (the config root first), and the members' groups. */
export function bundleArgv(folder: string, gzipped: boolean, members: readonly BundleMember[], folders: readonly string[] = []): string[] {
  const groups = bundleGroups(members).flatMap((g) => [g.folder, String(g.names.length), ...g.names]);
  return ['/bin/sh', '-c', BUNDLE_INSTALL_SCRIPT, 'sh', folder, gzipped ? '1' : '0', String(folders.length), ...folders, ...groups];
}

/**
 * The members' bytes as the tar the program unpacks: "g/name" (its group's number, and the file's
 * own name, never a folder of it), each with its entry's mode and time. The header holds whole
 * seconds; a pax record carries the rest (GNU tar and bsdtar read it; BusyBox's keeps the
 * second, as SFTP does).
 */
export async function bundleArchive(members: readonly { entry: Pick<CopyEntry, 'mode' | 'mtimeMs'>; file: string }[], bodies: readonly Uint8Array[]): Promise<Buffer> {
  const names = bundleGroups(members).flatMap((g, k) => g.names.map((n) => `${k}/${n}`));
  const entries: TarEntry[] = members.map(({ entry }, i) => {
    const ms = Math.floor(entry.mtimeMs);
    const pax = ms > 0 && ms % 1000 !== 0 ? { pax: { mtime: `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}` } } : {};
    return { header: { name: names[i]!, size: bodies[i]!.length, type: 'file', mode: entry.mode & 0o7777, mtime: new Date(ms), uid: 0, gid: 0, ...pax }, body: bodies[i]! };
  });
  return Buffer.from(await packTar(entries));
}

let packerWarmed: Promise<unknown> | null = null;

/**
 * Pack a one-byte archive, once per process. The first packTar loads and compiles the web streams
 * it runs on (10–15 ms here), which a bundle made after an agent's quit would pay on the way to
 * the agent's start; made while the agent quits, it costs nothing anyone waits for.
 */
export function warmBundlePacker(): void {
  packerWarmed ??= packTar([{ header: { name: '0', size: 1, type: 'file' }, body: new Uint8Array(1) }]).catch(() => undefined);
}

/**
 * Write `members` (new files) on the target with one program; `folder` is where it unpacks them
 * (bundleFolder). `folders`: the config root and the destinations' folders, to make first (empty
 * when they exist).
 */
export async function installBundle(req: CopyRequest, matcher: RewriteMatcher, members: readonly BundleMember[], folder: string, folders: readonly string[] = []): Promise<BundleOutcome> {
  const read = await Promise.all(members.map((m) => memberBytes(req, matcher, m.entry)));
  const archive = await bundleArchive(members, read.map((r) => r.bytes));
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
