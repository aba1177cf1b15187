// SshHost: the Host contract over one ssh2 connection.
//
// One connection per host per invocation; every command is a channel on it. TCP_NODELAY on the
// socket (ssh2 leaves Nagle on: +40 ms per exec, SFTP write streams crawl). Channels are capped
// below sshd's default MaxSessions (10). Commands go through the shell-agnostic encoding of
// remote-command.ts. Files: streams and small files through `cat` on an exec channel (pipelined
// by the 2 MB channel window, so they stay fast over real latency and use constant memory);
// metadata through one lazily opened SFTP channel (one round trip per operation).
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable, type Duplex, type Writable } from 'node:stream';
import type { Client, ClientChannel, SFTPWrapper, Stats } from 'ssh2';
import { HostError } from '../errors.js';
import { createGunzip, type Gunzip } from 'node:zlib';
import type { ByteRange, DirEntry, FileStat, FileType, Host, HostInfo, ReadOptions, RunOptions, RunResult, WriteOptions } from './host.js';
import { GzipBlocks } from './gzip-blocks.js';
import { makeLoginProbe } from './login-env.js';
import { loginPathWithExtras } from './login-path.js';
import { buildHeader, EXEC_COMMAND, StartMarkFilter, type HeaderSpec } from './remote-command.js';
import { CommandShell, SHELL_STDIN_MAX, shellLoop } from './ssh-shell.js';
import { FIND_PROGRAM_FN } from './find-program.js';
import { authMethodOf, forwardOut, handshake, resolveChain, tcpConnect, type HandshakeOptions, type Hop } from './ssh-connect.js';
import { hopLabel, type SshError } from './ssh-errors.js';
import type { ResolvedTarget, ResolveOptions } from './ssh-target.js';
import { ssh2 } from './ssh2-lib.js';

export { resolveChain } from './ssh-connect.js';

const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 120_000;
const DEFAULT_LOGIN_ENV_TIMEOUT_MS = 5_000;
/** sshd's default MaxSessions is 10; stay below it (the SFTP channel counts too). */
const DEFAULT_MAX_CHANNELS = 8;
/** Long-lived command shells (ssh-shell.ts); each keeps one channel slot. */
const MAX_SHELLS = 3;

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

/** A small FIFO semaphore for channel slots. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(size: number) {
    this.free = size;
  }
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
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

function signalExit(signal: string | undefined): number {
  if (!signal) return 255;
  const n = (os.constants.signals as Record<string, number | undefined>)[signal.startsWith('SIG') ? signal : `SIG${signal}`];
  return 128 + (n ?? 0);
}

/**
 * Ask sshd to signal the session's process group (OpenSSH ≥ 7.9), then close the channel.
 * ssh2's `channel.signal()` silently does nothing once our side has sent EOF (stdin ended),
 * which is the usual state of a running command, so the request goes to the protocol directly.
 */
function killChannel(ch: ClientChannel, signal: 'KILL' | 'TERM' = 'KILL'): void {
  const c = ch as unknown as { outgoing?: { id: number; state: string }; _client?: { _protocol?: { signal(id: number, sig: string): void } } };
  try {
    // 'eof' = we sent EOF but the channel is still open: the usual state of a running command.
    if ((c.outgoing?.state === 'open' || c.outgoing?.state === 'eof') && c._client?._protocol) c._client._protocol.signal(c.outgoing.id, signal);
    else ch.signal(signal);
  } catch {
    // channel already gone
  }
  ch.close();
}

// Scripts run by /bin/sh through the header with positional arguments, never interpolated.
// The start mark ("$2" / "$3") goes out once the file is open: what follows is the file. File
// streams may cross compressed: given a compressor (gzip's flags) that the remote has, the mark
// is followed by `z` and the bytes are its stream; else by `-` and the plain bytes.
const HAS_Z = '[ -n "$z" ] && command -v "$z" >/dev/null 2>&1';
/** $1 file, $2 mark, $3 compressor ('' = none). */
const READ_SCRIPT = `[ -e "$1" ] || exit 66; exec 3<"$1" || exit 67; z=$3; if ${HAS_Z}; then printf %sz "$2"; exec "$z" -1 -c <&3 3<&-; fi; printf %s- "$2"; exec cat <&3 3<&-`;
/** READ_SCRIPT for part of the file: $3 the first byte (1-based, for tail), $4 how many ('' = to the end), $5 compressor. */
const READ_RANGE_SCRIPT = [
  '[ -e "$1" ] || exit 66; exec 3<"$1" || exit 67; z=$5',
  `if ${HAS_Z}; then printf %sz "$2"; out() { "$z" -1 -c; }; else z=; printf %s- "$2"; out() { cat; }; fi`,
  'if [ -z "$4" ]; then tail -c "+$3" <&3 3<&- | out; else tail -c "+$3" <&3 3<&- | head -c "$4" | out; fi',
].join('\n');
/** $1 file, $2 mode, $3 mark, $4 compressor. */
const WRITE_SCRIPT = `umask 077; : >"$1" || exit 67; chmod -- "$2" "$1" || exit 67; z=$4; if ${HAS_Z}; then printf %sz "$3"; exec "$z" -dc >"$1"; fi; printf %s- "$3"; exec cat >"$1"`;
const WHICH_SCRIPT = `${FIND_PROGRAM_FN}; find_program "$1"`;
const TOUCH_SCRIPT = '[ -e "$1" ] || exit 66; touch -a -d "$2" -- "$1" && touch -m -d "$3" -- "$1"';
const NOT_FOUND_EXIT = 66;
/** readFile: too big for one answer, or not a regular file: stream it instead. */
const CAT_FALLBACK_EXIT = 65;
const CAT_SCRIPT = `[ -e "$1" ] || exit 66; [ -f "$1" ] || exit 65; [ "$(wc -c <"$1")" -le ${8 * 1024 * 1024} ] || exit 65; exec cat -- "$1"`;
const SMALL_WRITE_SCRIPT = 'umask 077; : >"$1" || exit 67; chmod -- "$2" "$1" || exit 67; exec cat >"$1"';

interface ExecOutcome {
  exitCode: number;
  stdout: Buffer;
  stderr: Buffer;
}

/** What the user typed, with the address when that was an alias: `vega-slow (vega@127.0.0.1:2300)`. */
function named(typed: string, address: string): string {
  const label = typed.trim();
  return !label || label === address ? address : `${label} (${address})`;
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
    const last = this.hops[this.hops.length - 1];
    return last ? (authMethodOf(last.client) ?? null) : null;
  }

  private readonly hops: Hop[];
  private readonly socket: net.Socket;
  private readonly slots: Slots;
  private readonly commandTimeoutMs: number;
  private readonly loginEnvTimeoutMs: number;
  private readonly compressor: string;
  private readonly counts = { handshakes: 0, channels: 0, commands: 0, sftpRequests: 0 };
  private readonly onLost = new Set<(err: HostError) => void>();
  /** Printed right before the program starts; stdout before it came from shell start-up files. */
  private readonly mark = `AHGO${randomBytes(8).toString('hex')}`;
  private lost: HostError | undefined;
  private closing: Promise<void> | undefined;
  private sftpPromise: Promise<SFTPWrapper> | undefined;
  private infoPromise: Promise<HostInfo> | undefined;
  private readonly shells: CommandShell[] = [];
  private shellsOpening = 0;
  private readonly shellMark = `AHSH${randomBytes(8).toString('hex')}`;

  private constructor(typed: string, chain: ResolvedTarget[], hops: Hop[], socket: net.Socket, opts: SshHostOptions, connectMs: number) {
    this.chain = chain;
    this.target = chain[chain.length - 1]!;
    this.address = hopLabel(this.target);
    this.label = typed.trim() || this.address;
    this.hops = hops;
    this.socket = socket;
    this.connectMs = connectMs;
    this.counts.handshakes = hops.length;
    // At least 2: the SFTP channel keeps one slot for the life of the connection.
    this.slots = new Slots(Math.max(2, opts.maxChannels ?? DEFAULT_MAX_CHANNELS));
    this.commandTimeoutMs = opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.loginEnvTimeoutMs = opts.loginEnvTimeoutMs ?? DEFAULT_LOGIN_ENV_TIMEOUT_MS;
    this.compressor = opts.streamCompressor === undefined ? 'gzip' : (opts.streamCompressor ?? '');
    for (const hop of hops) {
      hop.client.on('error', (err: SshError) => this.connectionLost(err));
      hop.client.on('close', () => this.connectionLost(undefined));
    }
  }

  /** Resolve `target` like OpenSSH, connect (through any ProxyJump hops), verify and authenticate. */
  static async connect(target: string, opts: SshHostOptions = {}): Promise<SshHost> {
    const chain = await resolveChain(target, opts);
    const last = chain[chain.length - 1]!;
    const timeoutMs = opts.connectTimeoutMs ?? last.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const started = Date.now();
    const hops: Hop[] = [];
    let socket: net.Socket | undefined;
    let timedOut = false;
    const attempt = (async () => {
      const dialing = tcpConnect(chain[0]!);
      // ssh2 loads while the TCP handshake is under way (only the ssh handshake needs it).
      try {
        ssh2();
      } catch {
        // the handshake reports it
      }
      socket = await dialing;
      let sock: Duplex = socket;
      for (let i = 0; i < chain.length; i++) {
        const hop = chain[i]!;
        if (timedOut) throw new Error('timed out');
        const shaking = handshake(hop, sock, opts, i === 0, timeoutMs + 1000);
        if (i === 0) opts.onDial?.();
        const client = await shaking;
        hops.push({ client, resolved: hop });
        const next = chain[i + 1];
        if (next) sock = await forwardOut(client, next, hop);
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        reject(new HostError('connect_timeout', `No ssh session with ${named(target, hopLabel(last))} within ${Math.round(timeoutMs / 100) / 10} s${chain.length > 1 ? ` (via ${chain.slice(0, -1).map(hopLabel).join(' → ')})` : ''}.`, {
          fix: 'Check that the host is up and reachable and that the port runs sshd (a firewall that drops packets looks like this too).',
        }));
      }, timeoutMs);
    });
    try {
      await Promise.race([attempt, deadline]);
    } catch (err) {
      attempt.catch(() => undefined);
      for (const h of hops.reverse()) h.client.end();
      (socket as net.Socket | undefined)?.destroy();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    const host = new SshHost(target, chain, hops, socket!, opts, Date.now() - started);
    host.warmUp();
    return host;
  }

  /**
   * Open what nearly every use needs — the login probe, a command shell and the SFTP channel —
   * side by side right after the handshake, so their round trips overlap each other and whatever
   * the caller does meanwhile (loading modules, local work). Failures surface on first real use.
   */
  private warmUp(): void {
    const ignore = (): undefined => undefined;
    this.info().catch(ignore);
    this.takeShell()
      .then((shell) => shell && this.releaseShell(shell))
      .catch(ignore);
    this.sftp().catch(ignore);
  }

  /** The label, with the address when the label is an alias (`vega-slow (vega@127.0.0.1:2300)`). */
  private get named(): string {
    return named(this.label, this.address);
  }

  /** Local TCP port of the connection (to find it in sshd logs). */
  get localPort(): number | undefined {
    return this.socket.localPort;
  }

  get counters(): SshCounters {
    return { ...this.counts, bytesIn: this.socket.bytesRead, bytesOut: this.socket.bytesWritten };
  }

  private connectionLost(err: SshError | undefined): void {
    if (this.lost) return;
    this.lost = this.closing
      ? new HostError('connection_closed', `The connection to ${this.named} was closed.`)
      : new HostError('connection_lost', `Lost the ssh connection to ${this.named}${err ? `: ${err.message}` : ''}.`, { fix: 'Check the network and retry.', ...(err ? { cause: err } : {}) });
    for (const fn of this.onLost) fn(this.lost);
    this.onLost.clear();
    this.socket.destroy();
  }

  private get client(): Client {
    return this.hops[this.hops.length - 1]!.client;
  }

  /** Open an exec channel running EXEC_COMMAND (slot held until the channel closes). */
  private async openExec(): Promise<ClientChannel> {
    if (this.lost) throw this.lost;
    const release = await this.slots.acquire();
    try {
      if (this.lost) throw this.lost;
      const ch = await new Promise<ClientChannel>((resolve, reject) => {
        this.client.exec(EXEC_COMMAND, (err, channel) => (err ? reject(err) : resolve(channel)));
      });
      this.counts.channels++;
      this.counts.commands++;
      ch.once('close', release);
      return ch;
    } catch (err) {
      release();
      if (err instanceof HostError) throw err;
      throw this.lost ?? new HostError('channel_failed', `${this.label} refused a new channel: ${(err as Error).message}`, { fix: 'The server may limit sessions per connection (MaxSessions).', cause: err });
    }
  }

  /**
   * An idle command shell, opening one when there is room; null when all are busy (the caller
   * then uses a plain exec channel, so parallel commands never queue behind each other).
   */
  private async takeShell(): Promise<CommandShell | null> {
    const idle = this.shells.find((s) => !s.busy && !s.dead);
    if (idle) {
      idle.busy = true;
      return idle;
    }
    if (this.shells.length + this.shellsOpening >= MAX_SHELLS) return null;
    this.shellsOpening++;
    try {
      const ch = await this.openExec();
      this.counts.commands--; // the shell itself is not a command; its commands are counted
      ch.write(`${shellLoop(this.shellMark)}\n`);
      // TERM, not KILL: sshd signals the whole group (the loop and its command), and the loop
      // then removes its private folder on its way out (a KILL left it there, with the last output).
      const shell = new CommandShell(ch, this.shellMark, this.label, (c) => killChannel(c, 'TERM'));
      shell.busy = true;
      this.shells.push(shell);
      this.onLost.add((e) => shell.fail(e));
      return shell;
    } finally {
      this.shellsOpening--;
    }
  }

  private releaseShell(shell: CommandShell): void {
    shell.busy = false;
    if (shell.dead) this.shells.splice(this.shells.indexOf(shell) >>> 0, 1);
  }

  /** Run a header; collect or pipe stdout; bounded by timeoutMs. Small commands go through a command shell. */
  private async execHeader(spec: HeaderSpec, o: { stdin?: RunOptions['stdin']; stdout?: Writable; timeoutMs: number; what: string }): Promise<ExecOutcome> {
    const input = o.stdin;
    const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : Buffer.isBuffer(input) ? input : undefined;
    if (!o.stdout && (input === undefined || (bytes && bytes.length <= SHELL_STDIN_MAX))) {
      const shell = await this.takeShell();
      if (shell) {
        try {
          const header = buildHeader(spec);
          this.counts.commands++;
          return await shell.run(header, bytes, o.timeoutMs, o.what);
        } catch (err) {
          throw err instanceof HostError && err.code === 'command_timeout' ? err : (this.lost ?? err);
        } finally {
          this.releaseShell(shell);
        }
      }
    }
    return this.execChannel(buildHeader({ ...spec, startMark: this.mark }), o);
  }

  /** Run a header on its own exec channel. */
  private async execChannel(header: string, o: { stdin?: RunOptions['stdin']; stdout?: Writable; timeoutMs: number; what: string }): Promise<ExecOutcome> {
    const ch = await this.openExec();
    return new Promise<ExecOutcome>((resolve, reject) => {
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      let exitCode: number | undefined;
      let signal: string | undefined;
      let timedOut = false;
      const onLost = (e: HostError): void => {
        clearTimeout(timer);
        reject(e);
      };
      this.onLost.add(onLost);
      const timer = setTimeout(() => {
        timedOut = true;
        killChannel(ch);
        this.onLost.delete(onLost);
        // Do not wait for the server to confirm: a dead peer never would.
        reject(new HostError('command_timeout', `\`${o.what}\` on ${this.label} did not finish within ${Math.round(o.timeoutMs / 100) / 10} s.`, {
          fix: 'Check that the machine is not overloaded, or raise --timeout.',
        }));
      }, o.timeoutMs);
      ch.on('exit', (code: number | null, sig?: string) => {
        if (typeof code === 'number') exitCode = code;
        else signal = sig;
      });
      ch.on('error', () => undefined); // writes after the program exited; the exit status tells.
      ch.stderr.on('data', (d: Buffer) => errOut.push(d));
      const filter = new StartMarkFilter(this.mark);
      const sink = o.stdout;
      const onData = (d: Buffer): void => {
        const rest = filter.feed(d);
        if (!filter.found) return;
        if (!sink) {
          out.push(rest);
          return;
        }
        // From here on a plain pipe, with backpressure.
        ch.removeListener('data', onData);
        if (rest.length) sink.write(rest);
        ch.pipe(sink);
      };
      ch.on('data', onData);
      ch.on('close', () => {
        clearTimeout(timer);
        this.onLost.delete(onLost);
        if (o.stdin instanceof Readable) o.stdin.unpipe(ch);
        if (timedOut) return;
        if (exitCode === undefined && signal === undefined && this.lost) return reject(this.lost);
        // The program never started (cd failed, not found): nothing was piped, end the sink as a pipe would.
        if (sink && !filter.found) sink.end();
        resolve({ exitCode: exitCode ?? signalExit(signal), stdout: Buffer.concat(out), stderr: Buffer.concat(errOut) });
      });
      ch.write(`${header}\n`);
      const input = o.stdin;
      if (input === undefined) ch.end();
      else if (typeof input === 'string' || Buffer.isBuffer(input)) ch.end(input);
      else {
        input.on('error', () => ch.close());
        input.pipe(ch);
      }
    });
  }

  async run(argv: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
    if (!argv[0]) throw new HostError('bad_command', 'Empty command line.');
    const info = await this.info();
    const started = Date.now();
    const r = await this.execHeader({ argv, env: { ...info.loginEnv, ...opts.env }, ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}) }, {
      ...(opts.stdin !== undefined ? { stdin: opts.stdin } : {}),
      ...(opts.stdout ? { stdout: opts.stdout } : {}),
      timeoutMs: opts.timeoutMs ?? this.commandTimeoutMs,
      what: argv[0],
    });
    return { exitCode: r.exitCode, stdout: opts.stdout ? '' : r.stdout.toString('utf8'), stderr: r.stderr.toString('utf8'), durationMs: Date.now() - started };
  }

  /** A file helper script (bare remote PATH is enough for sh, cat, chmod, touch, rm, mv). */
  private async script(script: string, args: string[], what: string): Promise<ExecOutcome> {
    return this.execHeader({ argv: ['/bin/sh', '-c', script, 'sh', ...args] }, { timeoutMs: this.commandTimeoutMs, what });
  }

  private ioError(op: string, p: string, stderr: Buffer | string, exitCode?: number): HostError {
    const msg = stderr.toString().trim();
    if (exitCode === NOT_FOUND_EXIT || /No such file|nonexistent|not found/i.test(msg)) {
      return new HostError('not_found', `No such file or folder on ${this.label}: ${p}`);
    }
    return new HostError('io_failed', `${op} ${p} on ${this.label} failed${msg ? `: ${msg}` : ''}.`);
  }

  async readStream(p: string, range?: ByteRange, opts: ReadOptions = {}): Promise<Readable> {
    const ch = await this.openExec();
    const z = opts.compress ? this.compressor : '';
    const argv = range ? ['/bin/sh', '-c', READ_RANGE_SCRIPT, 'sh', p, this.mark, String(range.start + 1), range.length === undefined ? '' : String(range.length), z] : ['/bin/sh', '-c', READ_SCRIPT, 'sh', p, this.mark, z];
    ch.end(`${buildHeader({ argv })}\n`);
    return new Promise<Readable>((resolve, reject) => {
      const errOut: Buffer[] = [];
      let exitCode: number | undefined;
      let started = false;
      const pass = new PassThrough();
      ch.stderr.on('data', (d: Buffer) => errOut.push(d));
      ch.on('exit', (code: number | null, sig?: string) => {
        exitCode = typeof code === 'number' ? code : signalExit(sig);
      });
      const onLost = (e: HostError): void => {
        if (started) pass.destroy(e);
        else reject(e);
      };
      this.onLost.add(onLost);
      const filter = new StartMarkFilter(this.mark);
      // Compressed (`z` after the mark): gunzip here; it ends when the channel does, and the
      // stream after it once the exit status says the whole file was read.
      let gunzip: Gunzip | undefined;
      let gunzipEnded = false;
      const onData = (d: Buffer): void => {
        let rest = filter.feed(d);
        if (started || !filter.found || rest.length === 0) return;
        const flag = rest[0];
        rest = rest.subarray(1);
        started = true;
        ch.removeListener('data', onData);
        if (flag === 0x7a) {
          gunzip = createGunzip();
          gunzip.on('end', () => (gunzipEnded = true));
          gunzip.on('error', (err) => pass.destroy(this.ioError('Reading', p, `corrupt compressed stream: ${err.message}`)));
          gunzip.pipe(pass, { end: false });
        }
        const sink = gunzip ?? pass;
        if (rest.length) sink.write(rest);
        ch.pipe(sink, { end: sink === gunzip });
        resolve(pass);
      };
      ch.on('data', onData);
      // A consumer that stops early must not leave the channel (and its slot) open.
      pass.on('close', () => {
        gunzip?.destroy();
        ch.close();
      });
      ch.on('close', () => {
        this.onLost.delete(onLost);
        if (!started) {
          reject(this.lost ?? this.ioError('Reading', p, Buffer.concat(errOut), exitCode));
          return;
        }
        if (exitCode !== 0) pass.destroy(this.lost ?? this.ioError('Reading', p, Buffer.concat(errOut), exitCode));
        else if (!gunzip || gunzipEnded) pass.end();
        else gunzip.once('end', () => pass.end());
      });
    });
  }

  async readFile(p: string): Promise<Buffer> {
    // Small files: one round trip on a command shell.
    const r = await this.script(CAT_SCRIPT, [p], 'cat');
    if (r.exitCode === 0) return r.stdout;
    if (r.exitCode !== CAT_FALLBACK_EXIT) throw this.ioError('Reading', p, r.stderr, r.exitCode);
    const chunks: Buffer[] = [];
    for await (const chunk of await this.readStream(p)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async writeStream(p: string, opts: WriteOptions = {}): Promise<{ stream: Writable; done: Promise<void> }> {
    const mode = (opts.mode ?? 0o600).toString(8);
    const ch = await this.openExec();
    ch.write(`${buildHeader({ argv: ['/bin/sh', '-c', WRITE_SCRIPT, 'sh', p, mode, this.mark, opts.compress ? this.compressor : ''] })}\n`);
    const errOut: Buffer[] = [];
    let exitCode: number | undefined;
    let ready = false;
    ch.stderr.on('data', (d: Buffer) => errOut.push(d));
    ch.on('exit', (code: number | null, sig?: string) => {
      exitCode = typeof code === 'number' ? code : signalExit(sig);
    });
    let onLost: (e: HostError) => void = () => undefined;
    const done = new Promise<void>((resolve, reject) => {
      onLost = reject;
      this.onLost.add(onLost);
      ch.on('error', reject);
      ch.on('close', () => {
        this.onLost.delete(onLost);
        if (this.lost && exitCode === undefined) reject(this.lost);
        else if (exitCode === 0 && ready) resolve();
        else reject(this.ioError('Writing', p, Buffer.concat(errOut), exitCode));
      });
    });
    // Wait for the file to be open (the mark), so a missing folder fails here, as it does locally;
    // the byte after it says whether the remote decompresses (`z`).
    const filter = new StartMarkFilter(this.mark);
    const compressed = await new Promise<boolean>((resolve, reject) => {
      ch.on('data', (d: Buffer) => {
        const rest = filter.feed(d);
        if (!ready && filter.found && rest.length > 0) {
          ready = true;
          resolve(rest[0] === 0x7a);
        }
      });
      done.then(() => reject(this.ioError('Writing', p, '')), reject);
    });
    // The caller writes into a stream of ours, not the channel: ssh2 never calls back a write
    // that waits for window on a channel that is gone (no 'drain', no error), so a writer held by
    // backpressure would hang. Once `done` fails, this stream fails with the same error.
    const sink: Writable = compressed ? new GzipBlocks() : new PassThrough();
    sink.pipe(ch);
    // Reported by `done`; a writer not waiting on the stream just then must not crash on it.
    sink.on('error', () => undefined);
    done.catch((err: unknown) => sink.destroy(err instanceof Error ? err : new Error(String(err))));
    // Stopped before its end (an abort): the remote sees a cut stream (compressed: it fails, and
    // `done` says so).
    sink.on('close', () => {
      if (!sink.writableFinished) ch.destroy();
    });
    return { stream: sink, done };
  }

  async writeFile(p: string, data: string | Buffer, opts: WriteOptions = {}): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (bytes.length <= SHELL_STDIN_MAX) {
      const r = await this.execHeader({ argv: ['/bin/sh', '-c', SMALL_WRITE_SCRIPT, 'sh', p, (opts.mode ?? 0o600).toString(8)] }, { stdin: bytes, timeoutMs: this.commandTimeoutMs, what: 'write' });
      if (r.exitCode !== 0) throw this.ioError('Writing', p, r.stderr, r.exitCode);
      return;
    }
    const { stream, done } = await this.writeStream(p, opts);
    stream.end(data);
    await done;
  }

  // --- metadata over SFTP --------------------------------------------------------------------

  private sftp(): Promise<SFTPWrapper> {
    this.sftpPromise ??= (async () => {
      if (this.lost) throw this.lost;
      const release = await this.slots.acquire();
      try {
        const sftp = await new Promise<SFTPWrapper>((resolve, reject) => this.client.sftp((err, s) => (err ? reject(err) : resolve(s))));
        this.counts.channels++;
        sftp.on('error', () => undefined);
        sftp.on('close', () => {
          release();
          this.sftpPromise = undefined;
        });
        return sftp;
      } catch (err) {
        release();
        this.sftpPromise = undefined;
        throw this.lost ?? new HostError('channel_failed', `${this.label} refused the SFTP subsystem: ${(err as Error).message}`, { cause: err });
      }
    })();
    return this.sftpPromise;
  }

  private async sftpCall<T>(fn: (sftp: SFTPWrapper, cb: (err: Error | undefined | null, value?: T) => void) => void): Promise<T> {
    const sftp = await this.sftp();
    // The SFTP channel opened before the connection was lost: ssh2 would answer "No response
    // from server" (an io_failed), and no loss is left to be told of.
    if (this.lost) throw this.lost;
    this.counts.sftpRequests++;
    return new Promise<T>((resolve, reject) => {
      const onLost = (e: HostError): void => reject(e);
      this.onLost.add(onLost);
      fn(sftp, (err, value) => {
        this.onLost.delete(onLost);
        if (err) reject(this.lost ?? err);
        else resolve(value as T);
      });
    });
  }

  private sftpError(op: string, p: string, err: unknown): HostError {
    if (err instanceof HostError) return err;
    if (isNoSuchFile(err)) return new HostError('not_found', `No such file or folder on ${this.label}: ${p}`, { cause: err });
    return new HostError('io_failed', `${op} ${p} on ${this.label} failed: ${(err as Error).message}`, { cause: err });
  }

  async stat(p: string): Promise<FileStat | null> {
    try {
      const st = await this.sftpCall<Stats>((s, cb) => s.lstat(p, cb));
      // SFTPv3 carries whole seconds only.
      return { type: fileTypeOfMode(st.mode), size: st.size, mode: st.mode & 0o7777, mtimeMs: st.mtime * 1000 };
    } catch (err) {
      if (isNoSuchFile(err)) return null;
      throw this.sftpError('stat', p, err);
    }
  }

  async list(dir: string): Promise<DirEntry[]> {
    try {
      const entries = await this.sftpCall<{ filename: string; attrs: { mode: number } }[]>((s, cb) => s.readdir(dir, cb));
      return entries.filter((e) => e.filename !== '.' && e.filename !== '..').map((e) => ({ name: e.filename, type: fileTypeOfMode(e.attrs.mode) }));
    } catch (err) {
      throw this.sftpError('Listing', dir, err);
    }
  }

  async mkdirOnce(p: string, mode: number): Promise<boolean> {
    return (await this.run(['mkdir', '-m', mode.toString(8), '--', p])).exitCode === 0;
  }

  async mkdirp(p: string, mode = 0o700): Promise<void> {
    const make = async (d: string, depth: number): Promise<void> => {
      try {
        await this.sftpCall<void>((s, cb) => s.mkdir(d, { mode }, cb));
        return;
      } catch (err) {
        if (isNoSuchFile(err) && depth < 64 && path.posix.dirname(d) !== d) {
          await make(path.posix.dirname(d), depth + 1);
          try {
            await this.sftpCall<void>((s, cb) => s.mkdir(d, { mode }, cb));
            return;
          } catch {
            // made meanwhile? checked below
          }
        }
        const st = await this.stat(d);
        if (st?.type === 'dir') return;
        if (st?.type === 'symlink' && (await this.realpath(d).then((r) => this.stat(r)).catch(() => null))?.type === 'dir') return;
        throw this.sftpError('Creating folder', d, err);
      }
    };
    await make(path.posix.normalize(p), 0);
  }

  async rename(from: string, to: string): Promise<void> {
    try {
      // posix-rename@openssh.com is rename(2): atomic, replaces `to`.
      await this.sftpCall<void>((s, cb) => s.ext_openssh_rename(from, to, cb));
    } catch (err) {
      if (!/does not support|not supported/i.test((err as Error).message)) throw this.sftpError('Renaming', from, err);
      const r = await this.script('exec mv -f -- "$1" "$2"', [from, to], 'mv');
      if (r.exitCode !== 0) throw this.ioError('Renaming', from, r.stderr, r.exitCode);
    }
  }

  async remove(p: string, opts: { recursive?: boolean } = {}): Promise<void> {
    if (opts.recursive) {
      const r = await this.script('exec rm -rf -- "$1"', [p], 'rm');
      if (r.exitCode !== 0) throw this.ioError('Removing', p, r.stderr, r.exitCode);
      return;
    }
    try {
      await this.sftpCall<void>((s, cb) => s.unlink(p, cb));
    } catch (err) {
      if (isNoSuchFile(err)) return;
      throw this.sftpError('Removing', p, err);
    }
  }

  async realpath(p: string): Promise<string> {
    try {
      // Some servers resolve a missing last component; the contract says not_found. The path
      // itself is looked at alongside (it exists exactly when its resolution does): one round trip.
      const [r, st] = await Promise.all([this.sftpCall<string>((s, cb) => s.realpath(p, cb)), this.stat(p)]);
      if (st === null) throw new HostError('not_found', `No such file or folder on ${this.label}: ${p}`);
      return r;
    } catch (err) {
      throw this.sftpError('Resolving', p, err);
    }
  }

  async chmod(p: string, mode: number): Promise<void> {
    try {
      await this.sftpCall<void>((s, cb) => s.chmod(p, mode, cb));
    } catch (err) {
      throw this.sftpError('chmod', p, err);
    }
  }

  async utimes(p: string, atimeMs: number, mtimeMs: number): Promise<void> {
    if (atimeMs % 1000 === 0 && mtimeMs % 1000 === 0) {
      try {
        await this.sftpCall<void>((s, cb) => s.utimes(p, atimeMs / 1000, mtimeMs / 1000, cb));
        return;
      } catch (err) {
        throw this.sftpError('Setting times of', p, err);
      }
    }
    // SFTPv3 times are whole seconds; POSIX `touch -d` keeps the fraction.
    const iso = (ms: number): string => new Date(ms).toISOString();
    const r = await this.script(TOUCH_SCRIPT, [p, iso(atimeMs), iso(mtimeMs)], 'touch');
    if (r.exitCode !== 0) throw this.ioError('Setting times of', p, r.stderr, r.exitCode);
  }

  async connectSocket(p: string): Promise<Duplex> {
    if (this.lost) throw this.lost;
    const release = await this.slots.acquire();
    try {
      const ch = await new Promise<ClientChannel>((resolve, reject) => this.client.openssh_forwardOutStreamLocal(p, (err, c) => (err ? reject(err) : resolve(c))));
      this.counts.channels++;
      ch.once('close', release);
      return ch;
    } catch (err) {
      release();
      throw this.lost ?? new HostError('channel_failed', `${this.label} refused a connection to ${p}: ${(err as Error).message}`, { cause: err });
    }
  }

  // --- facts -----------------------------------------------------------------------------------

  info(): Promise<HostInfo> {
    this.infoPromise ??= this.learnInfo().catch((err: unknown) => {
      this.infoPromise = undefined;
      throw err;
    });
    return this.infoPromise;
  }

  private async learnInfo(): Promise<HostInfo> {
    const probe = makeLoginProbe();
    const ch = await this.openExec();
    ch.end(`${probe.header}\n`);
    const out: Buffer[] = [];
    let timedOut = false;
    await new Promise<void>((resolve, reject) => {
      const onLost = (e: HostError): void => reject(e);
      this.onLost.add(onLost);
      // The login shell may hang on a profile that waits for something; do not wait for it.
      const timer = setTimeout(() => {
        timedOut = true;
        killChannel(ch);
        // What arrived so far (the facts) is enough; do not wait for the close.
        this.onLost.delete(onLost);
        resolve();
      }, this.loginEnvTimeoutMs);
      ch.on('data', (d: Buffer) => out.push(d));
      ch.stderr.resume();
      ch.on('close', () => {
        clearTimeout(timer);
        this.onLost.delete(onLost);
        resolve();
      });
    });
    const parsed = probe.parse(Buffer.concat(out));
    if (!parsed) {
      throw this.lost ?? new HostError('host_probe_failed', `Could not learn the basic facts of ${this.label} (uname, id, HOME) with /bin/sh.`, {
        fix: 'The remote machine needs a POSIX /bin/sh with uname, id and hostname.',
      });
    }
    const { facts } = parsed;
    let env = parsed.env;
    if (!env) {
      this.warnings.push(`The login shell of ${this.label} (${facts.shell} -l) ${timedOut ? `did not finish within ${this.loginEnvTimeoutMs / 1000} s` : 'failed'}; using the non-login PATH plus the usual bin folders.`);
      env = { PATH: facts.barePath };
    }
    const home = env.HOME || facts.home;
    const loginEnv: Record<string, string> = { ...env, HOME: home };
    loginEnv.PATH = loginPathWithExtras(env.PATH || facts.barePath || '/usr/bin:/bin', home);
    return { home, user: facts.user, hostname: facts.hostname, platform: facts.platform, shell: facts.shell, tmpdir: facts.tmpdir || '/tmp', loginEnv };
  }

  async which(program: string): Promise<string | null> {
    const r = await this.run(['/bin/sh', '-c', WHICH_SCRIPT, 'sh', program]);
    const found = r.stdout.replace(/\n$/, '');
    return r.exitCode === 0 && found ? found : null;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const shell of this.shells) shell.close();
      for (const hop of [...this.hops].reverse()) hop.client.end();
      // A clean goodbye: the DISCONNECT and our end of the stream handed to the system, which
      // sends them. sshd's own close is not waited for (a round trip at the very end of every
      // command); then nothing may keep the process alive.
      if (!this.socket.destroyed && !this.socket.writableFinished) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(t);
            resolve();
          };
          const t = setTimeout(done, 1000);
          t.unref();
          this.socket.once('finish', done);
          this.socket.once('close', done);
        });
      }
      const closed = this.socket.closed ? null : new Promise((resolve) => this.socket.once('close', resolve));
      this.socket.destroy();
      for (const hop of this.hops) hop.client.destroy();
      // The handle itself is closed by then (a local matter, no round trip).
      await closed;
    })();
    return this.closing;
  }
}

/** Connect to an ssh target (what the user typed: alias, user@host, ssh://user@host:port). */
export function connectSsh(target: string, opts: SshHostOptions = {}): Promise<SshHost> {
  return SshHost.connect(target, opts);
}
