// LocalHost: the Host contract on this machine (execa + node:fs).
import { constants as fsConstants, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable, type Duplex, type Writable } from 'node:stream';
import { execa } from 'execa';
import { HostError } from '../errors.js';
import type { ByteRange, DirEntry, FileStat, FileType, Host, HostInfo, RunOptions, RunResult, WalkedFile, WriteOptions } from './host.js';
import { walkByListing } from './walk.js';
import { LOGIN_ENV_VARS } from './host.js';
import { loginPathWithExtras } from './login-path.js';
import { connectUnixSocket } from './unix-socket.js';

const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;

function fileType(st: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): FileType {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'dir';
  return 'other';
}

function notFound(p: string, err: unknown): HostError {
  return new HostError('not_found', `No such file or folder on local: ${p}`, { cause: err });
}

function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).code === code;
}

export interface LocalHostOptions {
  /** Per-command timeout when a run gives none. */
  commandTimeoutMs?: number;
  /** Environment to treat as this host's login environment (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
}

export class LocalHost implements Host {
  readonly isThisMachine = true;
  readonly socketsCostARoundTrip: boolean = false;
  readonly label = 'local';
  readonly address = 'local';
  private readonly commandTimeoutMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private infoPromise: Promise<HostInfo> | undefined;

  constructor(opts: LocalHostOptions = {}) {
    this.commandTimeoutMs = opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.env = opts.env ?? process.env;
  }

  async run(argv: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
    const [file, ...args] = argv;
    if (!file) throw new HostError('bad_command', 'Empty command line.');
    const info = await this.info();
    const started = Date.now();
    if (opts.cwd !== undefined) {
      const st = await fs.stat(opts.cwd).catch(() => null);
      if (!st?.isDirectory()) {
        return { exitCode: 126, stdout: '', stderr: `cannot change to folder: ${opts.cwd}\n`, durationMs: 0 };
      }
    }
    const timeoutMs = opts.timeoutMs ?? this.commandTimeoutMs;
    const input = typeof opts.stdin === 'string' || Buffer.isBuffer(opts.stdin) ? opts.stdin : undefined;
    const sub = execa(file, args, {
      cwd: opts.cwd ?? info.home,
      env: { ...(opts.loginEnv ?? info.loginEnv), ...opts.env },
      extendEnv: true,
      reject: false,
      stripFinalNewline: false,
      timeout: timeoutMs,
      // A process group of its own, so a timeout kills the whole tree.
      detached: true,
      ...(input !== undefined ? { input } : { stdin: opts.stdin ? 'pipe' : 'ignore' }),
      ...(opts.stdout ? { stdout: 'pipe' as const, buffer: { stdout: false, stderr: true } } : {}),
    });
    if (opts.stdin instanceof Readable && sub.stdin) opts.stdin.pipe(sub.stdin);
    if (opts.stdout && sub.stdout) sub.stdout.pipe(opts.stdout);
    const r = await sub;
    const durationMs = Date.now() - started;
    if (r.timedOut) {
      if (sub.pid) {
        try {
          process.kill(-sub.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      throw new HostError('command_timeout', `\`${file}\` on local did not finish within ${Math.round(timeoutMs / 1000)} s.`, {
        fix: 'Check that the machine is not overloaded, or raise --timeout.',
      });
    }
    if (r.exitCode === undefined) {
      const code = (r.cause as NodeJS.ErrnoException | undefined)?.code;
      if (code === 'ENOENT') return { exitCode: 127, stdout: '', stderr: `${file}: command not found\n`, durationMs };
      if (r.signal) return { exitCode: 128 + (os.constants.signals[r.signal] ?? 0), stdout: String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), durationMs };
      return { exitCode: 126, stdout: '', stderr: `${file}: ${r.shortMessage}\n`, durationMs };
    }
    return { exitCode: r.exitCode, stdout: opts.stdout ? '' : String(r.stdout ?? ''), stderr: String(r.stderr ?? ''), durationMs };
  }

  async readStream(p: string, range?: ByteRange): Promise<Readable> {
    const handle = await fs.open(p, 'r').catch((err: unknown) => {
      throw isErrno(err, 'ENOENT') ? notFound(p, err) : err;
    });
    if (range?.length === 0) {
      await handle.close();
      return Readable.from([]);
    }
    // The FileHandle owns the fd: a stream built on a bare fd would leave the handle to close it
    // again on garbage collection (EBADF).
    return handle.createReadStream({ autoClose: true, ...(range ? { start: range.start, ...(range.length !== undefined ? { end: range.start + range.length - 1 } : {}) } : {}) });
  }

  async readFile(p: string): Promise<Buffer> {
    return fs.readFile(p).catch((err: unknown) => {
      throw isErrno(err, 'ENOENT') ? notFound(p, err) : err;
    });
  }

  async readFiles(paths: readonly string[], maxEach: number): Promise<Map<string, Buffer>> {
    const read = await Promise.all(
      paths.map(async (p): Promise<Buffer | null> => {
        // Non-blocking: a fifo where a file was expected must not hold the open.
        const handle = await fs.open(p, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK).catch(() => null);
        if (!handle) return null;
        try {
          const st = await handle.stat();
          if (!st.isFile() || st.size > maxEach) return null;
          const bytes = await handle.readFile();
          return bytes.length <= maxEach ? bytes : null;
        } catch {
          return null;
        } finally {
          await handle.close();
        }
      }),
    );
    return new Map(paths.flatMap((p, i) => (read[i] ? [[p, read[i]] as const] : [])));
  }

  async writeStream(p: string, opts: WriteOptions = {}): Promise<{ stream: Writable; done: Promise<void> }> {
    const mode = opts.mode ?? 0o600;
    const handle = await fs.open(p, 'w', mode);
    // open() honours the umask and keeps the mode of an existing file; make it exact.
    await handle.chmod(mode);
    const stream = handle.createWriteStream({ autoClose: true });
    const done = new Promise<void>((resolve, reject) => {
      stream.on('close', () => resolve());
      stream.on('error', reject);
    });
    return { stream, done };
  }

  async writeFile(p: string, data: string | Buffer, opts: WriteOptions = {}): Promise<void> {
    const mode = opts.mode ?? 0o600;
    await fs.writeFile(p, data, { mode });
    await fs.chmod(p, mode);
  }

  async stat(p: string): Promise<FileStat | null> {
    try {
      const st = await fs.lstat(p);
      return { type: fileType(st), size: st.size, mode: st.mode & 0o7777, mtimeMs: st.mtimeMs };
    } catch (err) {
      if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) return null;
      throw err;
    }
  }

  walk(dir: string): Promise<WalkedFile[]> {
    return walkByListing(this, dir);
  }

  async list(dir: string): Promise<DirEntry[]> {
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch((err: unknown) => {
      throw isErrno(err, 'ENOENT') ? notFound(dir, err) : err;
    });
    return entries.map((e) => ({ name: e.name, type: fileType(e) }));
  }

  async mkdirp(p: string, mode = 0o700): Promise<void> {
    await fs.mkdir(p, { recursive: true, mode });
  }

  async makeFolderWith(dir: string, name: string, text: string): Promise<boolean> {
    // fs, not a program: no fork of this large process.
    try {
      await fs.mkdir(dir, { mode: 0o700 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ENOENT') return false;
      throw err;
    }
    const file = path.join(dir, name);
    try {
      await fs.writeFile(file, `${text}\n`, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      await fs.rm(file, { force: true });
      await fs.rmdir(dir).catch(() => undefined);
      throw err;
    }
    return true;
  }

  async rename(from: string, to: string): Promise<void> {
    await fs.rename(from, to);
  }

  async remove(p: string, opts: { recursive?: boolean } = {}): Promise<void> {
    await fs.rm(p, { recursive: opts.recursive ?? false, force: true });
  }

  async realpath(p: string): Promise<string> {
    return fs.realpath(p).catch((err: unknown) => {
      throw isErrno(err, 'ENOENT') ? notFound(p, err) : err;
    });
  }

  async chmod(p: string, mode: number): Promise<void> {
    await fs.chmod(p, mode);
  }

  async utimes(p: string, atimeMs: number, mtimeMs: number): Promise<void> {
    await fs.utimes(p, atimeMs / 1000, mtimeMs / 1000);
  }

  connectSocket(p: string, opts: { first?: string } = {}): Promise<Duplex> {
    return connectUnixSocket(p, opts.first);
  }

  info(): Promise<HostInfo> {
    this.infoPromise ??= this.learnInfo();
    return this.infoPromise;
  }

  private async learnInfo(): Promise<HostInfo> {
    const env = this.env;
    const user = os.userInfo();
    const home = env.HOME || user.homedir;
    const loginEnv: Record<string, string> = {};
    for (const name of LOGIN_ENV_VARS) {
      const v = env[name];
      if (v) loginEnv[name] = v;
    }
    loginEnv.HOME = home;
    loginEnv.PATH = loginPathWithExtras(env.PATH ?? '/usr/bin:/bin', home);
    const tmp = env.TMPDIR || '/tmp';
    // HOME's real path told with the facts, as an ssh host's login probe does: no program asks it later.
    const [tmpdir, homeReal] = await Promise.all([fs.realpath(tmp).catch(() => tmp), fs.realpath(home).catch(() => null)]);
    return {
      home,
      user: user.username,
      hostname: os.hostname(),
      platform: process.platform,
      shell: env.SHELL || user.shell || '/bin/sh',
      tmpdir,
      loginEnv,
      ...(homeReal ? { homeReal } : {}),
    };
  }

  async which(program: string): Promise<string | null> {
    if (program.includes('/')) return (await this.stat(program)) ? program : null;
    const info = await this.info();
    for (const dir of (info.loginEnv.PATH ?? '').split(':')) {
      if (!dir) continue;
      const candidate = path.join(dir, program);
      try {
        await fs.access(candidate, fs.constants.X_OK);
        const st = await fs.stat(candidate);
        if (st.isFile()) return candidate;
      } catch {
        // not here
      }
    }
    return null;
  }

  async close(): Promise<void> {
    // Nothing to release.
  }
}
