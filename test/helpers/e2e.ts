// e2e helpers: drive herdr, fake agents and agent-handoff as the world's users, as a person would.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pidAlive, processStartId } from '../../src/handoff/process-age.js';
import { adapterFor } from '../../adapters/index.js';
import { runAsSync, userEnv, type World, type WorldUser } from '../world/machines.js';
import { trustHerdrCodexHook } from './codex-hooks.js';

export interface ProcResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run a program as a world user (async, so the test process stays responsive). */
export function runAs(user: WorldUser, argv: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): Promise<ProcResult> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(file!, args, { uid: user.uid, gid: user.gid, cwd: opts.cwd ?? user.home, env: userEnv(user, opts.env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
    // A program that exits without reading its stdin (EPIPE) is no failure of the run.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

export function herdrBin(world: World): string {
  return path.join(world.binDir, 'herdr');
}

/** `herdr …` as a user; parses the JSON envelope when there is one. */
export async function herdr(world: World, user: WorldUser, args: string[], env: Record<string, string> = {}): Promise<{ code: number; json: Record<string, unknown> | null; stdout: string; stderr: string }> {
  const r = await runAs(user, [herdrBin(world), ...args], { env: { ...world.fastEnv, ...env } });
  let json: Record<string, unknown> | null = null;
  const text = (r.code === 0 ? r.stdout : r.stderr).trim();
  if (text.startsWith('{')) json = JSON.parse(text.split('\n').pop()!) as Record<string, unknown>;
  return { code: r.code, json, stdout: r.stdout, stderr: r.stderr };
}

export async function herdrOk(world: World, user: WorldUser, args: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const r = await herdr(world, user, args, env);
  if (r.code !== 0) throw new Error(`herdr ${args.join(' ')} as ${user.name} failed (${r.code}): ${r.stderr}`);
  return (r.json ?? {}) as Record<string, unknown>;
}

/** Run agent-handoff as a world user and parse its one JSON object. */
export async function handoff(world: World, user: WorldUser, args: string[], opts: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  const r = await runAs(user, [process.execPath, world.app, ...args], { env: { ...world.fastEnv, ...opts.env }, ...(opts.cwd ? { cwd: opts.cwd } : {}), timeoutMs: opts.timeoutMs ?? 180_000 });
  const lines = r.stdout.trim().split('\n');
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(lines[lines.length - 1] ?? '') as Record<string, unknown>;
  } catch {
    throw new Error(`agent-handoff ${args.join(' ')} printed no JSON (exit ${r.code}); stdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  if (lines.length !== 1) throw new Error(`agent-handoff printed more than one line on stdout: ${r.stdout}`);
  return { code: r.code, json, stderr: r.stderr };
}

export async function waitFor<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Wait until a pane's visible text passes `test`; on a timeout the error shows the last screen. */
export async function waitForScreen(world: World, user: WorldUser, pane: string, what: string, test: (text: string) => boolean, timeoutMs = 20_000): Promise<string> {
  let last = '';
  try {
    return await waitFor(what, async () => {
      last = await screen(world, user, pane);
      return test(last) ? last : undefined;
    }, timeoutMs);
  } catch (err) {
    throw new Error(`${(err as Error).message}; ${pane} of ${user.name} shows:\n${last}`, { cause: err });
  }
}

export interface StartedAgent {
  workspace: string;
  pane: string;
  name: string;
}


/**
 * `herdr integration install <kind>` as `user`. Real herdr installs only for an agent that has
 * run there (its folder exists), so the folder is made first, as the agent's first run would.
 */
export async function installIntegration(world: World, user: WorldUser, kind: string): Promise<void> {
  // The agent's own config root, as the product finds it (the world sets no *_HOME variables).
  const dir = adapterFor(kind).configRoot({}, user.home);
  const r = runAsSync(user, ['mkdir', '-p', dir]);
  if (r.status !== 0) throw new Error(`mkdir -p ${dir} as ${user.name}: ${r.stderr}`);
  await herdrOk(world, user, ['integration', 'install', kind]);
}

/**
 * Open a workspace in `cwd` as `user`, install the herdr integration for `kind` (unless told not
 * to) and start a fake agent there under `name`, as a person would with herdr.
 */
export async function startFakeAgent(
  world: World,
  user: WorldUser,
  kind: string,
  cwd: string,
  opts: { name: string; integration?: boolean; args?: string[]; waitSession?: boolean; trustHook?: boolean; env?: Record<string, string> },
): Promise<StartedAgent> {
  if (opts.integration !== false) {
    await installIntegration(world, user, kind);
    // Codex runs herdr's hook once the person trusted it (they did, the first time it asked).
    if (kind === 'codex' && opts.trustHook !== false) trustHerdrCodexHook(user);
  }
  const ws = (await herdrOk(world, user, ['workspace', 'create', '--cwd', cwd, '--label', opts.name, '--no-focus'], opts.env)) as { result: { workspace: { workspace_id: string }; root_pane: { pane_id: string } } };
  const pane = ws.result.root_pane.pane_id;
  try {
    await startIn(world, user, kind, pane, opts);
  } catch (err) {
    await herdr(world, user, ['workspace', 'close', ws.result.workspace.workspace_id], opts.env).catch(() => undefined);
    throw err;
  }
  return { workspace: ws.result.workspace.workspace_id, pane, name: opts.name };
}

async function startIn(world: World, user: WorldUser, kind: string, pane: string, opts: { name: string; integration?: boolean; args?: string[]; waitSession?: boolean; env?: Record<string, string> }): Promise<void> {
  // The fresh shell may not own its terminal yet: retry like the product does.
  await waitFor(`agent ${opts.name} to start`, async () => {
    const r = await herdr(world, user, ['agent', 'start', opts.name, '--kind', kind, '--pane', pane, '--', ...(opts.args ?? [])], opts.env);
    if (r.code === 0) return true;
    if (/not an available shell/.test(r.stderr)) return false;
    // Real herdr: started, but waiting at a screen (folder trust) the test answers.
    if (/"agent_not_ready"/.test(r.stderr)) return true;
    throw new Error(`agent start failed: ${r.stderr}`);
  });
  if (opts.waitSession !== false && opts.integration !== false) {
    await waitFor(`session of ${opts.name}`, async () => {
      const r = await herdr(world, user, ['agent', 'get', opts.name], opts.env);
      const agent = (r.json?.result as { agent?: { agent_session?: unknown } } | undefined)?.agent;
      return agent?.agent_session ? true : undefined;
    });
  }
}

/** Screen text of a pane. */
export async function screen(world: World, user: WorldUser, pane: string): Promise<string> {
  const r = await herdr(world, user, ['pane', 'read', pane, '--source', 'visible']);
  return r.stdout;
}

/** A fresh checkout state for each test: reset the user's clone to origin/main, no stray files. */
export function resetClone(world: World, user: WorldUser, repo: string): void {
  const git = (args: string[]) => {
    const r = runAsSync(user, ['git', ...args], { cwd: repo });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')} in ${repo}: ${r.stderr}`);
    return r.stdout;
  };
  git(['fetch', '-q', 'origin']);
  git(['checkout', '-q', '-f', 'main']);
  git(['reset', '-q', '--hard', 'origin/main']);
  git(['clean', '-qfdx']);
  for (const wt of git(['worktree', 'list', '--porcelain']).split('\n').filter((l) => l.startsWith('worktree ')).slice(1)) {
    git(['worktree', 'remove', '--force', wt.slice('worktree '.length)]);
  }
  git(['worktree', 'prune']);
  for (const ref of git(['for-each-ref', '--format=%(refname)', 'refs/handoff', 'refs/heads']).split('\n').filter(Boolean)) {
    if (ref !== 'refs/heads/main') git(['update-ref', '-d', ref]);
  }
  git(['stash', 'clear']);
  fs.rmSync(`${repo}.worktrees`, { recursive: true, force: true });
}

export interface Project {
  name: string;
  origin: string;
  laptop: string;
  vega: string;
}

/**
 * A project of its own for one test file: a bare origin and a clone on each machine
 * (`~/src/<name>` on laptop, `~/code/<name>` on vega), so test files never share checkouts.
 */
/**
 * Test files run side by side in worker processes: two that chose the same project name would
 * clone over each other's checkouts. The first worker to take a name keeps it while it lives.
 */
function claimProject(world: World, name: string): void {
  const dir = path.join(world.dir, 'project-claims');
  fs.mkdirSync(dir, { recursive: true });
  const claim = path.join(dir, name);
  // `pid start`: the world outlives test runs, and a pid of an earlier run may be another process's now.
  let holder = NaN;
  let started: string | null = null;
  try {
    const [pid, start] = fs.readFileSync(claim, 'utf8').trim().split(' ');
    [holder, started] = [Number(pid), start ?? null];
  } catch {
    // unclaimed
  }
  if (Number.isInteger(holder) && holder !== process.pid && pidAlive(holder, started)) throw new Error(`project ${name} is in use by another test process (${holder}): give this test a project name of its own`);
  fs.writeFileSync(claim, `${process.pid} ${processStartId(process.pid) ?? ''}`);
}

export function makeProject(world: World, name: string): Project {
  const laptop = world.users.laptop!;
  const vega = world.users.vega!;
  claimProject(world, name);
  const origin = path.join(world.dir, 'origin', `${name}.git`);
  const git = (user: WorldUser, args: string[], cwd?: string) => {
    const r = runAsSync(user, ['git', ...args], cwd ? { cwd } : {});
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  if (!fs.existsSync(origin)) {
    const seed = path.join(laptop.home, `.seed-${name}`);
    fs.rmSync(seed, { recursive: true, force: true });
    git(laptop, ['init', '-q', seed]);
    fs.writeFileSync(path.join(seed, 'README.md'), 'hello\n');
    fs.mkdirSync(path.join(seed, 'src'));
    fs.writeFileSync(path.join(seed, 'src', 'app.ts'), 'export const answer = 42;\n');
    fs.writeFileSync(path.join(seed, '.gitignore'), 'build/\n');
    runAsSync(laptop, ['chown', '-R', `${laptop.uid}:${laptop.gid}`, seed]);
    fs.chmodSync(path.join(world.dir, 'origin'), 0o777);
    git(laptop, ['add', '-A'], seed);
    git(laptop, ['commit', '-q', '-m', 'initial commit'], seed);
    git(laptop, ['clone', '-q', '--bare', seed, origin]);
    fs.rmSync(seed, { recursive: true, force: true });
    runAsSync(laptop, ['chmod', '-R', 'a+rX', origin]);
  }
  for (const user of [laptop, vega]) git(user, ['config', '--global', '--add', 'safe.directory', origin]);
  const clone = (user: WorldUser, dest: string) => {
    fs.rmSync(dest, { recursive: true, force: true });
    fs.rmSync(`${dest}.worktrees`, { recursive: true, force: true });
    git(user, ['clone', '-q', origin, dest]);
    return dest;
  };
  return { name, origin, laptop: clone(laptop, path.join(laptop.home, 'src', name)), vega: clone(vega, path.join(vega.home, 'code', name)) };
}

/** Write a file as a world user (so ownership is theirs). */
export function writeAs(user: WorldUser, file: string, data: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, data);
  runAsSync(user, ['true']);
  fs.chownSync(file, user.uid, user.gid);
  let dir = path.dirname(file);
  while (dir.startsWith(user.home) && dir !== user.home) {
    fs.chownSync(dir, user.uid, user.gid);
    dir = path.dirname(dir);
  }
}

/**
 * Run `fn` with a fake agent's control file (`<config root>/fake-agent.json` of `user`) saying
 * `control`; removed afterwards however `fn` ends.
 */
export async function withAgentControl<T>(user: WorldUser, file: string, control: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
  writeAs(user, file, JSON.stringify(control));
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

export function gitAs(user: WorldUser, cwd: string, args: string[]): string {
  const r = runAsSync(user, ['git', ...args], { cwd });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} in ${cwd}: ${r.stderr}`);
  return r.stdout;
}
