// The herdr CLI contract, run against both our simulator and the real herdr 0.8.2 binary (each a
// throwaway server in a temp folder; see throwaway.ts). Every expectation here holds for both,
// except where `EXPECT[kind]` names the known difference (test/world/herdr/README.md says why).
// No sshd, no world: a normal test. A missing real binary fails the real half, it is not skipped.
//
// Only the simulator can pass (so they stay in test/herdr-sim.test.ts alone): fault injection and
// the call log (herdr-sim-faults.json, herdr-sim-calls.jsonl: simulator features), and the
// simulator's quick failure of an agent that exits before it is seen (real 0.8.2 waits for the
// timeout, README). The rest of herdr-sim.test.ts (detection of a node script, session reports,
// HERDR_AGENT, named sessions) checks simulator internals at the simulator's short timings.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startThrowaway, type Kind, type Run, type Throwaway } from './throwaway.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

/** Where the two differ on purpose (README: known differences). */
const EXPECT: Record<Kind, { version: string; protocol: number; liveHandoff: boolean; readyMs: number; piInstallNeedsDir: boolean }> = {
  // The simulator models herdr 0.8.0, the oldest version the product supports.
  simulator: { version: '0.8.0', protocol: 19, liveHandoff: false, readyMs: 300, piInstallNeedsDir: false },
  real: { version: '0.8.2', protocol: 20, liveHandoff: true, readyMs: 3000, piInstallNeedsDir: true },
};

/** A fake pi that does not clear the screen, so the line herdr typed stays readable above it. */
const FAKE_PI = `#!/usr/bin/env node
const rl = require('readline').createInterface({ input: process.stdin });
const prompt = () => process.stdout.write('fake pi ' + JSON.stringify(process.argv.slice(2)) + '\\n> ');
prompt();
rl.on('line', (l) => { if (l === 'quit') process.exit(0); else prompt(); });
`;

const INTEGRATION_TARGETS = ['pi', 'omp', 'claude', 'codex', 'copilot', 'devin', 'droid', 'kimi', 'opencode', 'kilo', 'hermes', 'qodercli', 'qwen', 'cursor', 'mastracode', 'antigravity-cli', 'grok'];

describe.each<[Kind]>([['simulator'], ['real']])('herdr CLI contract: %s', (kind) => {
  let h: Throwaway;
  const x = EXPECT[kind];

  const run = (args: string[], extra?: Record<string, string>): Promise<Run> => h.herdr(args, extra);
  async function json(args: string[]): Promise<Json> {
    const r = await run(args);
    if (r.exit !== 0) throw new Error(`herdr ${args.join(' ')} exited ${r.exit}: ${r.stderr}`);
    return JSON.parse(r.stdout) as Json;
  }
  function errorOf(r: Run): { id: string; error: { code: string; message: string } } {
    expect(r.exit).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    return JSON.parse(r.stderr) as { id: string; error: { code: string; message: string } };
  }
  async function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, ms = 15_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const screen = async (pane: string): Promise<string> => (await run(['pane', 'read', pane, '--source', 'recent-unwrapped'])).stdout;
  const screenWith = (pane: string, text: string): Promise<string> => until(`"${text}" on ${pane}`, async () => ((await screen(pane)).includes(text) ? screen(pane) : null));
  const fg = async (pane: string): Promise<Json> => (await json(['pane', 'process-info', '--pane', pane])).result.process_info as Json;
  const agents = async (): Promise<Json[]> => (await json(['agent', 'list'])).result.agents as Json[];

  beforeAll(async () => {
    h = await startThrowaway(kind);
    fs.writeFileSync(path.join(h.binDir, 'pi'), FAKE_PI, { mode: 0o755 });
    // A codex that runs but never shows itself as codex (its process becomes `sleep`).
    fs.writeFileSync(path.join(h.binDir, 'codex'), '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
  });

  afterAll(async () => {
    await h?.stop();
  });

  it('prints its version, and usage errors exit 2 with the same plain text', async () => {
    expect(await run(['--version'])).toEqual({ stdout: `herdr ${x.version}\n`, stderr: '', exit: 0 });
    const usage: [string[], string][] = [
      [['agent', 'list', 'extra'], 'usage: herdr agent list\n'],
      [['frobnicate'], "unknown command: frobnicate\nrun 'herdr --help' for usage\n"],
      [['agent', 'start', 'x', '--kind', 'nope', '--pane', 'w1:p1'], 'unsupported interactive agent kind: nope\n'],
      [['agent', 'start', 'x', '--pane', 'w1:p1'], 'missing required --kind\n'],
      [['agent', 'wait', 'x', '--until', 'sleeping'], 'invalid agent status: sleeping (expected idle, working, blocked, done, or unknown)\n'],
      [['workspace', 'list', '--foo'], 'usage: herdr workspace list\n'],
      [['pane', 'get', '--foo', 'x'], 'usage: herdr pane get <pane_id>\n'],
      [['agent', 'prompt', 'x', 'hi', '--timeout', '5'], '--timeout requires --wait\n'],
      [['--remote', 'h', 'agent', 'list'], "error: --remote can only be used with the default launch command\nrun 'herdr --help' for usage\n"],
      [['pane', 'read', 'w1:p1', '--source', 'bogus'], 'invalid read source: bogus\n'],
      [['integration', 'install', 'nope'], `unknown integration target: nope\ncurrently supported: ${INTEGRATION_TARGETS.join(', ')}\n`],
    ];
    const got = await Promise.all(usage.map(([args]) => run(args)));
    expect(got).toEqual(usage.map(([, stderr]) => ({ stdout: '', stderr, exit: 2 })));
  });

  it('status server --json: running (protocol, capabilities) and not running; server_not_running errors', async () => {
    const running = JSON.parse((await run(['status', 'server', '--json'])).stdout) as Json;
    expect(Object.keys(running)).toEqual(['status', 'running', 'version', 'protocol', 'capabilities', 'compatible', 'socket', 'session', 'restart_needed']);
    expect(running).toEqual({
      status: 'running',
      running: true,
      version: x.version,
      protocol: x.protocol,
      // detached_server_daemon: real herdr says true when started in a session of its own (as here), false from a shell's `&`
      capabilities: { live_handoff: x.liveHandoff, detached_server_daemon: kind === 'real' },
      compatible: true,
      socket: h.socket,
      session: null,
      restart_needed: false,
    });
    const none = path.join(h.dir, 'none.sock');
    const stopped = await run(['status', 'server', '--json'], { HERDR_SOCKET_PATH: none });
    expect(stopped.exit).toBe(0);
    expect(JSON.parse(stopped.stdout)).toEqual({ status: 'not_running', running: false, version: null, protocol: null, capabilities: null, compatible: null, socket: none, session: null, restart_needed: false });
    expect(errorOf(await run(['agent', 'list'], { HERDR_SOCKET_PATH: none }))).toEqual({
      id: 'cli:agent:list',
      error: { code: 'server_not_running', message: `no herdr server is running at ${none}; run \`herdr\` to start or attach it` },
    });
    const side = path.join(h.home, '.config', 'herdr', 'sessions', 'side', 'herdr.sock');
    expect(errorOf(await run(['--session', 'side', 'pane', 'send-text', 'w1:p1', 'x']))).toEqual({
      id: 'cli:request',
      error: { code: 'server_not_running', message: `no herdr server is running at ${side}; run \`herdr session attach side\` to start or attach it` },
    });
    expect(fs.statSync(h.socket).mode & 0o777).toBe(0o600);
  });

  it('creates, lists, gets and closes workspaces with herdr ids and shapes; splits a pane', async () => {
    const created = await run(['workspace', 'create', '--cwd', h.dir, '--label', 'alpha']);
    expect(created.stderr).toBe('');
    expect(created.stdout.endsWith('}\n') && created.stdout.split('\n')).toHaveLength(2);
    const a = JSON.parse(created.stdout) as Json;
    expect(a.id).toBe('cli:workspace:create');
    expect(a.result).toMatchObject({
      type: 'workspace_created',
      workspace: { workspace_id: 'w1', number: 1, label: 'alpha', focused: true, pane_count: 1, tab_count: 1, active_tab_id: 'w1:t1', agent_status: 'unknown' },
      tab: { tab_id: 'w1:t1', workspace_id: 'w1', number: 1 },
      root_pane: { pane_id: 'w1:p1', workspace_id: 'w1', tab_id: 'w1:t1', cwd: h.dir, agent_status: 'unknown', revision: 0, focused: true },
    });
    expect(a.result.root_pane.terminal_id).toMatch(/^term_[0-9a-f]+$/);
    const b = await json(['workspace', 'create', '--cwd', h.dir, '--no-focus']);
    expect(b.result.workspace).toMatchObject({ workspace_id: 'w2', focused: false });
    expect(b.result.root_pane.pane_id).toBe('w2:p1');
    expect((await json(['workspace', 'list'])).result.workspaces.map((w: Json) => w.workspace_id)).toEqual(['w1', 'w2']);
    expect(await json(['workspace', 'close', 'w2'])).toEqual({ id: 'cli:workspace:close', result: { type: 'ok' } });
    expect((await json(['workspace', 'list'])).result.workspaces).toHaveLength(1);
    expect(errorOf(await run(['workspace', 'get', 'w2']))).toEqual({ id: 'cli:workspace:get', error: { code: 'workspace_not_found', message: 'workspace w2 not found' } });
    const split = await json(['pane', 'split', 'w1:p1', '--direction', 'right']);
    expect(split).toMatchObject({ id: 'cli:pane:split', result: { type: 'pane_info', pane: { pane_id: 'w1:p2', workspace_id: 'w1', focused: false } } });
  });

  it('gives panes the herdr environment; pane run prints nothing; pane read prints raw text', async () => {
    await screenWith('w1:p1', '$');
    const sent = await run(['pane', 'run', 'w1:p1', 'echo "env:$HERDR_ENV:$HERDR_PANE_ID:$HERDR_WORKSPACE_ID:$HERDR_TAB_ID:$TERM:$COLORTERM:${TMUX:-none}:${HERDR_SESSION:-unset}:$PWD"']);
    expect(sent).toEqual({ stdout: '', stderr: '', exit: 0 });
    const text = await screenWith('w1:p1', `env:1:w1:p1:w1:w1:t1:xterm-256color:truecolor:none:unset:${h.dir}`);
    expect(text.startsWith('{')).toBe(false);
    await run(['pane', 'run', 'w1:p1', 'echo "sock:$HERDR_SOCKET_PATH"; "$HERDR_BIN_PATH" --version']);
    await screenWith('w1:p1', `sock:${h.socket}\nherdr ${x.version}`);
    expect(errorOf(await run(['pane', 'read', 'w9:p9']))).toEqual({ id: 'cli:pane:read', error: { code: 'pane_not_found', message: 'pane w9:p9 not found' } });
    expect(errorOf(await run(['pane', 'send-text', 'w9:p9', 'x']))).toEqual({ id: 'cli:request', error: { code: 'pane_not_found', message: 'pane w9:p9 not found' } });
    // visible and recent end every line with a newline, the last one too; recent-unwrapped joins them.
    expect(text.endsWith('\n')).toBe(false);
    expect((await run(['pane', 'read', 'w1:p1', '--source', 'recent'])).stdout.endsWith('$\n')).toBe(true);
    expect((await run(['pane', 'read', 'w1:p1', '--source', 'visible'])).stdout.endsWith('$\n')).toBe(true);
    const two = await run(['pane', 'read', 'w1:p1', '--source', 'visible', '--lines', '2']);
    expect(two.stdout.split('\n')).toEqual([expect.any(String), expect.any(String), '']);
  });

  it('checks every key before sending any, with the same key names', async () => {
    await run(['pane', 'send-text', 'w1:p1', 'echo not-submitted-42']);
    expect(errorOf(await run(['pane', 'send-keys', 'w1:p1', 'Enter', 'foo+q']))).toEqual({ id: 'cli:request', error: { code: 'invalid_key', message: 'unsupported key foo+q' } });
    await new Promise((r) => setTimeout(r, 300));
    expect((await screen('w1:p1')).split('\n').filter((l) => l.trim() === 'not-submitted-42')).toHaveLength(0);
    const refused = ['C-u', 'C-d', 'C-C', 'BSpace', 'ctrl++', 'win+q', 'pageup', 'home', 'S-Tab'];
    for (const k of refused) expect(errorOf(await run(['pane', 'send-keys', 'w1:p1', k])).error, k).toEqual({ code: 'invalid_key', message: `unsupported key ${k}` });
    const taken = ['ctrl+u', 'control+u', 'C-c', 'c-c', 'ctrl+l', 'shift+tab', 'f5', 'period', 'ctrl+plus', 'hyper+q', 'super+q', 'cmd+q', 'meta+q', 'alt+enter', 'bs', 'backspace', 'esc', 'Escape', 'Tab', 'space', 'ctrl+c'];
    expect(await run(['pane', 'send-keys', 'w1:p2', ...taken])).toEqual({ stdout: '', stderr: '', exit: 0 });
    await run(['pane', 'send-keys', 'w1:p1', 'ctrl+u']);
  });

  it('reads the foreground process group: idle shell, then a typed sleep that agent start refuses', async () => {
    const idle = await until('idle shell', async () => {
      const f = await fg('w1:p1');
      return f.foreground_process_group_id === f.shell_pid ? f : null;
    });
    expect(idle.foreground_processes).toHaveLength(1);
    expect(idle.foreground_processes[0]).toMatchObject({ pid: idle.shell_pid, name: 'bash', cwd: h.dir });
    await run(['pane', 'run', 'w1:p1', 'sleep 30']);
    const busy = await until('sleep in the foreground', async () => {
      const f = await fg('w1:p1');
      return f.foreground_processes[0]?.name === 'sleep' ? f : null;
    });
    expect(busy.foreground_process_group_id).not.toBe(busy.shell_pid);
    expect(busy.foreground_processes[0]).toMatchObject({ pid: busy.foreground_process_group_id, argv: ['sleep', '30'], cmdline: 'sleep 30', cwd: h.dir });
    expect(await agents()).toEqual([]);
    expect(errorOf(await run(['agent', 'start', 'sleeper', '--kind', 'claude', '--pane', 'w1:p1']))).toEqual({
      id: 'cli:agent:start',
      error: { code: 'agent_pane_busy', message: 'agent target pane w1:p1 is not an available shell' },
    });
    await run(['pane', 'send-keys', 'w1:p1', 'ctrl+c']);
    await until('shell back in front', async () => {
      const f = await fg('w1:p1');
      return f.foreground_process_group_id === f.shell_pid;
    });
  });

  it('starts a named agent: types the quoted command, answers when ready, lists it; then the start errors', async () => {
    const pane = (await json(['workspace', 'create', '--cwd', h.dir, '--no-focus'])).result.root_pane.pane_id as string;
    await screenWith(pane, '$');
    const t0 = Date.now();
    const r = await json(['agent', 'start', 'rev', '--kind', 'pi', '--pane', pane, '--', '--model', 'a b', "it's", 'x$y']);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(x.readyMs);
    expect(r).toMatchObject({
      id: 'cli:agent:start',
      result: { type: 'agent_started', argv: ['pi', '--model', 'a b', "it's", 'x$y'], agent: { name: 'rev', agent: 'pi', agent_status: 'idle', interactive_ready: true, pane_id: pane, focused: false } },
    });
    expect(r.result.agent.launch_pending).toBeUndefined();
    const text = await screenWith(pane, 'fake pi');
    expect(text).toContain(`$ pi --model 'a b' 'it'\\''s' 'x$y'\nfake pi ["--model","a b","it's","x$y"]\n>`);
    expect((await fg(pane)).foreground_processes[0]?.argv?.slice(-4)).toEqual(['--model', 'a b', "it's", 'x$y']);
    const listed = await agents();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ name: 'rev', agent: 'pi', pane_id: pane, agent_status: 'idle', interactive_ready: true, terminal_id: r.result.agent.terminal_id });

    expect(errorOf(await run(['agent', 'start', 'other', '--kind', 'pi', '--pane', pane])).error).toEqual({ code: 'agent_pane_busy', message: `agent target pane ${pane} is not an available shell` });
    const taken = errorOf(await run(['agent', 'start', 'rev', '--kind', 'pi', '--pane', 'w1:p2'])).error;
    expect(taken.code).toBe('agent_name_taken');
    expect(taken.message).toBe(`agent name rev is already used; candidates: terminal_id=${String(r.result.agent.terminal_id)} pane_id=${pane} workspace_id=${pane.split(':')[0] ?? ''} tab_id=${pane.split(':')[0] ?? ''}:t1 cwd=${h.dir} status=Idle`);
    expect(errorOf(await run(['agent', 'start', 'Bad', '--kind', 'pi', '--pane', 'w1:p2'])).error).toEqual({
      code: 'invalid_agent_name',
      message: "agent name must start with a lowercase letter and contain only lowercase letters, digits, '-' or '_' (1-32 characters)",
    });
    expect(errorOf(await run(['agent', 'start', 'ok', '--kind', 'pi', '--pane', 'w1:p2', '--timeout', '3000'])).error.code).toBe('invalid_agent_timeout');
    expect(errorOf(await run(['agent', 'start', 'ok', '--kind', 'pi', '--pane', 'w7:p1'])).error).toEqual({ code: 'agent_pane_not_found', message: 'agent target pane w7:p1 not found' });
    expect(errorOf(await run(['agent', 'get', 'nothere']))).toEqual({ id: 'cli:agent:get', error: { code: 'agent_not_found', message: 'agent target nothere not found' } });

    const t1 = Date.now();
    expect((await json(['agent', 'wait', 'rev'])).result).toMatchObject({ type: 'agent_info', agent: { name: 'rev' } });
    expect(Date.now() - t1).toBeLessThan(3000);
    expect(errorOf(await run(['agent', 'wait', 'rev', '--until', 'working', '--timeout', '300']))).toEqual({ id: 'cli:agent:wait', error: { code: 'timeout', message: 'timed out waiting for agent status' } });

    await run(['pane', 'run', pane, 'quit']);
    await until('rev gone', async () => !(await agents()).some((a) => a.name === 'rev'));
  });

  it('times out an agent start that never becomes interactive and leaves the process alone', async () => {
    const pane = (await json(['workspace', 'create', '--cwd', h.dir, '--no-focus'])).result.root_pane.pane_id as string;
    await screenWith(pane, '$');
    const t0 = Date.now();
    expect(errorOf(await run(['agent', 'start', 'slow', '--kind', 'codex', '--pane', pane, '--timeout', '3100']))).toEqual({
      id: 'cli:agent:start',
      error: { code: 'timeout', message: 'timed out waiting for agent startup' },
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(3100);
    expect((await fg(pane)).foreground_processes[0]?.name).toBe('sleep');
    await run(['pane', 'send-keys', pane, 'ctrl+c']);
  });

  it('manages integrations at the real paths: status lines, install pi', async () => {
    const file = path.join(h.home, '.pi', 'agent', 'extensions', 'herdr-agent-state.ts');
    const before = await run(['integration', 'status']);
    expect(before.exit).toBe(0);
    const lines = before.stdout.trimEnd().split('\n');
    expect(lines.map((l) => l.split(':')[0])).toEqual(INTEGRATION_TARGETS);
    expect(lines[0]).toBe(`pi: not installed (${file})`);
    expect(lines[2]).toBe(`claude: not installed (${path.join(h.home, '.claude', 'hooks', 'herdr-agent-state.sh')})`);
    const early = await run(['integration', 'install', 'pi']);
    // Real herdr installs only for a pi that has run once (~/.pi/agent exists); README.
    if (x.piInstallNeedsDir) {
      expect(early).toEqual({ stdout: '', stderr: `pi extension directory not found at ${path.dirname(file)}. install pi first\n`, exit: 1 });
      fs.mkdirSync(path.join(h.home, '.pi', 'agent'), { recursive: true });
    } else {
      expect(early.exit).toBe(0);
    }
    expect(await run(['integration', 'install', 'pi'])).toEqual({ stdout: `installed pi integration to ${file}\n`, stderr: '', exit: 0 });
    expect(fs.readFileSync(file, 'utf8')).toContain('HERDR_INTEGRATION_VERSION=8');
    expect((await run(['integration', 'status'])).stdout.split('\n')[0]).toBe(`pi: current (v8) (${file})`);
  });
});
