// What a handoff wrote where a session arrived: for each file, its size, sha256, the length of its
// first line and the sha256 of the rest. When the session leaves that host again, the host itself
// tells (one program, hashing there) whether its file is still what arrived plus an appended tail
// (pi, claude, codex) or that with its first line rewritten in place (omp's padded title): then
// only the tail, or the first line and the tail, cross the network instead of the whole file.
//
// Layout: <state>/arrived/<sha256 of the path, 32 hex>.json, one line: `size head sha256
// restSha256 endsWithNewline(0|1)` for the sh program, then the path and the handoff as JSON for
// a person. (Entries written before had that JSON, with the numbers again, on a second line.)
// One line so that a header names the session folder its entries repeat once (remote-command.ts).
// Private.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { HandoffError } from '../errors.js';
import type { Host } from '../host/host.js';
import { HASH_FN, ledgerName, MISSING_HASH_TOOL, RECORD_LEFT_PROGRAM } from './left-ledger.js';

/** What a file's bytes are: the facts the arrival ledger keeps. */
export interface ContentFacts {
  size: number;
  sha256: string;
  /** Bytes up to and including the first newline (the whole size when there is none). */
  headLength: number;
  /** sha256 of the bytes after the first line. */
  restSha256: string;
  endsWithNewline: boolean;
}

/** ContentFacts of a stream of chunks, computed as they pass. */
export class ContentHasher {
  private readonly whole = createHash('sha256');
  private readonly rest = createHash('sha256');
  private size = 0;
  private head: number | null = null;
  private lastByte = -1;

  update(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.whole.update(chunk);
    if (this.head === null) {
      const nl = chunk.indexOf(10);
      if (nl !== -1) {
        this.head = this.size + nl + 1;
        this.rest.update(chunk.subarray(nl + 1));
      }
    } else {
      this.rest.update(chunk);
    }
    this.size += chunk.length;
    this.lastByte = chunk[chunk.length - 1]!;
  }

  digest(): ContentFacts {
    return { size: this.size, sha256: this.whole.digest('hex'), headLength: this.head ?? this.size, restSha256: this.rest.digest('hex'), endsWithNewline: this.lastByte === 10 };
  }
}

export const Arrival = z.object({
  path: z.string(),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  headLength: z.number().int().nonnegative(),
  restSha256: z.string().regex(/^[0-9a-f]{64}$/),
  endsWithNewline: z.boolean(),
  handoff: z.string(),
});
export type Arrival = z.infer<typeof Arrival>;

/**
 * Smallest file worth an arrival entry. An entry costs about 300 bytes when written and about
 * 200 more when it is checked on the way back: for a file under 4 KiB that is about what
 * sending it again costs, so it is sent again. grok's locks, counters and small JSON files are
 * all below it; its logs soon are not.
 */
export const ARRIVAL_MIN_BYTES = 4096;

/** Does a file of this size get an arrival entry (and so a check of it on the way back)? */
export function worthAnArrival(size: number): boolean {
  return size >= ARRIVAL_MIN_BYTES;
}

export function arrivalsDir(stateDir: string): string {
  return `${stateDir}/arrived`;
}

function arrivalText(a: Arrival): string {
  const p = Arrival.parse(a);
  return `${p.size} ${p.headLength} ${p.sha256} ${p.restSha256} ${p.endsWithNewline ? 1 : 0} ${JSON.stringify({ path: p.path, handoff: p.handoff })}`;
}

/** Record, on `host`, the session files as this handoff wrote them there. One program. */
export async function recordArrivals(host: Host, dir: string, arrivals: readonly Arrival[]): Promise<void> {
  if (arrivals.length === 0) return;
  const r = await host.run(['/bin/sh', '-c', RECORD_LEFT_PROGRAM, 'sh', dir, ...arrivals.flatMap((a) => [ledgerName(a.path), arrivalText(a)])]);
  if (r.exitCode !== 0) throw new HandoffError('copy_failed', `Could not record the session files written on ${host.label} under ${dir}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`);
}

/**
 * $1 the arrival ledger, then pairs (file, its entry's name). For each pair one line:
 * `verdict size-now sha256-now size head endsWithNewline`, where verdict is `append` (the file
 * starts with what arrived), `head` (all but its first line is what arrived, and maybe a tail),
 * or `none` (no entry, or neither); the hash of the whole file is computed only for a delta.
 * Numbers from the entry are checked to be digits before any arithmetic uses them.
 */
export const ARRIVAL_VERDICT_PROGRAM = [
  HASH_FN,
  'd=$1; shift',
  'while [ "$#" -ge 2 ]; do',
  '  f=$1; e=$d/$2; shift 2',
  '  v=none; cur=-; whole=-; n=-; hl=-; nl=-',
  '  if [ -f "$e" ] && [ -f "$f" ] && read -r n hl sha rsha nl about <"$e"; then',
  '    case "$n/$hl/$nl" in',
  '      *[!0-9/]* | /* | */ | *//*) n=-; hl=-; nl=- ;;',
  '      *)',
  '        cur=$(wc -c <"$f" | tr -d " ")',
  '        if [ "$cur" -ge "$n" ] && [ "$hl" -le "$n" ]; then',
  '          if [ "$(head -c "$n" <"$f" | h)" = "$sha" ]; then v=append',
  '          elif [ "$(tail -c "+$((hl + 1))" <"$f" | head -c "$((n - hl))" | h)" = "$rsha" ]; then v=head; fi',
  '        fi',
  '        [ "$v" = none ] || whole=$(h <"$f") ;;',
  '    esac',
  '  fi',
  '  printf "%s %s %s %s %s %s\\n" "$v" "$cur" "$whole" "$n" "$hl" "$nl"',
  'done',
].join('\n');

export type Verdict =
  | { kind: 'none' }
  | { kind: 'append' | 'head'; sizeNow: number; sha256Now: string; arrived: { size: number; headLength: number; endsWithNewline: boolean } };

export function parseVerdicts(stdout: string, count: number): Verdict[] {
  const lines = stdout.split('\n');
  return Array.from({ length: count }, (_, i): Verdict => {
    const [v, cur, whole, n, hl, nl] = (lines[i] ?? '').split(' ');
    if ((v !== 'append' && v !== 'head') || !/^[0-9a-f]{64}$/.test(whole ?? '')) return { kind: 'none' };
    const nums = [cur, n, hl].map((x) => (/^\d+$/.test(x ?? '') ? Number(x) : NaN));
    if (nums.some((x) => !Number.isSafeInteger(x)) || (nl !== '0' && nl !== '1')) return { kind: 'none' };
    return { kind: v, sizeNow: nums[0]!, sha256Now: whole!, arrived: { size: nums[1]!, headLength: nums[2]!, endsWithNewline: nl === '1' } };
  });
}

/** For each file on `host`: is it what a handoff wrote there, plus a tail or a new first line? One program. */
export async function arrivalVerdicts(host: Host, dir: string, files: readonly string[]): Promise<Verdict[]> {
  if (files.length === 0) return [];
  const r = await host.run(['/bin/sh', '-c', ARRIVAL_VERDICT_PROGRAM, 'sh', dir, ...files.flatMap((f) => [f, ledgerName(f)])]);
  if (r.exitCode === MISSING_HASH_TOOL) {
    throw new HandoffError('missing_tool', `Neither sha256sum nor shasum is installed on ${host.label}.`, { fix: `Install coreutils (sha256sum) on ${host.label}.` });
  }
  if (r.exitCode !== 0) return files.map(() => ({ kind: 'none' }));
  return parseVerdicts(r.stdout, files.length);
}

/** $1 a file: `size head sha256 restSha256 endsWithNewline`, computed on its host. */
export const DESCRIBE_PROGRAM = [
  HASH_FN,
  'f=$1',
  '[ -f "$f" ] || exit 66',
  'n=$(wc -c <"$f" | tr -d " ")',
  'hl=$(head -n 1 <"$f" | wc -c | tr -d " ")',
  'last=$(tail -c 1 <"$f" | od -An -tx1 | tr -d " \\n")',
  'printf "%s %s %s %s %s\\n" "$n" "$hl" "$(h <"$f")" "$(tail -c "+$((hl + 1))" <"$f" | h)" "$([ "$last" = 0a ] && echo 1 || echo 0)"',
].join('\n');

/** ContentFacts of a file on `host`, hashed there. */
export async function describeFile(host: Host, file: string): Promise<ContentFacts> {
  const r = await host.run(['/bin/sh', '-c', DESCRIBE_PROGRAM, 'sh', file]);
  const [n, hl, sha, rsha, nl] = r.stdout.trim().split(' ');
  if (r.exitCode !== 0 || !/^\d+$/.test(n ?? '') || !/^\d+$/.test(hl ?? '') || !/^[0-9a-f]{64}$/.test(sha ?? '') || !/^[0-9a-f]{64}$/.test(rsha ?? '')) {
    throw new HandoffError('hash_failed', `Could not hash ${file} on ${host.label}: ${r.stderr.trim() || r.stdout.trim() || `exit ${r.exitCode}`}.`);
  }
  return { size: Number(n), headLength: Number(hl), sha256: sha!, restSha256: rsha!, endsWithNewline: nl === '1' };
}
