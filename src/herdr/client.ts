// Typed herdr 0.8 client over a Host: every call is `herdr <words…>` run by argv on that host,
// its envelope parsed with zod, its error codes surfaced as HerdrError with herdr's own code.
//
// Reads (agent list/get, pane get/process-info/read) and keystrokes (send-text/send-keys) go
// straight to the server's API socket once a probe found it — the CLI's probe, or a ping where
// the CLI would look (see socket-path.ts): the CLI prints exactly the socket's response line, so
// the same schemas parse it, and it spares a process start per call (and, over ssh, a program on
// the remote side). Socket trouble falls back to the CLI — for keystrokes only when nothing was
// sent. Workspaces, agent start and integrations stay on the CLI.
import type { Duplex } from 'node:stream';
import type { z } from 'zod';
import { HandoffError } from '../errors.js';
import type { Host, RunResult } from '../host/host.js';
import {
  AgentInfoResult,
  AgentListResult,
  AgentStartedResult,
  ErrorEnvelope,
  OkResult,
  PaneInfoResult,
  PaneReadResult,
  PongResult,
  ProcessInfoResult,
  ServerStatus,
  WorkspaceCreatedResult,
  WorkspaceListResult,
  type AgentInfo,
  type AgentStatus,
  type PaneInfo,
  type PaneProcessInfo,
  type WorkspaceInfo,
} from './schemas.js';
import { parseIntegrationStatus, type IntegrationState } from './integration.js';
import { checkHerdrVersion, type VersionCheck } from './version.js';
import { expectedSocket } from './socket-path.js';
import { untilInteractive } from './start-wait.js';

/** A herdr command failed; `code` is herdr's own error code (e.g. `agent_pane_busy`). */
export class HerdrError extends HandoffError {
  readonly herdrCode: string;
  constructor(herdrCode: string, message: string, hostLabel: string, fix?: string) {
    super(herdrCode, `herdr on ${hostLabel}: ${message}`, fix === undefined ? {} : { fix });
    this.name = 'HerdrError';
    this.herdrCode = herdrCode;
  }
}

const FIXES: Record<string, string> = {
  server_not_running: 'Start herdr on that machine (run `herdr` once, or `herdr server`), then retry.',
  protocol_mismatch: 'The herdr client and server versions differ on that machine: restart the herdr server after updating herdr.',
  herdr_not_installed: 'Install herdr 0.8 or later on that machine and make sure it is on the login PATH (e.g. ~/.local/bin).',
};

/** Prints herdr's path ($1, else the login PATH's) on a line, then execs `status server --json`. */
const PROBE_SCRIPT = 'p=$1; [ -n "$p" ] || p=$(command -v herdr) || exit 127; case $p in /*) ;; *) exit 127;; esac; [ -x "$p" ] || exit 127; printf "%s\\n" "$p"; exec "$p" status server --json';

const INTEGRATION_STATUS = ['integration', 'status'];

function parseServerStatus(stdout: string): ServerStatus | null {
  try {
    return ServerStatus.parse(JSON.parse(stdout.trim().split('\n').pop() ?? ''));
  } catch {
    return null;
  }
}

export interface HerdrProbe {
  /** Absolute path of the herdr binary on the host, or null when it is not installed. */
  path: string | null;
  version: VersionCheck | null;
  server: 'running' | 'not_running' | 'not_installed';
  serverStatus: ServerStatus | null;
  /** The socket `reach()` pinged, when the CLI names another one (reads went to the wrong server). */
  socketMismatch?: { pinged: string; cli: string };
}

export interface HerdrClientOptions {
  /** Use this herdr binary instead of looking it up on the login PATH. */
  bin?: string;
  /** Bound on a single herdr call (default 30 s); waits add their own timeout on top. */
  timeoutMs?: number;
}

export class HerdrClient {
  private binPromise: Promise<string | null> | undefined;
  private readonly timeoutMs: number;
  /** The server's API socket, once a probe found a running, compatible server. */
  private socket: string | null = null;
  private requests = 0;
  /**
   * Over ssh, a connection to the socket opened ahead of the next request: opening a streamlocal
   * channel is a round trip of its own, so with a spare ready a read costs one round trip and no
   * remote program at all. (herdr answers one request per connection.)
   */
  private spare: Promise<Duplex> | null = null;
  private probing: Promise<HerdrProbe> | undefined;
  private reaching: Promise<HerdrProbe> | undefined;
  /** The socket that answered `reach()`'s ping. */
  private pinged: string | null = null;

  constructor(
    readonly host: Host,
    private readonly opts: HerdrClientOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** The herdr binary on the host's login PATH (cached), or null. */
  bin(): Promise<string | null> {
    this.binPromise ??= this.opts.bin ? Promise.resolve(this.opts.bin) : this.host.which('herdr');
    return this.binPromise;
  }

  private async requireBin(): Promise<string> {
    const bin = await this.bin();
    if (!bin) throw new HerdrError('herdr_not_installed', 'herdr is not installed (not found on the login PATH)', this.host.label, FIXES.herdr_not_installed);
    return bin;
  }

  /** Run herdr with argv; returns the raw result (no interpretation). */
  async raw(args: readonly string[], extraTimeoutMs = 0): Promise<RunResult> {
    const bin = await this.requireBin();
    return this.host.run([bin, ...args], { timeoutMs: this.timeoutMs + extraTimeoutMs });
  }

  private fail(r: RunResult, args: readonly string[]): never {
    const line = r.stderr.trim().split('\n').find((l) => l.startsWith('{'));
    if (line) {
      try {
        const env = ErrorEnvelope.parse(JSON.parse(line));
        throw new HerdrError(env.error.code, env.error.message, this.host.label, FIXES[env.error.code]);
      } catch (err) {
        if (err instanceof HerdrError) throw err;
      }
    }
    const code = r.exitCode === 2 ? 'herdr_usage' : 'herdr_failed';
    const detail = (r.stderr || r.stdout).trim().split('\n').slice(0, 3).join(' / ');
    throw new HerdrError(code, `\`herdr ${args.join(' ')}\` exited ${r.exitCode}: ${detail || 'no output'}`, this.host.label);
  }

  /** Run a JSON command and parse its success envelope. */
  private async json<S extends z.ZodTypeAny>(args: readonly string[], schema: S, extraTimeoutMs = 0): Promise<z.infer<S>> {
    const r = await this.raw(args, extraTimeoutMs);
    if (r.exitCode !== 0) this.fail(r, args);
    const line = r.stdout.trim().split('\n').pop() ?? '';
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new HerdrError('herdr_bad_output', `\`herdr ${args.join(' ')}\` printed no JSON: ${line.slice(0, 200)}`, this.host.label);
    }
    const res = schema.safeParse(parsed);
    if (!res.success) {
      throw new HerdrError('herdr_bad_output', `\`herdr ${args.join(' ')}\` printed unexpected JSON: ${res.error.message.slice(0, 300)}`, this.host.label);
    }
    return res.data;
  }

  /** Run an ok-only command (prints nothing on success). */
  private async ok(args: readonly string[]): Promise<void> {
    const r = await this.raw(args);
    if (r.exitCode !== 0) this.fail(r, args);
  }

  /** Installed? which version? server up? — asked once per client; never throws for "not installed" or "not running". */
  probe(): Promise<HerdrProbe> {
    this.probing ??= this.probeOnce();
    return this.probing;
  }

  /**
   * The probe's program, for a look that asks it beside others in one program (its answer then
   * goes to `probeAnswered`): find herdr on the login PATH and ask the server's status.
   */
  probeArgv(): string[] {
    return ['/bin/sh', '-c', PROBE_SCRIPT, 'sh', this.opts.bin ?? ''];
  }

  /** The probe, from the answer to `probeArgv` asked elsewhere (unless this client probed already). */
  probeAnswered(answer: Promise<RunResult>): Promise<HerdrProbe> {
    this.probing ??= answer.then((r) => this.probeOf(r));
    return this.probing;
  }

  private async probeOnce(): Promise<HerdrProbe> {
    return this.probeOf(await this.host.run(this.probeArgv(), { timeoutMs: this.timeoutMs }));
  }

  private async probeOf(r: RunResult): Promise<HerdrProbe> {
    // A running, compatible server reports its version, which the CLI shares (the protocol
    // matches); `--version` is asked only when the status cannot tell.
    const nl = r.stdout.indexOf('\n');
    const path = r.exitCode === 127 || nl < 1 ? null : r.stdout.slice(0, nl);
    this.binPromise ??= Promise.resolve(path);
    if (!path) return { path: null, version: null, server: 'not_installed', serverStatus: null };
    const serverStatus = parseServerStatus(r.stdout.slice(nl + 1));
    const told = serverStatus?.running && serverStatus.compatible !== false ? serverStatus.version : null;
    const socket = told && serverStatus?.socket ? serverStatus.socket : null;
    if (socket !== this.socket) {
      this.socket = socket;
      this.spare = socket && this.host.socketsCostARoundTrip ? this.openSpare(socket) : null;
    }
    const version = checkHerdrVersion(told ?? (await this.host.run([path, '--version'], { timeoutMs: this.timeoutMs })).stdout);
    const mismatch = this.pinged && serverStatus?.socket && serverStatus.socket !== this.pinged ? { pinged: this.pinged, cli: serverStatus.socket } : null;
    return { path, version, server: serverStatus?.running ? 'running' : 'not_running', serverStatus, ...(mismatch ? { socketMismatch: mismatch } : {}) };
  }

  /**
   * The quick probe, for a side whose herdr CLI is needed only after nothing has changed yet (the
   * source: its first CLI call is the quit, and a CLI that does not match the server fails it
   * cleanly). A ping where herdr's CLI would look (the login environment tells where) answers
   * running and version without starting a herdr process; the CLI is only looked up on the PATH.
   * Anything else falls back to the full probe, which explains what is wrong.
   */
  reach(): Promise<HerdrProbe> {
    this.reaching ??= this.reachOnce();
    return this.reaching;
  }

  private async reachOnce(): Promise<HerdrProbe> {
    const [version, path] = await Promise.all([this.pingVersion(), this.bin()]);
    if (!version || !path) return this.probe();
    return { path, version: checkHerdrVersion(version), server: 'running', serverStatus: null };
  }

  /**
   * Ping the socket where herdr's CLI would look; true (and reads use it from now on) when a
   * server of a supported version answers. No herdr process is started; false says nothing
   * about why (the CLI will).
   */
  async ping(): Promise<boolean> {
    return this.socket !== null || (await this.pingVersion()) !== null;
  }

  /** The server's version when the expected socket answers a ping (and reads then use it); else null. */
  private async pingVersion(): Promise<string | null> {
    const info = await this.host.info().catch(() => null);
    const socket = info ? expectedSocket(info.loginEnv, info.home) : null;
    if (!socket) return null;
    const pong = await socketRequest(this.host.connectSocket(socket), this.requestLine('ping', {}), this.socketTimeoutMs)
      .then((line) => PongResult.safeParse(JSON.parse(line)))
      .catch(() => null);
    if (!pong?.success || !checkHerdrVersion(pong.data.result.version).ok) return null;
    this.pinged = socket;
    // A CLI probe that finished meanwhile has set these: it is the authority.
    if (!this.socket) {
      this.socket = socket;
      if (this.host.socketsCostARoundTrip) this.spare = this.openSpare(socket);
    }
    return pong.data.result.version;
  }

  /**
   * One request on the API socket, its response line parsed like the CLI's output; null when
   * the socket is unknown or failed (the caller then runs the CLI, which will say what is wrong).
   */
  private async viaSocket<S extends z.ZodTypeAny>(method: string, params: Record<string, unknown>, schema: S, what: string): Promise<z.infer<S> | null> {
    const socket = this.socket;
    if (!socket) return null;
    const request = this.requestLine(method, params);
    const timeoutMs = this.socketTimeoutMs;
    let line: string;
    try {
      const spare = this.spare;
      this.spare = this.host.socketsCostARoundTrip ? this.openSpare(socket) : null;
      // A spare the server has closed meanwhile: one retry on a fresh connection.
      line = await socketRequest(spare ?? this.host.connectSocket(socket), request, timeoutMs).catch((err: unknown) => {
        if (!spare) throw err;
        return socketRequest(this.host.connectSocket(socket), request, timeoutMs);
      });
    } catch {
      this.socket = null;
      this.spare = null;
      return null;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.socket = null;
      return null;
    }
    const err = ErrorEnvelope.safeParse(parsed);
    if (err.success) throw new HerdrError(err.data.error.code, err.data.error.message, this.host.label, FIXES[err.data.error.code]);
    const res = schema.safeParse(parsed);
    if (!res.success) throw new HerdrError('herdr_bad_output', `herdr's ${what} answered with unexpected JSON: ${res.error.message.slice(0, 300)}`, this.host.label);
    return res.data;
  }

  /**
   * An ok-only request that changes something (keys, text) on the socket. False — and the caller
   * runs the CLI — only when nothing was sent (no socket known, or no connection); once the
   * request may have reached the server it is never sent again: a lost answer is an error.
   * A fresh connection each time, never the spare (which the server may have closed).
   */
  private async writeViaSocket(method: string, params: Record<string, unknown>, what: string): Promise<boolean> {
    const socket = this.socket;
    if (!socket) return false;
    let connection: Duplex;
    try {
      connection = await this.host.connectSocket(socket);
    } catch {
      return false;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(await socketRequest(Promise.resolve(connection), this.requestLine(method, params), this.socketTimeoutMs));
    } catch (err) {
      throw new HerdrError('herdr_failed', `herdr's ${what} got no answer on its socket: ${err instanceof Error ? err.message : String(err)}`, this.host.label);
    }
    const failed = ErrorEnvelope.safeParse(parsed);
    if (failed.success) throw new HerdrError(failed.data.error.code, failed.data.error.message, this.host.label, FIXES[failed.data.error.code]);
    if (!OkResult.safeParse(parsed).success) throw new HerdrError('herdr_bad_output', `herdr's ${what} answered with unexpected JSON.`, this.host.label);
    return true;
  }

  /** One NDJSON request with this client's next id. */
  private requestLine(method: string, params: Record<string, unknown>): string {
    return JSON.stringify({ id: `agent-handoff:${++this.requests}`, method, params });
  }

  /** A socket request answers at once or not at all: its own, shorter bound. */
  private get socketTimeoutMs(): number {
    return Math.min(this.timeoutMs, 10_000);
  }

  private openSpare(socket: string): Promise<Duplex> {
    const p = this.host.connectSocket(socket).then((stream) => {
      stream.on('error', () => undefined);
      return stream;
    });
    p.catch(() => undefined);
    return p;
  }

  async agentList(): Promise<AgentInfo[]> {
    const r = (await this.viaSocket('agent.list', {}, AgentListResult, 'agent list')) ?? (await this.json(['agent', 'list'], AgentListResult));
    return r.result.agents;
  }

  async agentGet(target: string): Promise<AgentInfo> {
    const r = (await this.viaSocket('agent.get', { target }, AgentInfoResult, 'agent get')) ?? (await this.json(['agent', 'get', target], AgentInfoResult));
    return r.result.agent;
  }

  /**
   * `agent start`, answered once the agent is interactive (herdr's rule: ≥ 3 s), or fails.
   * Over the socket herdr answers at once (launch pending) and the wait is ours, as herdr's CLI
   * does it, so an agent that exits at once is known within a poll or two, where the CLI sits
   * out its whole --timeout when the program was gone before herdr looked. Without the socket:
   * the CLI.
   */
  async agentStart(name: string, kind: string, pane: string, args: readonly string[], timeoutMs = 30_000): Promise<{ agent: AgentInfo; argv: string[] }> {
    const params = { name, kind, pane_id: pane, args: [...args], timeout_ms: timeoutMs };
    const before = this.socket ? await this.read(pane, { source: 'visible' }).catch(() => null) : null;
    const launched = await this.viaSocket('agent.start', params, AgentStartedResult, 'agent start');
    if (launched) {
      const argv = launched.result.argv ?? [kind, ...args];
      return { agent: await untilInteractive(this, name, pane, { before, argv }, timeoutMs), argv };
    }
    const r = await this.json(['agent', 'start', name, '--kind', kind, '--pane', pane, '--timeout', String(timeoutMs), '--', ...args], AgentStartedResult, timeoutMs);
    return { agent: r.result.agent, argv: r.result.argv ?? [] };
  }

  async agentWait(target: string, until: readonly AgentStatus[], timeoutMs: number): Promise<AgentInfo> {
    const args = ['agent', 'wait', target, ...until.flatMap((s) => ['--until', s]), '--timeout', String(timeoutMs)];
    return (await this.json(args, AgentInfoResult, timeoutMs)).result.agent;
  }

  async processInfo(pane: string): Promise<PaneProcessInfo> {
    const r = (await this.viaSocket('pane.process_info', { pane_id: pane }, ProcessInfoResult, 'pane process-info')) ?? (await this.json(['pane', 'process-info', '--pane', pane], ProcessInfoResult));
    return r.result.process_info;
  }

  async paneGet(pane: string): Promise<PaneInfo> {
    const r = (await this.viaSocket('pane.get', { pane_id: pane }, PaneInfoResult, 'pane get')) ?? (await this.json(['pane', 'get', pane], PaneInfoResult));
    return r.result.pane;
  }

  // Keys and text go over the socket too once it is known (no herdr process for the quit's
  // keystrokes); the CLI when it is not.
  async sendText(pane: string, text: string): Promise<void> {
    if (await this.writeViaSocket('pane.send_text', { pane_id: pane, text }, 'pane send-text')) return;
    await this.ok(['pane', 'send-text', pane, text]);
  }

  async sendKeys(pane: string, keys: readonly string[]): Promise<void> {
    if (await this.writeViaSocket('pane.send_keys', { pane_id: pane, keys: [...keys] }, 'pane send-keys')) return;
    await this.ok(['pane', 'send-keys', pane, ...keys]);
  }

  async run(pane: string, text: string): Promise<void> {
    await this.ok(['pane', 'run', pane, text]);
  }

  /** Screen text (ANSI stripped). */
  async read(pane: string, opts: { source?: 'visible' | 'recent' | 'recent-unwrapped'; lines?: number } = {}): Promise<string> {
    const source = (opts.source ?? 'visible').replace('-', '_');
    const params = { pane_id: pane, source, format: 'text', strip_ansi: true, ...(opts.lines ? { lines: opts.lines } : {}) };
    const viaSocket = await this.viaSocket('pane.read', params, PaneReadResult, 'pane read');
    if (viaSocket) return viaSocket.result.read.text;
    const args = ['pane', 'read', pane, '--source', opts.source ?? 'visible', ...(opts.lines ? ['--lines', String(opts.lines)] : [])];
    const r = await this.raw(args);
    if (r.exitCode !== 0) this.fail(r, args);
    return r.stdout;
  }

  async workspaceCreate(opts: { cwd: string; label?: string; focus?: boolean; env?: Record<string, string> }): Promise<{ workspace: WorkspaceInfo; paneId: string }> {
    const args = ['workspace', 'create', '--cwd', opts.cwd];
    if (opts.label) args.push('--label', opts.label);
    for (const [k, v] of Object.entries(opts.env ?? {})) args.push('--env', `${k}=${v}`);
    args.push(opts.focus ? '--focus' : '--no-focus');
    const r = await this.json(args, WorkspaceCreatedResult);
    return { workspace: r.result.workspace, paneId: r.result.root_pane.pane_id };
  }

  async workspaceList(): Promise<WorkspaceInfo[]> {
    return (await this.json(['workspace', 'list'], WorkspaceListResult)).result.workspaces;
  }

  async workspaceClose(id: string): Promise<void> {
    const args = ['workspace', 'close', id];
    const r = await this.raw(args);
    if (r.exitCode !== 0) this.fail(r, args);
  }

  /** `integration status` (plain text, local file checks on that host, no server needed). */
  async integrationStatus(): Promise<IntegrationState[]> {
    // Asked alongside the probe: by name on the login PATH rather than waiting for a lookup.
    return this.integrationsOf(this.binPromise ? await this.raw(INTEGRATION_STATUS) : await this.host.run(this.integrationStatusArgv(), { timeoutMs: this.timeoutMs }));
  }

  /** `integration status`'s program, for a look that asks it beside others (see integrationsOf). */
  integrationStatusArgv(): string[] {
    return [this.opts.bin ?? 'herdr', ...INTEGRATION_STATUS];
  }

  /** The integrations, from the answer to `integrationStatusArgv`; throws as integrationStatus does. */
  async integrationsOf(r: RunResult): Promise<IntegrationState[]> {
    if (r.exitCode === 127 && !this.binPromise) await this.requireBin();
    if (r.exitCode !== 0) this.fail(r, INTEGRATION_STATUS);
    return parseIntegrationStatus(r.stdout);
  }

  async integrationInstall(target: string): Promise<string> {
    const args = ['integration', 'install', target];
    const r = await this.raw(args);
    if (r.exitCode !== 0) {
      throw new HerdrError('integration_install_failed', `\`herdr integration install ${target}\` failed: ${(r.stderr || r.stdout).trim().slice(0, 300)}`, this.host.label);
    }
    return r.stdout;
  }
}

/** One NDJSON request and its one-line answer on a socket connection, bounded by `timeoutMs`. */
async function socketRequest(connection: Promise<Duplex>, request: string, timeoutMs: number): Promise<string> {
  const stream = await connection;
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const done = (err: Error | null, value?: string): void => {
      clearTimeout(timer);
      stream.removeAllListeners('data');
      stream.destroy();
      if (err) reject(err);
      else resolve(value ?? '');
    };
    const timer = setTimeout(() => done(new Error(`no answer from herdr's socket within ${timeoutMs} ms`)), timeoutMs);
    stream.on('data', (d: Buffer) => {
      chunks.push(d);
      const all = Buffer.concat(chunks);
      const nl = all.indexOf(0x0a);
      if (nl >= 0) done(null, all.subarray(0, nl).toString('utf8'));
    });
    stream.on('error', (e: Error) => done(e));
    stream.on('end', () => done(new Error("herdr's socket closed without an answer")));
    stream.write(`${request}\n`);
  });
}

