// Typed herdr 0.8 client over a Host: each call is one herdr request, parsed with zod, its errors
// surfaced as HerdrError with herdr's own code.
//
// Reads (agent list/get, pane get/process-info/read) and keystrokes (send-text/send-keys) go
// straight to the server's API socket once a probe found it — the CLI's probe, or a ping where
// the CLI would look (see socket-path.ts) — and fall back to the CLI on socket trouble: for
// keystrokes, new workspaces and panes only when nothing was sent. Agent start goes to the socket
// too (see agentStart); workspace list and close, agent wait, pane run and integrations stay on
// the CLI.
import type { Host, RunResult } from '../host/host.js';
import {
  AgentInfoResult,
  AgentListResult,
  AgentStartedResult,
  PaneInfoResult,
  PaneListResult,
  PaneReadResult,
  ProcessInfoResult,
  WorkspaceCreatedResult,
  WorkspaceListResult,
  type AgentInfo,
  type AgentStatus,
  type PaneInfo,
  type PaneProcessInfo,
  type WorkspaceInfo,
} from './schemas.js';
import { HerdrError } from './herdr-error.js';
import { HerdrCli } from './cli-runner.js';
import { HerdrSocket } from './socket-transport.js';
import { HerdrProber, type HerdrProbe } from './probe.js';
import { parseIntegrationStatus, type IntegrationState } from './integration.js';
import { polledRounds, untilInteractive, watchedRounds, type StartRounds } from './start-wait.js';
import { watchStart } from './start-watch.js';

/** The watch's pause between rounds (each round's two herdr calls take some ms more). */
const WATCH_PAUSE_MS = 50;

const INTEGRATION_STATUS = ['integration', 'status'];

export interface HerdrClientOptions {
  /** Use this herdr binary instead of looking it up on the login PATH. */
  bin?: string;
  /** Bound on a single herdr call (default 30 s); waits add their own timeout on top. */
  timeoutMs?: number;
}

export class HerdrClient {
  private readonly cli: HerdrCli;
  private readonly socket: HerdrSocket;
  private readonly prober: HerdrProber;
  private readonly fixedBin: string | undefined;

  constructor(
    readonly host: Host,
    opts: HerdrClientOptions = {},
  ) {
    const timeoutMs = opts.timeoutMs ?? 30_000;
    this.fixedBin = opts.bin;
    this.cli = new HerdrCli(host, timeoutMs, opts.bin);
    this.socket = new HerdrSocket(host, timeoutMs);
    this.prober = new HerdrProber(host, this.cli, this.socket, opts.bin);
  }

  /** The herdr binary on the host's login PATH (cached), or null. */
  bin(): Promise<string | null> {
    return this.cli.bin();
  }

  /** Run herdr with argv; returns the raw result (no interpretation). */
  raw(args: readonly string[], extraTimeoutMs = 0): Promise<RunResult> {
    return this.cli.raw(args, extraTimeoutMs);
  }

  /** Installed? which version? server up? — asked once per client; never throws for "not installed" or "not running". */
  probe(): Promise<HerdrProbe> {
    return this.prober.probe();
  }

  /**
   * The probe's program, for a look that asks it beside others in one program (its answer then
   * goes to `probeAnswered`): find herdr on the login PATH and ask the server's status.
   */
  probeArgv(): string[] {
    return this.prober.probeArgv();
  }

  /** The probe, from the answer to `probeArgv` asked elsewhere (unless this client probed already). */
  probeAnswered(answer: Promise<RunResult>): Promise<HerdrProbe> {
    return this.prober.probeAnswered(answer);
  }

  /**
   * The quick probe, for a side whose herdr CLI is needed only after nothing has changed yet (the
   * source: its first CLI call is the quit, and a CLI that does not match the server fails it
   * cleanly). A ping where herdr's CLI would look (the login environment tells where) answers
   * running and version without starting a herdr process; the CLI is only looked up on the PATH.
   * Anything else falls back to the full probe, which explains what is wrong.
   */
  reach(): Promise<HerdrProbe> {
    return this.prober.reach();
  }

  /**
   * Ping the socket where herdr's CLI would look; true (and reads use it from now on) when a
   * server of a supported version answers. No herdr process is started; false says nothing
   * about why (the CLI will).
   */
  ping(): Promise<boolean> {
    return this.prober.ping();
  }

  async agentList(): Promise<AgentInfo[]> {
    const r = (await this.socket.read('agent.list', {}, AgentListResult, 'agent list')) ?? (await this.cli.json(['agent', 'list'], AgentListResult));
    return r.result.agents;
  }

  /**
   * The agents, asked at the same moment as `probe` on the socket herdr's CLI would use. The
   * early answer counts only when the probe settled on that very socket; otherwise (or when it
   * failed) the list is asked as `agentList` would.
   */
  async agentListBeside(probe: Promise<HerdrProbe>): Promise<AgentInfo[]> {
    // Where the probe's own program listed them (see reach), that list.
    const listed = this.prober.takeListed();
    if (listed) return (await listed) ?? this.agentList();
    const socket = await this.prober.expectedSocket();
    const early = socket ? this.socket.readAt(socket, 'agent.list', {}, AgentListResult, 'agent list').catch(() => null) : Promise.resolve(null);
    await probe.catch(() => undefined);
    const answered = await early;
    if (answered && this.socket.current === socket) return answered.result.agents;
    return this.agentList();
  }

  async agentGet(target: string): Promise<AgentInfo> {
    const r = (await this.socket.read('agent.get', { target }, AgentInfoResult, 'agent get')) ?? (await this.cli.json(['agent', 'get', target], AgentInfoResult));
    return r.result.agent;
  }

  /**
   * `agent start`, answered once the agent is interactive (herdr's rule: ≥ 3 s), or fails.
   * Over the socket herdr answers at once (launch pending) and the wait is ours, as herdr's CLI
   * does it, so an agent that exits at once is known within a poll or two, where the CLI sits
   * out its whole --timeout when the program was gone before herdr looked. Without the socket:
   * the CLI. `screenBefore`: the pane's screen read moments before (while the caller waited for
   * something else); a blank one says the shell had not drawn yet, and the screen is read now.
   * `screen`: the pane's visible screen when the agent was found interactive, where the watch
   * brought it (over ssh); null otherwise.
   */
  async agentStart(name: string, kind: string, pane: string, args: readonly string[], timeoutMs = 30_000, screenBefore?: Promise<string | null>): Promise<{ agent: AgentInfo; argv: string[]; screen: string | null; running: boolean | null }> {
    const params = { name, kind, pane_id: pane, args: [...args], timeout_ms: timeoutMs };
    const early = await screenBefore?.catch(() => null);
    const before = early?.trim() ? early : this.socket.known ? await this.read(pane, { source: 'visible' }).catch(() => null) : null;
    const launched = await this.socket.read('agent.start', params, AgentStartedResult, 'agent start');
    if (launched) {
      // Once it is ready, requests may follow at once (start.ts: a trust screen answered, herdr's
      // list when the ready look did not see the agent running): their connections opened ahead.
      this.socket.prepareSpares(2);
      const argv = launched.result.argv ?? [kind, ...args];
      const ready = await untilInteractive(this, await this.startRounds(name, pane, timeoutMs), name, pane, { before, argv }, timeoutMs);
      return { agent: ready.info, argv, screen: ready.screen, running: ready.running };
    }
    const r = await this.cli.json(['agent', 'start', name, '--kind', kind, '--pane', pane, '--timeout', String(timeoutMs), '--', ...args], AgentStartedResult, timeoutMs);
    return { agent: r.result.agent, argv: r.result.argv ?? [], screen: null, running: null };
  }

  /**
   * How a launched agent is followed: where a request from here costs a round trip (ssh), by a
   * watch on its host that streams herdr's answers (one program for the whole start); else by
   * polls on the socket.
   */
  private async startRounds(name: string, pane: string, timeoutMs: number): Promise<StartRounds> {
    const polled = () => polledRounds(this, name, pane);
    const bin = this.host.socketsCostARoundTrip ? await this.cli.bin() : null;
    if (!bin) return polled();
    return watchedRounds(watchStart(this.host, this.cli, bin, name, pane, { pauseMs: WATCH_PAUSE_MS, timeoutMs }), polled);
  }

  async agentWait(target: string, until: readonly AgentStatus[], timeoutMs: number): Promise<AgentInfo> {
    const args = ['agent', 'wait', target, ...until.flatMap((s) => ['--until', s]), '--timeout', String(timeoutMs)];
    return (await this.cli.json(args, AgentInfoResult, timeoutMs)).result.agent;
  }

  async processInfo(pane: string): Promise<PaneProcessInfo> {
    const r = (await this.socket.read('pane.process_info', { pane_id: pane }, ProcessInfoResult, 'pane process-info')) ?? (await this.cli.json(['pane', 'process-info', '--pane', pane], ProcessInfoResult));
    return r.result.process_info;
  }

  async paneGet(pane: string): Promise<PaneInfo> {
    const r = (await this.socket.read('pane.get', { pane_id: pane }, PaneInfoResult, 'pane get')) ?? (await this.cli.json(['pane', 'get', pane], PaneInfoResult));
    return r.result.pane;
  }

  // Keys and text go over the socket too once it is known (no herdr process for the quit's
  // keystrokes); the CLI when it is not.
  async sendText(pane: string, text: string): Promise<void> {
    if (await this.socket.write('pane.send_text', { pane_id: pane, text }, 'pane send-text')) return;
    await this.cli.ok(['pane', 'send-text', pane, text]);
  }

  async sendKeys(pane: string, keys: readonly string[]): Promise<void> {
    if (await this.socket.write('pane.send_keys', { pane_id: pane, keys: [...keys] }, 'pane send-keys')) return;
    await this.cli.ok(['pane', 'send-keys', pane, ...keys]);
  }

  async run(pane: string, text: string): Promise<void> {
    await this.cli.ok(['pane', 'run', pane, text]);
  }

  /** Screen text (ANSI stripped). */
  async read(pane: string, opts: { source?: 'visible' | 'recent' | 'recent-unwrapped'; lines?: number } = {}): Promise<string> {
    const source = (opts.source ?? 'visible').replace('-', '_');
    const params = { pane_id: pane, source, format: 'text', strip_ansi: true, ...(opts.lines ? { lines: opts.lines } : {}) };
    const viaSocket = await this.socket.read('pane.read', params, PaneReadResult, 'pane read');
    if (viaSocket) return viaSocket.result.read.text;
    const args = ['pane', 'read', pane, '--source', opts.source ?? 'visible', ...(opts.lines ? ['--lines', String(opts.lines)] : [])];
    const r = await this.raw(args);
    if (r.exitCode !== 0) this.cli.fail(r, args);
    return r.stdout;
  }

  async workspaceCreate(opts: { cwd: string; label?: string; focus?: boolean; env?: Record<string, string> }): Promise<{ workspace: WorkspaceInfo; paneId: string }> {
    const args = ['workspace', 'create', '--cwd', opts.cwd];
    if (opts.label) args.push('--label', opts.label);
    for (const [k, v] of Object.entries(opts.env ?? {})) args.push('--env', `${k}=${v}`);
    args.push(opts.focus ? '--focus' : '--no-focus');
    const params = { cwd: opts.cwd, ...(opts.label ? { label: opts.label } : {}), ...(opts.env ? { env: opts.env } : {}), focus: opts.focus ?? false };
    const r = (await this.socket.change('workspace.create', params, WorkspaceCreatedResult, 'workspace create')) ?? (await this.cli.json(args, WorkspaceCreatedResult));
    return { workspace: r.result.workspace, paneId: r.result.root_pane.pane_id };
  }

  /** A new pane beside `pane`, in its workspace, starting in `cwd` (`pane split`). */
  async paneSplit(pane: string, opts: { cwd: string; focus?: boolean }): Promise<PaneInfo> {
    const params = { target_pane_id: pane, direction: 'right', cwd: opts.cwd, focus: opts.focus ?? false };
    const r = (await this.socket.change('pane.split', params, PaneInfoResult, 'pane split')) ?? (await this.cli.json(['pane', 'split', pane, '--direction', 'right', '--cwd', opts.cwd, opts.focus ? '--focus' : '--no-focus'], PaneInfoResult));
    return r.result.pane;
  }

  async paneClose(pane: string): Promise<void> {
    const args = ['pane', 'close', pane];
    const r = await this.raw(args);
    if (r.exitCode !== 0) this.cli.fail(r, args);
  }

  /** Every pane of the server (each with its folder, workspace and agent). */
  async paneList(): Promise<PaneInfo[]> {
    const r = (await this.socket.read('pane.list', {}, PaneListResult, 'pane list')) ?? (await this.cli.json(['pane', 'list'], PaneListResult));
    return r.result.panes;
  }

  async workspaceList(): Promise<WorkspaceInfo[]> {
    return (await this.cli.json(['workspace', 'list'], WorkspaceListResult)).result.workspaces;
  }

  async workspaceClose(id: string): Promise<void> {
    const args = ['workspace', 'close', id];
    const r = await this.raw(args);
    if (r.exitCode !== 0) this.cli.fail(r, args);
  }

  /** `integration status` (plain text, local file checks on that host, no server needed). */
  async integrationStatus(): Promise<IntegrationState[]> {
    // Asked alongside the probe: by name on the login PATH rather than waiting for a lookup.
    return this.integrationsOf(this.cli.binLookupStarted ? await this.raw(INTEGRATION_STATUS) : await this.host.run(this.integrationStatusArgv(), { timeoutMs: this.cli.timeoutMs }));
  }

  /** `integration status`'s program, for a look that asks it beside others (see integrationsOf). */
  integrationStatusArgv(): string[] {
    return [this.fixedBin ?? 'herdr', ...INTEGRATION_STATUS];
  }

  /** The integrations, from the answer to `integrationStatusArgv`; throws as integrationStatus does. */
  async integrationsOf(r: RunResult): Promise<IntegrationState[]> {
    if (r.exitCode === 127 && !this.cli.binLookupStarted) await this.cli.requireBin();
    if (r.exitCode !== 0) this.cli.fail(r, INTEGRATION_STATUS);
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
