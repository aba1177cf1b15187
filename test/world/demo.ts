// `npm run demo`: one real handoff, end to end, in a throw-away sandbox on this machine.
//
// Nothing else needs to be set up (no sshd, no real herdr, no root): a herdr simulator server
// runs under a temporary HOME with its socket in the sandbox, the fake `pi` agent and `herdr`
// launchers go on PATH, a git repository with an origin gets a commit, pi starts in a herdr
// workspace with the integration installed and answers a prompt, the checkout gets uncommitted
// changes, and then the product moves the agent: `agent-handoff send demo-pi --here
// --new-worktree`. The demo says what happened in plain words, prints the JSON, checks the result
// and removes the sandbox (the server is stopped by its pid). `--keep` keeps the files.
//
// World code: Node built-ins only, and the product runs as a separate process (its launcher),
// exactly as a user would run it.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeAgentBins } from './agents/install.js';
import { writeLauncher } from './herdr/testing.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** dist/test/world → the repository (or package) root holding bin/agent-handoff.js. */
const ROOT = path.resolve(HERE, '..', '..', '..');
const APP = path.join(ROOT, 'bin', 'agent-handoff.js');

export const AGENT = 'demo-pi';
const PROMPT = 'make the greeting friendlier';

/** Timing overrides read only by the simulator and the fake agents (never by the product). */
const FAST_ENV = { HERDR_SIM_READY_MS: '300', HERDR_SIM_POLL_MS: '100', FAKE_AGENT_TURN_MS: '200' };

class DemoFailure extends Error {}

export interface Sandbox {
  dir: string;
  home: string;
  bin: string;
  socket: string;
  repo: string;
  env: Record<string, string>;
  serverPid: number | undefined;
  serverLog: string;
}

function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

function run(sb: Sandbox, argv: string[], opts: { cwd?: string; input?: string } = {}): SpawnSyncReturns<string> {
  const [file, ...args] = argv;
  return spawnSync(file!, args, { cwd: opts.cwd ?? sb.home, env: sb.env, input: opts.input ?? '', encoding: 'utf8', timeout: 60_000 });
}

function must(sb: Sandbox, argv: string[], opts: { cwd?: string } = {}): string {
  const r = run(sb, argv, opts);
  if (r.status !== 0) throw new DemoFailure(`setting up the sandbox: \`${argv.join(' ')}\` failed (exit ${r.status ?? r.signal}):\n${(r.stderr || r.stdout || r.error?.message || '').trim()}`);
  return r.stdout;
}

function herdrJson(sb: Sandbox, args: string[]): Record<string, unknown> {
  const out = must(sb, [path.join(sb.bin, 'herdr'), ...args]).trim();
  return JSON.parse(out.split('\n').pop() || '{}') as Record<string, unknown>;
}

function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor<T>(what: string, check: () => T | undefined | null | false, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new DemoFailure(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** `compiledWorld`: dist/test/world (a test running this module from its TypeScript source passes it). */
export function makeSandbox(compiledWorld = HERE): Sandbox {
  const root = path.resolve(compiledWorld, '..', '..', '..');
  if (!fs.existsSync(path.join(compiledWorld, 'herdr', 'cli.js')) || !fs.existsSync(path.join(root, 'bin', 'agent-handoff.js')) || !fs.existsSync(path.join(root, 'dist', 'src', 'cli.js'))) {
    throw new DemoFailure(`the compiled code is missing under ${root}/dist; run \`npm install\` (or \`npm run build\`) first`);
  }
  // Short path: the herdr and tmux sockets live inside it (Unix socket paths are limited to ~100 bytes).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-demo-'));
  const home = path.join(dir, 'home');
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(path.join(home, '.config'), { recursive: true });
  // The fake agents and the herdr simulator, as the npm-installed CLIs would be: scripts on PATH.
  writeAgentBins(bin, compiledWorld);
  writeLauncher(path.join(bin, 'herdr'), path.join(compiledWorld, 'herdr', 'cli.js'));
  // herdr's panes run login shells, which take PATH from ~/.profile.
  fs.writeFileSync(path.join(home, '.profile'), `# agent-handoff demo sandbox\nPATH="${bin}:$PATH"\nexport PATH\n`);
  fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Demo User\n\temail = demo@example.invalid\n[init]\n\tdefaultBranch = main\n');
  const socket = path.join(dir, 'herdr.sock');
  const env: Record<string, string> = {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    HERDR_SOCKET_PATH: socket,
    PATH: `${bin}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    SHELL: fs.existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh',
    USER: os.userInfo().username,
    LOGNAME: os.userInfo().username,
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    GIT_CONFIG_NOSYSTEM: '1',
    ...FAST_ENV,
  };
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR;
  return { dir, home, bin, socket, repo: path.join(home, 'src', 'greeter'), env, serverPid: undefined, serverLog: path.join(dir, 'herdr-server.log') };
}

export async function startServer(sb: Sandbox): Promise<void> {
  const out = fs.openSync(sb.serverLog, 'a');
  const child = spawn(path.join(sb.bin, 'herdr'), ['server'], {
    cwd: sb.home,
    env: { ...sb.env, HERDR_BIN_PATH: path.join(sb.bin, 'herdr') },
    detached: true,
    stdio: ['ignore', out, out],
  });
  child.unref();
  fs.closeSync(out);
  sb.serverPid = child.pid;
  await waitFor('the herdr simulator server to answer', () => {
    if (!alive(sb.serverPid)) throw new DemoFailure(`the herdr simulator server exited at once; its log:\n${fs.readFileSync(sb.serverLog, 'utf8')}`);
    const r = run(sb, [path.join(sb.bin, 'herdr'), 'status', 'server', '--json']);
    return r.status === 0 && r.stdout.includes('"running":true');
  });
}

export async function stopServer(sb: Sandbox): Promise<void> {
  if (!alive(sb.serverPid)) return;
  run(sb, [path.join(sb.bin, 'herdr'), 'server', 'stop']);
  try {
    await waitFor('the herdr simulator server to stop', () => !alive(sb.serverPid), 5_000);
  } catch {
    // Ours, by pid: make sure it does not outlive the demo.
    if (alive(sb.serverPid)) process.kill(sb.serverPid!, 'SIGKILL');
  }
}

export function makeRepo(sb: Sandbox): void {
  const origin = path.join(sb.dir, 'origin', 'greeter.git');
  const git = (args: string[], cwd = sb.home) => must(sb, ['git', ...args], { cwd });
  fs.mkdirSync(path.dirname(origin), { recursive: true });
  git(['init', '-q', '--bare', origin]);
  git(['clone', '-q', origin, sb.repo]);
  fs.mkdirSync(path.join(sb.repo, 'src'));
  fs.writeFileSync(path.join(sb.repo, 'README.md'), '# greeter\n');
  fs.writeFileSync(path.join(sb.repo, 'src', 'greet.js'), 'export const greet = (name) => `Hello ${name}`;\n');
  git(['add', '-A'], sb.repo);
  git(['commit', '-q', '-m', 'first commit'], sb.repo);
  git(['push', '-q', 'origin', 'HEAD:main'], sb.repo);
}

interface AgentView {
  agent_status?: string;
  agent_session?: unknown;
  pane_id?: string;
}

function agentGet(sb: Sandbox, name: string): AgentView | undefined {
  const r = run(sb, [path.join(sb.bin, 'herdr'), 'agent', 'get', name]);
  if (r.status !== 0) return undefined;
  return (JSON.parse(r.stdout.trim().split('\n').pop() || '{}') as { result?: { agent?: AgentView } }).result?.agent;
}

function screen(sb: Sandbox, pane: string): string {
  return run(sb, [path.join(sb.bin, 'herdr'), 'pane', 'read', pane, '--source', 'visible']).stdout;
}

export async function startAgent(sb: Sandbox): Promise<string> {
  must(sb, [path.join(sb.bin, 'herdr'), 'integration', 'install', 'pi']);
  const ws = herdrJson(sb, ['workspace', 'create', '--cwd', sb.repo, '--label', 'greeter', '--no-focus']) as { result: { root_pane: { pane_id: string } } };
  const pane = ws.result.root_pane.pane_id;
  // The fresh shell may not own its terminal yet: retry until herdr sees a shell there.
  await waitFor('pi to start in herdr', () => {
    const r = run(sb, [path.join(sb.bin, 'herdr'), 'agent', 'start', AGENT, '--kind', 'pi', '--pane', pane, '--', PROMPT]);
    if (r.status === 0) return true;
    if (/not an available shell/.test(r.stderr)) return false;
    throw new DemoFailure(`herdr agent start failed: ${r.stderr.trim()}`);
  });
  await waitFor('pi to answer the prompt', () => screen(sb, pane).includes(`Fake reply: ${PROMPT}`));
  await waitFor('pi to be idle with its session known to herdr', () => {
    const a = agentGet(sb, AGENT);
    return a?.agent_session && (a.agent_status === 'idle' || a.agent_status === 'done');
  });
  return pane;
}

export function makeChanges(sb: Sandbox): void {
  fs.writeFileSync(path.join(sb.repo, 'src', 'greet.js'), 'export const greet = (name) => `Hello ${name}, nice to see you!`;\n');
  fs.writeFileSync(path.join(sb.repo, 'NOTES.md'), 'work in progress: friendlier greeting\n');
}

interface SendJson {
  ok: boolean;
  code?: string;
  error?: string;
  fix?: string;
  details?: Record<string, unknown>;
  branch?: string;
  target_worktree?: string;
  cwd?: string;
  changes_applied?: boolean;
  target_agent?: { name: string; pane: string; workspace: string };
  source_stash?: { stashed: boolean; stash: string | null; note: string };
  source_pane_at_shell?: boolean;
  plan?: { session?: { id: string; files: number; bytes: number }; will_create?: { session_file: string } };
  verified?: string[];
  steps?: { step: string; ms: number }[];
}

function handoff(sb: Sandbox, args: string[]): { code: number; json: SendJson; stdout: string; stderr: string } {
  // Progress goes to the terminal (stderr) as it happens; stdout is the one JSON object.
  const r = spawnSync(process.execPath, [APP, ...args], { cwd: sb.repo, env: sb.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 300_000 });
  const stdout = r.stdout ?? '';
  let json: SendJson;
  try {
    json = JSON.parse(stdout.trim()) as SendJson;
  } catch {
    throw new DemoFailure(`agent-handoff ${args.join(' ')} did not print one JSON object (exit ${r.status ?? r.signal}); stdout:\n${stdout}`);
  }
  return { code: r.status ?? -1, json, stdout: stdout.trim(), stderr: '' };
}

function check(what: string, ok: boolean): void {
  if (!ok) throw new DemoFailure(`after the handoff: ${what}`);
  say(`  ✓ ${what}`);
}

async function demo(sb: Sandbox): Promise<void> {
  say(`Sandbox: ${sb.dir} (temporary HOME, herdr socket ${sb.socket})`);
  await startServer(sb);
  say(`• started a herdr simulator server (pid ${sb.serverPid})`);
  makeRepo(sb);
  say(`• made a git repository with an origin and a first commit: ${sb.repo}`);
  const sourcePane = await startAgent(sb);
  say(`• started pi as herdr agent "${AGENT}" in pane ${sourcePane} and asked it: "${PROMPT}"`);
  makeChanges(sb);
  say('• left uncommitted changes in the checkout: src/greet.js edited, NOTES.md new');
  say('');
  const argv = ['send', AGENT, '--here', '--new-worktree', '--no-focus'];
  say(`$ agent-handoff ${argv.join(' ')}`);
  const r = handoff(sb, argv);
  say('');
  if (!r.json.ok) {
    say('The handoff FAILED (the sandbox setup worked; this is the product answering):');
    say(`  code:  ${r.json.code}`);
    say(`  error: ${r.json.error}`);
    if (r.json.fix) say(`  fix:   ${r.json.fix}`);
    const step = r.json.details?.failed_step;
    if (typeof step === 'string') say(`  failed at step "${step}"; what was undone: ${JSON.stringify(r.json.details?.undone ?? [])}`);
    say('');
    say('JSON:');
    say(JSON.stringify(r.json, null, 2));
    throw new DemoFailure(`agent-handoff send exited ${r.code} with code ${r.json.code}`);
  }
  const out = r.json;
  const target = out.target_agent!;
  say('What happened:');
  say(`  pi was quit in pane ${sourcePane}, and a new herdr workspace runs it as "${target.name}" (pane ${target.pane})`);
  say(`  in a new worktree ${out.target_worktree} on branch ${out.branch},`);
  say(`  with the uncommitted changes applied (${out.changes_applied ? 'yes' : 'no'}) and the same conversation`);
  const files = out.plan?.session?.files;
  say(`  (session ${out.plan?.session?.id ?? '?'}, ${files === undefined ? '? files' : files === 1 ? '1 file' : `${files} files`}, now at ${out.plan?.will_create?.session_file ?? '?'}).`);
  if (out.source_stash) say(`  At the source: ${out.source_stash.note}`);
  for (const v of out.verified ?? []) say(`  verified: ${v}`);
  say('');
  say('Checking it independently:');
  const cwd = out.cwd ?? out.target_worktree!;
  check('the new worktree has the edited src/greet.js', fs.readFileSync(path.join(cwd, 'src', 'greet.js'), 'utf8').includes('nice to see you'));
  check('the new worktree has the new NOTES.md', fs.existsSync(path.join(cwd, 'NOTES.md')));
  const moved = await waitFor('the moved pi to show the earlier conversation', () => {
    const text = screen(sb, target.pane);
    return text.includes(`Fake reply: ${PROMPT}`) ? text : undefined;
  }, 15_000).catch(() => undefined);
  check('the moved pi shows the earlier conversation', moved !== undefined);
  check(`herdr knows the moved agent "${target.name}"`, agentGet(sb, target.name) !== undefined);
  check('the source pane is back at its shell', out.source_pane_at_shell === true);
  say('');
  say('JSON printed by agent-handoff:');
  say(JSON.stringify(out, null, 2));
  say('');
  say('The demo handoff worked.');
}

export async function main(argv: string[]): Promise<number> {
  const keep = argv.includes('--keep');
  let sb: Sandbox | undefined;
  let code = 0;
  try {
    sb = makeSandbox();
    await demo(sb);
  } catch (err) {
    code = 1;
    const msg = err instanceof Error ? err.message : String(err);
    process.stdout.write(`\nDEMO FAILED: ${msg}\n`);
    if (!(err instanceof DemoFailure) && err instanceof Error && err.stack) process.stdout.write(`${err.stack}\n`);
    if (sb && fs.existsSync(sb.serverLog)) process.stdout.write(`(herdr simulator log: ${sb.serverLog}${keep ? '' : ', removed with the sandbox; rerun with --keep to keep it'})\n`);
  } finally {
    if (sb) {
      await stopServer(sb);
      if (keep) say(`Kept the sandbox: ${sb.dir}`);
      else fs.rmSync(sb.dir, { recursive: true, force: true });
    }
  }
  return code;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
