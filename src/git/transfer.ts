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
  // The refs are made by the same remote program that indexes the pack (one exec, not two).
  if (!skipped) bytesSent = await streamPack(input, wanted, common, updates);
  else await git(target, targetRepo, ['update-ref', '-m', `agent-handoff ${input.id}`, '--stdin'], { stdin: updates.join('\n') + '\n' });
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
  const { source, target, sourceRepo, targetRepo } = input;
  const onBytes = input.onBytes ?? stepBytes();
  const fromSource = new PassThrough();
  const revs = [...wanted, ...exclude.map((t) => `^${t}`)].join('\n') + '\n';
  const packArgs = ['pack-objects', '--thin', '--stdout', '--revs', '--delta-base-offset', '-q'];
  const indexArgs = ['index-pack', '--stdin', '--fix-thin'];
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
  const indexing = target.run(['/bin/sh', '-c', INDEX_AND_REF_SCRIPT, 'sh', `agent-handoff ${input.id}`, String(updates.length), ...updates, ...GIT_BASE_CONFIG], { cwd: targetRepo, env: GIT_BASE_ENV, stdin, ...opts });
  // If the target stops reading early, keep draining so the source never blocks on a full pipe.
  // (Both outcomes handled here: a rejection is the caller's to see, through `indexing` below.)
  const drain = (): void => void (Buffer.isBuffer(stdin) ? undefined : stdin.resume());
  indexing.then(drain, drain);
  const [packed, indexed] = await Promise.allSettled([packing, indexing]);
  if (packed.status === 'rejected') throw packed.reason;
  if (indexed.status === 'rejected') throw indexed.reason;
  if (packed.value.exitCode !== 0) throw gitFailed(source, sourceRepo, packArgs, packed.value);
  if (indexed.value.exitCode !== 0) throw gitFailed(target, targetRepo, indexArgs, indexed.value);
  return bytes;
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
 * $1 reflog message, $2 how many update lines follow, then those lines, then git's base options.
 * index-pack reads the pack from stdin; the refs are made only when it succeeded.
 */
const INDEX_AND_REF_SCRIPT = [
  'msg=$1; n=$2; shift 2; u=',
  'while [ "$n" -gt 0 ]; do u="$u$1',
  '"; shift; n=$((n - 1)); done',
  'git "$@" index-pack --stdin --fix-thin >/dev/null || exit $?',
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
