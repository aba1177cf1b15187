// Output for the reader, seen on a real terminal: the CLI runs in a tmux pane (a private tmux
// server, `tmux -L <own socket>`, killed at the end) against a herdr simulator under a temporary
// HOME, with a fake pi agent in it. On the terminal `list` is a table, an error is `error:`/`fix:`
// lines, `doctor` a checklist and `--help` plain text; `--json` brings JSON back there. The same
// commands piped print JSON that the JSON Schemas of `agent-handoff schema` accept.
// `send` runs in the demo's sandbox (test/world/demo.ts: a pi agent in a git repository with
// uncommitted changes, `send demo-pi --here --new-worktree`): on the terminal a summary for a
// person, piped one JSON object its schema accepts.
// No root world is needed (no sshd, no other users).
import { execa } from 'execa';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { writeAgentBins } from './world/agents/install.js';
import { AGENT as DEMO_AGENT, makeChanges, makeRepo, makeSandbox, startAgent, startServer, stopServer, type Sandbox } from './world/demo.js';
import { writeLauncher } from './world/herdr/testing.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const APP = path.join(ROOT, 'bin', 'agent-handoff.js');
const WORLD = path.join(ROOT, 'dist', 'test', 'world');
const SOCKET_NAME = `ah-term-${process.pid}`;
const AGENT = 'term-pi';

let dir: string;
let env: Record<string, string>;
let serverPid: number | undefined;
let sessions = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(what: string, check: () => T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

function herdr(args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(path.join(dir, 'bin', 'herdr'), args, { cwd: path.join(dir, 'home'), env, encoding: 'utf8', timeout: 30_000 });
}

/** Where a command runs: a private tmux server (its socket name), a folder and an environment. */
interface Term {
  socket: string;
  cwd: string;
  env: Record<string, string>;
}

/** The sandbox of list, errors and doctor (set up in beforeAll). */
const main = (): Term => ({ socket: SOCKET_NAME, cwd: path.join(dir, 'home'), env });

function tmux(args: string[], t: Term = main()): string {
  const r = spawnSync('tmux', ['-L', t.socket, '-f', '/dev/null', ...args], { env: t.env, encoding: 'utf8', timeout: 10_000 });
  if (r.status !== 0) throw new Error(`tmux ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Run agent-handoff in a fresh tmux pane (a terminal: stdout.isTTY) and return what the screen shows. */
async function onTerminal(args: string[], extraEnv: Record<string, string> = {}, t: Term = main()): Promise<{ screen: string; code: number }> {
  const name = `s${++sessions}`;
  const vars = Object.entries(extraEnv).map(([k, v]) => `${k}=${quote(v)} `).join('');
  const command = `cd ${quote(t.cwd)} && ${vars}${quote(process.execPath)} ${quote(APP)} ${args.map(quote).join(' ')} 2>/dev/null; echo "__END__ $?"; exec sleep 600`;
  tmux(['new-session', '-d', '-s', name, '-x', '200', '-y', '80', command], t);
  const screen = await waitFor(`agent-handoff ${args.join(' ')} on the terminal`, () => {
    const text = tmux(['capture-pane', '-p', '-J', '-e', '-t', name], t);
    return /__END__ \d+/.test(text) ? text : undefined;
  }, 30_000);
  tmux(['kill-session', '-t', name], t);
  const code = Number(/__END__ (\d+)/.exec(screen)![1]);
  return { screen: screen.slice(0, screen.indexOf('__END__')), code };
}

/** The same command piped: one JSON object. */
async function piped(args: string[], t: Term = main()): Promise<{ json: Record<string, unknown>; code: number; stdout: string }> {
  const r = await execa(process.execPath, [APP, ...args], { cwd: t.cwd, env: t.env, extendEnv: false, reject: false, timeout: 60_000 });
  return { json: JSON.parse(r.stdout) as Record<string, unknown>, code: r.exitCode ?? -1, stdout: r.stdout };
}

/** The JSON Schemas of `agent-handoff schema`, as zod schemas. */
async function loadSchemas(): Promise<Record<string, z.ZodType>> {
  const out = (await piped(['schema'])).json as { schemas: Record<string, Record<string, unknown>> };
  return Object.fromEntries(Object.entries(out.schemas).map(([k, v]) => [k, z.fromJSONSchema(v as Parameters<typeof z.fromJSONSchema>[0])]));
}

const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

beforeAll(async () => {
  // Short: the herdr socket lives inside it (Unix socket paths are limited to ~100 bytes).
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-term-'));
  const home = path.join(dir, 'home');
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(path.join(home, '.config'), { recursive: true });
  writeAgentBins(bin, WORLD);
  writeLauncher(path.join(bin, 'herdr'), path.join(WORLD, 'herdr', 'cli.js'));
  fs.writeFileSync(path.join(home, '.profile'), `PATH="${bin}:$PATH"\nexport PATH\n`);
  env = {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    HERDR_SOCKET_PATH: path.join(dir, 'herdr.sock'),
    PATH: `${bin}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    SHELL: '/bin/sh',
    USER: os.userInfo().username,
    LOGNAME: os.userInfo().username,
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    TMUX_TMPDIR: dir,
    HERDR_SIM_READY_MS: '300',
    HERDR_SIM_POLL_MS: '100',
    FAKE_AGENT_TURN_MS: '200',
  };
  const log = fs.openSync(path.join(dir, 'herdr-server.log'), 'a');
  const child = spawn(path.join(bin, 'herdr'), ['server'], { cwd: home, env: { ...env, HERDR_BIN_PATH: path.join(bin, 'herdr') }, detached: true, stdio: ['ignore', log, log] });
  child.unref();
  fs.closeSync(log);
  serverPid = child.pid;
  await waitFor('the herdr simulator', () => herdr(['status', 'server', '--json']).stdout.includes('"running":true'));
  const repo = path.join(home, 'src', 'proj');
  fs.mkdirSync(repo, { recursive: true });
  expect(herdr(['integration', 'install', 'pi']).status).toBe(0);
  const ws = JSON.parse(herdr(['workspace', 'create', '--cwd', repo, '--label', 'proj', '--no-focus']).stdout.trim().split('\n').pop()!) as { result: { root_pane: { pane_id: string } } };
  const pane = ws.result.root_pane.pane_id;
  await waitFor('pi to start', () => {
    const r = herdr(['agent', 'start', AGENT, '--kind', 'pi', '--pane', pane, '--', 'hello']);
    if (r.status === 0) return true;
    if (/not an available shell/.test(r.stderr)) return false;
    throw new Error(`herdr agent start: ${r.stderr}`);
  });
  await waitFor('pi to be known with its session', () => {
    const r = herdr(['agent', 'get', AGENT]);
    const a = r.status === 0 ? (JSON.parse(r.stdout.trim().split('\n').pop()!) as { result?: { agent?: { agent_session?: unknown; agent_status?: string } } }).result?.agent : undefined;
    return a?.agent_session && a.agent_status !== 'working';
  });
}, 90_000);

afterAll(async () => {
  spawnSync('tmux', ['-L', SOCKET_NAME, 'kill-server'], { env, timeout: 10_000 });
  if (serverPid) {
    herdr(['server', 'stop']);
    await sleep(300);
    try {
      process.kill(serverPid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('on a terminal, for a person', () => {
  it('list is an aligned table with ~ paths', async () => {
    const { screen, code } = await onTerminal(['list']);
    expect(code).toBe(0);
    const text = plain(screen);
    expect(text).toMatch(/^Agents on local:$/m);
    expect(text).toMatch(/^TARGET\s+KIND\s+STATUS\s+CWD\s+SESSION\s+MOVABLE$/m);
    const row = text.split('\n').find((l) => l.startsWith(AGENT))!;
    expect(row).toMatch(new RegExp(`^${AGENT}\\s+pi\\s+\\w+\\s+~/src/proj\\s+[0-9a-f]{8}\\s+yes$`));
    const header = text.split('\n').find((l) => l.startsWith('TARGET'))!;
    expect(row.indexOf(' pi ') + 1).toBe(header.indexOf('KIND'));
    expect(text).not.toContain('{"ok"');
    // Colour on a terminal, none with NO_COLOR.
    expect(screen).toContain('\x1b[');
    expect((await onTerminal(['list'], { NO_COLOR: '1' })).screen).not.toContain('\x1b[');
  }, 60_000);

  it('an error is error: and fix: lines', async () => {
    const { screen, code } = await onTerminal(['send', 'no-such-agent', '--here']);
    expect(code).toBe(1);
    const text = plain(screen);
    expect(text).toMatch(/^error: .*\(agent_not_found\)$/m);
    expect(text).toMatch(/^fix: {3}\S/m);
    const usage = plain((await onTerminal(['send'])).screen);
    expect(usage).toMatch(/^error: .*\(usage\)$/m);
    expect(usage).toContain('agent-handoff send --help');
  }, 60_000);

  it('doctor is a checklist, each problem with its fix', async () => {
    // Without the pi integration a handoff of pi still runs; a herdr that is not there is a problem.
    const { screen, code } = await onTerminal(['doctor'], { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` });
    expect(code).toBe(1);
    const text = plain(screen);
    expect(text).toMatch(/^here: local/m);
    expect(text).toMatch(/^ {2}✓ git \d/m);
    expect(text).toMatch(/^ {2}✗ herdr not installed$/m);
    expect(text).toMatch(/^Problems:$/m);
    expect(text).toMatch(/^ {2}✗ here.*\(herdr_not_installed\)$/m);
    expect(text).toMatch(/^ {4}fix: Install herdr/m);
    expect(text).toMatch(/^Not ready: \d+ problems? to fix first\.$/m);
    const ready = plain((await onTerminal(['doctor'])).screen);
    expect(ready).toMatch(/^ {2}✓ herdr 0\.8\.0, server running$/m);
  }, 60_000);

  it('help is plain text, and --json brings JSON back', async () => {
    const help = plain((await onTerminal(['send', '--help'])).screen);
    expect(help).toMatch(/^agent-handoff send \[agent\.\.\]$/m);
    expect(help).toContain('--keep-source-changes');
    expect(help).not.toContain('"usage"');
    const json = plain((await onTerminal(['list', '--json'])).screen).trim();
    expect(JSON.parse(json)).toMatchObject({ ok: true, command: 'list' });
  }, 60_000);
});

describe('piped, JSON as always', () => {
  let schemas: Record<string, z.ZodType>;
  beforeAll(async () => {
    schemas = await loadSchemas();
  });

  it('list, an error and doctor print JSON their schemas accept', async () => {
    const list = await piped(['list']);
    expect(list.code).toBe(0);
    expect(schemas.list!.safeParse(list.json).success).toBe(true);
    expect((list.json.agents as { target: string }[]).map((a) => a.target)).toContain(AGENT);
    const error = await piped(['send', 'no-such-agent', '--here']);
    expect(error.json).toMatchObject({ ok: false, command: 'send', code: 'agent_not_found' });
    expect(schemas.error!.safeParse(error.json).success).toBe(true);
    const usage = await piped(['send']);
    expect(usage.json).toMatchObject({ ok: false, command: 'send', code: 'usage' });
    expect(schemas.error!.safeParse(usage.json).success).toBe(true);
    const doctor = await piped(['doctor']);
    expect(doctor.json).toMatchObject({ ok: true, command: 'doctor' });
    expect(schemas.doctor!.safeParse(doctor.json).success).toBe(true);
    // The schemas are not so loose that anything passes.
    expect(schemas.list!.safeParse({ ok: true, command: 'list' }).success).toBe(false);
  }, 60_000);
});

describe('send, in the demo sandbox: a summary on a terminal, one JSON object piped', () => {
  const SEND_SOCKET = `ah-send-${process.pid}`;
  const args = ['send', DEMO_AGENT, '--here', '--new-worktree'];
  const sandboxes: Sandbox[] = [];
  let onScreen: Sandbox;
  let viaPipe: Sandbox;
  let schemas: Record<string, z.ZodType>;
  // The product runs from the checkout, as in the demo; its own tmux server (TMUX_TMPDIR) is in the sandbox.
  const termOf = (sb: Sandbox): Term => ({ socket: SEND_SOCKET, cwd: sb.repo, env: sb.env });
  const git = (sb: Sandbox, gitArgs: string[]) => spawnSync('git', gitArgs, { cwd: sb.repo, env: sb.env, encoding: 'utf8', timeout: 10_000 }).stdout.trim();

  /** The demo's world: a herdr simulator, pi asked a question in a repository, then uncommitted changes. */
  async function demoSandbox(): Promise<Sandbox> {
    const sb = makeSandbox(WORLD);
    sb.env.TMUX_TMPDIR = sb.dir;
    sandboxes.push(sb);
    await startServer(sb);
    makeRepo(sb);
    await startAgent(sb);
    makeChanges(sb);
    return sb;
  }

  beforeAll(async () => {
    // One sandbox per send (a sent agent has moved and left no changes behind); set up side by side.
    const made = await Promise.allSettled([demoSandbox(), demoSandbox()]);
    for (const m of made) if (m.status === 'rejected') throw m.reason;
    [onScreen, viaPipe] = made.map((m) => (m as PromiseFulfilledResult<Sandbox>).value) as [Sandbox, Sandbox];
    schemas = await loadSchemas();
  }, 90_000);

  afterAll(async () => {
    for (const sb of sandboxes) {
      spawnSync('tmux', ['-L', SEND_SOCKET, 'kill-server'], { env: sb.env, timeout: 10_000 });
      await stopServer(sb);
      fs.rmSync(sb.dir, { recursive: true, force: true });
    }
  });

  /** What herdr says of the moved agent now: its pane, and what that pane shows. */
  function herdrAgent(sb: Sandbox): { pane_id?: string } | undefined {
    const r = spawnSync(path.join(sb.bin, 'herdr'), ['agent', 'get', DEMO_AGENT], { cwd: sb.home, env: sb.env, encoding: 'utf8', timeout: 10_000 });
    return r.status === 0 ? (JSON.parse(r.stdout.trim().split('\n').pop()!) as { result?: { agent?: { pane_id?: string } } }).result?.agent : undefined;
  }
  const paneText = (sb: Sandbox, pane: string) =>
    spawnSync(path.join(sb.bin, 'herdr'), ['pane', 'read', pane, '--source', 'visible'], { cwd: sb.home, env: sb.env, encoding: 'utf8', timeout: 10_000 }).stdout;

  /** What the sandbox itself shows after a send: the work in the new worktree, the source stashed and clean. */
  function checkMoved(sb: Sandbox, worktree: string): void {
    expect(fs.readFileSync(path.join(worktree, 'src', 'greet.js'), 'utf8')).toContain('nice to see you');
    expect(fs.existsSync(path.join(worktree, 'NOTES.md'))).toBe(true);
    expect(git(sb, ['status', '--porcelain'])).toBe('');
    expect(git(sb, ['stash', 'list'])).toMatch(/^stash@\{0\}: /);
  }

  it('on a terminal: where the agent runs now, what moved, the stash and what was verified', async () => {
    const sb = onScreen;
    const head = git(sb, ['rev-parse', 'HEAD']);
    const { screen, code } = await onTerminal(args, {}, termOf(sb));
    const text = plain(screen).split('\n').map((l) => l.trimEnd()).join('\n');
    expect(code, text).toBe(0);
    expect(text).not.toContain('{"ok"');
    expect(text).not.toContain('"command"');
    expect(screen).toContain('\x1b['); // in colour, on a terminal
    expect(text).toMatch(new RegExp(`^✓ Moved ${DEMO_AGENT} \\(pi\\) local → local( \\(steps took [\\d.]+ m?s\\))?$`, 'm'));
    // Where it runs now: the pane herdr knows the agent by, which shows the earlier conversation.
    const runsAs = new RegExp(`^ {2}runs as +${DEMO_AGENT} in pane (w\\d+:p\\d+) \\(workspace w\\d+\\) on local$`, 'm').exec(text);
    expect(runsAs, text).not.toBeNull();
    const pane = runsAs![1]!;
    expect(herdrAgent(sb)?.pane_id).toBe(pane);
    await waitFor('the moved pi to show the earlier conversation', () => paneText(sb, pane).includes('Fake reply: make the greeting friendlier'), 15_000);
    // Branch and worktree: a new one, which git knows on that branch.
    const branch = /^ {2}branch +(handoff\/[0-9a-f]{8}) \(new worktree\)$/m.exec(text);
    expect(branch, text).not.toBeNull();
    const worktree = /^ {2}worktree +(~\/src\/greeter\.worktrees\/\S+)$/m.exec(text);
    expect(worktree, text).not.toBeNull();
    const worktreePath = path.join(sb.home, worktree![1]!.slice(2));
    expect(git(sb, ['worktree', 'list', '--porcelain'])).toContain(`worktree ${worktreePath}\nHEAD ${head}\nbranch refs/heads/${branch![1]}`);
    // What moved: HEAD, the two uncommitted files, the session.
    expect(text).toMatch(
      new RegExp(`^ {2}moved +HEAD ${head.slice(0, 7)}(, .+ of commits sent)?\\n {15}2 uncommitted files applied \\(NOTES\\.md, src/greet\\.js\\)\\n {15}session [0-9a-f]{8} \\(1 file, [\\d.]+ k?B\\)$`, 'm'),
    );
    // The stash at the source, named as git names it.
    const stash = /^ {2}source +changes stashed as ([0-9a-f]{7}) — `git stash pop` in ~\/src\/greeter brings them back$/m.exec(text);
    expect(stash, text).not.toBeNull();
    expect(git(sb, ['rev-parse', 'stash@{0}'])).toMatch(new RegExp(`^${stash![1]}`));
    expect(text).toMatch(/^ {2}source pane +w\d+:p\d+ is back at its shell$/m);
    // Verified, each check on its own line.
    expect(text).toMatch(/^ {2}verified +✓ target HEAD equals the source HEAD\n {15}✓ target files equal the snapshot\n {15}✓ \d+ session files? in place, hashes match, no source path left\n {15}✓ agent alive in herdr after its start$/m);
    expect(text).toMatch(new RegExp(`^ {2}attach +herdr \\(on this machine; pane ${pane}\\)$`, 'm'));
    checkMoved(sb, worktreePath);
  }, 60_000);

  it('piped: one JSON object the send schema accepts', async () => {
    const sb = viaPipe;
    const r = await piped(args, termOf(sb));
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(r.stdout.startsWith('{"ok":true,')).toBe(true);
    const parsed = schemas.send!.safeParse(r.json);
    expect(parsed.error?.issues).toBeUndefined();
    expect(parsed.success).toBe(true);
    const json = r.json as { command: string; dry_run: boolean; worktree_created: boolean; changes_applied: boolean; target_worktree: string; target_agent: { name: string; pane: string }; source_stash: { stashed: boolean; stash: string }; verified: string[] };
    expect(json).toMatchObject({ command: 'send', dry_run: false, worktree_created: true, changes_applied: true, target_agent: { name: DEMO_AGENT }, source_stash: { stashed: true } });
    expect(json.verified).toHaveLength(4);
    expect(herdrAgent(sb)?.pane_id).toBe(json.target_agent.pane);
    expect(git(sb, ['rev-parse', 'stash@{0}'])).toBe(json.source_stash.stash);
    checkMoved(sb, json.target_worktree);
    // The schema is not so loose that anything passes.
    expect(schemas.send!.safeParse({ ...r.json, verified: 'yes' }).success).toBe(false);
  }, 60_000);
});
