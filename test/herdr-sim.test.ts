// The herdr 0.8 simulator as a separate process: real server, real tmux panes, real shells.
// What both the simulator and the real herdr 0.8.2 do is checked on both in test/herdr/cli-contract.test.ts.
// These run on the simulator alone: 'logs every call and fails injected faults once' (the call log
// and faults are simulator features); 'fails an agent start at once when the agent exits…' (real
// 0.8.2 waits for the timeout: README, known differences); 'lets HERDR_AGENT … hook authority set the
// state' (real 0.8.2 ignored pi's report-agent from a fake pi); the rest checks simulator internals
// (node-script detection, session filtering, named sessions) at the simulator's short timings.
import { execFile, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from './world/herdr/cli.js';
import { injectFault, readCallLog, writeLauncher } from './world/herdr/testing.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLI = path.join(ROOT, 'dist', 'test', 'world', 'herdr', 'cli.js');
const SRC = path.join(ROOT, 'test', 'world', 'herdr');

/** Envelopes from the child process; their shape is what the expectations below check. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

interface Run {
  stdout: string;
  stderr: string;
  exit: number;
}

let tmp = '';
let env: Record<string, string> = {};
let cfg = '';
const servers: number[] = [];

function herdr(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...env, ...extra }, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: unknown }).code ?? 1) : 0;
      resolve({ stdout: String(stdout), stderr: String(stderr), exit: typeof code === 'number' ? code : 1 });
    });
  });
}

/** The same CLI in-process (fast; used for polling and setup, the separate process is `herdr`). */
async function cli(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const exit = await main(args, { stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s) }, { ...env, ...extra });
  return { stdout, stderr, exit };
}

async function json(args: string[]): Promise<Json> {
  const r = await cli(args);
  if (r.exit !== 0) throw new Error(`herdr ${args.join(' ')} exited ${r.exit}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Json;
}

function errorOf(r: Run): { id: string; error: { code: string; message: string } } {
  expect(r.exit).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  return JSON.parse(r.stderr) as { id: string; error: { code: string; message: string } };
}

async function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function startServer(extraArgs: string[] = []): Promise<number> {
  const log = fs.openSync(path.join(tmp, `server-${servers.length}.log`), 'a');
  const child = spawn(process.execPath, [CLI, ...extraArgs, 'server'], { env, detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  child.unref();
  const pid = child.pid ?? 0;
  servers.push(pid);
  await until('server up', async () => (await cli([...extraArgs, 'status', 'server', '--json'])).stdout.includes('"running":true'));
  return pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function fg(pane: string): Promise<{ shell_pid: number; foreground_process_group_id: number; foreground_processes: { pid: number; name: string; argv?: string[]; cwd?: string }[] }> {
  return (await json(['pane', 'process-info', '--pane', pane])).result.process_info;
}

async function agents(): Promise<Json[]> {
  return (await json(['agent', 'list'])).result.agents as Json[];
}

/** Screen text of a pane, waiting until it contains `text`. */
function screenWith(pane: string, text: string): Promise<string> {
  return until(`"${text}" on ${pane}`, async () => {
    const r = await cli(['pane', 'read', pane, '--source', 'recent']);
    return r.stdout.includes(text) ? r.stdout : null;
  });
}

const FAKE_CLAUDE = `#!/usr/bin/env node
// A tiny stand-in for claude: a prompt on a cleared screen; "work" shows working chrome for a while.
const report = process.argv.indexOf('--report');
if (report > 0) {
  // like an integration hook: call back into herdr from inside the pane
  require('child_process').execFileSync(process.env.HERDR_BIN_PATH, ['pane', 'report-agent-session', process.env.HERDR_PANE_ID, '--source', 'herdr:claude', '--agent', 'claude', '--agent-session-id', process.argv[report + 1]]);
}
const rl = require('readline').createInterface({ input: process.stdin });
const prompt = () => process.stdout.write('\\x1b[2J\\x1b[Hfake claude\\n> ');
prompt();
rl.on('line', (l) => {
  if (l === 'work') { process.stdout.write('\\x1b[2J\\x1b[Hthinking (esc to interrupt)\\n'); setTimeout(prompt, 1000); }
  else if (l === 'quit') process.exit(0);
  else prompt();
});
`;

beforeAll(async () => {
  // `npm test` builds first; a bare `vitest run` after editing the simulator rebuilds it here.
  const stale = fs
    .readdirSync(SRC)
    .filter((f) => f.endsWith('.ts'))
    .some((f) => (fs.statSync(path.join(path.dirname(CLI), f.replace(/\.ts$/, '.js')), { throwIfNoEntry: false })?.mtimeMs ?? 0) < fs.statSync(path.join(SRC, f)).mtimeMs);
  if (stale) spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'ignore' });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'herdr-sim-'));
  const home = path.join(tmp, 'home');
  const bin = path.join(tmp, 'bin');
  fs.mkdirSync(home);
  fs.mkdirSync(path.join(tmp, 'scripts'));
  writeLauncher(path.join(bin, 'herdr'), CLI);
  fs.writeFileSync(path.join(bin, 'claude'), FAKE_CLAUDE, { mode: 0o755 });
  fs.writeFileSync(path.join(tmp, 'scripts', 'claude'), FAKE_CLAUDE, { mode: 0o755 });
  // Pane shells are login shells: PATH comes from ~/.profile, as in the world.
  fs.writeFileSync(path.join(home, '.profile'), `export PATH=${bin}:$PATH\nPS1='$ '\n`);
  cfg = path.join(tmp, 'cfg', 'herdr');
  env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: path.join(tmp, 'cfg'),
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    HERDR_BIN_PATH: path.join(bin, 'herdr'),
    HERDR_SIM_READY_MS: '300',
    HERDR_SIM_POLL_MS: '150',
  };
  await startServer();
});

afterAll(() => {
  for (const pid of servers) {
    if (alive(pid)) process.kill(pid, 'SIGTERM');
  }
  const end = Date.now() + 3000;
  while (servers.some(alive) && Date.now() < end) spawnSync('sleep', ['0.05']);
  for (const pid of servers) if (alive(pid)) process.kill(pid, 'SIGKILL');
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// `herdr(...)` runs the compiled CLI as its own process at the points where the process contract
// (stdout/stderr split, exit code) is the subject; `cli(...)` runs the same main() in-process.
describe('herdr simulator CLI', () => {
  it('prints its version without a server, and usage errors exit 2 with plain text', async () => {
    expect(await herdr(['--version'])).toEqual({ stdout: 'herdr 0.8.0\n', stderr: '', exit: 0 });
    expect(await cli(['-V'])).toMatchObject({ stdout: 'herdr 0.8.0\n', exit: 0 });
    expect(await cli(['agent', 'list', 'extra'])).toEqual({ stdout: '', stderr: 'usage: herdr agent list\n', exit: 2 });
    expect(await herdr(['frobnicate'])).toEqual({ stdout: '', stderr: "unknown command: frobnicate\nrun 'herdr --help' for usage\n", exit: 2 });
    expect(await cli(['agent', 'start', 'x', '--kind', 'nope', '--pane', 'w1:p1'])).toMatchObject({ stderr: 'unsupported interactive agent kind: nope\n', exit: 2 });
    expect(await cli(['agent', 'start', 'x', '--pane', 'w1:p1'])).toMatchObject({ stderr: 'missing required --kind\n', exit: 2 });
    expect(await cli(['agent', 'wait', 'x', '--until', 'sleeping'])).toMatchObject({ exit: 2 });
    expect(await cli(['workspace', 'list', '--foo'])).toMatchObject({ exit: 2 });
    expect(await cli(['pane', 'get', '--foo', 'x'])).toMatchObject({ stderr: 'usage: herdr pane get <pane_id>\n', exit: 2 });
    expect(await cli(['agent', 'prompt', 'x', 'hi', '--timeout', '5'])).toMatchObject({ exit: 2 });
    expect(await cli(['--remote', 'h', 'agent', 'list'])).toMatchObject({ stderr: "error: --remote can only be used with the default launch command\nrun 'herdr --help' for usage\n", exit: 2 });
  });

  it('reports a missing server as server_not_running on stderr (exit 1) and status says not_running (exit 0)', async () => {
    const other = { XDG_CONFIG_HOME: path.join(tmp, 'nobody') };
    const status = await cli(['status', 'server', '--json'], other);
    expect(status.exit).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ status: 'not_running', running: false, version: null, socket: path.join(tmp, 'nobody', 'herdr', 'herdr.sock') });
    const e = errorOf(await herdr(['agent', 'list'], other));
    expect(e).toEqual({
      id: 'cli:agent:list',
      error: { code: 'server_not_running', message: `no herdr server is running at ${path.join(tmp, 'nobody', 'herdr', 'herdr.sock')}; run \`herdr\` to start or attach it` },
    });
    const named = errorOf(await cli(['--session', 'side', 'pane', 'send-text', 'w1:p1', 'x'], other));
    expect(named.id).toBe('cli:request');
    expect(named.error.message).toContain(path.join(tmp, 'nobody', 'herdr', 'sessions', 'side', 'herdr.sock'));
    expect(named.error.message).toContain('herdr session attach side');
    const running = JSON.parse((await cli(['status', 'server', '--json'])).stdout) as Record<string, unknown>;
    expect(running).toMatchObject({ status: 'running', running: true, version: '0.8.0', protocol: 19, compatible: true, socket: path.join(cfg, 'herdr.sock') });
    expect(fs.statSync(path.join(cfg, 'herdr.sock')).mode & 0o777).toBe(0o600);
  });

  it('creates, lists, gets and closes workspaces with herdr ids and shapes', async () => {
    const created = await herdr(['workspace', 'create', '--cwd', tmp, '--label', 'alpha']);
    expect(created.stderr).toBe('');
    expect(created.stdout.endsWith('}\n') && created.stdout.split('\n')).toHaveLength(2);
    const a = JSON.parse(created.stdout) as Json;
    expect(a.id).toBe('cli:workspace:create');
    expect(a.result).toMatchObject({
      type: 'workspace_created',
      workspace: { workspace_id: 'w1', number: 1, label: 'alpha', focused: true, pane_count: 1, tab_count: 1, active_tab_id: 'w1:t1', agent_status: 'unknown' },
      tab: { tab_id: 'w1:t1', workspace_id: 'w1', number: 1 },
      root_pane: { pane_id: 'w1:p1', workspace_id: 'w1', tab_id: 'w1:t1', cwd: tmp, agent_status: 'unknown', revision: 0 },
    });
    expect(a.result.root_pane.terminal_id).toMatch(/^term_[0-9a-f]+$/);
    const b = await json(['workspace', 'create', '--cwd', tmp, '--no-focus']);
    expect(b.result.workspace).toMatchObject({ workspace_id: 'w2', focused: false });
    expect(b.result.root_pane.pane_id).toBe('w2:p1');
    const list = await json(['workspace', 'list']);
    expect(list.result.workspaces.map((w: { workspace_id: string }) => w.workspace_id)).toEqual(['w1', 'w2']);
    expect((await json(['workspace', 'close', 'w2'])).result.type).toBe('ok');
    expect((await json(['workspace', 'list'])).result.workspaces).toHaveLength(1);
    expect(errorOf(await cli(['workspace', 'get', 'w2']))).toEqual({ id: 'cli:workspace:get', error: { code: 'workspace_not_found', message: 'workspace w2 not found' } });
    const split = await json(['pane', 'split', 'w1:p1', '--direction', 'right']);
    expect(split.result).toMatchObject({ type: 'pane_info', pane: { pane_id: 'w1:p2', workspace_id: 'w1' } });
  });

  it('gives panes the herdr environment; ok-only commands print nothing; pane read prints raw text', async () => {
    await screenWith('w1:p1', '$');
    const sent = await herdr(['pane', 'run', 'w1:p1', 'echo "env:$HERDR_ENV:$HERDR_PANE_ID:$HERDR_WORKSPACE_ID:$HERDR_TAB_ID:$TERM:$COLORTERM:${TMUX:-none}:$PWD"']);
    expect(sent).toEqual({ stdout: '', stderr: '', exit: 0 });
    const text = await screenWith('w1:p1', `env:1:w1:p1:w1:w1:t1:xterm-256color:truecolor:none:${tmp}`);
    expect(text.startsWith('{')).toBe(false);
    expect(text.endsWith('\n')).toBe(true);
    await cli(['pane', 'run', 'w1:p1', 'echo "sock:$HERDR_SOCKET_PATH bin:$HERDR_BIN_PATH"']);
    await screenWith('w1:p1', `sock:${path.join(cfg, 'herdr.sock')} bin:${env.HERDR_BIN_PATH}`);
    expect(errorOf(await cli(['pane', 'read', 'w9:p9']))).toEqual({ id: 'cli:pane:read', error: { code: 'pane_not_found', message: 'pane w9:p9 not found' } });
    expect(errorOf(await cli(['pane', 'send-text', 'w9:p9', 'x']))).toEqual({ id: 'cli:request', error: { code: 'pane_not_found', message: 'pane w9:p9 not found' } });
    expect(await herdr(['pane', 'read', 'w1:p1', '--source', 'bogus'])).toEqual({ stdout: '', stderr: 'invalid read source: bogus\n', exit: 2 });
    const two = await cli(['pane', 'read', 'w1:p1', '--source', 'visible', '--lines', '2']);
    expect(two.stdout.split('\n')).toEqual([expect.any(String), expect.any(String), '']);
  });

  it('validates every key before sending any', async () => {
    await cli(['pane', 'send-text', 'w1:p1', 'echo', 'not-submitted-42']);
    const bad = errorOf(await herdr(['pane', 'send-keys', 'w1:p1', 'Enter', 'win+q']));
    expect(bad).toEqual({ id: 'cli:request', error: { code: 'invalid_key', message: 'unsupported key win+q' } });
    await new Promise((r) => setTimeout(r, 300));
    const screen = (await cli(['pane', 'read', 'w1:p1', '--source', 'visible'])).stdout;
    expect(screen.split('\n').filter((l) => l.trim() === 'not-submitted-42')).toHaveLength(0);
    expect(await cli(['pane', 'send-keys', 'w1:p1', 'ctrl+u', 'ctrl+l', 'shift+tab', 'f5', 'period', 'ctrl+u'])).toEqual({ stdout: '', stderr: '', exit: 0 });
  });

  it('reads the foreground process group: idle shell, then a typed sleep', async () => {
    const idle = await fg('w1:p1');
    expect(idle.foreground_process_group_id).toBe(idle.shell_pid);
    expect(idle.foreground_processes).toHaveLength(1);
    expect(idle.foreground_processes[0]).toMatchObject({ pid: idle.shell_pid, name: 'bash', cwd: tmp });
    await cli(['pane', 'run', 'w1:p1', 'sleep 30']);
    const busy = await until('sleep in the foreground', async () => {
      const f = await fg('w1:p1');
      return f.foreground_processes[0]?.name === 'sleep' ? f : null;
    });
    expect(busy.foreground_process_group_id).not.toBe(busy.shell_pid);
    expect(busy.foreground_processes[0]).toMatchObject({ pid: busy.foreground_process_group_id, argv: ['sleep', '30'], cmdline: 'sleep 30', cwd: tmp });
    // A plain program is not an agent; agent start refuses a pane whose shell is not in front.
    expect(await agents()).toEqual([]);
    const e = errorOf(await herdr(['agent', 'start', 'sleeper', '--kind', 'claude', '--pane', 'w1:p1']));
    expect(e).toEqual({ id: 'cli:agent:start', error: { code: 'agent_pane_busy', message: 'agent target pane w1:p1 is not an available shell' } });
    await cli(['pane', 'send-keys', 'w1:p1', 'C-c']);
    await until('shell back in front', async () => {
      const f = await fg('w1:p1');
      return f.foreground_process_group_id === f.shell_pid;
    });
  });

  it('detects node <script named claude>, filters session reports and clears them when the agent exits', async () => {
    await cli(['pane', 'run', 'w1:p1', `node ${path.join(tmp, 'scripts', 'claude')}`]);
    const found = await until('claude detected', async () => (await agents()).find((a) => a.pane_id === 'w1:p1' && a.agent === 'claude' && a.agent_status === 'idle'));
    expect(found).toMatchObject({ workspace_id: 'w1', tab_id: 'w1:t1', agent_status: 'idle' });
    expect(found.name).toBeUndefined();
    const info = await fg('w1:p1');
    expect(info.foreground_processes[0]?.argv).toEqual(['node', path.join(tmp, 'scripts', 'claude')]);

    const report = (args: string[]): Promise<Run> => cli(['pane', 'report-agent-session', 'w1:p1', ...args]);
    expect(await herdr(['pane', 'report-agent-session', 'w1:p1', '--source', 'herdr:claude', '--agent', 'claude', '--agent-session-id', 'sess-1', '--session-start-source', 'startup'])).toEqual({ stdout: '', stderr: '', exit: 0 });
    const session = async (): Promise<unknown> => (await json(['agent', 'get', 'w1:p1'])).result.agent.agent_session;
    expect(await session()).toEqual({ source: 'herdr:claude', agent: 'claude', kind: 'id', value: 'sess-1' });
    // custom sources never produce a session; a conflicting agent is ignored; bad refs are rejected
    expect((await report(['--source', 'custom:mine', '--agent', 'claude', '--agent-session-id', 'sess-2'])).exit).toBe(0);
    expect((await report(['--source', 'herdr:codex', '--agent', 'codex', '--agent-session-id', 'sess-3'])).exit).toBe(0);
    expect(await session()).toEqual({ source: 'herdr:claude', agent: 'claude', kind: 'id', value: 'sess-1' });
    expect(errorOf(await report(['--source', 'herdr:claude', '--agent', 'claude', '--agent-session-path', 'relative/x.jsonl'])).error.code).toBe('invalid_agent_session');
    expect(errorOf(await report(['--source', 'herdr:claude', '--agent', 'claude', '--agent-session-id', 'x'.repeat(513)])).error.code).toBe('invalid_agent_session');
    // newer seq wins, older is dropped
    await report(['--source', 'herdr:claude', '--agent', 'claude', '--agent-session-id', 'sess-5', '--seq', '5']);
    await report(['--source', 'herdr:claude', '--agent', 'claude', '--agent-session-id', 'sess-4', '--seq', '4']);
    expect(await session()).toMatchObject({ value: 'sess-5' });

    const waiter = herdr(['agent', 'wait', 'w1:p1', '--until', 'working']);
    // The waiter is a node process: on a loaded 2-core machine it needs well over 300 ms to reach
    // the server, and an agent gone before it asks is agent_not_found, not agent_not_running.
    await new Promise((r) => setTimeout(r, 2000));
    await cli(['pane', 'run', 'w1:p1', 'quit']);
    expect(errorOf(await waiter)).toEqual({ id: 'cli:agent:wait', error: { code: 'agent_not_running', message: 'agent is no longer running in the target pane' } });
    await until('agent gone', async () => !(await agents()).some((a) => a.pane_id === 'w1:p1'));
    const pane = (await json(['pane', 'get', 'w1:p1'])).result.pane;
    expect(pane.agent_session).toBeUndefined();
    expect(pane.agent_status).toBe('unknown');
    expect(errorOf(await cli(['agent', 'get', 'w1:p1'])).error).toEqual({ code: 'agent_not_found', message: 'agent target w1:p1 not found' });
  });

  it('lets HERDR_AGENT in a process environment force the kind, and hook authority set the state', async () => {
    await cli(['pane', 'run', 'w1:p2', 'HERDR_AGENT=pi sleep 30']);
    await until('pi detected', async () => (await agents()).find((a) => a.pane_id === 'w1:p2' && a.agent === 'pi'));
    await cli(['pane', 'report-agent', 'w1:p2', '--source', 'herdr:pi', '--agent', 'pi', '--state', 'working', '--agent-session-path', '/tmp/pi/s.jsonl']);
    const a = (await json(['agent', 'get', 'w1:p2'])).result.agent;
    expect(a).toMatchObject({ agent: 'pi', agent_status: 'working', screen_detection_skipped: true, agent_session: { source: 'herdr:pi', agent: 'pi', kind: 'path', value: '/tmp/pi/s.jsonl' } });
    await cli(['pane', 'send-keys', 'w1:p2', 'C-c']);
    await until('pi gone', async () => !(await agents()).some((x) => x.pane_id === 'w1:p2'));
  });

  it('starts a named agent: ready after the delay, then busy, taken, bad name and bad timeout', async () => {
    const ws = await json(['workspace', 'create', '--cwd', tmp, '--no-focus']);
    const pane = ws.result.root_pane.pane_id as string;
    await screenWith(pane, '$');
    const t0 = Date.now();
    const r = await json(['agent', 'start', 'rev', '--kind', 'claude-code', '--pane', pane, '--', '--model', 'a b', '--report', 'inside-1']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(r.id).toBe('cli:agent:start');
    expect(r.result).toMatchObject({ type: 'agent_started', argv: ['claude', '--model', 'a b', '--report', 'inside-1'], agent: { name: 'rev', agent: 'claude', interactive_ready: true, pane_id: pane } });
    expect(['idle', 'blocked', 'done']).toContain(r.result.agent.agent_status);
    expect(r.result.agent.launch_pending).toBeUndefined();
    const f = await fg(pane);
    expect(f.foreground_processes[0]?.argv?.slice(-4)).toEqual(['--model', 'a b', '--report', 'inside-1']);
    // the fake reports its session through $HERDR_BIN_PATH from inside the pane (like a hook, it may land after ready)
    const reported = await until('session from inside the pane', async () => (await json(['agent', 'get', 'rev'])).result.agent.agent_session as Json | undefined);
    expect(reported).toEqual({ source: 'herdr:claude', agent: 'claude', kind: 'id', value: 'inside-1' });

    expect(errorOf(await cli(['agent', 'start', 'other', '--kind', 'claude', '--pane', pane])).error).toEqual({ code: 'agent_pane_busy', message: `agent target pane ${pane} is not an available shell` });
    expect(errorOf(await cli(['agent', 'start', 'rev', '--kind', 'claude', '--pane', 'w1:p1'])).error.code).toBe('agent_name_taken');
    expect(errorOf(await cli(['agent', 'start', 'Bad', '--kind', 'claude', '--pane', 'w1:p1'])).error.code).toBe('invalid_agent_name');
    expect(errorOf(await cli(['agent', 'start', 'ok', '--kind', 'claude', '--pane', 'w1:p1', '--timeout', '3000'])).error.code).toBe('invalid_agent_timeout');
    expect(errorOf(await cli(['agent', 'start', 'ok', '--kind', 'claude', '--pane', 'w1:p1', '--', 'a\u0007b'])).error.code).toBe('invalid_agent_argument');
    expect(errorOf(await cli(['agent', 'start', 'ok', '--kind', 'claude', '--pane', 'w7:p1'])).error).toEqual({ code: 'agent_pane_not_found', message: 'agent target pane w7:p1 not found' });

    // wait: immediate match on the default set, timeout on --until working
    const t1 = Date.now();
    const w = await json(['agent', 'wait', 'rev']);
    expect(Date.now() - t1).toBeLessThan(3000);
    expect(w.result).toMatchObject({ type: 'agent_info', agent: { name: 'rev' } });
    expect(errorOf(await cli(['agent', 'wait', 'rev', '--until', 'working', '--timeout', '300']))).toEqual({ id: 'cli:agent:wait', error: { code: 'timeout', message: 'timed out waiting for agent status' } });

    // a finished turn in a workspace nobody looks at is "done" until it is focused
    const seq = r.result.agent.state_change_seq as number;
    const p = await json(['agent', 'prompt', 'rev', 'work', '--wait', '--timeout', '15000']);
    expect(p.result.agent).toMatchObject({ name: 'rev', agent_status: 'done' });
    expect(p.result.agent.state_change_seq).toBeGreaterThan(seq);
    await json(['workspace', 'focus', ws.result.workspace.workspace_id as string]);
    expect((await json(['agent', 'get', 'rev'])).result.agent.agent_status).toBe('idle');

    await cli(['pane', 'run', pane, 'quit']);
    await until('rev gone', async () => !(await agents()).some((a) => a.name === 'rev'));
  });

  it('times out an agent start that never becomes interactive and leaves the process alone', async () => {
    // A codex that runs but never shows itself as codex (its process becomes `sleep`).
    fs.writeFileSync(path.join(tmp, 'bin', 'codex'), '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
    const pane = (await json(['workspace', 'create', '--cwd', tmp])).result.root_pane.pane_id as string;
    await screenWith(pane, '$');
    const e = errorOf(await herdr(['agent', 'start', 'slow', '--kind', 'codex', '--pane', pane, '--timeout', '3100']));
    expect(e).toEqual({ id: 'cli:agent:start', error: { code: 'timeout', message: 'timed out waiting for agent startup' } });
    expect((await fg(pane)).foreground_processes[0]?.name).toBe('sleep');
    await cli(['pane', 'send-keys', pane, 'ctrl+c']);
  });

  it('fails an agent start at once when the agent exits before herdr could see it, every time', async () => {
    // A pi that dies within a millisecond or two: far shorter than the detection tick.
    fs.writeFileSync(path.join(tmp, 'bin', 'pi'), '#!/bin/sh\necho "pi: fatal: cannot start" >&2\nexit 3\n', { mode: 0o755 });
    const pane = (await json(['workspace', 'create', '--cwd', tmp, '--no-focus'])).result.root_pane.pane_id as string;
    await screenWith(pane, '$');
    for (let i = 0; i < 3; i++) {
      const t0 = Date.now();
      const e = errorOf(await cli(['agent', 'start', `quick-${i}`, '--kind', 'pi', '--pane', pane, '--timeout', '20000']));
      expect(e.error).toEqual({ code: 'agent_start_failed', message: 'agent process exited before becoming interactive' });
      expect(Date.now() - t0).toBeLessThan(5000);
    }
    expect((await cli(['pane', 'read', pane, '--source', 'recent'])).stdout.match(/pi: fatal: cannot start/g)).toHaveLength(3);
  });

  it('manages integrations locally at the real paths, honouring CLAUDE_CONFIG_DIR', async () => {
    const claudeDir = path.join(tmp, 'claude-config');
    const hook = path.join(claudeDir, 'hooks', 'herdr-agent-state.sh');
    const extra = { CLAUDE_CONFIG_DIR: claudeDir };
    const before = await cli(['integration', 'status'], extra);
    expect(before.exit).toBe(0);
    expect(before.stdout.split('\n')[0]).toBe(`pi: not installed (${path.join(env.HOME ?? '', '.pi', 'agent', 'extensions', 'herdr-agent-state.ts')})`);
    expect(before.stdout).toContain(`claude: not installed (${hook})\n`);
    const inst = await herdr(['integration', 'install', 'claude'], extra);
    expect(inst).toEqual({ stdout: `installed claude integration hook to ${hook}\nensured claude settings at ${path.join(claudeDir, 'settings.json')}\n`, stderr: '', exit: 0 });
    expect(fs.readFileSync(hook, 'utf8')).toContain('HERDR_INTEGRATION_VERSION=7');
    expect(JSON.stringify(JSON.parse(fs.readFileSync(path.join(claudeDir, 'settings.json'), 'utf8')).hooks.SessionStart)).toContain(hook);
    const codexHook = path.join(env.HOME ?? '', '.codex', 'herdr-agent-state.sh');
    fs.mkdirSync(path.dirname(codexHook), { recursive: true });
    fs.writeFileSync(codexHook, '#!/bin/sh\n# HERDR_INTEGRATION_VERSION=5\n');
    const after = (await cli(['integration', 'status'], extra)).stdout;
    expect(after).toContain(`claude: current (v7) (${hook})\n`);
    expect(after).toContain(`codex: outdated (v5 < v7) (${codexHook})\n`);
    expect(await cli(['integration', 'status', '--outdated-only'], extra)).toEqual({ stdout: '', stderr: 'installed herdr integrations need updating; run herdr integration install codex.\n', exit: 0 });
    expect((await cli(['integration', 'install', 'nope'])).exit).toBe(2);
    expect((await cli(['integration', 'uninstall', 'claude'], extra)).exit).toBe(0);
    expect(fs.existsSync(hook)).toBe(false);
  });

  it('logs every call and fails injected faults once', async () => {
    injectFault(cfg, { command: 'workspace create', code: 'workspace_create_failed', message: 'injected: no pty', times: 1 });
    expect(errorOf(await herdr(['workspace', 'create', '--cwd', tmp]))).toEqual({ id: 'cli:workspace:create', error: { code: 'workspace_create_failed', message: 'injected: no pty' } });
    expect((await cli(['workspace', 'create', '--cwd', tmp])).exit).toBe(0);
    const log = readCallLog(cfg);
    const creates = log.filter((c) => c.argv[0] === 'workspace' && c.argv[1] === 'create').slice(-2);
    expect(creates.map((c) => c.exit)).toEqual([1, 0]);
    expect(creates[0]?.argv).toEqual(['workspace', 'create', '--cwd', tmp]);
    expect(log.some((c) => c.argv[0] === '--version' && c.exit === 0)).toBe(true);
  });

  it('runs a named session server and stops it with server stop, cleaning up its sockets', async () => {
    const pid = await startServer(['--session', 'side']);
    const dir = path.join(cfg, 'sessions', 'side');
    expect(fs.existsSync(path.join(dir, 'herdr.sock'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'herdr-sim-tmux.sock'))).toBe(true);
    expect((await json(['--session', 'side', 'workspace', 'list'])).result.workspaces).toEqual([]);
    expect(await herdr(['--session', 'side', 'server', 'stop'])).toMatchObject({ exit: 0, stdout: '' });
    await until('named server exit', async () => !alive(pid));
    expect(fs.existsSync(path.join(dir, 'herdr.sock'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'herdr-sim-tmux.sock'))).toBe(false);
    expect(JSON.parse((await cli(['--session', 'side', 'status', 'server', '--json'])).stdout)).toMatchObject({ running: false, session: 'side' });
  });
});
