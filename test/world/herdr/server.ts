// `herdr server`: the headless simulator. Owns a private tmux server (one window per pane, each a
// real interactive shell), answers herdr's NDJSON API on the resolved socket, and polls /proc and
// the screens to detect agents and their status the way herdr 0.8 does.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { AGENT_EXECUTABLES, SHELL_NAMES, canonicalKind, isStateAuthority, kindOfProcess, officialSourceKind, reportsPath } from './agents.js';
import { parseKey, type KeyAction } from './keys.js';
import { tmuxSocketFor } from './paths.js';
import { foregroundOf, processTable, readCwd, readStat, readEnvVar, type Foreground, type ProcEntry } from './proc.js';
import { CAPABILITIES, HerdrError, PROTOCOL, VERSION, type Json, type JsonObject, type Request, type Response } from './protocol.js';
import { classifyScreen, type ScreenState } from './screen.js';
import { Tmux } from './tmux.js';

type RawState = 'idle' | 'working' | 'blocked' | 'unknown';
type Status = RawState | 'done';
const STATUSES: readonly Status[] = ['idle', 'working', 'blocked', 'done', 'unknown'];
const DEFAULT_UNTIL: readonly Status[] = ['idle', 'done', 'blocked'];
const ID_ALPHABET = '123456789ABCDEFGHJKMNPQRSTVWXYZ0';
const KEEPER = 'herdr-sim-keeper';
const COLS = 160;
const ROWS = 45;
/** How often the detection loop asks tmux which panes exist when no pane's shell has gone. */
const LISTING_EVERY_MS = 1000;

function envInt(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v >= 0 ? v : fallback;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function encodeId(n: number): string {
  const idx = n - 1;
  return idx < ID_ALPHABET.length ? (ID_ALPHABET[idx] ?? '?') : encodeId(Math.floor(idx / ID_ALPHABET.length)) + (ID_ALPHABET[idx % ID_ALPHABET.length] ?? '?');
}

/** POSIX single-quoting for what `agent start` types into the shell. */
function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

function hasControl(s: string): boolean {
  return /[\u0000-\u001f\u007f]/.test(s);
}

interface Hook {
  source: string;
  agent: string;
  state: RawState;
  authority: boolean;
  pgid: number | null;
}

interface SessionRef {
  source: string;
  agent: string;
  kind: 'id' | 'path';
  value: string;
  pgid: number | null;
}

interface Launch {
  kind: string;
  at: number;
  deadline: number;
  sawPgid: number | null;
  /** The shell's reaped-children faults when the command was typed (see ProcEntry.reapedFaults). */
  reapedAtLaunch: number;
}

interface Workspace {
  id: string;
  label: string;
  cwd: string;
  panes: Pane[];
  focusedPaneId: string;
  nextPane: number;
  tmuxSession: string;
}

interface Pane {
  id: string;
  ws: Workspace;
  terminalId: string;
  tmuxId: string;
  shellPid: number;
  revision: number;
  stateChangeSeq: number;
  raw: RawState;
  rawLabel: string | null;
  seen: boolean;
  fg: Foreground | null;
  detected: { kind: string; pgid: number } | null;
  screen: ScreenState | null;
  hook: Hook | null;
  session: SessionRef | null;
  seqs: Map<string, number>;
  name: string | null;
  namePgid: number | null;
  launch: Launch | null;
  interactiveReady: boolean;
  releases: number;
  closed: boolean;
  createdAt: number;
  spawnCwd: string;
}

export interface ServerOptions {
  socket: string;
  /** Path of the `herdr` executable put into panes as HERDR_BIN_PATH. */
  binPath: string;
  log?: (line: string) => void;
}

export class SimServer {
  private readonly tmux: Tmux;
  private readonly workspaces: Workspace[] = [];
  private activeWs: string | null = null;
  private nextWs = 1;
  private listener: net.Server | null = null;
  private readonly conns = new Set<net.Socket>();
  private tickTimer: NodeJS.Timeout | null = null;
  private ticking = false;
  private ticksSinceListing = 0;
  private stopping = false;
  private resolveDone: ((code: number) => void) | null = null;
  private readonly pollMs = envInt('HERDR_SIM_POLL_MS', 300);
  private readonly readyMs = envInt('HERDR_SIM_READY_MS', 3000);
  private readonly log: (line: string) => void;

  constructor(private readonly opts: ServerOptions) {
    this.tmux = new Tmux(tmuxSocketFor(opts.socket));
    this.log = opts.log ?? ((l) => process.stderr.write(`herdr-sim: ${l}\n`));
  }

  /** Start listening; the promise of `run()` resolves with the exit code when stopped. */
  async run(): Promise<number> {
    const done = new Promise<number>((r) => (this.resolveDone = r));
    fs.mkdirSync(path.dirname(this.opts.socket), { recursive: true, mode: 0o700 });
    if (fs.existsSync(this.opts.socket)) {
      if (await isListening(this.opts.socket)) throw new HerdrError('server_already_running', `a herdr server is already running at ${this.opts.socket}`);
      fs.rmSync(this.opts.socket, { force: true });
    }
    await this.startTmux();
    this.listener = net.createServer((c) => this.accept(c));
    await new Promise<void>((resolve, reject) => {
      this.listener?.once('error', reject);
      this.listener?.listen(this.opts.socket, () => resolve());
    });
    fs.chmodSync(this.opts.socket, 0o600);
    const onSignal = (): void => void this.shutdown(0);
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    process.on('SIGHUP', onSignal);
    this.log(`listening on ${this.opts.socket} (tmux ${this.tmux.socket}, pid ${process.pid})`);
    this.scheduleTick();
    const code = await done;
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.off('SIGHUP', onSignal);
    return code;
  }

  private async startTmux(): Promise<void> {
    if (fs.existsSync(this.tmux.socket)) {
      // A leftover of an earlier sim server on this very socket (ours by construction).
      await this.tmux.run(['kill-server']).catch(() => undefined);
      fs.rmSync(this.tmux.socket, { force: true });
    }
    await this.tmux.run(['new-session', '-d', '-s', KEEPER, '-x', String(COLS), '-y', String(ROWS), 'exec tail -f /dev/null']);
    for (const opt of [['remain-on-exit', 'off'], ['default-size', `${COLS}x${ROWS}`], ['history-limit', '10000'], ['status', 'off'], ['exit-empty', 'off']]) {
      await this.tmux.run(['set-option', '-g', ...opt]).catch(() => undefined);
    }
  }

  async shutdown(code: number): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.tickTimer) clearTimeout(this.tickTimer);
    for (const c of this.conns) c.destroy();
    this.listener?.close();
    await this.tmux.run(['kill-server']).catch(() => undefined);
    fs.rmSync(this.tmux.socket, { force: true });
    fs.rmSync(this.opts.socket, { force: true });
    this.log(`stopped (exit ${code})`);
    this.resolveDone?.(code);
  }

  // ---------------------------------------------------------------- connections

  private accept(c: net.Socket): void {
    this.conns.add(c);
    c.setEncoding('utf8');
    let buf = '';
    let handled = false;
    c.on('data', (chunk: string) => {
      buf += chunk;
      const nl = buf.indexOf('\n');
      if (nl < 0 || handled) return;
      handled = true;
      void this.respond(buf.slice(0, nl)).then((res) => {
        if (!c.destroyed) c.end(`${JSON.stringify(res)}\n`);
        if (res.__after) res.__after();
      });
    });
    c.on('error', () => undefined);
    c.on('close', () => this.conns.delete(c));
  }

  private async respond(line: string): Promise<Response & { __after?: () => void }> {
    let req: Request;
    try {
      req = JSON.parse(line) as Request;
    } catch {
      return { id: '', error: { code: 'invalid_request', message: 'invalid JSON request' } };
    }
    const id = typeof req.id === 'string' ? req.id : '';
    try {
      if (req.method === 'server.stop') {
        return Object.assign({ id, result: { type: 'ok' } }, { __after: () => void this.shutdown(0) });
      }
      const result = await this.dispatch(req.method, req.params ?? {});
      return { id, result };
    } catch (err) {
      if (err instanceof HerdrError) return { id, error: { code: err.code, message: err.message } };
      return { id, error: { code: 'internal_error', message: (err as Error).message } };
    }
  }

  private dispatch(method: string, p: JsonObject): Promise<JsonObject> | JsonObject {
    switch (method) {
      case 'ping':
        return { type: 'pong', version: VERSION, protocol: PROTOCOL, capabilities: CAPABILITIES };
      case 'workspace.create':
        return this.workspaceCreate(p);
      case 'workspace.list':
        return { type: 'workspace_list', workspaces: this.workspaces.map((w) => this.workspaceInfo(w)) };
      case 'workspace.get':
        return { type: 'workspace_info', workspace: this.workspaceInfo(this.wsById(str(p.workspace_id))) };
      case 'workspace.focus':
        return this.workspaceFocus(str(p.workspace_id));
      case 'workspace.close':
        return this.workspaceClose(str(p.workspace_id));
      case 'pane.get':
        return { type: 'pane_info', pane: this.paneInfo(this.paneById(str(p.pane_id))) };
      case 'pane.list':
        return { type: 'pane_list', panes: this.allPanes().filter((x) => p.workspace_id == null || x.ws.id === p.workspace_id).map((x) => this.paneInfo(x)) };
      case 'pane.split':
        return this.paneSplit(p);
      case 'pane.close':
        return this.paneClose(str(p.pane_id));
      case 'pane.process_info':
        return this.processInfo(p);
      case 'pane.send_text':
        return this.sendInput(str(p.pane_id), str(p.text), []);
      case 'pane.send_keys':
        return this.sendInput(str(p.pane_id), '', strs(p.keys));
      case 'pane.send_input':
        return this.sendInput(str(p.pane_id), typeof p.text === 'string' ? p.text : '', strs(p.keys));
      case 'pane.read':
        return this.paneRead(this.paneById(str(p.pane_id)), p);
      case 'pane.report_agent':
        return this.reportAgent(p);
      case 'pane.report_agent_session':
        return this.reportAgentSession(p);
      case 'pane.release_agent':
        return this.releaseAgent(p);
      case 'agent.list':
        return { type: 'agent_list', agents: this.allPanes().filter((x) => this.hosts(x)).map((x) => this.agentInfo(x)) };
      case 'agent.get':
        return { type: 'agent_info', agent: this.agentInfo(this.resolveAgent(str(p.target))) };
      case 'agent.read':
        return this.paneRead(this.resolveAgent(str(p.target)), p);
      case 'agent.start':
        return this.agentStart(p);
      case 'agent.wait':
        return this.agentWait(p);
      case 'agent.prompt':
        return this.agentPrompt(p);
      default:
        throw new HerdrError('unknown_method', `unknown method: ${method}`);
    }
  }

  // ---------------------------------------------------------------- lookups

  private allPanes(): Pane[] {
    return this.workspaces.flatMap((w) => w.panes);
  }

  private wsById(id: string): Workspace {
    const w = this.workspaces.find((x) => x.id === id);
    if (!w) throw new HerdrError('workspace_not_found', `workspace ${id} not found`);
    return w;
  }

  private paneById(id: string): Pane {
    const p = this.allPanes().find((x) => x.id === id);
    if (!p) throw new HerdrError('pane_not_found', `pane ${id} not found`);
    return p;
  }

  private focusedPane(): Pane | undefined {
    const w = this.workspaces.find((x) => x.id === this.activeWs);
    return w?.panes.find((p) => p.id === w.focusedPaneId) ?? w?.panes[0];
  }

  private label(p: Pane): string | null {
    return p.detected?.kind ?? p.hook?.agent ?? p.session?.agent ?? null;
  }

  private hosts(p: Pane): boolean {
    return !p.closed && (this.label(p) !== null || p.launch !== null);
  }

  /** Who occupies the pane; a wait is pinned to it. */
  private occupant(p: Pane): string | null {
    if (p.closed || !this.hosts(p)) return null;
    const pgid = p.detected?.pgid ?? p.hook?.pgid ?? p.session?.pgid ?? null;
    return p.name ? `name:${p.name}:${p.releases}` : `${this.label(p) ?? ''}@${pgid ?? ''}:${p.releases}`;
  }

  private resolveAgent(target: string): Pane {
    const named = this.allPanes().filter((p) => p.name === target && this.hosts(p));
    if (named.length > 1) throw new HerdrError('agent_target_ambiguous', `agent target ${target} is ambiguous: ${named.map((p) => p.id).join(', ')}`);
    if (named[0]) return named[0];
    const pane = this.allPanes().find((p) => p.id === target);
    if (pane && this.hosts(pane)) return pane;
    throw new HerdrError('agent_not_found', `agent target ${target} not found`);
  }

  private status(p: Pane): Status {
    if (p.raw === 'idle' && !p.seen) return 'done';
    return p.raw;
  }

  // ---------------------------------------------------------------- info shapes

  /** Live shell cwd; right after spawn tmux may not have chdir'd the child yet, so use the requested one. */
  private cwdOf(p: Pane): string | null {
    if (Date.now() - p.createdAt < 1000) return p.spawnCwd;
    return readCwd(p.shellPid) ?? p.spawnCwd;
  }

  private foregroundCwd(p: Pane): string | null {
    const leader = p.fg?.members[0];
    return leader && leader.pid !== p.shellPid ? (leader.cwd ?? null) : null;
  }

  private isFocused(p: Pane): boolean {
    return this.activeWs === p.ws.id && p.ws.focusedPaneId === p.id;
  }

  private agentInfo(p: Pane): JsonObject {
    const label = this.label(p);
    const info: JsonObject = { terminal_id: p.terminalId };
    if (p.name) info.name = p.name;
    if (label) info.agent = label;
    info.agent_status = this.status(p);
    if (p.hook?.authority) info.screen_detection_skipped = true;
    if (p.session) info.agent_session = { source: p.session.source, agent: p.session.agent, kind: p.session.kind, value: p.session.value };
    Object.assign(info, { workspace_id: p.ws.id, tab_id: `${p.ws.id}:t1`, pane_id: p.id, focused: this.isFocused(p) });
    if (p.launch) info.launch_pending = true;
    if (p.interactiveReady) info.interactive_ready = true;
    info.state_change_seq = p.stateChangeSeq;
    const cwd = this.cwdOf(p);
    if (cwd) info.cwd = cwd;
    const fgCwd = this.foregroundCwd(p);
    if (fgCwd) info.foreground_cwd = fgCwd;
    info.revision = p.revision;
    return info;
  }

  private paneInfo(p: Pane): JsonObject {
    const label = this.label(p);
    const info: JsonObject = { pane_id: p.id, terminal_id: p.terminalId, workspace_id: p.ws.id, tab_id: `${p.ws.id}:t1`, focused: this.isFocused(p) };
    const cwd = this.cwdOf(p);
    if (cwd) info.cwd = cwd;
    const fgCwd = this.foregroundCwd(p);
    if (fgCwd) info.foreground_cwd = fgCwd;
    if (label) info.agent = label;
    info.agent_status = this.status(p);
    if (p.session) info.agent_session = { source: p.session.source, agent: p.session.agent, kind: p.session.kind, value: p.session.value };
    info.revision = p.revision;
    return info;
  }

  private aggregate(panes: Pane[]): Status {
    const s = new Set(panes.map((p) => this.status(p)));
    for (const c of ['blocked', 'working', 'done', 'idle'] as const) if (s.has(c)) return c;
    return 'unknown';
  }

  private workspaceInfo(w: Workspace): JsonObject {
    return {
      workspace_id: w.id,
      number: this.workspaces.indexOf(w) + 1,
      label: w.label,
      focused: this.activeWs === w.id,
      pane_count: w.panes.length,
      tab_count: 1,
      active_tab_id: `${w.id}:t1`,
      agent_status: this.aggregate(w.panes),
    };
  }

  private tabInfo(w: Workspace): JsonObject {
    return { tab_id: `${w.id}:t1`, workspace_id: w.id, number: 1, label: w.label, focused: this.activeWs === w.id, pane_count: w.panes.length, agent_status: this.aggregate(w.panes) };
  }

  // ---------------------------------------------------------------- workspaces and panes

  private shellArgv(): string[] {
    let login: string | null = null;
    try {
      login = os.userInfo().shell;
    } catch {
      /* no passwd entry */
    }
    const shell = process.env.SHELL && fs.existsSync(process.env.SHELL) ? process.env.SHELL : login || '/bin/sh';
    const name = path.basename(shell);
    return ['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'fish'].includes(name) ? [shell, '-l', '-i'] : [shell, '-i'];
  }

  private paneCommand(wsId: string, paneId: string, callerEnv: Record<string, string>): string[] {
    const env: Record<string, string> = { ...callerEnv };
    delete env.CODEX_THREAD_ID;
    Object.assign(env, {
      HERDR_ENV: '1',
      HERDR_SOCKET_PATH: this.opts.socket,
      HERDR_BIN_PATH: this.opts.binPath,
      HERDR_WORKSPACE_ID: wsId,
      HERDR_TAB_ID: `${wsId}:t1`,
      HERDR_PANE_ID: paneId,
      TERM: 'xterm-256color',
      COLORTERM: 'truecolor',
    });
    const unset = ['TMUX', 'TMUX_PANE', 'TERM_PROGRAM', 'TERM_PROGRAM_VERSION', 'CODEX_THREAD_ID', 'HERDR_SESSION'].flatMap((k) => ['-u', k]);
    return ['env', ...unset, ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...this.shellArgv()];
  }

  private parseEnv(v: Json | undefined): Record<string, string> {
    const env: Record<string, string> = {};
    if (v == null) return env;
    if (typeof v !== 'object' || Array.isArray(v)) throw new HerdrError('invalid_env', 'env must be an object of strings');
    for (const [k, val] of Object.entries(v)) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || typeof val !== 'string' || val.includes('\0')) throw new HerdrError('invalid_env', `invalid env entry: ${k}`);
      env[k] = val;
    }
    return env;
  }

  private resolveDir(cwd: Json | undefined, fallback: string, code: string): string {
    const dir = typeof cwd === 'string' && cwd !== '' ? path.resolve(process.cwd(), cwd) : fallback;
    if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new HerdrError(code, `failed to spawn shell: working directory ${dir} does not exist`);
    return dir;
  }

  private newPane(ws: Workspace, tmuxId: string, shellPid: number, id: string, cwd: string): Pane {
    return {
      createdAt: Date.now(),
      spawnCwd: cwd,
      id,
      ws,
      terminalId: `term_${crypto.randomBytes(6).toString('hex')}`,
      tmuxId,
      shellPid,
      revision: 0,
      stateChangeSeq: 0,
      raw: 'unknown',
      rawLabel: null,
      seen: true,
      fg: null,
      detected: null,
      screen: null,
      hook: null,
      session: null,
      seqs: new Map(),
      name: null,
      namePgid: null,
      launch: null,
      interactiveReady: false,
      releases: 0,
      closed: false,
    };
  }

  private async spawnPane(ws: Workspace, first: boolean, cwd: string, env: Record<string, string>, code: string): Promise<Pane> {
    // Same as workspaces: take the number before awaiting tmux.
    const id = `${ws.id}:p${ws.nextPane++}`;
    const cmd = this.paneCommand(ws.id, id, env);
    const fmt = ['-P', '-F', '#{pane_id} #{pane_pid}'];
    const args = first
      ? ['new-session', '-d', '-s', ws.tmuxSession, '-x', String(COLS), '-y', String(ROWS), '-c', cwd, ...fmt, ...cmd]
      : ['new-window', '-d', '-t', `${ws.tmuxSession}:`, '-c', cwd, ...fmt, ...cmd];
    let out: string;
    try {
      out = await this.tmux.run(args);
    } catch (err) {
      throw new HerdrError(code, `failed to spawn shell: ${(err as Error).message}`);
    }
    const [tmuxId, pid] = out.trim().split(' ');
    const pane = this.newPane(ws, tmuxId ?? '', Number(pid), id, cwd);
    ws.panes.push(pane);
    return pane;
  }

  private async workspaceCreate(p: JsonObject): Promise<JsonObject> {
    const env = this.parseEnv(p.env);
    const cwd = this.resolveDir(p.cwd, process.cwd(), 'workspace_create_failed');
    // Take the id before any await: two concurrent creates must never share one.
    const id = `w${encodeId(this.nextWs++)}`;
    const ws: Workspace = { id, label: typeof p.label === 'string' && p.label ? p.label : path.basename(cwd) || cwd, cwd, panes: [], focusedPaneId: `${id}:p1`, nextPane: 1, tmuxSession: `herdr-${id}` };
    const pane = await this.spawnPane(ws, true, cwd, env, 'workspace_create_failed');
    this.workspaces.push(ws);
    if (p.focus === true || this.activeWs === null) this.activeWs = id;
    return { type: 'workspace_created', workspace: this.workspaceInfo(ws), tab: this.tabInfo(ws), root_pane: this.paneInfo(pane) };
  }

  private workspaceFocus(id: string): JsonObject {
    const w = this.wsById(id);
    this.activeWs = w.id;
    for (const p of w.panes) {
      if (!p.seen) {
        p.seen = true;
        p.revision++;
      }
    }
    return { type: 'workspace_info', workspace: this.workspaceInfo(w) };
  }

  private async workspaceClose(id: string): Promise<JsonObject> {
    const w = this.wsById(id);
    for (const p of w.panes) p.closed = true;
    this.removeWorkspace(w);
    await this.tmux.run(['kill-session', '-t', w.tmuxSession]).catch(() => undefined);
    // herdr 0.8.2 answers a close with a bare ok (0.8.0's docs: workspace_info).
    return { type: 'ok' };
  }

  private removeWorkspace(w: Workspace): void {
    const i = this.workspaces.indexOf(w);
    if (i >= 0) this.workspaces.splice(i, 1);
    if (this.activeWs === w.id) this.activeWs = this.workspaces[0]?.id ?? null;
  }

  /** herdr 0.8.2 `pane close`: the pane and its processes go; the last pane of a workspace takes the workspace. */
  private async paneClose(id: string): Promise<JsonObject> {
    const pane = this.paneById(id);
    if (!pane) throw new HerdrError('pane_not_found', `pane ${id} not found`);
    const w = pane.ws;
    if (w.panes.length === 1) return this.workspaceClose(w.id);
    pane.closed = true;
    w.panes.splice(w.panes.indexOf(pane), 1);
    if (w.focusedPaneId === pane.id) w.focusedPaneId = w.panes[0]!.id;
    await this.tmux.run(['kill-pane', '-t', pane.tmuxId]).catch(() => undefined);
    return { type: 'ok' };
  }

  private async paneSplit(p: JsonObject): Promise<JsonObject> {
    if (p.direction !== 'right' && p.direction !== 'down') throw new HerdrError('invalid_direction', 'direction must be right or down');
    const target = typeof p.target_pane_id === 'string' ? this.paneById(p.target_pane_id) : this.focusedPane();
    if (!target) throw new HerdrError('pane_not_found', 'pane not found');
    const env = this.parseEnv(p.env);
    const cwd = this.resolveDir(p.cwd, this.cwdOf(target) ?? target.ws.cwd, 'pane_split_failed');
    const pane = await this.spawnPane(target.ws, false, cwd, env, 'pane_split_failed');
    if (p.focus === true) {
      target.ws.focusedPaneId = pane.id;
      this.activeWs = target.ws.id;
    }
    return { type: 'pane_info', pane: this.paneInfo(pane) };
  }

  private processInfo(p: JsonObject): JsonObject {
    const pane = typeof p.pane_id === 'string' ? this.paneById(p.pane_id) : this.focusedPane();
    if (!pane) throw new HerdrError('pane_not_found', 'pane not found');
    const fg = foregroundOf(pane.shellPid);
    const members = fg.members.map((m) => ({ ...m }) as JsonObject);
    return { type: 'pane_process_info', process_info: { pane_id: pane.id, shell_pid: pane.shellPid, foreground_process_group_id: fg.pgid, foreground_processes: members } };
  }

  private async sendInput(paneId: string, text: string, keys: string[]): Promise<JsonObject> {
    const pane = this.paneById(paneId);
    const actions: KeyAction[] = [];
    for (const k of keys) {
      const a = parseKey(k);
      if (!a) throw new HerdrError('invalid_key', `unsupported key ${k}`);
      actions.push(a);
    }
    try {
      if (text) await this.tmux.sendLiteral(pane.tmuxId, text);
      for (const a of actions) {
        if ('literal' in a) await this.tmux.sendLiteral(pane.tmuxId, a.literal);
        else await this.tmux.sendKey(pane.tmuxId, a.tmuxKey);
      }
    } catch (err) {
      throw new HerdrError('pane_send_failed', `failed to write to pane ${paneId}: ${(err as Error).message}`);
    }
    return { type: 'ok' };
  }

  private async capture(pane: Pane, opts: { history: boolean; join: boolean; ansi: boolean }): Promise<string[]> {
    const args = ['capture-pane', '-p', '-t', pane.tmuxId];
    if (opts.history) args.push('-S', '-');
    if (opts.join) args.push('-J');
    if (opts.ansi) args.push('-e');
    const out = await this.tmux.run(args);
    const lines = out.split('\n');
    while (lines.length > 0 && (lines[lines.length - 1] ?? '').trim() === '') lines.pop();
    return lines;
  }

  /** visible and recent end each line with a newline, the last one too; recent_unwrapped joins them (herdr 0.8.2). */
  private async paneRead(pane: Pane, p: JsonObject): Promise<JsonObject> {
    const source = typeof p.source === 'string' ? p.source : 'recent';
    if (!['visible', 'recent', 'recent_unwrapped', 'detection'].includes(source)) throw new HerdrError('invalid_read_source', `invalid read source: ${source}`);
    const ansi = p.format === 'ansi' || p.strip_ansi === false;
    const recent = source === 'recent' || source === 'recent_unwrapped';
    let lines: string[];
    try {
      lines = await this.capture(pane, { history: recent, join: source === 'recent_unwrapped', ansi });
    } catch (err) {
      throw new HerdrError('pane_read_failed', `failed to read pane ${pane.id}: ${(err as Error).message}`);
    }
    const requested = typeof p.lines === 'number' ? Math.min(p.lines, 1000) : recent ? 80 : null;
    let truncated = false;
    if (requested !== null && lines.length > requested) {
      lines = lines.slice(lines.length - requested);
      truncated = true;
    }
    return {
      type: 'pane_read',
      read: { pane_id: pane.id, workspace_id: pane.ws.id, tab_id: `${pane.ws.id}:t1`, source, format: ansi ? 'ansi' : 'text', text: source === 'recent_unwrapped' ? lines.join('\n') : lines.map((l) => `${l}\n`).join(''), revision: 0, truncated },
    };
  }

  // ---------------------------------------------------------------- hook reports

  private checkSeq(pane: Pane, source: string, seq: Json | undefined): boolean {
    if (typeof seq !== 'number') return true;
    const last = pane.seqs.get(source);
    if (last !== undefined && seq <= last) return false;
    pane.seqs.set(source, seq);
    return true;
  }

  /** Validated session ref from report params, or null when none was given. */
  private sessionRef(p: JsonObject): { id?: string; path?: string } | null {
    const id = p.agent_session_id;
    const file = p.agent_session_path;
    if (id == null && file == null) return null;
    const ref: { id?: string; path?: string } = {};
    if (id != null) {
      if (typeof id !== 'string' || id === '' || id.length > 512 || hasControl(id)) throw new HerdrError('invalid_agent_session', 'agent session id must be non-empty, at most 512 characters, without control characters');
      ref.id = id;
    }
    if (file != null) {
      if (typeof file !== 'string' || !path.isAbsolute(file) || file.length > 4096 || hasControl(file)) throw new HerdrError('invalid_agent_session', 'agent session path must be absolute and at most 4096 characters');
      ref.path = file;
    }
    return ref;
  }

  /** Store a session ref if herdr would: official pair, no conflicting foreground agent. */
  private applySession(pane: Pane, source: string, agent: string, ref: { id?: string; path?: string }): void {
    const kind = officialSourceKind(source);
    if (kind === null || canonicalKind(agent) !== kind) return;
    if (pane.detected && pane.detected.kind !== kind) return;
    let value: SessionRef | null = null;
    const pgid = pane.fg?.pgid ?? null;
    if (reportsPath(kind) && ref.path) value = { source, agent: kind, kind: 'path', value: ref.path, pgid };
    else if (ref.id) value = { source, agent: kind, kind: 'id', value: ref.id, pgid };
    if (!value) return;
    const old = pane.session;
    pane.session = value;
    if (!old || old.value !== value.value || old.kind !== value.kind) pane.revision++;
  }

  private observeNow(pane: Pane): void {
    this.observe(pane, processTable(), Date.now());
  }

  private reportAgent(p: JsonObject): JsonObject {
    const pane = this.paneById(str(p.pane_id));
    const source = str(p.source);
    const agent = str(p.agent);
    const state = p.state;
    if (state !== 'idle' && state !== 'working' && state !== 'blocked' && state !== 'unknown') throw new HerdrError('invalid_agent_state', `invalid agent state: ${String(state)}`);
    const ref = this.sessionRef(p);
    if (!this.checkSeq(pane, source, p.seq)) return { type: 'ok' };
    this.observeNow(pane);
    const canonical = canonicalKind(agent) ?? agent;
    if (pane.detected && pane.detected.kind !== canonical) return { type: 'ok' };
    pane.hook = { source, agent: canonical, state, authority: isStateAuthority(source), pgid: pane.fg?.pgid ?? null };
    if (ref) this.applySession(pane, source, agent, ref);
    this.updateState(pane);
    return { type: 'ok' };
  }

  private reportAgentSession(p: JsonObject): JsonObject {
    const pane = this.paneById(str(p.pane_id));
    const source = str(p.source);
    const agent = str(p.agent);
    const ref = this.sessionRef(p);
    if (!ref) throw new HerdrError('invalid_agent_session', 'agent session id or path is required');
    if (!this.checkSeq(pane, `session:${source}`, p.seq)) return { type: 'ok' };
    this.observeNow(pane);
    this.applySession(pane, source, agent, ref);
    this.updateState(pane);
    return { type: 'ok' };
  }

  private releaseAgent(p: JsonObject): JsonObject {
    const pane = this.paneById(str(p.pane_id));
    const source = str(p.source);
    if (!this.checkSeq(pane, source, p.seq)) return { type: 'ok' };
    if (pane.hook && pane.hook.source === source) {
      pane.hook = null;
      pane.releases++;
      pane.revision++;
    }
    if (pane.session?.source === source) pane.session = null;
    this.updateState(pane);
    return { type: 'ok' };
  }

  // ---------------------------------------------------------------- agents

  private async agentStart(p: JsonObject): Promise<JsonObject> {
    const name = str(p.name);
    if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name)) throw new HerdrError('invalid_agent_name', "agent name must start with a lowercase letter and contain only lowercase letters, digits, '-' or '_' (1-32 characters)");
    const kind = canonicalKind(str(p.kind));
    if (!kind) throw new HerdrError('unsupported_agent_kind', `unsupported interactive agent kind: ${str(p.kind)}`);
    // herdr 0.8.2's order: the name, the pane, its shell, then the timeout and arguments.
    const taken = this.allPanes().filter((x) => x.name === name && this.hosts(x));
    if (taken.length > 0) {
      // herdr 0.8.2's wording: each candidate as key=value fields, the status capitalised.
      const candidates = taken.map((x) => {
        const a = this.agentInfo(x);
        const status = String(a.agent_status ?? 'unknown');
        return `terminal_id=${x.terminalId} pane_id=${x.id} workspace_id=${x.ws.id} tab_id=${x.ws.id}:t1 cwd=${String(a.cwd ?? '')} status=${status.charAt(0).toUpperCase()}${status.slice(1)}`;
      });
      throw new HerdrError('agent_name_taken', `agent name ${name} is already used; candidates: ${candidates.join(', ')}`);
    }
    const paneId = str(p.pane_id);
    const pane = this.allPanes().find((x) => x.id === paneId);
    if (!pane) throw new HerdrError('agent_pane_not_found', `agent target pane ${paneId} not found`);
    this.observeNow(pane);
    // herdr 0.8.2 says the same for a pane that hosts an agent as for any busy shell.
    if (this.hosts(pane)) throw new HerdrError('agent_pane_busy', `agent target pane ${paneId} is not an available shell`);
    const fg = pane.fg;
    const shellComm = fg?.members.find((m) => m.pid === pane.shellPid)?.name ?? '';
    if (!fg || fg.pgid !== pane.shellPid || fg.members.length !== 1 || !SHELL_NAMES.has(shellComm)) {
      throw new HerdrError('agent_pane_busy', `agent target pane ${paneId} is not an available shell`);
    }
    const timeout = typeof p.timeout_ms === 'number' ? p.timeout_ms : 30000;
    if (!(timeout > 3000 && timeout <= 300000)) throw new HerdrError('invalid_agent_timeout', `agent startup timeout must be greater than 3000 ms and at most 300000 ms, got ${timeout}`);
    const args = strs(p.args);
    const bad = args.find(hasControl);
    if (bad !== undefined) throw new HerdrError('invalid_agent_argument', `agent argument contains a control character: ${JSON.stringify(bad)}`);
    const exe = AGENT_EXECUTABLES[kind] ?? kind;
    // Taken before typing: a command that ends at once may be reaped before the keys are acked.
    const reapedAtLaunch = readStat(pane.shellPid)?.reapedFaults ?? 0;
    try {
      await this.tmux.sendLiteral(pane.tmuxId, [exe, ...args].map(shellQuote).join(' '));
      await this.tmux.sendKey(pane.tmuxId, 'Enter');
    } catch (err) {
      throw new HerdrError('agent_pane_unavailable', `agent target pane ${paneId} has no live terminal: ${(err as Error).message}`);
    }
    const now = Date.now();
    pane.name = name;
    pane.namePgid = null;
    pane.interactiveReady = false;
    pane.launch = { kind, at: now, deadline: now + timeout + 500, sawPgid: null, reapedAtLaunch };
    pane.revision++;
    return { type: 'agent_started', agent: this.agentInfo(pane), argv: [exe, ...args] };
  }

  private untilSet(v: Json | undefined): Status[] {
    const list = strs(v);
    if (list.length === 0) return [...DEFAULT_UNTIL];
    for (const s of list) if (!STATUSES.includes(s as Status)) throw new HerdrError('invalid_agent_status', `invalid agent status: ${s}`);
    return list as Status[];
  }

  /** Poll (100 ms) until the pinned occupant reaches a status in `until`. */
  private async waitFor(pane: Pane, until: readonly Status[], deadline: number): Promise<JsonObject> {
    const pin = this.occupant(pane);
    for (;;) {
      if (until.includes(this.status(pane)) && this.occupant(pane) === pin) return this.agentInfo(pane);
      if (pane.closed || this.occupant(pane) !== pin) throw new HerdrError('agent_not_running', 'agent is no longer running in the target pane');
      if (Date.now() >= deadline) throw new HerdrError('timeout', 'timed out waiting for agent status');
      if (this.stopping) throw new HerdrError('server_stopping', 'the herdr server is stopping');
      await sleep(100);
    }
  }

  private async agentWait(p: JsonObject): Promise<JsonObject> {
    const pane = this.resolveAgent(str(p.target));
    const until = this.untilSet(p.until);
    const deadline = typeof p.timeout_ms === 'number' ? Date.now() + p.timeout_ms : Infinity;
    return { type: 'agent_info', agent: await this.waitFor(pane, until, deadline) };
  }

  private async agentPrompt(p: JsonObject): Promise<JsonObject> {
    const pane = this.resolveAgent(str(p.target));
    const text = typeof p.text === 'string' ? p.text : '';
    if (text.trim() === '') throw new HerdrError('empty_agent_prompt', 'agent prompt text is empty');
    if (pane.launch || this.label(pane) === null) throw new HerdrError('agent_not_ready', 'agent is not ready for a prompt');
    const wait = p.wait && typeof p.wait === 'object' && !Array.isArray(p.wait) ? (p.wait as JsonObject) : null;
    const until = wait ? this.untilSet(wait.until) : [];
    const timeout = wait && typeof wait.timeout_ms === 'number' ? wait.timeout_ms : null;
    const wasWorking = this.status(pane) === 'working';
    const seq0 = pane.stateChangeSeq;
    const pin = this.occupant(pane);
    await this.tmux.sendLiteral(pane.tmuxId, text);
    await sleep(300);
    await this.tmux.sendKey(pane.tmuxId, 'Enter');
    if (!wait) return { type: 'agent_prompted', agent: this.agentInfo(pane) };
    const start = Date.now();
    const deadline = timeout === null ? Infinity : start + timeout;
    if (!wasWorking) {
      const reactBy = Math.min(start + 5000, deadline);
      while (pane.stateChangeSeq === seq0) {
        if (pane.closed || this.occupant(pane) !== pin) throw new HerdrError('agent_not_running', 'agent is no longer running in the target pane');
        if (Date.now() >= reactBy) {
          if (timeout !== null && timeout <= 5000) throw new HerdrError('timeout', 'timed out waiting for agent status');
          throw new HerdrError('agent_prompt_stalled', 'agent did not react to the prompt within 5 s');
        }
        await sleep(100);
      }
    }
    return { type: 'agent_prompted', agent: await this.waitFor(pane, until, deadline) };
  }

  // ---------------------------------------------------------------- detection loop

  private scheduleTick(): void {
    if (this.stopping) return;
    this.tickTimer = setTimeout(() => void this.tick().finally(() => this.scheduleTick()), this.pollMs);
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.stopping) return;
    this.ticking = true;
    try {
      // No pane, nothing to watch: the process table (every process's stat file) is read only
      // when there is a pane to look at.
      const watched = this.allPanes();
      const table = watched.length > 0 ? processTable() : new Map<number, ProcEntry>();
      // Closed panes: tmux is asked when a pane's shell is gone, and once a second anyway (which
      // also notices a tmux server that went away). A tmux client per tick in each simulated
      // machine was most of the test world's idle CPU — real herdr's detection costs next to
      // nothing, so the simulator should not compete with what runs beside it either.
      const shellGone = watched.some((p) => !table.has(p.shellPid));
      this.ticksSinceListing++;
      if (shellGone || this.ticksSinceListing * this.pollMs >= LISTING_EVERY_MS) {
        this.ticksSinceListing = 0;
        // A pane made while tmux answers is not in its answer: only older ones can have closed.
        const listedAt = Date.now();
        let listing: string;
        try {
          listing = await this.tmux.run(['list-panes', '-a', '-F', '#{pane_id}']);
        } catch (err) {
          if (this.stopping) return;
          this.log(`tmux server is gone (${(err as Error).message}); exiting`);
          await this.shutdown(1);
          return;
        }
        const live = new Set(listing.split('\n').filter(Boolean));
        for (const w of [...this.workspaces]) {
          for (const p of [...w.panes]) {
            if (!live.has(p.tmuxId) && p.createdAt < listedAt) this.closePane(p);
          }
        }
      }
      const now = Date.now();
      const panes = this.allPanes();
      for (const p of panes) this.observe(p, table, now);
      await Promise.all(
        panes.map(async (p) => {
          if (this.label(p) === null || p.hook?.authority) return;
          try {
            p.screen = classifyScreen((await this.capture(p, { history: false, join: false, ansi: false })).join('\n'));
          } catch {
            /* the pane may have just closed */
          }
        }),
      );
      for (const p of panes) this.updateState(p);
    } finally {
      this.ticking = false;
    }
  }

  private closePane(p: Pane): void {
    p.closed = true;
    const w = p.ws;
    w.panes = w.panes.filter((x) => x !== p);
    if (w.focusedPaneId === p.id && w.panes[0]) w.focusedPaneId = w.panes[0].id;
    if (w.panes.length === 0) this.removeWorkspace(w);
  }

  /** Foreground identity: detected agent, and what is pinned to a foreground that has left. */
  private observe(p: Pane, table: Map<number, ProcEntry>, now: number): void {
    const fg = foregroundOf(p.shellPid, table);
    p.fg = fg;
    const shellFg = fg.pgid === null || fg.pgid === p.shellPid;
    let detected: Pane['detected'] = null;
    const leader = fg.members[0];
    if (!shellFg && leader && fg.pgid !== null) {
      const kind = kindOfProcess(leader.argv ?? [], leader.name, readEnvVar(leader.pid, 'HERDR_AGENT'));
      if (kind) detected = { kind, pgid: fg.pgid };
    }
    if (p.detected?.kind !== detected?.kind || p.detected?.pgid !== detected?.pgid) {
      p.detected = detected;
      p.revision++;
    }
    if (p.hook && p.hook.pgid !== fg.pgid) {
      p.hook = null;
      p.revision++;
    }
    if (p.session && p.session.pgid !== fg.pgid) {
      p.session = null;
      p.revision++;
    }
    if (p.name && p.namePgid !== null && p.namePgid !== fg.pgid) this.clearName(p);
    if (p.launch) {
      const shell = table.get(p.shellPid);
      if (!shellFg) p.launch.sawPgid = fg.pgid;
      // Exited before becoming interactive: seen in the foreground and gone, or so brief that the
      // only trace is the shell having reaped a child since the command was typed.
      else if (p.launch.sawPgid !== null || (shell && shell.reapedFaults > p.launch.reapedAtLaunch)) this.clearName(p);
      if (p.launch && now > p.launch.deadline) this.clearName(p);
    }
    if (this.label(p) === null) p.interactiveReady = false;
  }

  private clearName(p: Pane): void {
    p.name = null;
    p.namePgid = null;
    p.launch = null;
    p.interactiveReady = false;
    p.revision++;
  }

  /** Status from the hook authority, else the screen; seen/done and counters. */
  private updateState(p: Pane): void {
    const label = this.label(p);
    let raw: RawState;
    if (p.hook?.authority) raw = p.hook.state;
    else if (label !== null) raw = p.screen ?? (p.raw === 'unknown' ? 'unknown' : p.raw);
    else raw = 'unknown';
    if (raw !== p.raw) {
      if (raw !== 'idle') p.seen = true;
      else if (p.raw === 'working' || (p.raw === 'unknown' && p.rawLabel !== null && p.rawLabel === label)) p.seen = this.activeWs === p.ws.id;
      p.raw = raw;
      p.stateChangeSeq++;
      p.revision++;
    }
    p.rawLabel = label;
    if (label !== null && (raw === 'idle' || raw === 'blocked') && !p.launch) p.interactiveReady = true;
    const l = p.launch;
    if (l && p.detected?.kind === l.kind && Date.now() - l.at >= this.readyMs && (raw === 'idle' || raw === 'blocked')) {
      p.launch = null;
      p.namePgid = p.detected.pgid;
      p.interactiveReady = true;
      p.revision++;
    }
    if (label === null) p.screen = null;
  }
}

function str(v: Json | undefined): string {
  return typeof v === 'string' ? v : '';
}

function strs(v: Json | undefined): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function isListening(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.createConnection(socket);
    c.on('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.on('error', () => resolve(false));
  });
}
