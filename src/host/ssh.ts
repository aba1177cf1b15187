// SshHost: the Host contract over one ssh2 connection.
//
// One connection per host per invocation; every command is a channel on it. TCP_NODELAY on the
// socket (ssh2 leaves Nagle on: +40 ms per exec, SFTP write streams crawl). Channels are capped
// below sshd's default MaxSessions (10). Commands go through the shell-agnostic encoding of
// remote-command.ts. Files: streams and small files through `cat` on an exec channel (pipelined
// by the 2 MB channel window, so they stay fast over real latency and use constant memory);
// metadata through one lazily opened SFTP channel (one round trip per operation).
//
// The work is done by one module per job, composed here: the connection and its channels
// (ssh-link.ts), command shells (ssh-shell-pool.ts), commands (ssh-exec.ts), file contents
// (ssh-file-streams.ts), metadata (ssh-sftp.ts) and the login probe (ssh-login-probe.ts).
import type net from 'node:net';
import type { Duplex, Readable, Writable } from 'node:stream';
import type { Client } from 'ssh2';
import { HostError } from '../errors.js';
import type { ByteRange, DirEntry, FileStat, Host, HostInfo, ReadOptions, RunOptions, RunResult, WalkedFile, WriteOptions } from './host.js';
import { FIND_PROGRAM_FN } from './find-program.js';
import { FOLDER_NOT_MADE, FOLDER_WITH_FILE_PROGRAM } from './folder-with-file.js';
import { authMethodOf, dialChain, type HandshakeOptions, type Hop } from './ssh-connect.js';
import { hopLabel, namedTarget } from './ssh-errors.js';
import { ExecRunner } from './ssh-exec.js';
import { FileStreams } from './ssh-file-streams.js';
import { SshLink } from './ssh-link.js';
import { probeLogin } from './ssh-login-probe.js';
import { SftpMetadata } from './ssh-sftp.js';
import { ShellPool } from './ssh-shell-pool.js';
import type { ResolvedTarget, ResolveOptions } from './ssh-target.js';

const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
const DEFAULT_LOGIN_ENV_TIMEOUT_MS = 5_000;
/** sshd's default MaxSessions is 10; stay below it (the SFTP channel counts too). */
const DEFAULT_MAX_CHANNELS = 8;

const WHICH_SCRIPT = `${FIND_PROGRAM_FN}; find_program "$1"`;

export interface SshHostOptions extends ResolveOptions, HandshakeOptions {
  /** Replace the identity files from the ssh config (tests, programmatic use). */
  identityFiles?: string[];
  /** Replace the known_hosts files from the ssh config (user and global). */
  knownHostsFiles?: string[];
  /** Agent socket; null disables the agent. Default: IdentityAgent, else SSH_AUTH_SOCK. */
  agent?: string | null;
  /** Bound on TCP connect + handshake + auth for the whole jump chain (default ConnectTimeout, else 15 s). */
  connectTimeoutMs?: number;
  /** Default per-command bound (default 120 s). */
  commandTimeoutMs?: number;
  /** Bound on the login shell that tells the PATH (default 5 s; then the bare PATH is used). */
  loginEnvTimeoutMs?: number;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  /** Concurrent channels on the connection (default 8). */
  maxChannels?: number;
  /** Called when the ssh handshake with the first hop has begun (resolved, TCP connected, first bytes sent). */
  onDial?: () => void;
  /**
   * The remote program that compresses file streams asked to (`compress`), with gzip's flags
   * (`-1 -c`, `-dc`); used when the remote has it, else the bytes go plain. Default 'gzip'; null: never.
   */
  streamCompressor?: string | null;
}

/** What the connection cost; read by tests and the benchmark. */
export interface SshCounters {
  /** SSH handshakes completed (one per hop: a ProxyJump chain of one jump counts 2). */
  handshakes: number;
  /** Channels opened on the target connection (exec + SFTP). */
  channels: number;
  /** Exec channels (each one remote program: run, which, file streams, probes). */
  commands: number;
  /** SFTP requests (each one round trip on the open SFTP channel). */
  sftpRequests: number;
  /** Bytes received / sent on the TCP socket (the first hop's socket when jumping). */
  bytesIn: number;
  bytesOut: number;
}

export class SshHost implements Host {
  readonly isThisMachine = false;
  readonly socketsCostARoundTrip = true;
  /** The target as the user typed it (`vega`, `user@host`): what messages and progress name. */
  readonly label: string;
  /** The resolved `user@host[:port]` of the target (last hop). */
  readonly address: string;
  /** The resolved target (last hop). */
  readonly target: ResolvedTarget;
  /** Every hop, first jump first; the target last. */
  readonly chain: readonly ResolvedTarget[];
  /** Things that went wrong but were survivable (login profile timeout, …). */
  readonly warnings: string[] = [];
  /** Wall time of TCP connect + handshakes + auth. */
  readonly connectMs: number;

  /** How the target accepted us: 'ssh-agent' or 'publickey <identity file>'. */
  get authMethod(): string | null {
    const last = this.link.hops[this.link.hops.length - 1];
    return last ? (authMethodOf(last.client) ?? null) : null;
  }

  private readonly socket: net.Socket;
  private readonly link: SshLink;
  private readonly shells: ShellPool;
  private readonly exec: ExecRunner;
  private readonly files: FileStreams;
  private readonly sftp: SftpMetadata;
  private readonly commandTimeoutMs: number;
  private readonly loginEnvTimeoutMs: number;
  private closing: Promise<void> | undefined;
  private infoPromise: Promise<HostInfo> | undefined;

  private constructor(typed: string, chain: ResolvedTarget[], hops: Hop[], socket: net.Socket, opts: SshHostOptions, connectMs: number) {
    this.chain = chain;
    this.target = chain[chain.length - 1]!;
    this.address = hopLabel(this.target);
    this.label = typed.trim() || this.address;
    this.socket = socket;
    this.connectMs = connectMs;
    this.commandTimeoutMs = opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.loginEnvTimeoutMs = opts.loginEnvTimeoutMs ?? DEFAULT_LOGIN_ENV_TIMEOUT_MS;
    const compressor = opts.streamCompressor === undefined ? 'gzip' : (opts.streamCompressor ?? '');
    this.link = new SshLink(this.label, namedTarget(this.label, this.address), hops, socket, opts.maxChannels ?? DEFAULT_MAX_CHANNELS);
    this.shells = new ShellPool(this.link);
    this.exec = new ExecRunner(this.link, this.shells, this.commandTimeoutMs);
    this.files = new FileStreams(this.link, this.exec, compressor, this.commandTimeoutMs);
    this.sftp = new SftpMetadata(this.link, this.exec);
  }

  /** Resolve `target` like OpenSSH, connect (through any ProxyJump hops), verify and authenticate. */
  static async connect(target: string, opts: SshHostOptions = {}): Promise<SshHost> {
    const { chain, hops, socket, connectMs } = await dialChain(target, opts);
    const host = new SshHost(target, chain, hops, socket, opts, connectMs);
    host.warmUp();
    return host;
  }

  /**
   * Open what nearly every use needs — the login probe, two command shells and the SFTP channel —
   * side by side right after the handshake, so their round trips overlap each other and whatever
   * the caller does meanwhile (loading modules, local work). Two shells: a plan's first programs
   * go two at a time (the lock beside the checkout's read), and a program that finds no idle
   * shell costs a round trip more on a channel of its own. Failures surface on first real use.
   */
  private warmUp(): void {
    const ignore = (): undefined => undefined;
    this.info().catch(ignore);
    this.shells.openBeside();
    this.shells.openBeside();
    this.sftp.channel().catch(ignore);
  }

  /** Local TCP port of the connection (to find it in sshd logs). */
  get localPort(): number | undefined {
    return this.socket.localPort;
  }

  get counters(): SshCounters {
    return { ...this.link.counts, bytesIn: this.socket.bytesRead, bytesOut: this.socket.bytesWritten };
  }

  /** The target's ssh2 client (tests reach for it to compare with a plain exec). */
  private get client(): Client {
    return this.link.client;
  }

  async run(argv: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
    if (!argv[0]) throw new HostError('bad_command', 'Empty command line.');
    const baseEnv = opts.loginEnv ?? (await this.info()).loginEnv;
    const started = Date.now();
    const r = await this.exec.header({ argv, baseEnv, ...(opts.env ? { env: opts.env } : {}), ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}) }, {
      ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
      ...(opts.stdout ? { stdout: opts.stdout } : {}),
      timeoutMs: opts.timeoutMs ?? this.commandTimeoutMs,
      what: argv[0],
    });
    return { exitCode: r.exitCode, stdout: opts.stdout ? '' : r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8'), durationMs: Date.now() - started };
  }

  // --- file contents (ssh-file-streams.ts) ---------------------------------------------------

  readStream(p: string, range?: ByteRange, opts: ReadOptions = {}): Promise<Readable> {
    return this.files.readStream(p, range, opts);
  }

  readFile(p: string): Promise<Buffer> {
    return this.files.readFile(p);
  }

  readFiles(paths: readonly string[], maxEach: number): Promise<Map<string, Buffer>> {
    return this.files.readFiles(paths, maxEach);
  }

  writeStream(p: string, opts: WriteOptions = {}): Promise<{ stream: Writable; done: Promise<void> }> {
    return this.files.writeStream(p, opts);
  }

  writeFile(p: string, data: string | Buffer, opts: WriteOptions = {}): Promise<void> {
    return this.files.writeFile(p, data, opts);
  }

  // --- metadata (ssh-sftp.ts) -----------------------------------------------------------------

  stat(p: string): Promise<FileStat | null> {
    return this.sftp.stat(p);
  }

  list(dir: string): Promise<DirEntry[]> {
    return this.sftp.list(dir);
  }

  walk(dir: string): Promise<WalkedFile[]> {
    return this.sftp.walk(dir);
  }

  async makeFolderWith(dir: string, name: string, text: string): Promise<boolean> {
    const r = await this.run(['/bin/sh', '-c', FOLDER_WITH_FILE_PROGRAM, 'sh', dir, name, text]);
    if (r.exitCode === FOLDER_NOT_MADE) return false;
    if (r.exitCode !== 0) throw new HostError('io_failed', `Could not write ${dir}/${name} on ${this.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}.`);
    return true;
  }

  mkdirp(p: string, mode = 0o700): Promise<void> {
    return this.sftp.mkdirp(p, mode);
  }

  rename(from: string, to: string): Promise<void> {
    return this.sftp.rename(from, to);
  }

  remove(p: string, opts: { recursive?: boolean } = {}): Promise<void> {
    return this.sftp.remove(p, opts);
  }

  realpath(p: string): Promise<string> {
    return this.sftp.realpath(p);
  }

  chmod(p: string, mode: number): Promise<void> {
    return this.sftp.chmod(p, mode);
  }

  utimes(p: string, atimeMs: number, mtimeMs: number): Promise<void> {
    return this.sftp.utimes(p, atimeMs, mtimeMs);
  }

  async connectSocket(p: string, opts: { first?: string } = {}): Promise<Duplex> {
    const channel = await this.link.openStreamLocal(p);
    if (opts.first !== undefined) channel.write(opts.first);
    return channel;
  }

  // --- facts -----------------------------------------------------------------------------------

  info(): Promise<HostInfo> {
    this.infoPromise ??= probeLogin(this.link, this.loginEnvTimeoutMs, (w) => this.warnings.push(w)).catch((err: unknown) => {
      this.infoPromise = undefined;
      throw err;
    });
    return this.infoPromise;
  }

  async which(program: string): Promise<string | null> {
    const r = await this.run(['/bin/sh', '-c', WHICH_SCRIPT, 'sh', program]);
    const found = r.stdout.replace(/\n$/, '');
    return r.exitCode === 0 && found ? found : null;
  }

  close(): Promise<void> {
    this.closing ??= (() => {
      this.shells.closeAll();
      return this.link.close();
    })();
    return this.closing;
  }
}

/** Connect to an ssh target (what the user typed: alias, user@host, ssh://user@host:port). */
export function connectSsh(target: string, opts: SshHostOptions = {}): Promise<SshHost> {
  return SshHost.connect(target, opts);
}
