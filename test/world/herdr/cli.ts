// The `herdr` CLI of the simulator (herdr 0.8.0, protocol 19): same words, flags, envelopes,
// stdout/stderr split and exit codes as the real CLI. Socket commands never start a server.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { canonicalKind } from './agents.js';
import { findTarget, integrationInstall, integrationStatus, integrationUninstall, TARGETS, type TextResult } from './integration.js';
import { callLogPath, configDir, resolveSocket, type Env, type SocketTarget } from './paths.js';
import { call, CAPABILITIES, HerdrError, NotRunning, PROTOCOL, VERSION, type JsonObject, type Response } from './protocol.js';
import { SimServer } from './server.js';
import { takeFault } from './testing.js';

class Usage extends Error {}

export interface Out {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

const STATUSES = ['idle', 'working', 'blocked', 'done', 'unknown'];

const GROUP_HELP: Record<string, string> = {
  agent: 'usage: herdr agent <list|get|start|wait|prompt|read> ...',
  pane: 'usage: herdr pane <get|list|split|close|process-info|read|send-text|send-keys|run|report-agent|report-agent-session|release-agent> ...',
  workspace: 'usage: herdr workspace <create|list|get|focus|close> ...',
  integration: 'usage: herdr integration <status|install|uninstall> ...',
  server: 'usage: herdr server [stop]',
  status: 'usage: herdr status server [--json]',
};

const HELP = `herdr ${VERSION} (simulator)

usage: herdr <command> [args]

commands:
  server [stop]            run the headless server in the foreground / stop it
  status server [--json]   probe the server
  workspace ...            create|list|get|focus|close
  pane ...                 get|list|split|close|process-info|read|send-text|send-keys|run|report-agent|report-agent-session|release-agent
  agent ...                list|get|start|wait|prompt|read
  integration ...          status|install|uninstall
`;

// ------------------------------------------------------------------ argument parsing

type FlagKind = 'value' | 'bool' | 'multi';

interface Parsed {
  pos: string[];
  flags: Map<string, string[]>;
  rest: string[] | null;
}

function parseArgs(args: readonly string[], spec: Record<string, FlagKind>): Parsed {
  const out: Parsed = { pos: [], flags: new Map(), rest: null };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '--') {
      out.rest = args.slice(i + 1);
      break;
    }
    if (a.startsWith('-') && a.length > 1) {
      const kind = spec[a];
      if (!kind) throw new Usage(`unknown option: ${a}`);
      if (kind === 'bool') {
        out.flags.set(a, ['true']);
        continue;
      }
      const v = args[i + 1];
      if (v === undefined) throw new Usage(`missing value for ${a}`);
      i++;
      out.flags.set(a, kind === 'multi' ? [...(out.flags.get(a) ?? []), v] : [v]);
      continue;
    }
    out.pos.push(a);
  }
  return out;
}

function flag(p: Parsed, name: string): string | undefined {
  return p.flags.get(name)?.[0];
}

function required(p: Parsed, name: string): string {
  const v = flag(p, name);
  if (v === undefined) throw new Usage(`missing required ${name}`);
  return v;
}

function intFlag(p: Parsed, name: string): number | undefined {
  const v = flag(p, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new Usage(`invalid ${name} value: ${v}`);
  return Number(v);
}

function untilFlags(p: Parsed): string[] {
  const list = p.flags.get('--until') ?? [];
  for (const s of list) if (!STATUSES.includes(s)) throw new Usage(`invalid agent status: ${s} (expected idle, working, blocked, done, or unknown)`);
  return list;
}

function envFlags(p: Parsed, id: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of p.flags.get('--env') ?? []) {
    const eq = e.indexOf('=');
    if (eq <= 0) throw new CliFailure(id, 'invalid_env', `invalid env entry ${e}: expected KEY=VALUE`);
    env[e.slice(0, eq)] = e.slice(eq + 1);
  }
  return env;
}

function noExtra(p: Parsed, usage: string, max = 0): void {
  if (p.pos.length > max || p.rest !== null) throw new Usage(usage);
}

/** An error envelope decided on the CLI side (exit 1). */
class CliFailure extends Error {
  constructor(
    readonly id: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

// ------------------------------------------------------------------ talking to the server

class Client {
  constructor(
    readonly target: SocketTarget,
    readonly id: string,
  ) {}

  private notRunning(): CliFailure {
    const how = this.target.session ? `herdr session attach ${this.target.session}` : 'herdr';
    return new CliFailure(this.id, 'server_not_running', `no herdr server is running at ${this.target.socket}; run \`${how}\` to start or attach it`);
  }

  async ping(): Promise<JsonObject | null> {
    try {
      const res = await call(this.target.socket, { id: 'cli:ping', method: 'ping', params: {} });
      return 'result' in res ? res.result : null;
    } catch (err) {
      if (err instanceof NotRunning) return null;
      throw err;
    }
  }

  /** Ping (protocol check) then the request; error envelopes become CliFailure. */
  async request(method: string, params: JsonObject): Promise<JsonObject> {
    const pong = await this.ping();
    if (!pong) throw this.notRunning();
    const theirs = Number(pong.protocol);
    if (theirs !== PROTOCOL) {
      const msg =
        PROTOCOL < theirs
          ? `client protocol ${PROTOCOL} is older than server protocol ${theirs}; upgrade the Herdr client or restart the server with a matching version`
          : `client protocol ${PROTOCOL} is newer than server protocol ${theirs}; restart the Herdr server to use the new version`;
      throw new CliFailure(this.id, 'protocol_mismatch', msg);
    }
    let res: Response;
    try {
      res = await call(this.target.socket, { id: this.id, method, params });
    } catch (err) {
      if (err instanceof NotRunning) throw this.notRunning();
      throw err;
    }
    if ('error' in res) throw new CliFailure(this.id, res.error.code, res.error.message);
    return res.result;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

// ------------------------------------------------------------------ commands

interface Ctx {
  target: () => SocketTarget;
  out: Out;
  env: Env;
}

function printJson(out: Out, id: string, result: JsonObject): number {
  out.stdout(`${JSON.stringify({ id, result })}\n`);
  return 0;
}

async function jsonCommand(ctx: Ctx, id: string, method: string, params: JsonObject): Promise<number> {
  const result = await new Client(ctx.target(), id).request(method, params);
  return printJson(ctx.out, id, result);
}

async function okCommand(ctx: Ctx, method: string, params: JsonObject): Promise<number> {
  await new Client(ctx.target(), 'cli:request').request(method, params);
  return 0;
}

async function textCommand(ctx: Ctx, id: string, method: string, params: JsonObject): Promise<number> {
  const result = await new Client(ctx.target(), id).request(method, params);
  const read = result.read as JsonObject | undefined;
  ctx.out.stdout(String(read?.text ?? ''));
  return 0;
}

function textResult(out: Out, r: TextResult): number {
  if (r.stdout) out.stdout(r.stdout);
  if (r.stderr) out.stderr(r.stderr);
  return r.exit;
}

async function statusServer(ctx: Ctx, args: string[]): Promise<number> {
  if (args[0] !== 'server') throw new Usage(GROUP_HELP.status ?? '');
  const p = parseArgs(args.slice(1), { '--json': 'bool' });
  noExtra(p, GROUP_HELP.status ?? '');
  const target = ctx.target();
  const pong = await new Client(target, 'cli:status:server').ping();
  // herdr 0.8.2 says null for the default session (and for HERDR_SOCKET_PATH), the name otherwise.
  const session = target.session;
  const status = pong
    ? { status: 'running', running: true, version: pong.version, protocol: pong.protocol, capabilities: pong.capabilities ?? CAPABILITIES, compatible: pong.protocol === PROTOCOL, socket: target.socket, session, restart_needed: false }
    : { status: 'not_running', running: false, version: null, protocol: null, capabilities: null, compatible: null, socket: target.socket, session, restart_needed: false };
  if (flag(p, '--json')) ctx.out.stdout(`${JSON.stringify(status)}\n`);
  else ctx.out.stdout(pong ? `server: running (herdr ${String(pong.version)}, protocol ${String(pong.protocol)}) at ${target.socket}\n` : `server: not running (${target.socket})\n`);
  return 0;
}

async function server(ctx: Ctx, args: string[]): Promise<number> {
  if (args[0] === 'stop') {
    noExtra(parseArgs(args.slice(1), {}), GROUP_HELP.server ?? '');
    await new Client(ctx.target(), 'cli:server:stop').request('server.stop', {});
    return 0;
  }
  if (args.length > 0) throw new Usage(GROUP_HELP.server ?? '');
  const target = ctx.target();
  const binPath = ctx.env.HERDR_BIN_PATH || path.resolve(process.argv[1] ?? 'herdr');
  try {
    return await new SimServer({ socket: target.socket, binPath }).run();
  } catch (err) {
    if (err instanceof HerdrError) {
      ctx.out.stderr(`error: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

async function agentStart(ctx: Ctx, args: string[]): Promise<number> {
  const usage = 'usage: herdr agent start NAME --kind KIND --pane PANE [--timeout MS] [-- ARGS...]';
  const name = args[0];
  if (name === undefined || name.startsWith('-')) throw new Usage(usage);
  const p = parseArgs(args.slice(1), { '--kind': 'value', '--pane': 'value', '--timeout': 'value' });
  if (p.pos.length > 0) throw new Usage(usage);
  const kindWord = required(p, '--kind');
  const pane = required(p, '--pane');
  const kind = canonicalKind(kindWord);
  if (!kind) throw new Usage(`unsupported interactive agent kind: ${kindWord}`);
  const timeout = intFlag(p, '--timeout') ?? 30000;
  const id = 'cli:agent:start';
  const client = new Client(ctx.target(), id);
  const deadline = Date.now() + timeout;
  const started = await client.request('agent.start', { name, kind, pane_id: pane, args: p.rest ?? [], timeout_ms: timeout });
  for (;;) {
    let info: JsonObject;
    try {
      info = (await client.request('agent.get', { target: name })).agent as JsonObject;
    } catch (err) {
      if (err instanceof CliFailure && err.code === 'agent_not_found') throw new CliFailure(id, 'agent_start_failed', 'agent process exited before becoming interactive');
      throw err;
    }
    if (typeof info.agent === 'string' && info.agent !== kind) throw new CliFailure(id, 'agent_kind_mismatch', `expected ${kind}, detected ${info.agent}`);
    if (info.name !== name) throw new CliFailure(id, 'agent_name_not_found', `agent ${name} not found`);
    if (info.interactive_ready === true && info.agent === kind && ['idle', 'blocked', 'done'].includes(String(info.agent_status))) {
      return printJson(ctx.out, id, { type: 'agent_started', agent: info, argv: started.argv ?? [] });
    }
    if (info.launch_pending !== true && info.interactive_ready !== true) throw new CliFailure(id, 'agent_start_failed', 'agent process exited before becoming interactive');
    if (Date.now() >= deadline) throw new CliFailure(id, 'timeout', 'timed out waiting for agent startup');
    await sleep(Math.min(100, Math.max(0, deadline - Date.now())));
  }
}

async function agent(ctx: Ctx, args: string[]): Promise<number> {
  const [verb, ...rest] = args;
  switch (verb) {
    case 'list': {
      if (rest.length > 0) throw new Usage('usage: herdr agent list');
      return jsonCommand(ctx, 'cli:agent:list', 'agent.list', {});
    }
    case 'get': {
      const p = parseArgs(rest, {});
      if (p.pos.length !== 1 || p.rest) throw new Usage('usage: herdr agent get TARGET');
      return jsonCommand(ctx, 'cli:agent:get', 'agent.get', { target: p.pos[0] });
    }
    case 'start':
      return agentStart(ctx, rest);
    case 'wait': {
      const p = parseArgs(rest, { '--until': 'multi', '--timeout': 'value' });
      if (p.pos.length !== 1 || p.rest) throw new Usage('usage: herdr agent wait TARGET [--until STATUS]... [--timeout MS]');
      const params: JsonObject = { target: p.pos[0], until: untilFlags(p) };
      const t = intFlag(p, '--timeout');
      if (t !== undefined) params.timeout_ms = t;
      return jsonCommand(ctx, 'cli:agent:wait', 'agent.wait', params);
    }
    case 'prompt': {
      const p = parseArgs(rest, { '--wait': 'bool', '--until': 'multi', '--timeout': 'value' });
      if (p.pos.length !== 2 || p.rest) throw new Usage('usage: herdr agent prompt TARGET TEXT [--wait] [--until STATUS]... [--timeout MS]');
      const until = untilFlags(p);
      const t = intFlag(p, '--timeout');
      const wait = flag(p, '--wait') !== undefined;
      if (!wait && t !== undefined) throw new Usage('--timeout requires --wait');
      if (!wait && until.length > 0) throw new Usage('--until requires --wait');
      const params: JsonObject = { target: p.pos[0], text: p.pos[1] };
      if (wait) params.wait = t === undefined ? { until } : { until, timeout_ms: t };
      return jsonCommand(ctx, 'cli:agent:prompt', 'agent.prompt', params);
    }
    case 'read': {
      const p = parseArgs(rest, { '--source': 'value', '--lines': 'value', '--format': 'value', '--ansi': 'bool', '--raw': 'bool' });
      if (p.pos.length !== 1 || p.rest) throw new Usage('usage: herdr agent read TARGET [--source SOURCE] [--lines N]');
      return textCommand(ctx, 'cli:agent:read', 'agent.read', { target: p.pos[0], ...readParams(p) });
    }
    default:
      throw new Usage(GROUP_HELP.agent ?? '');
  }
}

function readParams(p: Parsed): JsonObject {
  const src = flag(p, '--source') ?? 'recent';
  const sources: Record<string, string> = { visible: 'visible', recent: 'recent', 'recent-unwrapped': 'recent_unwrapped', detection: 'detection' };
  const source = sources[src];
  // herdr 0.8.0 let this escape as Rust debug text (exit 1); 0.8.2 says it as a usage error.
  if (!source) throw new Usage(`invalid read source: ${src}`);
  const fmt = flag(p, '--format');
  if (fmt !== undefined && fmt !== 'text' && fmt !== 'ansi') throw new Usage(`invalid --format value: ${fmt}`);
  const ansi = fmt === 'ansi' || flag(p, '--ansi') !== undefined || flag(p, '--raw') !== undefined;
  const params: JsonObject = { source, format: ansi ? 'ansi' : 'text', strip_ansi: !ansi };
  const lines = intFlag(p, '--lines');
  if (lines !== undefined) params.lines = lines;
  return params;
}

/** herdr 0.8.0 lets a few io errors escape as Rust debug text (exit 1). */
class RawError extends Error {}

function paneSelector(p: Parsed): string | null {
  return flag(p, '--pane') ?? null;
}

async function pane(ctx: Ctx, args: string[]): Promise<number> {
  const [verb, ...rest] = args;
  switch (verb) {
    case 'get': {
      const usage = 'usage: herdr pane get <pane_id>';
      if (rest.some((a) => a.startsWith('-'))) throw new Usage(usage);
      const p = parseArgs(rest, {});
      if (p.pos.length !== 1 || p.rest) throw new Usage(usage);
      return jsonCommand(ctx, 'cli:pane:get', 'pane.get', { pane_id: p.pos[0] });
    }
    case 'list': {
      const p = parseArgs(rest, { '--workspace': 'value' });
      noExtra(p, 'usage: herdr pane list [--workspace ID]');
      return jsonCommand(ctx, 'cli:pane:list', 'pane.list', { workspace_id: flag(p, '--workspace') ?? null });
    }
    case 'process-info': {
      const p = parseArgs(rest, { '--pane': 'value', '--current': 'bool' });
      noExtra(p, 'usage: herdr pane process-info [--pane PANE | --current]');
      // 0.8.0: --current means the UI-focused pane, same as no selector.
      return jsonCommand(ctx, 'cli:pane:process_info', 'pane.process_info', { pane_id: paneSelector(p) });
    }
    case 'close': {
      const p = parseArgs(rest, {});
      if (p.pos.length !== 1 || p.rest) throw new Usage('usage: herdr pane close PANE');
      return jsonCommand(ctx, 'cli:pane:close', 'pane.close', { pane_id: p.pos[0] });
    }
    case 'split': {
      const p = parseArgs(rest, { '--pane': 'value', '--current': 'bool', '--direction': 'value', '--ratio': 'value', '--cwd': 'value', '--env': 'multi', '--focus': 'bool', '--no-focus': 'bool' });
      if (p.pos.length > 1 || p.rest) throw new Usage('usage: herdr pane split [PANE|--pane PANE|--current] --direction right|down [--ratio F] [--cwd DIR] [--env K=V]... [--focus|--no-focus]');
      const direction = required(p, '--direction');
      if (direction !== 'right' && direction !== 'down') throw new Usage(`invalid --direction value: ${direction}`);
      const params: JsonObject = { target_pane_id: p.pos[0] ?? paneSelector(p), direction, env: envFlags(p, 'cli:pane:split'), focus: flag(p, '--focus') !== undefined };
      const cwd = flag(p, '--cwd');
      if (cwd !== undefined) params.cwd = cwd;
      const ratio = flag(p, '--ratio');
      if (ratio !== undefined) {
        if (!Number.isFinite(Number(ratio))) throw new Usage(`invalid --ratio value: ${ratio}`);
        params.ratio = Number(ratio);
      }
      return jsonCommand(ctx, 'cli:pane:split', 'pane.split', params);
    }
    case 'read': {
      const usage = 'usage: herdr pane read PANE [--source visible|recent|recent-unwrapped|detection] [--lines N] [--format text|ansi]';
      const id = rest[0];
      if (id === undefined || id.startsWith('-')) throw new Usage(usage);
      const p = parseArgs(rest.slice(1), { '--source': 'value', '--lines': 'value', '--format': 'value', '--ansi': 'bool', '--raw': 'bool' });
      noExtra(p, usage);
      return textCommand(ctx, 'cli:pane:read', 'pane.read', { pane_id: id, ...readParams(p) });
    }
    case 'send-text': {
      if (rest.length < 2) throw new Usage('usage: herdr pane send-text PANE TEXT...');
      return okCommand(ctx, 'pane.send_text', { pane_id: rest[0], text: rest.slice(1).join(' ') });
    }
    case 'send-keys': {
      if (rest.length < 2) throw new Usage('usage: herdr pane send-keys PANE KEY...');
      return okCommand(ctx, 'pane.send_keys', { pane_id: rest[0], keys: rest.slice(1) });
    }
    case 'run': {
      if (rest.length < 2) throw new Usage('usage: herdr pane run PANE COMMAND...');
      return okCommand(ctx, 'pane.send_input', { pane_id: rest[0], text: rest.slice(1).join(' '), keys: ['Enter'] });
    }
    case 'report-agent': {
      const p = parseArgs(rest, { '--source': 'value', '--agent': 'value', '--state': 'value', '--message': 'value', '--seq': 'value', '--agent-session-id': 'value', '--agent-session-path': 'value' });
      if (p.pos.length !== 1 || p.rest) throw new Usage('usage: herdr pane report-agent PANE --source SOURCE --agent AGENT --state idle|working|blocked|unknown [--message M] [--seq N]');
      const state = required(p, '--state');
      if (!['idle', 'working', 'blocked', 'unknown'].includes(state)) throw new Usage(`invalid --state value: ${state}`);
      return okCommand(ctx, 'pane.report_agent', { pane_id: p.pos[0], source: required(p, '--source'), agent: required(p, '--agent'), state, ...optional(p) });
    }
    case 'report-agent-session': {
      const p = parseArgs(rest, { '--source': 'value', '--agent': 'value', '--seq': 'value', '--agent-session-id': 'value', '--agent-session-path': 'value', '--session-start-source': 'value' });
      if (p.pos.length !== 1 || p.rest) throw new Usage('usage: herdr pane report-agent-session PANE --source SOURCE --agent AGENT [--seq N] [--agent-session-id ID] [--agent-session-path PATH] [--session-start-source SOURCE]');
      const start = flag(p, '--session-start-source');
      if (start !== undefined && !['startup', 'resume', 'clear', 'compact', 'new', 'fork'].includes(start)) throw new Usage(`invalid --session-start-source value: ${start}`);
      return okCommand(ctx, 'pane.report_agent_session', { pane_id: p.pos[0], source: required(p, '--source'), agent: required(p, '--agent'), ...optional(p), session_start_source: start ?? null });
    }
    case 'release-agent': {
      const p = parseArgs(rest, { '--source': 'value', '--agent': 'value', '--seq': 'value' });
      if (p.pos.length !== 1 || p.rest) throw new Usage('usage: herdr pane release-agent PANE --source SOURCE --agent AGENT [--seq N]');
      return okCommand(ctx, 'pane.release_agent', { pane_id: p.pos[0], source: required(p, '--source'), agent: required(p, '--agent'), seq: intFlag(p, '--seq') ?? null });
    }
    default:
      throw new Usage(GROUP_HELP.pane ?? '');
  }
}

function optional(p: Parsed): JsonObject {
  const o: JsonObject = { seq: intFlag(p, '--seq') ?? null };
  const id = flag(p, '--agent-session-id');
  const file = flag(p, '--agent-session-path');
  const msg = flag(p, '--message');
  if (id !== undefined) o.agent_session_id = id;
  if (file !== undefined) o.agent_session_path = file;
  if (msg !== undefined) o.message = msg;
  return o;
}

async function workspace(ctx: Ctx, args: string[]): Promise<number> {
  const [verb, ...rest] = args;
  switch (verb) {
    case 'create': {
      const p = parseArgs(rest, { '--cwd': 'value', '--label': 'value', '--env': 'multi', '--focus': 'bool', '--no-focus': 'bool' });
      noExtra(p, 'usage: herdr workspace create [--cwd DIR] [--label LABEL] [--env K=V]... [--focus|--no-focus]');
      const params: JsonObject = { env: envFlags(p, 'cli:workspace:create'), focus: flag(p, '--focus') !== undefined && flag(p, '--no-focus') === undefined };
      const cwd = flag(p, '--cwd');
      const label = flag(p, '--label');
      if (cwd !== undefined) params.cwd = cwd;
      if (label !== undefined) params.label = label;
      return jsonCommand(ctx, 'cli:workspace:create', 'workspace.create', params);
    }
    case 'list': {
      if (rest.length > 0) throw new Usage('usage: herdr workspace list');
      return jsonCommand(ctx, 'cli:workspace:list', 'workspace.list', {});
    }
    case 'get':
    case 'focus':
    case 'close': {
      const p = parseArgs(rest, {});
      if (p.pos.length !== 1 || p.rest) throw new Usage(`usage: herdr workspace ${verb} WORKSPACE`);
      return jsonCommand(ctx, `cli:workspace:${verb}`, `workspace.${verb}`, { workspace_id: p.pos[0] });
    }
    default:
      throw new Usage(GROUP_HELP.workspace ?? '');
  }
}

function integration(ctx: Ctx, args: string[]): number {
  const [verb, ...rest] = args;
  const env = ctx.env;
  if (verb === 'status') {
    const p = parseArgs(rest, { '--outdated-only': 'bool' });
    noExtra(p, 'usage: herdr integration status [--outdated-only]');
    return textResult(ctx.out, integrationStatus(flag(p, '--outdated-only') !== undefined, env));
  }
  if (verb === 'install' || verb === 'uninstall') {
    const p = parseArgs(rest, {});
    if (p.pos.length !== 1 || p.rest) throw new Usage(`usage: herdr integration ${verb} <${TARGETS.map((t) => t.spelling).join('|')}>`);
    const word = p.pos[0] ?? '';
    const t = findTarget(word);
    if (!t) throw new Usage(`unknown integration target: ${word}\ncurrently supported: ${TARGETS.map((x) => x.spelling).join(', ')}`);
    return textResult(ctx.out, verb === 'install' ? integrationInstall(t, env) : integrationUninstall(t, env));
  }
  throw new Usage(GROUP_HELP.integration ?? '');
}

/** `cli:<noun>:<verb>` as herdr names its request ids (for envelopes decided before any request). */
function requestId(words: readonly string[]): string {
  const [noun, verb] = words;
  if (noun === 'pane' && ['send-text', 'send-keys', 'run', 'report-agent', 'report-agent-session', 'release-agent'].includes(verb ?? '')) return 'cli:request';
  if (!noun || !verb || verb.startsWith('-')) return `cli:${noun ?? 'request'}`;
  return `cli:${noun}:${verb.replace(/-/g, '_')}`;
}

async function dispatch(words: string[], ctx: Ctx): Promise<number> {
  const [cmd, ...rest] = words;
  switch (cmd) {
    case undefined:
      ctx.out.stderr('herdr simulator: the interactive TUI is not simulated; run `herdr server` for a headless server\n');
      return 1;
    case '--version':
    case '-V':
      ctx.out.stdout(`herdr ${VERSION}\n`);
      return 0;
    case '--help':
    case '-h':
    case 'help':
      ctx.out.stdout(HELP);
      return 0;
    case 'status':
      return statusServer(ctx, rest);
    case 'server':
      return server(ctx, rest);
    case 'agent':
      return agent(ctx, rest);
    case 'pane':
      return pane(ctx, rest);
    case 'workspace':
      return workspace(ctx, rest);
    case 'integration':
      return integration(ctx, rest);
    default:
      throw new Usage(`unknown command: ${cmd}\nrun 'herdr --help' for usage`);
  }
}

/** Strip `--session NAME|--session=NAME` and `--handoff` before the first `--`. */
function stripGlobals(argv: readonly string[]): { words: string[]; session?: string; remote: boolean } {
  const words: string[] = [];
  let session: string | undefined;
  let remote = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (a === '--') {
      words.push(...argv.slice(i));
      break;
    }
    if (a === '--session') {
      session = argv[++i] ?? '';
      continue;
    }
    if (a.startsWith('--session=')) {
      session = a.slice('--session='.length);
      continue;
    }
    if (a === '--handoff') continue;
    if (a === '--remote' || a.startsWith('--remote=')) {
      remote = true;
      if (a === '--remote') i++;
      continue;
    }
    words.push(a);
  }
  return session === undefined ? { words, remote } : { words, session, remote };
}

function logCall(argv: readonly string[], exit: number, env: Env): void {
  try {
    const file = callLogPath(env);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.appendFileSync(file, `${JSON.stringify({ t: Date.now(), argv, exit })}\n`);
  } catch {
    /* logging must never change the outcome */
  }
}

const PROCESS_OUT: Out = { stdout: (s) => void process.stdout.write(s), stderr: (s) => void process.stderr.write(s) };

/**
 * The `herdr` CLI. Returns the exit code; writes to `out` (default: the process's streams) and
 * reads `env` (default: the process's) so tests can also run it in-process.
 */
export async function main(argv: string[], out: Out = PROCESS_OUT, env: Env = process.env): Promise<number> {
  let exit = 1;
  try {
    exit = await run(argv, out, env);
  } finally {
    logCall(argv, exit, env);
  }
  return exit;
}

async function run(argv: string[], out: Out, env: Env): Promise<number> {
  const { words, session, remote } = stripGlobals(argv);
  if (remote && words.length > 0 && !['--version', '-V', '--help', '-h'].includes(words[0] ?? '')) {
    out.stderr("error: --remote can only be used with the default launch command\nrun 'herdr --help' for usage\n");
    return 2;
  }
  const ctx: Ctx = { out, env, target: () => resolveSocket(session, env) };
  try {
    if (words[0] !== 'server' || words[1] === 'stop') {
      const fault = takeFault(configDir(env), words);
      if (fault) throw new CliFailure(requestId(words), fault.code, fault.message);
    }
    return await dispatch(words, ctx);
  } catch (err) {
    if (err instanceof Usage) {
      out.stderr(`${err.message}\n`);
      return 2;
    }
    if (err instanceof CliFailure) {
      out.stderr(`${JSON.stringify({ id: err.id, error: { code: err.code, message: err.message } })}\n`);
      return 1;
    }
    if (err instanceof RawError) {
      out.stderr(`${err.message}\n`);
      return 1;
    }
    if (err instanceof Error && err.message.startsWith('invalid session name')) {
      out.stderr(`${err.message}\n`);
      return 2;
    }
    out.stderr(`Error: ${(err as Error).message}\n`);
    return 1;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
