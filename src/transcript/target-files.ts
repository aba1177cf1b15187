// Writing files on the target with its own tools (it has no node): temp files (a small one in
// one program, a large one streamed), installing them (mode, times, atomic rename) and hashing a
// prefix of a file there.
import path from 'node:path/posix';
import type { Writable } from 'node:stream';
import { HandoffError } from '../errors.js';
import type { Host } from '../host/host.js';
import { StreamWriter } from '../host/stream-writer.js';
import { HASH_FN, MISSING_HASH_TOOL } from './left-ledger.js';

/**
 * sha256 of the first `n` bytes of `file` on `host`, computed there with its own tool
 * (`sha256sum` on GNU and busybox, `shasum -a 256` on macOS): one program, one round trip.
 */
export async function remotePrefixHash(host: Host, file: string, n: number): Promise<string> {
  const [hex] = await remotePrefixHashes(host, [{ path: file, size: n }]);
  if (!hex) throw new HandoffError('hash_failed', `Could not hash ${file} on ${host.label}: it is not a regular file.`, { fix: `Check that ${file} is a readable file on ${host.label}.` });
  return hex;
}

/**
 * The sha256 of a prefix of each of `files` on `host` (`size` bytes of `path`), one program for
 * them all: null for a file that is not a regular file there. Paths and counts are positional
 * parameters: the shell never parses them.
 */
export async function remotePrefixHashes(host: Host, files: readonly { path: string; size: number }[]): Promise<(string | null)[]> {
  if (files.length === 0) return [];
  const r = await host.run(['/bin/sh', '-c', PREFIX_HASHES_SCRIPT, 'sh', ...files.flatMap((f) => [String(f.size), f.path])]);
  if (r.exitCode === MISSING_HASH_TOOL) {
    throw new HandoffError('missing_tool', `Neither sha256sum nor shasum is installed on ${host.label}.`, { fix: `Install coreutils (sha256sum) on ${host.label}.` });
  }
  const lines = r.stdout.split('\n');
  if (r.exitCode !== 0 || lines.length < files.length) {
    const what = files.length === 1 ? files[0]!.path : 'the session files';
    throw new HandoffError('hash_failed', `Could not hash ${what} on ${host.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`, { fix: `Check that ${what} is readable on ${host.label}.` });
  }
  return files.map((_, i) => (/^[0-9a-f]{64}$/.test(lines[i]!) ? lines[i]! : null));
}

/** Pairs of (byte count, file): a line each, the prefix's sha256 or `-` for a file that is not a regular one. */
const PREFIX_HASHES_SCRIPT = [HASH_FN, 'while [ "$#" -ge 2 ]; do', '  if [ -f "$2" ]; then head -c "$1" <"$2" | h; else echo -; fi', '  shift 2', 'done'].join('\n');

/** $2 given the ISO time $3 (atime and mtime alike: one touch), then renamed to $4 ('' = stay). */
const TIMES_AND_RENAME = 'touch -d "$3" -- "$2" && { [ -z "$4" ] || mv -f -- "$2" "$4"; }';
/** $1 mode (octal), $2 file, $3 ISO time for atime and mtime, $4 where to rename it ('' = stay). */
export const INSTALL_SCRIPT = `chmod -- "$1" "$2" && ${TIMES_AND_RENAME}`;
/**
 * The same, after writing stdin to $2 (private until the chmod, which a private file does not
 * need); nothing is left behind on failure.
 */
const WRITE_AND_INSTALL_SCRIPT = `umask 077; { cat >"$2" && { [ "$1" = 600 ] || chmod -- "$1" "$2"; } && ${TIMES_AND_RENAME}; } || { rm -f -- "$2"; exit 1; }`;

/** Mode and times to give a written file, and where to rename it ('' = it stays where written). */
export interface Install {
  mode: number;
  mtimeMs: number;
  to: string;
}

export function installArgs(i: Install, file: string): string[] {
  return [i.mode.toString(8), file, new Date(i.mtimeMs).toISOString(), i.to];
}

export async function runOk(host: Host, argv: string[], what: string): Promise<void> {
  const r = await host.run(argv);
  if (r.exitCode !== 0) throw new HandoffError('copy_failed', `${what} failed on ${host.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`);
}

/** Up to this many bytes a temp file goes in one write (one round trip over ssh) instead of a stream. */
const SMALL_FILE_BYTES = 12 * 1024;

/**
 * A temp file beside `file`, written chunk by chunk. The first SMALL_FILE_BYTES are held back, so
 * a small file goes in one write; a larger one opens a stream and goes on with constant memory.
 */
export class TempFile {
  readonly path: string;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private out: { stream: Writable; done: Promise<void>; writer: StreamWriter } | null = null;

  constructor(
    private readonly target: Host,
    file: string,
    tag: string,
    private readonly mode: number,
  ) {
    this.path = path.join(path.dirname(file), `.${path.basename(file)}.ah-${tag}.tmp`);
  }

  async write(chunk: Buffer): Promise<void> {
    if (this.out) return this.out.writer.write(chunk);
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes <= SMALL_FILE_BYTES) return;
    const out = await this.target.writeStream(this.path, { mode: this.mode, compress: true });
    this.out = { ...out, writer: new StreamWriter(out) };
    for (const c of this.held.splice(0)) await this.out.writer.write(c);
  }

  /**
   * Close the file. With `install`, a small file is written, given its mode and times and renamed
   * in the same program (one round trip for the whole file); returns whether that was done.
   */
  async finish(install?: Install): Promise<boolean> {
    if (!this.out) {
      if (!install) {
        await this.target.writeFile(this.path, Buffer.concat(this.held), { mode: this.mode });
        return false;
      }
      const r = await this.target.run(['/bin/sh', '-c', WRITE_AND_INSTALL_SCRIPT, 'sh', ...installArgs(install, this.path)], { stdin: Buffer.concat(this.held) });
      if (r.exitCode !== 0) throw new HandoffError('copy_failed', `Writing ${install.to || this.path} failed on ${this.target.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`);
      return true;
    }
    this.out.stream.end();
    await this.out.done;
    return false;
  }

  /**
   * Stop writing and remove whatever was written, as far as the host still lets us (after a lost
   * connection the temp file stays: the failure that led here is the one to report).
   */
  async abort(): Promise<void> {
    this.out?.stream.destroy();
    await this.out?.done.catch(() => undefined);
    await this.target.remove(this.path).catch(() => undefined);
  }
}
