// The fake agent executables (test/world/agents) driven like the real ones: in a private tmux
// server, through a real terminal, with a temp HOME per test. Each kind: start in a git repo,
// prompt, find the session in its real place and format, quit with the real quit text, resume
// with the real resume argv, prompt again and see the same session grow.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

let tmp = '';
let bin = '';
let sock = '';
let n = 0;

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tmux(...args: string[]): string {
  return execFileSync('tmux', ['-S', sock, ...args], { encoding: 'utf8' });
}

/** Compile the agents folder on its own (no type check) so this test does not depend on a build. */
function compileAgents(libDir: string): void {
  const src = path.join(import.meta.dirname, 'world', 'agents');
  fs.mkdirSync(path.join(libDir, 'agents'), { recursive: true });
  fs.writeFileSync(path.join(libDir, 'package.json'), '{"type":"module"}\n');
  for (const f of fs.readdirSync(src).filter((x) => x.endsWith('.ts'))) {
    const out = ts.transpileModule(fs.readFileSync(path.join(src, f), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
    });
    fs.writeFileSync(path.join(libDir, 'agents', f.replace(/\.ts$/, '.js')), out.outputText);
  }
}

beforeAll(async () => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'fake-agents-')));
  const lib = path.join(tmp, 'lib');
  bin = path.join(tmp, 'bin');
  sock = path.join(tmp, 't.sock');
  compileAgents(lib);
  const install = (await import(path.join(lib, 'agents', 'install.js'))) as { writeAgentBins: (b: string, l: string) => void };
  install.writeAgentBins(bin, lib);
  // A clean environment for the server: nothing of the caller's HOME, agent roots or herdr pane leaks in.
  execFileSync('tmux', ['-S', sock, 'new-session', '-d', '-s', 'base', '-x', '140', '-y', '45'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, TERM: 'xterm-256color', LANG: 'C.UTF-8' },
  });
});

afterAll(() => {
  if (sock && fs.existsSync(sock)) {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

function dir(...parts: string[]): string {
  const d = path.join(tmp, ...parts);
  fs.mkdirSync(d, { recursive: true });
  return d;
}

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

function repo(at: string): string {
  fs.mkdirSync(at, { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: at, env: gitEnv });
  fs.writeFileSync(path.join(at, 'README.md'), 'hello\n');
  execFileSync('git', ['add', '.'], { cwd: at, env: gitEnv });
  execFileSync('git', ['commit', '-q', '-m', 'init'], { cwd: at, env: gitEnv });
  return at;
}

interface Pane {
  id: string;
}

function start(kind: string, args: string[], cwd: string, env: Record<string, string>): Pane {
  const e = Object.entries({ FAKE_AGENT_TURN_MS: '100', ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  // tmux execs the words directly (no shell parses our paths); the small sh wrapper prints the
  // agent's exit status on the pane, because tmux may report a dead pane's status late under load.
  const wrapper = '"$0" "$@"; echo "[agent exited $?]"; exec tail -f /dev/null';
  const id = tmux('new-window', '-d', '-P', '-F', '#{pane_id}', '-t', 'base', '-n', `w${++n}`, '-c', cwd, ...e, 'sh', '-c', wrapper, path.join(bin, kind), ...args).trim();
  return { id };
}

function screen(p: Pane): string {
  return tmux('capture-pane', '-p', '-J', '-t', p.id);
}

/** Poll quickly at first, then back off: many tests poll at once and each poll spawns tmux. */
function* backoff(): Generator<number> {
  for (let ms = 40; ; ms = Math.min(400, Math.round(ms * 1.5))) yield ms;
}

async function waitFor(p: Pane, want: string | RegExp, ms = 15_000): Promise<string> {
  const deadline = Date.now() + ms;
  for (const pause of backoff()) {
    const s = screen(p);
    if (typeof want === 'string' ? s.includes(want) : want.test(s)) return s;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(want)}; screen:\n${s}`);
    await sleep(pause);
  }
  throw new Error('unreachable');
}

/** Text, a pause (slash menus swallow an early Enter), then Enter — as a careful caller types. */
async function type(p: Pane, text: string, pauseMs = 250): Promise<void> {
  tmux('send-keys', '-t', p.id, '-l', text);
  await sleep(pauseMs);
  tmux('send-keys', '-t', p.id, 'Enter');
}

function keys(p: Pane, ...k: string[]): void {
  tmux('send-keys', '-t', p.id, ...k);
}

function deadStatus(p: Pane): number | undefined {
  const m = /\[agent exited (\d+)\]/.exec(screen(p));
  return m ? Number(m[1]) : undefined;
}

async function waitExit(p: Pane, ms = 10_000): Promise<number> {
  const deadline = Date.now() + ms;
  for (const pause of backoff()) {
    const s = deadStatus(p);
    if (s !== undefined) return s;
    if (Date.now() > deadline) throw new Error(`agent did not exit; screen:\n${screen(p)}`);
    await sleep(pause);
  }
  throw new Error('unreachable');
}

function jsonl(file: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function mode(p: string): number {
  return fs.statSync(p).mode & 0o777;
}

function only(dirPath: string, filter: (name: string) => boolean = () => true): string {
  const names = fs.readdirSync(dirPath).filter(filter);
  expect(names).toHaveLength(1);
  return path.join(dirPath, names[0]!);
}

function trustClaude(home: string, ...paths: string[]): void {
  const projects = Object.fromEntries(paths.map((p) => [p, { hasTrustDialogAccepted: true }]));
  fs.writeFileSync(path.join(home, '.claude.json'), JSON.stringify({ hasCompletedOnboarding: true, projects }));
}

function walk(d: string): string[] {
  return fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)]));
}

describe.concurrent('fake agents', () => {
  test('claude: transcript in the project dir, /exit behind the slash menu, --resume by id and by path', async () => {
    const home = dir('claude', 'home');
    const r1 = repo(path.join(tmp, 'claude', 'work', 'hark'));
    const r2 = repo(path.join(tmp, 'claude', 'work2', 'hark'));
    trustClaude(home, r1, r2);
    const a = start('claude', ['first prompt'], r1, { HOME: home });
    await waitFor(a, 'Fake reply: first prompt');
    expect(screen(a)).toContain(`cwd: ${r1}`);
    await type(a, 'please EDIT README');
    await waitFor(a, 'Fake reply: please EDIT README');

    const projectDir = path.join(home, '.claude', 'projects', r1.replace(/[^A-Za-z0-9]/g, '-'));
    const file = only(projectDir);
    const id = path.basename(file, '.jsonl');
    expect(id).toMatch(UUID);
    expect(mode(file)).toBe(0o600);
    expect(mode(projectDir)).toBe(0o700);
    const recs = jsonl(file);
    const users = recs.filter((r) => r.type === 'user' && typeof (r.message as { content: unknown }).content === 'string');
    expect(users.map((u) => (u.message as { content: string }).content)).toEqual(['first prompt', 'please EDIT README']);
    expect(users.every((u) => u.cwd === r1 && u.sessionId === id && u.gitBranch === 'main')).toBe(true);
    expect(JSON.stringify(recs)).toContain(`"file_path":"${r1}/README.md"`);
    const snap = recs.find((r) => r.type === 'file-history-snapshot' && r.isSnapshotUpdate === true) as { snapshot: { trackedFileBackups: Record<string, { backupFileName: string }> } };
    const backup = snap.snapshot.trackedFileBackups['README.md']!.backupFileName;
    expect(fs.readFileSync(path.join(home, '.claude', 'file-history', id, backup), 'utf8')).toBe('hello\n');

    // Enter right after `/exit` only picks from the menu; after a pause it quits.
    tmux('send-keys', '-t', a.id, '-l', '/exit\r');
    await sleep(400);
    expect(deadStatus(a)).toBeUndefined();
    keys(a, 'Enter');
    expect(await waitExit(a)).toBe(0);
    expect(screen(a)).toContain(`claude --resume ${id}`);

    const b = start('claude', ['--resume', id, '--model', 'x'], r1, { HOME: home });
    await waitFor(b, 'Fake reply: please EDIT README');
    expect(screen(b)).toContain('args: --model x');
    await type(b, 'after resume');
    await waitFor(b, 'Fake reply: after resume');
    await type(b, '/quit');
    expect(await waitExit(b)).toBe(0);

    // By absolute path from another checkout: claude runs in the process cwd and keeps appending there.
    const c = start('claude', ['--resume', file], r2, { HOME: home });
    const s = await waitFor(c, 'Fake reply: after resume');
    expect(s).toContain(`cwd: ${r2}`);
    await type(c, 'from work2');
    await waitFor(c, 'Fake reply: from work2');
    keys(c, 'C-c');
    await waitFor(c, 'Press Ctrl-C again to exit');
    keys(c, 'C-c');
    expect(await waitExit(c)).toBe(0);
    const after = jsonl(file).filter((r) => r.type === 'user' && typeof (r.message as { content: unknown }).content === 'string');
    expect(after.map((u) => [(u.message as { content: string }).content, u.cwd])).toEqual([
      ['first prompt', r1],
      ['please EDIT README', r1],
      ['after resume', r1],
      ['from work2', r2],
    ]);
  });

  test('claude: --resume <id> from a cwd whose project dir lacks it fails like the real one', async () => {
    const home = dir('claude-missing', 'home');
    const r1 = repo(path.join(tmp, 'claude-missing', 'a'));
    const r2 = repo(path.join(tmp, 'claude-missing', 'b'));
    trustClaude(home, r1, r2);
    const a = start('claude', ['hello'], r1, { HOME: home });
    await waitFor(a, 'Fake reply: hello');
    await type(a, '/exit');
    await waitExit(a);
    const id = UUID.exec(screen(a).split('claude --resume ')[1] ?? '')![0];
    const b = start('claude', ['--resume', id], r2, { HOME: home });
    expect(await waitExit(b)).toBe(1);
    expect(screen(b)).toContain(`No conversation found with session ID: ${id}`);
    // The stub the real CLI leaves behind.
    expect(fs.readdirSync(path.join(home, '.claude', 'projects', r2.replace(/[^A-Za-z0-9]/g, '-')))).toHaveLength(1);
  });

  test('claude: trust screen by main repo root (ancestors count), arrows move the marker, Enter saves', async () => {
    const cfg = dir('claude-trust', 'cfg');
    const r = repo(path.join(tmp, 'claude-trust', 'repo'));
    const sub = dir('claude-trust', 'repo', 'sub');
    const a = start('claude', [], sub, { HOME: dir('claude-trust', 'home'), CLAUDE_CONFIG_DIR: cfg });
    const s = await waitFor(a, 'Quick safety check: Is this a project you created or one you trust?');
    expect(s).toContain('❯ 1. Yes, I trust this folder');
    keys(a, 'Down');
    expect(await waitFor(a, '❯ 2. No, exit')).toContain('  1. Yes, I trust this folder');
    keys(a, 'Up');
    await waitFor(a, '❯ 1. Yes, I trust this folder');
    keys(a, 'Enter');
    await waitFor(a, `cwd: ${sub}`);
    const state = JSON.parse(fs.readFileSync(path.join(cfg, '.claude.json'), 'utf8')) as { projects: Record<string, { hasTrustDialogAccepted: boolean }> };
    expect(state.projects[r]?.hasTrustDialogAccepted).toBe(true);
    await type(a, '/exit');
    await waitExit(a);
    // Trust on an ancestor counts: no screen in another repo below it.
    const other = repo(path.join(tmp, 'claude-trust', 'other'));
    fs.writeFileSync(path.join(cfg, '.claude.json'), JSON.stringify({ projects: { [path.dirname(other)]: { hasTrustDialogAccepted: true } } }));
    const b = start('claude', ['hi'], other, { HOME: dir('claude-trust', 'home'), CLAUDE_CONFIG_DIR: cfg });
    await waitFor(b, 'Fake reply: hi');
    expect(fs.existsSync(path.join(cfg, 'projects', other.replace(/[^A-Za-z0-9]/g, '-')))).toBe(true);
    // "No, exit" leaves.
    const c = start('claude', [], repo(path.join(tmp, 'claude-trust2', 'x')), { HOME: dir('claude-trust2', 'home') });
    await waitFor(c, 'Yes, I trust this folder');
    keys(c, '2');
    expect(await waitExit(c)).toBe(1);
    await type(b, '/exit');
    await waitExit(b);
  });

  test('codex: trust screen, ordinal rollout, /quit refused while working, resume with the cwd chooser', async () => {
    const home = dir('codex', 'home');
    const r1 = repo(path.join(tmp, 'codex', 'work', 'hark'));
    const r2 = repo(path.join(tmp, 'codex', 'work2', 'hark'));
    const a = start('codex', ['first prompt'], r1, { HOME: home });
    let s = await waitFor(a, 'Trust this folder?');
    expect(s).toContain('› 1. Trust and continue');
    keys(a, 'Enter');
    await waitFor(a, 'Fake reply: first prompt');
    const root = path.join(home, '.codex');
    expect(fs.readFileSync(path.join(root, 'config.toml'), 'utf8')).toContain(`[projects.${JSON.stringify(r1)}]\ntrust_level = "trusted"`);

    await type(a, 'sleep 60');
    await waitFor(a, 'esc to interrupt');
    await type(a, '/quit');
    await waitFor(a, '/quit is refused');
    expect(deadStatus(a)).toBeUndefined();
    keys(a, 'Escape');
    await waitFor(a, 'Interrupted by user');
    await type(a, '/quit');
    expect(await waitExit(a)).toBe(0);

    const file = walk(path.join(root, 'sessions'))[0]!;
    const now = new Date();
    const ymd = [String(now.getFullYear()), String(now.getMonth() + 1).padStart(2, '0'), String(now.getDate()).padStart(2, '0')];
    expect(path.dirname(file)).toBe(path.join(root, 'sessions', ...ymd));
    const m = /^rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-(.+)\.jsonl$/.exec(path.basename(file));
    const id = m![1]!;
    expect(id).toMatch(UUID);
    expect(id[14]).toBe('7');
    expect(screen(a)).toContain('Disconnected from this task. Any running work continues.');
    expect(screen(a)).toContain(`codex resume ${id}`);
    let recs = jsonl(file);
    expect(recs.map((r) => r.ordinal)).toEqual(recs.map((_, i) => i));
    expect(recs[0]).toMatchObject({ type: 'session_meta', payload: { id, cwd: r1, cli_version: expect.any(String) } });
    expect(recs.filter((r) => r.type === 'turn_context').map((r) => (r.payload as { cwd: string }).cwd)).toEqual([r1]);
    const call = recs.find((r) => (r.payload as { type?: string }).type === 'function_call')!.payload as { arguments: string };
    expect(JSON.parse(call.arguments)).toEqual({ cmd: `cat ${r1}/README.md` });
    expect(fs.readFileSync(file, 'utf8')).toContain(path.join(root, 'skills'));
    const before = recs.length;

    // In another (already trusted) checkout: the chooser, default = the session's directory.
    fs.appendFileSync(path.join(root, 'config.toml'), `\n[projects."${r2}"]\ntrust_level = "trusted"\n`);
    const b = start('codex', ['resume', id], r2, { HOME: home });
    s = await waitFor(b, 'Working directory · resume');
    expect(s).toContain(`› 1. Use session directory (${r1})`);
    keys(b, 'Down');
    await waitFor(b, `› 2. Use current directory (${r2})`);
    keys(b, 'Enter');
    s = await waitFor(b, 'Fake reply: first prompt');
    expect(s).toContain(`cwd: ${r2}`);
    await type(b, 'moved on');
    await waitFor(b, 'Fake reply: moved on');
    await type(b, '/quit');
    expect(await waitExit(b)).toBe(0);
    recs = jsonl(file);
    expect(recs.length).toBeGreaterThan(before);
    expect(recs.map((r) => r.ordinal)).toEqual(recs.map((_, i) => i));
    expect(recs.filter((r) => r.type === 'turn_context').map((r) => (r.payload as { cwd: string }).cwd)).toEqual([r1, r2]);

    // A partial id is not a session.
    const c = start('codex', ['resume', id.slice(0, 8)], r2, { HOME: home });
    expect(await waitExit(c)).toBe(1);
    expect(screen(c)).toContain('No saved session found');
  });

  test('pi: /exit is a prompt, /quit quits, --session <path> runs in the header cwd (or asks when it is gone)', async () => {
    const home = dir('pi', 'home');
    const r1 = repo(path.join(tmp, 'pi', 'work', 'hark'));
    const r2 = repo(path.join(tmp, 'pi', 'work2', 'hark'));
    const a = start('pi', ['first prompt'], r1, { HOME: home });
    await waitFor(a, 'Fake reply: first prompt');
    await type(a, '/exit');
    await waitFor(a, 'Fake reply: /exit');
    expect(deadStatus(a)).toBeUndefined();
    await type(a, '/quit');
    expect(await waitExit(a)).toBe(0);

    const sdir = path.join(home, '.pi', 'agent', 'sessions', `--${r1.slice(1).replace(/\//g, '-')}--`);
    const file = only(sdir);
    const m = /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_(.+)\.jsonl$/.exec(path.basename(file));
    expect(m![1]).toMatch(UUID);
    let recs = jsonl(file);
    expect(recs[0]).toMatchObject({ type: 'session', version: 3, id: m![1], cwd: r1 });
    expect(JSON.stringify(recs)).toContain(`"arguments":{"path":"${r1}/README.md"}`);
    const before = recs.length;

    const b = start('pi', ['--session', file], r2, { HOME: home });
    const s = await waitFor(b, 'Fake reply: /exit');
    expect(s).toContain(`cwd: ${r1}`);
    await type(b, 'second prompt');
    await waitFor(b, 'Fake reply: second prompt');
    keys(b, 'C-c');
    await waitFor(b, 'Press Ctrl-C again to exit');
    keys(b, 'C-c');
    expect(await waitExit(b)).toBe(0);
    recs = jsonl(file);
    expect(recs.length).toBe(before + 4);

    // The header names a directory that is gone: pi asks, Continue runs in the launch dir.
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines[0] = lines[0]!.replace(JSON.stringify(r1), JSON.stringify(path.join(tmp, 'pi', 'gone')));
    fs.writeFileSync(file, lines.join('\n'));
    const c = start('pi', ['--session', file], r2, { HOME: home });
    await waitFor(c, 'cwd from session file does not exist');
    expect(screen(c)).toContain('→ Continue');
    keys(c, 'Enter');
    await waitFor(c, `cwd: ${r2}`);
    keys(c, 'C-d');
    expect(await waitExit(c)).toBe(0);
  });

  test('omp: dir relative to HOME, 256-byte title line rewritten in place, /exit, --resume <path>', async () => {
    const home = dir('omp', 'home');
    const r1 = repo(path.join(home, 'code', 'hark'));
    const r2 = repo(path.join(tmp, 'omp', 'work2', 'hark'));
    const a = start('omp', [], r1, { HOME: home });
    await waitFor(a, `cwd: ${r1}`);
    const sdir = path.join(home, '.omp', 'agent', 'sessions', '-code-hark');
    const file = only(sdir);
    const first = fs.readFileSync(file, 'utf8').split('\n');
    expect(Buffer.byteLength(first[0]!) + 1).toBe(256);
    expect(JSON.parse(first[0]!)).toMatchObject({ type: 'title', title: '' });
    expect(JSON.parse(first[1]!)).toMatchObject({ type: 'session', version: 3, cwd: r1 });
    await type(a, 'name this session');
    await waitFor(a, 'Fake reply: name this session');
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    expect(Buffer.byteLength(lines[0]!) + 1).toBe(256);
    expect(JSON.parse(lines[0]!)).toMatchObject({ type: 'title', title: 'name this session' });
    await type(a, '/exit');
    expect(await waitExit(a)).toBe(0);
    const id = (JSON.parse(first[1]!) as { id: string }).id;
    expect(screen(a)).toContain(`Resume this session with omp --resume ${id}`);

    const b = start('omp', ['--resume', file], r2, { HOME: home });
    const s = await waitFor(b, 'Fake reply: name this session');
    expect(s).toContain(`cwd: ${r1}`);
    await type(b, 'again');
    await waitFor(b, 'Fake reply: again');
    await type(b, '/quit');
    expect(await waitExit(b)).toBe(0);
    const recs = jsonl(file);
    expect(recs.filter((r) => r.type === 'custom' && r.customType === 'session_exit')).toHaveLength(2);
    expect(recs.filter((r) => r.type === 'message' && (r.message as { role: string }).role === 'user')).toHaveLength(2);

    // Outside HOME but under the temp dir: `-tmp-…`.
    const c = start('omp', [], r2, { HOME: home });
    await waitFor(c, `cwd: ${r2}`);
    expect(fs.existsSync(path.join(home, '.omp', 'agent', 'sessions', `-tmp-${path.relative(fs.realpathSync(os.tmpdir()), r2).replace(/\//g, '-')}`))).toBe(true);
    keys(c, 'C-c', 'C-c');
    expect(await waitExit(c)).toBe(0);
  });

  test('grok: session directory, Ctrl+C only clears, /quit, --resume <uuid> from another cwd, Ctrl+Q twice', async () => {
    const home = dir('grok', 'home');
    const r1 = repo(path.join(tmp, 'grok', 'work', 'we ird+c@d~e_f.g(h)'));
    const r2 = repo(path.join(tmp, 'grok', 'work2', 'hark'));
    const a = start('grok', ['first prompt'], r1, { HOME: home });
    await waitFor(a, 'Fake reply: first prompt');
    const group = path.join(home, '.grok', 'sessions', r1.replace(/[^A-Za-z0-9\-._~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`));
    expect(path.basename(group)).toContain('we%20ird%2Bc%40d~e_f.g%28h%29');
    const unit = only(group);
    const id = path.basename(unit);
    expect(mode(unit)).toBe(0o700);
    for (const f of ['updates.jsonl', 'chat_history.jsonl', 'summary.json', 'rewind_points.jsonl', 'prompt_context.json']) expect(fs.existsSync(path.join(unit, f))).toBe(true);
    const summary = JSON.parse(fs.readFileSync(path.join(unit, 'summary.json'), 'utf8')) as Record<string, unknown>;
    expect(summary).toMatchObject({ info: { id, cwd: r1 }, git_root_dir: `${r1}/`, grok_home: path.join(home, '.grok') });
    const calls = jsonl(path.join(unit, 'chat_history.jsonl')).flatMap((r) => (r.tool_calls as { arguments: string }[] | undefined) ?? []);
    expect(JSON.parse(calls[0]!.arguments)).toEqual({ target_file: `${r1}/README.md` });

    keys(a, 'C-c', 'C-c');
    await sleep(300);
    expect(deadStatus(a)).toBeUndefined();
    await type(a, '/quit');
    expect(await waitExit(a)).toBe(0);
    expect(screen(a)).toContain(`grok --resume ${id}`);
    const before = jsonl(path.join(unit, 'updates.jsonl')).length;

    const b = start('grok', ['--resume', id], r2, { HOME: home });
    const s = await waitFor(b, 'Fake reply: first prompt');
    expect(s).toContain(`cwd: ${r1}`);
    expect(s).toContain(`Session ${id} found locally`);
    await type(b, 'second');
    await waitFor(b, 'Fake reply: second');
    keys(b, 'C-q');
    await waitFor(b, 'Press Ctrl+Q again to quit');
    keys(b, 'C-q');
    expect(await waitExit(b)).toBe(0);
    expect(jsonl(path.join(unit, 'updates.jsonl')).length).toBeGreaterThan(before);
  });

  test('omp: a turn rewrites the session file as real omp 18.2.3 does — title line in place, stale reads superseded, file renamed over', async () => {
    const home = dir('omp-rewrite', 'home');
    const r1 = repo(path.join(home, 'code', 'hark'));
    const sdir = path.join(home, '.omp', 'agent', 'sessions', '-code-hark');
    // A greeting names no session (omp waits for a prompt worth a title): line 1 keeps title "".
    const a = start('omp', ['hi'], r1, { HOME: home });
    await waitFor(a, 'Fake reply: hi');
    const file = only(sdir);
    const t1 = fs.readFileSync(file);
    const ino1 = fs.statSync(file).ino;
    const line1 = (b: Buffer) => b.subarray(0, b.indexOf(10) + 1);
    expect(line1(t1).length).toBe(256);
    expect(JSON.parse(line1(t1).toString())).toEqual({ type: 'title', v: 1, title: '', updatedAt: expect.any(String), pad: expect.stringMatching(/^ +$/) });

    // The second turn reads README.md again: line 1 gets the title (still 256 bytes), the older
    // read result is superseded, and the file is a new one renamed over the old (not an append).
    await type(a, 'please read README.md');
    await waitFor(a, 'Fake reply: please read README.md');
    const t2 = fs.readFileSync(file);
    expect(fs.statSync(file).ino).not.toBe(ino1);
    expect(line1(t2).length).toBe(256);
    expect(JSON.parse(line1(t2).toString())).toMatchObject({ type: 'title', v: 1, title: 'please read README.md', source: 'auto' });
    expect(t2.subarray(0, t1.length).equals(t1)).toBe(false);
    const recs = jsonl(file);
    expect(recs[1]).toMatchObject({ type: 'session', title: 'please read README.md', titleSource: 'auto' });
    const results = recs.filter((r) => r.type === 'message' && (r.message as { role: string }).role === 'toolResult').map((r) => (r.message as { content: { text: string }[] }).content[0]!.text);
    expect(results).toEqual(['[Superseded by a newer read of this file]', `[README.md#FAKE]\n1:hello`]);
    expect(recs.filter((r) => r.type === 'title_change')).toHaveLength(1);
    // Every line of the first turn but the superseded result kept its bytes.
    const before = t1.toString().split('\n').filter((l) => l);
    const after = t2.toString().split('\n');
    const changed = before.map((l, i) => (l === after[i] ? -1 : i)).filter((i) => i >= 0);
    expect(changed.map((i) => (JSON.parse(before[i]!) as { type: string }).type)).toEqual(['title', 'session', 'message']);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    await type(a, '/exit');
    expect(await waitExit(a)).toBe(0);

    // Resumed, a turn that reads the file again supersedes the last result: again not an append.
    const t3 = fs.readFileSync(file);
    const b = start('omp', ['--resume', file], r1, { HOME: home });
    await waitFor(b, 'Fake reply: please read README.md');
    expect(fs.readFileSync(file).equals(t3)).toBe(true);
    await type(b, 'and once more');
    await waitFor(b, 'Fake reply: and once more');
    const t4 = fs.readFileSync(file);
    expect(t4.subarray(0, t3.length).equals(t3)).toBe(false);
    expect(line1(t4).equals(line1(t3))).toBe(true);
    expect(jsonl(file).filter((r) => r.type === 'message' && JSON.stringify(r).includes('[README.md#FAKE]'))).toHaveLength(1);
    await type(b, '/exit');
    expect(await waitExit(b)).toBe(0);
  });

  test('grok: a resume writes prompt_context.json over in place, a turn writes summary/signals/usage anew; the .jsonl logs only grow', async () => {
    const home = dir('grok-rewrite', 'home');
    const r1 = repo(path.join(tmp, 'grok-rewrite', 'work', 'hark'));
    const a = start('grok', ['first prompt'], r1, { HOME: home });
    await waitFor(a, 'Fake reply: first prompt');
    const unit = only(path.join(home, '.grok', 'sessions', r1.replace(/[^A-Za-z0-9\-._~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)));
    const id = path.basename(unit);
    const snap = () => Object.fromEntries(fs.readdirSync(unit).map((f) => [f, { bytes: fs.readFileSync(path.join(unit, f)), ino: fs.statSync(path.join(unit, f)).ino }]));
    /** Per file: same, appended (the old bytes a prefix of the new), or rewritten. */
    const compare = (x: ReturnType<typeof snap>, y: ReturnType<typeof snap>) =>
      Object.fromEntries(
        Object.keys(y).map((f) => {
          const o = x[f]?.bytes;
          const n = y[f]!.bytes;
          if (!o) return [f, 'new'];
          if (o.equals(n)) return [f, 'same'];
          return [f, n.length >= o.length && n.subarray(0, o.length).equals(o) ? 'appended' : 'rewritten'];
        }),
      );
    const s1 = snap();
    for (const f of ['signals.json', 'usage.json', 'title_refresh_idx']) expect(s1[f], f).toBeDefined();

    await type(a, 'second prompt');
    await waitFor(a, 'Fake reply: second prompt');
    const s2 = snap();
    expect(compare(s1, s2)).toMatchObject({
      'summary.json': 'rewritten',
      'signals.json': 'rewritten',
      'usage.json': 'rewritten',
      'title_refresh_idx': 'rewritten',
      'prompt_context.json': 'same',
      'updates.jsonl': 'appended',
      'chat_history.jsonl': 'appended',
      'rewind_points.jsonl': 'appended',
    });
    for (const f of ['summary.json', 'signals.json', 'usage.json']) expect(s2[f]!.ino, `${f} renamed over`).not.toBe(s1[f]!.ino);
    expect(fs.readFileSync(path.join(unit, 'title_refresh_idx'), 'utf8')).toBe('1');
    expect(JSON.parse(fs.readFileSync(path.join(unit, 'signals.json'), 'utf8'))).toMatchObject({ turnCount: 2, userMessageCount: 2 });
    await type(a, '/quit');
    expect(await waitExit(a)).toBe(0);
    expect(compare(s2, snap())).not.toContain('rewritten');

    // The resume alone, before any prompt: prompt_context.json written over in place (a new
    // build_timestamp_utc, the same inode), summary.json anew, one background_tasks update.
    const b = start('grok', ['--resume', id], r1, { HOME: home });
    await waitFor(b, 'Fake reply: second prompt');
    const s3 = snap();
    expect(compare(s2, s3)).toMatchObject({ 'prompt_context.json': 'rewritten', 'summary.json': 'rewritten', 'updates.jsonl': 'appended', 'chat_history.jsonl': 'same', 'signals.json': 'same' });
    expect(s3['prompt_context.json']!.ino).toBe(s2['prompt_context.json']!.ino);
    const ctx = (s: ReturnType<typeof snap>) => JSON.parse(s['prompt_context.json']!.bytes.toString()) as Record<string, unknown>;
    expect(ctx(s3).build_timestamp_utc).not.toBe(ctx(s2).build_timestamp_utc);
    expect(ctx(s3).working_directory).toBe(r1);
    expect(jsonl(path.join(unit, 'updates.jsonl')).at(-1)).toMatchObject({ params: { update: { sessionUpdate: 'background_tasks' } } });
    await type(b, 'third');
    await waitFor(b, 'Fake reply: third');
    expect(compare(s3, snap())).toMatchObject({ 'summary.json': 'rewritten', 'signals.json': 'rewritten', 'usage.json': 'rewritten', 'updates.jsonl': 'appended' });
    await type(b, '/quit');
    expect(await waitExit(b)).toBe(0);
  });

  test('a control file with onlyIn applies only to agents in those folders (and their worktrees)', async () => {
    const base = dir('only-in');
    const here = repo(path.join(base, 'here'));
    const elsewhere = repo(path.join(base, 'elsewhere'));
    const home = dir('only-in', 'home');
    fs.mkdirSync(path.join(home, '.pi', 'agent'), { recursive: true });
    fs.writeFileSync(path.join(home, '.pi', 'agent', 'fake-agent.json'), JSON.stringify({ crashOnStart: true, onlyIn: [elsewhere] }));
    const fine = start('pi', ['still here'], here, { HOME: home });
    await waitFor(fine, 'Fake reply: still here');
    await type(fine, '/quit');
    expect(await waitExit(fine)).toBe(0);
    const crashed = start('pi', [], elsewhere, { HOME: home });
    expect(await waitExit(crashed)).toBe(1);
  });

  test('screens on demand, crash on start, and herdr session reporting only with the integration installed', async () => {
    const base = dir('screens');
    const r = repo(path.join(base, 'repo'));
    const control = (root: string, v: object) => {
      fs.mkdirSync(root, { recursive: true });
      fs.writeFileSync(path.join(root, 'fake-agent.json'), JSON.stringify(v));
    };
    const homes = Object.fromEntries(['claude', 'codex', 'omp', 'grok', 'pi', 'crash'].map((k) => [k, dir('screens', `home-${k}`)]));
    control(path.join(homes.claude!, '.claude'), { loggedOut: true });
    trustClaude(homes.claude!, r);
    // herdr's codex hook as real herdr 0.8.2 installs it, not trusted yet.
    const codexRoot = path.join(homes.codex!, '.codex');
    const hookCommand = `bash '${codexRoot}/herdr-agent-state.sh' session`;
    fs.mkdirSync(codexRoot, { recursive: true });
    fs.writeFileSync(path.join(codexRoot, 'hooks.json'), JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ command: hookCommand, timeout: 10, type: 'command' }] }] } }, null, 2));
    fs.writeFileSync(path.join(codexRoot, 'config.toml'), `[features]\nhooks = true\n\n[projects."${r}"]\ntrust_level = "trusted"\n`);
    control(path.join(homes.omp!, '.omp', 'agent'), { firstRun: true });
    control(path.join(homes.grok!, '.grok'), { loggedOut: true });
    control(path.join(homes.crash!, '.pi', 'agent'), { crashOnStart: true });

    const crash = start('pi', [], r, { HOME: homes.crash! });
    expect(await waitExit(crash)).toBe(1);
    const cl = start('claude', [], r, { HOME: homes.claude! });
    await waitFor(cl, 'Select login method:');
    const cx = start('codex', [], r, { HOME: homes.codex! });
    await waitFor(cx, 'Hooks need review');
    await waitFor(cx, '1 hook is new or changed.');
    const om = start('omp', [], r, { HOME: homes.omp! });
    await waitFor(om, 'Setup step 1 of 5');
    keys(om, 'Escape');
    await waitFor(om, 'Setup step 2 of 5');
    const gr = start('grok', [], r, { HOME: homes.grok! });
    await waitFor(gr, 'Login with Grok  l');
    keys(gr, 'q');
    expect(await waitExit(gr)).toBe(0);
    keys(cl, 'Enter');
    await waitFor(cl, `cwd: ${r}`);
    // Review hooks → the Hooks list → SessionStart's hooks → t trusts herdr's alone → Esc, Esc.
    keys(cx, 'Enter');
    await waitFor(cx, '⚠ 1 hook needs review before it can run.');
    await waitFor(cx, 't trust all · enter review · esc close');
    keys(cx, 'Enter');
    await waitFor(cx, `Command   ${hookCommand}`);
    await waitFor(cx, 't trust · esc back');
    keys(cx, 't');
    await waitFor(cx, 'Trust     Trusted');
    expect(fs.readFileSync(path.join(codexRoot, 'config.toml'), 'utf8')).toContain(`[hooks.state.${JSON.stringify(`${codexRoot}/hooks.json:session_start:0:0`)}]\ntrusted_hash = "sha256:`);
    keys(cx, 'Escape');
    await waitFor(cx, 'enter details · esc close');
    keys(cx, 'Escape');
    await waitFor(cx, `cwd: ${r}`);

    // herdr reporting: a stub socket that keeps each request line (the integrations call herdr's socket).
    const calls: Record<string, unknown>[] = [];
    const sockPath = path.join(base, 'herdr.sock');
    const server = net.createServer((c) => {
      let buf = '';
      c.on('data', (d) => {
        buf += d.toString();
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const req = JSON.parse(buf.slice(0, nl)) as Record<string, unknown>;
          buf = buf.slice(nl + 1);
          calls.push(req);
          c.write(`${JSON.stringify({ id: req.id, result: {} })}\n`);
        }
      });
    });
    await new Promise<void>((res) => server.listen(sockPath, res));
    const herdr = { HERDR_ENV: '1', HERDR_PANE_ID: 'p_1', HERDR_SOCKET_PATH: sockPath };
    const reported = (agent: string) => calls.map((c) => c.params as Record<string, unknown>).filter((p) => p.agent === agent);
    try {
      const piHome = homes.pi!;
      const p1 = start('pi', ['no integration'], r, { HOME: piHome, ...herdr });
      await waitFor(p1, 'Fake reply: no integration');
      await type(p1, '/quit');
      await waitExit(p1);
      expect(calls).toEqual([]);
      fs.mkdirSync(path.join(piHome, '.pi', 'agent', 'extensions'), { recursive: true });
      fs.writeFileSync(path.join(piHome, '.pi', 'agent', 'extensions', 'herdr-agent-state.ts'), '// installed\n');
      const p2 = start('pi', ['with integration'], r, { HOME: piHome, ...herdr });
      await waitFor(p2, 'Fake reply: with integration');
      await type(p2, '/quit');
      await waitExit(p2);
      fs.mkdirSync(path.join(homes.claude!, '.claude', 'hooks'), { recursive: true });
      fs.writeFileSync(path.join(homes.claude!, '.claude', 'hooks', 'herdr-agent-state.sh'), '# installed\n');
      fs.rmSync(path.join(homes.claude!, '.claude', 'fake-agent.json'));
      const c2 = start('claude', ['hi'], r, { HOME: homes.claude!, ...herdr });
      await waitFor(c2, 'Fake reply: hi');
      await type(c2, '/exit');
      await waitExit(c2);
      // codex: its hook (trusted above) runs with the first prompt, not at launch.
      fs.writeFileSync(path.join(codexRoot, 'herdr-agent-state.sh'), '# installed\n');
      const x2 = start('codex', [], r, { HOME: homes.codex!, ...herdr });
      await waitFor(x2, `cwd: ${r}`);
      await sleep(500);
      expect(reported('codex')).toEqual([]);
      await type(x2, 'hi');
      await waitFor(x2, 'Fake reply: hi');
      await type(x2, '/quit');
      await waitExit(x2);
      const piFile = walk(path.join(piHome, '.pi', 'agent', 'sessions')).find((f) => jsonl(f).some((x) => JSON.stringify(x).includes('with integration')))!;
      const pi = reported('pi');
      expect(pi).toContainEqual(expect.objectContaining({ pane_id: 'p_1', source: 'herdr:pi', state: 'idle' }));
      expect(pi).toContainEqual(expect.objectContaining({ source: 'herdr:pi', agent_session_path: piFile, session_start_source: 'startup' }));
      expect(pi).toContainEqual(expect.objectContaining({ state: 'working' }));
      // Every report carries a seq newer than the one before (real herdr drops the rest), and once
      // the session is known each state report names it too (real herdr ignores them otherwise).
      const seqs = pi.map((x) => x.seq as number);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
      const afterSession = pi.slice(pi.findIndex((x) => x.session_start_source !== undefined) + 1);
      expect(afterSession.length).toBeGreaterThan(0);
      for (const x of afterSession) expect(x.agent_session_path).toBe(piFile);
      expect(reported('claude')).toEqual([expect.objectContaining({ source: 'herdr:claude', agent_session_id: expect.stringMatching(UUID), session_start_source: 'startup' })]);
      expect(reported('codex')).toEqual([expect.objectContaining({ source: 'herdr:codex', agent_session_id: expect.stringMatching(UUID), session_start_source: 'startup' })]);
    } finally {
      server.close();
    }

    for (const p of [cl, cx]) {
      await type(p, '/quit');
      await waitExit(p);
    }
    keys(om, 'C-c');
    await waitFor(om, `cwd: ${r}`);
    keys(om, 'C-d');
    await waitExit(om);
  });
});
