// File metadata over the connection: one lazily opened SFTP channel, one round trip per
// operation; where SFTPv3 falls short (recursive remove, sub-second times, servers without
// posix-rename) a file helper script does it instead.
import path from 'node:path';
import type { SFTPWrapper, Stats } from 'ssh2';
import { HostError } from '../errors.js';
import { fileScriptError } from './file-script-error.js';
import type { DirEntry, FileStat, FileType, WalkedFile } from './host.js';
import { walkByListing, walkedFiles, WALK_NO_STAT, WALK_NOT_A_FOLDER, WALK_SCRIPT } from './walk.js';
import type { ExecRunner } from './ssh-exec.js';
import type { SshError } from './ssh-errors.js';
import type { SshLink } from './ssh-link.js';

const TOUCH_SCRIPT = '[ -e "$1" ] || exit 66; touch -a -d "$2" -- "$1" && touch -m -d "$3" -- "$1"';

/**
 * $1 a folder: each entry (every name but . and .., dot files too) as its type letter (l symlink,
 * d folder, f regular file, o other; the link itself, never what it points to) and its name, NUL
 * after each. Exit 66 when the folder is not there. One round trip, where SFTP's readdir takes
 * four (open, read, read to the end, close).
 */
export const LIST_SCRIPT = [
  '[ -e "$1" ] || [ -L "$1" ] || exit 66',
  'CDPATH= cd -P -- "$1" || exit 1',
  'for f in * .[!.]* ..?*; do',
  '  if [ -L "$f" ]; then t=l; elif [ -d "$f" ]; then t=d; elif [ -f "$f" ]; then t=f; elif [ -e "$f" ]; then t=o; else continue; fi',
  "  printf '%s%s\\0' \"$t\" \"$f\"",
  'done',
].join('\n');

const LISTED_TYPES: Record<string, FileType> = { l: 'symlink', d: 'dir', f: 'file', o: 'other' };

/** LIST_SCRIPT's output → the entries. */
export function listedEntries(stdout: string): DirEntry[] {
  return stdout
    .split('\0')
    .filter((r) => r.length > 1)
    .map((r) => ({ name: r.slice(1), type: LISTED_TYPES[r[0]!] ?? 'other' }));
}

function fileTypeOfMode(mode: number): FileType {
  const t = mode & 0o170000;
  if (t === 0o120000) return 'symlink';
  if (t === 0o100000) return 'file';
  if (t === 0o040000) return 'dir';
  return 'other';
}

/** SFTP status 2 = SSH_FX_NO_SUCH_FILE. */
function isNoSuchFile(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as SshError).code === 2;
}

export class SftpMetadata {
  private sftpPromise: Promise<SFTPWrapper> | undefined;

  constructor(
    private readonly link: SshLink,
    private readonly exec: ExecRunner,
  ) {}

  /** The SFTP channel, opened on first use; it keeps one slot for the life of the connection. */
  channel(): Promise<SFTPWrapper> {
    this.sftpPromise ??= (async () => {
      if (this.link.lost) throw this.link.lost;
      const release = await this.link.slots.acquire();
      try {
        const sftp = await new Promise<SFTPWrapper>((resolve, reject) => this.link.client.sftp((err, s) => (err ? reject(err) : resolve(s))));
        this.link.counts.channels++;
        sftp.on('error', () => undefined);
        sftp.on('close', () => {
          release();
          this.sftpPromise = undefined;
        });
        return sftp;
      } catch (err) {
        release();
        this.sftpPromise = undefined;
        throw this.link.lost ?? new HostError('channel_failed', `${this.link.label} refused the SFTP subsystem: ${(err as Error).message}`, { cause: err });
      }
    })();
    return this.sftpPromise;
  }

  private async call<T>(fn: (sftp: SFTPWrapper, cb: (err: Error | undefined | null, value?: T) => void) => void): Promise<T> {
    const sftp = await this.channel();
    // The SFTP channel opened before the connection was lost: ssh2 would answer "No response
    // from server" (an io_failed), and no loss is left to be told of.
    if (this.link.lost) throw this.link.lost;
    this.link.counts.sftpRequests++;
    return new Promise<T>((resolve, reject) => {
      const onLost = (e: HostError): void => reject(e);
      this.link.onLost.add(onLost);
      fn(sftp, (err, value) => {
        this.link.onLost.delete(onLost);
        if (err) reject(this.link.lost ?? err);
        else resolve(value as T);
      });
    });
  }

  private error(op: string, p: string, err: unknown): HostError {
    if (err instanceof HostError) return err;
    if (isNoSuchFile(err)) return new HostError('not_found', `No such file or folder on ${this.link.label}: ${p}`, { cause: err });
    return new HostError('io_failed', `${op} ${p} on ${this.link.label} failed: ${(err as Error).message}`, { cause: err });
  }

  async stat(p: string): Promise<FileStat | null> {
    try {
      const st = await this.call<Stats>((s, cb) => s.lstat(p, cb));
      // SFTPv3 carries whole seconds only.
      return { type: fileTypeOfMode(st.mode), size: st.size, mode: st.mode & 0o7777, mtimeMs: st.mtime * 1000 };
    } catch (err) {
      if (isNoSuchFile(err)) return null;
      throw this.error('stat', p, err);
    }
  }

  async list(dir: string): Promise<DirEntry[]> {
    const r = await this.exec.script(LIST_SCRIPT, [dir], 'list');
    if (r.exitCode !== 0) throw fileScriptError(this.link.label, 'Listing', dir, r.stderr, r.exitCode);
    return listedEntries(r.stdout.toString('utf8'));
  }

  /** One program (walk.ts); a host without `stat` is walked by listing and stat'ing. */
  async walk(dir: string): Promise<WalkedFile[]> {
    const r = await this.exec.script(WALK_SCRIPT, [dir], 'walk');
    if (r.exitCode === 0) return walkedFiles(r.stdout.toString('utf8'));
    if (r.exitCode === WALK_NOT_A_FOLDER) return [];
    if (r.exitCode !== WALK_NO_STAT) throw fileScriptError(this.link.label, 'Walking', dir, r.stderr, r.exitCode);
    return walkByListing(this, dir);
  }

  async mkdirp(p: string, mode = 0o700): Promise<void> {
    const make = async (d: string, depth: number): Promise<void> => {
      try {
        await this.call<void>((s, cb) => s.mkdir(d, { mode }, cb));
        return;
      } catch (err) {
        if (isNoSuchFile(err) && depth < 64 && path.posix.dirname(d) !== d) {
          await make(path.posix.dirname(d), depth + 1);
          try {
            await this.call<void>((s, cb) => s.mkdir(d, { mode }, cb));
            return;
          } catch {
            // made meanwhile? checked below
          }
        }
        const st = await this.stat(d);
        if (st?.type === 'dir') return;
        if (st?.type === 'symlink' && (await this.realpath(d).then((r) => this.stat(r)).catch(() => null))?.type === 'dir') return;
        throw this.error('Creating folder', d, err);
      }
    };
    await make(path.posix.normalize(p), 0);
  }

  async rename(from: string, to: string): Promise<void> {
    try {
      // posix-rename@openssh.com is rename(2): atomic, replaces `to`.
      await this.call<void>((s, cb) => s.ext_openssh_rename(from, to, cb));
    } catch (err) {
      if (!/does not support|not supported/i.test((err as Error).message)) throw this.error('Renaming', from, err);
      const r = await this.exec.script('exec mv -f -- "$1" "$2"', [from, to], 'mv');
      if (r.exitCode !== 0) throw fileScriptError(this.link.label, 'Renaming', from, r.stderr, r.exitCode);
    }
  }

  async remove(p: string, opts: { recursive?: boolean } = {}): Promise<void> {
    if (opts.recursive) {
      const r = await this.exec.script('exec rm -rf -- "$1"', [p], 'rm');
      if (r.exitCode !== 0) throw fileScriptError(this.link.label, 'Removing', p, r.stderr, r.exitCode);
      return;
    }
    try {
      await this.call<void>((s, cb) => s.unlink(p, cb));
    } catch (err) {
      if (isNoSuchFile(err)) return;
      throw this.error('Removing', p, err);
    }
  }

  async realpath(p: string): Promise<string> {
    try {
      // Some servers resolve a missing last component; the contract says not_found. The path
      // itself is looked at alongside (it exists exactly when its resolution does): one round trip.
      const [r, st] = await Promise.all([this.call<string>((s, cb) => s.realpath(p, cb)), this.stat(p)]);
      if (st === null) throw new HostError('not_found', `No such file or folder on ${this.link.label}: ${p}`);
      return r;
    } catch (err) {
      throw this.error('Resolving', p, err);
    }
  }

  async chmod(p: string, mode: number): Promise<void> {
    try {
      await this.call<void>((s, cb) => s.chmod(p, mode, cb));
    } catch (err) {
      throw this.error('chmod', p, err);
    }
  }

  async utimes(p: string, atimeMs: number, mtimeMs: number): Promise<void> {
    if (atimeMs % 1000 === 0 && mtimeMs % 1000 === 0) {
      try {
        await this.call<void>((s, cb) => s.utimes(p, atimeMs / 1000, mtimeMs / 1000, cb));
        return;
      } catch (err) {
        throw this.error('Setting times of', p, err);
      }
    }
    // SFTPv3 times are whole seconds; POSIX `touch -d` keeps the fraction.
    const iso = (ms: number): string => new Date(ms).toISOString();
    const r = await this.exec.script(TOUCH_SCRIPT, [p, iso(atimeMs), iso(mtimeMs)], 'touch');
    if (r.exitCode !== 0) throw fileScriptError(this.link.label, 'Setting times of', p, r.stderr, r.exitCode);
  }
}
