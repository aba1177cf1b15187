// Transfer: HEAD and the snapshot reach the target repository as refs/handoff/<id>/{head,wip},
// carrying only the objects the target lacks, in ONE program over the hosts' existing connections.
//
// Negotiation without a git protocol session (no `git push`, no second SSH connection, the
// target never connects back):
//   1. target: `git for-each-ref --format=%(objectname)` — every tip it has (one command);
//   2. source: `git cat-file --batch-check` on those tips — keep the ones the source knows too;
//   3. source: `git pack-objects --thin --stdout --revs` with `head wip ^tip…` on stdin, into
//      target: `git index-pack --stdin --fix-thin` (whole when small, else streamed through). A
//      thin pack may store objects as deltas against objects behind the common tips; --fix-thin
//      completes them on the target.
//   4. target: `git update-ref --stdin` creates both refs in one transaction.
// A tip the source has is, with all its history, on both sides (git's connectivity invariant),
// so `^tip` excludes exactly what the target already stores.
import { PassThrough, Transform, type Readable } from 'node:stream';
import { HandoffError } from '../errors.js';
import { HANDOFF_ID_RE } from '../handoff-id.js';
import { stepBytes, type ByteMeter } from '../progress.js';
import type { Host } from '../host/host.js';
import { GIT_BASE_CONFIG, GIT_BASE_ENV, git, gitFailed } from './git.js';

export const HANDOFF_REF_PREFIX = 'refs/handoff';

export { newHandoffId } from '../handoff-id.js';

export function handoffRefs(id: string): { head: string; wip: string } {
  if (!HANDOFF_ID_RE.test(id)) throw new HandoffError('bad_handoff_id', `Not a handoff id: ${JSON.stringify(id)}`);
  return { head: `${HANDOFF_REF_PREFIX}/${id}/head`, wip: `${HANDOFF_REF_PREFIX}/${id}/wip` };
}

export interface TransferInput {
  source: Host;
  /** Any folder of the source repository (its root). */
  sourceRepo: string;
  target: Host;
  /** Any folder of the target repository (its main checkout). */
  targetRepo: string;
  id: string;
  head: string;
  /** Snapshot commit, or null when there is no uncommitted work (only the head ref is made). */
  wip: string | null;
  timeoutMs?: number;
  /**
   * The target's ref tips, when asked earlier (e.g. while the agent quits). Tips a little old are
   * fine: they only tell which objects need not be sent, and objects outlive a moved ref.
   */
  targetTips?: Promise<string[]>;
  /** Of those tips, the ones the source has too, when asked earlier (then targetTips is not needed). */
  commonTips?: Promise<string[]>;
  /** Told the pack's bytes as they go (default: the running progress step's meter). */
  onBytes?: ByteMeter;
  /**
   * A small private file the same program writes before anything of the transfer arrives (the
   * handoff's incoming marker, which must be there first), its folder made 0700 when missing.
   */
  firstFile?: FirstFile;
}

export interface FirstFile {
  dir: string;
  file: string;
  /** Written with a line end after it. */
  text: string;
}

export interface TransferResult {
  refs: { head: string; wip: string | null };
  /** Bytes of pack data that went from source to target. */
  bytesSent: number;
  /** Tips the target had that the source also has (the pack excludes their history). */
  commonTips: number;
  /** True when the target had every object already and no pack was sent. */
  skipped: boolean;
}

/** Object ids of every ref tip of the target repository (deduplicated). */
export async function targetTips(target: Host, targetRepo: string): Promise<string[]> {
  const out = (await git(target, targetRepo, ['for-each-ref', '--format=%(objectname)'])).stdout;
  return [...new Set(out.split('\n').filter((l) => /^[0-9a-f]{40,64}$/.test(l)))];
}

/** Of `oids`, the ones present in the repository at `repo` on `host` (one `cat-file --batch-check`). */
export async function presentObjects(host: Host, repo: string, oids: readonly string[]): Promise<string[]> {
  if (oids.length === 0) return [];
  const out = (await git(host, repo, ['cat-file', '--batch-check=%(objectname) %(objecttype)'], { stdin: oids.join('\n') + '\n' })).stdout;
  return out
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f.length === 2 && f[1] !== 'missing' && /^[0-9a-f]{40,64}$/.test(f[0] ?? ''))
    .map((f) => f[0] as string);
}

/** Send head (and wip) to the target as refs/handoff/<id>/…, with only the objects it lacks. */
export async function transfer(input: TransferInput): Promise<TransferResult> {
  const { source, target, sourceRepo, targetRepo, head, wip } = input;
  const refs = handoffRefs(input.id);
  const common = await (input.commonTips ?? (async () => presentObjects(source, sourceRepo, await (input.targetTips ?? targetTips(target, targetRepo))))());
  const commonSet = new Set(common);
  const wanted = wip ? [head, wip] : [head];
  let bytesSent = 0;
  const skipped = wanted.every((oid) => commonSet.has(oid));
  const updates = [`create ${refs.head} ${head}`, ...(wip ? [`create ${refs.wip} ${wip}`] : [])];
  // The first file, the pack and the refs arrive through one remote program (one exec, not three).
  if (!skipped) bytesSent = await streamPack(input, wanted, common, updates);
  else await receive(input, updates, null);
  return { refs: { head: refs.head, wip: wip ? refs.wip : null }, bytesSent, commonTips: common.length, skipped };
}

/**
 * A pack up to this size is collected before it goes (a handoff's pack is usually a few KB): a
 * whole small input travels with its command in one round trip over ssh (on an open command
 * shell, see host/ssh-shell.ts), where a stream needs a channel of its own (three). A larger
 * pack streams, in constant memory.
 */
export const SMALL_PACK_BYTES = 12 * 1024;

/** pack-objects on the source → index-pack on the target (whole when small, else as one stream); returns the byte count. */
async function streamPack(input: TransferInput, wanted: readonly string[], exclude: readonly string[], updates: readonly string[]): Promise<number> {
  const { source, sourceRepo } = input;
  const onBytes = input.onBytes ?? stepBytes();
  const fromSource = new PassThrough();
  const revs = [...wanted, ...exclude.map((t) => `^${t}`)].join('\n') + '\n';
  const packArgs = ['pack-objects', '--thin', '--stdout', '--revs', '--delta-base-offset', '-q'];
  const opts = input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {};
  const packing = source.run(['git', ...packArgs], { cwd: sourceRepo, stdin: revs, stdout: fromSource, ...opts });
  // A pack-objects that fails (or cannot start) may never end its output: it is told at once.
  const packFailed = packing.then((r) => {
    if (r.exitCode !== 0) throw gitFailed(source, sourceRepo, packArgs, r);
    return new Promise<never>(() => undefined);
  });
  packFailed.catch(() => undefined);
  const head = await Promise.race([collectUpTo(fromSource, SMALL_PACK_BYTES), packFailed]);
  let bytes = Buffer.isBuffer(head) ? head.length : 0;
  const stdin = Buffer.isBuffer(head)
    ? head
    : head.pipe(
        new Transform({
          transform(chunk: Buffer, _enc, done) {
            bytes += chunk.length;
            onBytes?.(chunk.length);
            done(null, chunk);
          },
        }),
      );
  const indexing = receive(input, updates, stdin);
  // If the target stops reading early, keep draining so the source never blocks on a full pipe.
  // (Both outcomes handled here: a rejection is the caller's to see, through `indexing` below.)
  const drain = (): void => void (Buffer.isBuffer(stdin) ? undefined : stdin.resume());
  indexing.then(drain, drain);
  const [packed, indexed] = await Promise.allSettled([packing, indexing]);
  if (packed.status === 'rejected') throw packed.reason;
  if (indexed.status === 'rejected') throw indexed.reason;
  if (packed.value.exitCode !== 0) throw gitFailed(source, sourceRepo, packArgs, packed.value);
  return bytes;
}

/** The receiving program's argv (exported for its table test): see RECEIVE_SCRIPT. */
export function receiveArgv(id: string, updates: readonly string[], firstFile: FirstFile | undefined, pack: boolean): string[] {
  const first = firstFile ? [firstFile.dir, firstFile.file, firstFile.text] : ['', '', ''];
  return ['/bin/sh', '-c', RECEIVE_SCRIPT, 'sh', ...first, pack ? 'pack' : '-', `agent-handoff ${id}`, String(updates.length), ...updates, ...GIT_BASE_CONFIG];
}

/** Exit code of the receiving program when its first file could not be written. */
const FIRST_FILE_FAILED = 71;

/** Run the receiving program on the target with the pack (null: none) as its input. */
async function receive(input: TransferInput, updates: readonly string[], pack: Buffer | Readable | null): Promise<void> {
  const { target, targetRepo } = input;
  const opts = input.timeoutMs !== undefined ? { timeoutMs: input.timeoutMs } : {};
  const r = await target.run(receiveArgv(input.id, updates, input.firstFile, pack !== null), { cwd: targetRepo, env: GIT_BASE_ENV, ...(pack !== null ? { stdin: pack } : {}), ...opts });
  if (r.exitCode === 0) return;
  if (r.exitCode === FIRST_FILE_FAILED && input.firstFile) {
    throw new HandoffError('marker_failed', `Could not write ${input.firstFile.file} on ${target.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`, { fix: `Check that ${input.firstFile.dir} on ${target.label} is writable.` });
  }
  throw gitFailed(target, targetRepo, pack ? ['index-pack', '--stdin', '--fix-thin'] : ['update-ref', '--stdin'], r);
}

/**
 * The whole of `stream` when it ends within `limit` bytes; else a stream that gives what was read
 * so far and then the rest (nothing more is held in memory).
 */
export function collectUpTo(stream: Readable, limit: number): Promise<Buffer | Readable> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size <= limit) return;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', reject);
      stream.pause();
      const rest = new PassThrough();
      for (const c of chunks) rest.write(c);
      stream.pipe(rest);
      resolve(rest);
    };
    const onEnd = (): void => resolve(Buffer.concat(chunks, size));
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', reject);
  });
}

/**
 * The transfer's arrival on the target, in order, each only when the one before succeeded: the
 * first file (when named), the pack (index-pack reads it from stdin), the refs (one update-ref
 * transaction). $1 the first file's folder, $2 the file ('' for none), $3 its text, $4 `pack` or
 * `-`, $5 the reflog message, $6 how many update lines follow, those lines, then git's base
 * options. The file is private through a umask of its own (git's files keep the caller's).
 */
const RECEIVE_SCRIPT = [
  'd=$1; f=$2; text=$3; pack=$4; msg=$5; n=$6; shift 6; u=',
  'while [ "$n" -gt 0 ]; do u="$u$1',
  '"; shift; n=$((n - 1)); done',
  `if [ -n "$f" ]; then ( umask 077; mkdir -p -- "$d" && printf '%s\\n' "$text" >"$f" ) || exit ${FIRST_FILE_FAILED}; fi`,
  'if [ "$pack" = pack ]; then git "$@" index-pack --stdin --fix-thin >/dev/null || exit $?; fi',
  'printf "%s" "$u" | git "$@" update-ref -m "$msg" --stdin',
].join('\n');

/** Delete refs/handoff/<id>/* on the target (missing refs are fine). Call on success and on failure. */
export async function cleanupRefs(target: Host, targetRepo: string, id: string): Promise<void> {
  const refs = handoffRefs(id);
  // Also sweeps any other ref under the id (the plan's check refs, a future kind): one program.
  const r = await target.run(['/bin/sh', '-c', CLEANUP_SCRIPT, 'sh', `${HANDOFF_REF_PREFIX}/${id}/`, refs.head, refs.wip, ...GIT_BASE_CONFIG], { cwd: targetRepo, env: GIT_BASE_ENV });
  if (r.exitCode !== 0) throw gitFailed(target, targetRepo, ['update-ref', '--stdin'], r);
}

/** $1 the id's ref prefix, $2 $3 its known refs, then git's base options. */
const CLEANUP_SCRIPT = [
  'p=$1; h=$2; w=$3; shift 3',
  'l=$(git "$@" for-each-ref --format="delete %(refname)" "$p") || exit 1',
  'printf "delete %s\\ndelete %s\\n%s\\n" "$h" "$w" "$l" | sort -u | grep . | git "$@" update-ref --stdin',
].join('\n');
