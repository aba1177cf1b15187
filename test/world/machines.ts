// Two "machines" on loopback: Unix users with their own homes, one sshd on 127.0.0.1, keys and
// known_hosts both ways, a git origin both clone from at different paths, and a herdr server per
// machine user: the real herdr 0.8.2 (../shared/herdr beside the checkout), or with
// AH_WORLD_HERDR=simulator our simulator. Needs root (useradd, sshd). Node built-ins only, so the world can be
// driven from vitest (global setup, test files) and from a shell (`node dist/test/world/cli.js up`).
//
// Facts and traps this follows: /work/shared/test-infra.md (absolute sshd paths, `usermod -p '*'`
// for UsePAM no, /run/sshd, MaxSessions).
import { execFileSync, spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { createServer } from 'node:net';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const WORLD_DIR = process.env.AH_WORLD_DIR || '/tmp/ah-world';

export type HerdrKind = 'real' | 'simulator';

/** The herdr the world is to run: real 0.8.2 unless AH_WORLD_HERDR=simulator. */
export function wantedHerdrKind(): HerdrKind {
  const v = process.env.AH_WORLD_HERDR;
  if (v === undefined || v === '' || v === 'real') return 'real';
  if (v === 'simulator') return 'simulator';
  throw new Error(`AH_WORLD_HERDR=${v}: expected real or simulator`);
}

/** The version `herdr --version` says in a world running `kind`. */
export function herdrVersionOf(kind: HerdrKind): string {
  return kind === 'real' ? '0.8.2' : '0.8.0';
}

/** The real herdr 0.8.2 binary: CI keeps the shared folder beside the checkout. */
export function realHerdrSource(): string {
  return path.resolve(repoDir(), '..', 'shared', 'herdr', '0.8.2', 'herdr');
}
const WORLD_FILE = path.join(WORLD_DIR, 'world.json');

/** The two machines, and extra target users whose login shells differ (for command-encoding tests). */
export const MACHINE_USERS = ['laptop', 'vega'] as const;
export const SHELL_USERS: Record<string, string> = { vegash: '/bin/sh', vegazsh: '/usr/bin/zsh', vegafish: '/usr/bin/fish' };

export interface WorldUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
  /** Private key of this user (readable by root for in-process tests). */
  key: string;
  knownHosts: string;
}

export interface World {
  dir: string;
  binDir: string;
  libDir: string;
  sshd: { host: string; port: number; pid: number; hostKeyLine: string; log: string; config: string };
  users: Record<string, WorldUser>;
  /** Bare repository both machines cloned from. */
  origin: string;
  /** The checkout of each machine user (different paths on purpose). */
  repos: { laptop: string; vega: string };
  /** herdr server pids per machine user. */
  herdrServers: Record<string, number>;
  /** Which herdr the machines run. */
  herdrKind: HerdrKind;
  /** Path of the agent-handoff launcher that the world users can read and run (in the checkout, or in its copy: see appRoot). */
  app: string;
  /** Environment overrides for fast tests (simulator and fake agents only). */
  fastEnv: Record<string, string>;
  /** Newest mtime of the compiled world code that was installed (reinstall when it changes). */
  libFingerprint: string;
}

/**
 * What the world's servers run, by content: the same build from any checkout (a worktree, a CI
 * clone) finds the world up and leaves its servers alone; a changed build restarts them. Without
 * a build there is nothing to run: said before anything running is touched.
 */
function libFingerprint(): string {
  const compiled = path.join(repoDir(), 'dist', 'test', 'world');
  if (!fs.existsSync(compiled)) throw new Error(`compiled world code missing at ${compiled}; run npm run build first`);
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (!e.name.endsWith('.map')) hash.update(`${path.relative(compiled, p)}\0`).update(fs.readFileSync(p)).update('\0');
    }
  };
  walk(compiled);
  return hash.digest('hex').slice(0, 32);
}

// herdr's real waits are its own (3 s readiness); only the simulator and the fakes are sped up.
const FAST_ENV: Record<string, string> = {
  HERDR_SIM_READY_MS: '300',
  HERDR_SIM_POLL_MS: '100',
  FAKE_AGENT_TURN_MS: '200',
};

function sh(cmd: string, args: string[], opts: { input?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], ...opts });
}

function trySh(cmd: string, args: string[]): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { encoding: 'utf8' });
}

function userEntry(name: string): { uid: number; gid: number; home: string; shell: string } | null {
  const r = trySh('getent', ['passwd', name]);
  if (r.status !== 0) return null;
  const f = r.stdout.trim().split(':');
  return { uid: Number(f[2]), gid: Number(f[3]), home: f[5] ?? `/home/${name}`, shell: f[6] ?? '/bin/sh' };
}

/** Environment for running a program as a world user, as a login would give it. */
export function userEnv(user: WorldUser, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: user.home,
    USER: user.name,
    LOGNAME: user.name,
    SHELL: user.shell,
    PATH: `${path.join(WORLD_DIR, 'bin')}:/usr/local/bin:/usr/bin:/bin`,
    LANG: 'C.UTF-8',
    ...extra,
  };
}

/** Run a program as a world user (synchronously; for setup and simple checks). */
export function runAsSync(user: WorldUser, argv: string[], opts: { cwd?: string; input?: string; env?: Record<string, string> } = {}): SpawnSyncReturns<string> {
  const [file, ...args] = argv;
  if (!file) throw new Error('empty argv');
  return spawnSync(file, args, {
    uid: user.uid,
    gid: user.gid,
    cwd: opts.cwd ?? user.home,
    env: userEnv(user, opts.env),
    input: opts.input ?? '',
    encoding: 'utf8',
  });
}

function mustAs(user: WorldUser, argv: string[], opts: { cwd?: string; input?: string } = {}): string {
  const r = runAsSync(user, argv, opts);
  if (r.status !== 0) throw new Error(`as ${user.name}: ${argv.join(' ')} failed (${r.status}): ${r.stderr || r.error?.message}`);
  return r.stdout;
}

async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Is the process still there (signal 0)? */
export function alive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function ensureUser(name: string, shell: string): WorldUser {
  if (!userEntry(name)) sh('useradd', ['-m', '-s', shell, name]);
  // useradd leaves the account locked ('!'); with UsePAM no sshd then refuses every key.
  sh('usermod', ['-p', '*', '-s', shell, name]);
  const e = userEntry(name);
  if (!e) throw new Error(`could not create user ${name}`);
  const user: WorldUser = { name, ...e, key: path.join(e.home, '.ssh', 'id_ed25519'), knownHosts: path.join(e.home, '.ssh', 'known_hosts') };
  fs.mkdirSync(path.join(e.home, '.ssh'), { recursive: true, mode: 0o700 });
  fs.chownSync(path.join(e.home, '.ssh'), e.uid, e.gid);
  if (!fs.existsSync(user.key)) mustAs(user, ['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', `${name}@ah-world`, '-f', user.key]);
  writeOwned(user, path.join(e.home, '.profile'), profileText(), 0o644);
  if (shell.endsWith('zsh')) writeOwned(user, path.join(e.home, '.zprofile'), profileText(), 0o644);
  if (shell.endsWith('fish')) {
    fs.mkdirSync(path.join(e.home, '.config', 'fish'), { recursive: true });
    sh('chown', ['-R', `${e.uid}:${e.gid}`, path.join(e.home, '.config')]);
    writeOwned(user, path.join(e.home, '.config', 'fish', 'config.fish'), `if status is-login\n  set -gx PATH ${path.join(WORLD_DIR, 'bin')} $PATH\nend\n`, 0o644);
    // A fresh fish generates man-page completions (python3, in the pane's foreground group) on its
    // first interactive start, for a minute or more on a loaded machine, and herdr then sees no
    // bare shell. fish skips that when the folder exists, as for a user who has used fish before.
    runAsSync(user, ['mkdir', '-p', path.join(e.home, '.local', 'share', 'fish', 'generated_completions')]);
  }
  return user;
}

/** The world's bin folder is on the login PATH only, like ~/.local/bin often is. */
function profileText(): string {
  return [
    '# written by the agent-handoff test world',
    'if [ -n "$BASH_VERSION" ] && [ -f "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi',
    `PATH="${path.join(WORLD_DIR, 'bin')}:$PATH"`,
    'export PATH',
    '',
  ].join('\n');
}

function writeOwned(user: WorldUser, file: string, text: string, mode: number): void {
  fs.writeFileSync(file, text, { mode });
  fs.chmodSync(file, mode);
  fs.chownSync(file, user.uid, user.gid);
}

function sshdConfig(dir: string, port: number, host: string, users: string[], extra: readonly string[]): string {
  return [
    `Port ${port}`,
    `ListenAddress ${host}`,
    `HostKey ${path.join(dir, 'host_ed25519')}`,
    `PidFile ${path.join(dir, 'sshd.pid')}`,
    'UsePAM no',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'AuthorizedKeysFile .ssh/authorized_keys',
    'StrictModes no',
    'PermitRootLogin no',
    // First: sshd takes a keyword's first value, so a test's own lines win over these defaults.
    ...extra,
    `AllowUsers ${users.join(' ')}`,
    'Subsystem sftp internal-sftp',
    'LogLevel VERBOSE',
    'MaxSessions 50',
    'MaxStartups 50:30:100',
    'AllowTcpForwarding yes',
    '',
  ].join('\n');
}

export interface SshdHandle {
  host: string;
  port: number;
  pid: number;
  hostKeyLine: string;
  log: string;
  config: string;
}

/** Start an sshd on a loopback address with its own host key; resolves once it accepts connections. */
/** `extra`: more sshd_config lines (a test's own sshd, e.g. `SetEnv` for its sessions' login environment). */
export async function startSshd(dir: string, opts: { host?: string; port?: number; users: string[]; extra?: string[] }): Promise<SshdHandle> {
  const host = opts.host ?? '127.0.0.1';
  fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
  fs.mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const hostKey = path.join(dir, 'host_ed25519');
  if (!fs.existsSync(hostKey)) sh('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ah-world-host', '-f', hostKey]);
  // sshd ignores a host key that others can read.
  fs.chmodSync(hostKey, 0o600);
  const port = opts.port ?? (await freePort(host));
  const config = path.join(dir, 'sshd_config');
  const log = path.join(dir, 'sshd.log');
  fs.writeFileSync(config, sshdConfig(dir, port, host, opts.users, opts.extra ?? []));
  sh('/usr/sbin/sshd', ['-t', '-f', config]);
  // -D keeps it in the foreground so we hold its pid; detached so it outlives the test worker.
  const child = spawn('/usr/sbin/sshd', ['-D', '-f', config, '-E', log], { detached: true, stdio: 'ignore' });
  child.unref();
  const pid = child.pid;
  if (!pid) throw new Error('sshd did not start');
  const keyPub = fs.readFileSync(`${hostKey}.pub`, 'utf8').trim().split(/\s+/);
  const hostKeyLine = `[${host}]:${port} ${keyPub[0]} ${keyPub[1]}`;
  await waitFor(() => trySh('ssh-keyscan', ['-T', '1', '-p', String(port), host]).status === 0 || !alive(pid), 10_000, 'sshd to accept connections');
  if (!alive(pid)) throw new Error(`sshd exited at once; see ${log}`);
  return { host, port, pid, hostKeyLine, log, config };
}

function repoDir(): string {
  // dist/test/world/machines.js or test/world/machines.ts → repository root.
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (dir !== '/' && !fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
}

/** Compiled world code (dist/test/world) → WORLD_DIR/lib, readable by every world user. */
function installLib(world: { libDir: string; binDir: string }): void {
  const compiled = path.join(repoDir(), 'dist', 'test', 'world');
  if (!fs.existsSync(compiled)) throw new Error(`compiled world code missing at ${compiled}; run npm run build first`);
  fs.rmSync(world.libDir, { recursive: true, force: true });
  fs.cpSync(compiled, world.libDir, { recursive: true });
  // The lib folder is ESM; a package.json says so without depending on the repository's.
  fs.writeFileSync(path.join(world.libDir, 'package.json'), '{"type":"module"}\n');
  fs.mkdirSync(world.binDir, { recursive: true, mode: 0o755 });
  fs.chmodSync(WORLD_DIR, 0o755);
  sh('chmod', ['-R', 'a+rX', world.libDir, world.binDir]);
}

/**
 * The checkout's files the world users run: the app (launcher, compiled code, packages; the
 * compiled world code holds `npm run demo`) and the benchmark's baseline script.
 */
const APP_PARTS = ['package.json', 'bin', 'dist', 'node_modules', path.join('bench', 'baseline.sh')];

/**
 * Make APP_PARTS readable by world users: the checkout itself when `user` can read them there,
 * else a copy in WORLD_DIR/app (a checkout in a private folder, as a CI clone may be). Returns
 * the launcher; its folder's parent holds APP_PARTS (see appRoot).
 */
function installApp(user: WorldUser): string {
  const root = repoDir();
  const launcher = path.join(root, 'bin', 'agent-handoff.js');
  const probes = [path.join(root, 'dist', 'src', 'cli.js'), path.join(root, 'node_modules', 'ssh2', 'package.json'), path.join(root, 'bench', 'baseline.sh')];
  const probe = runAsSync(user, ['sh', '-c', 'for f; do test -r "$f" || exit 1; done', 'sh', ...probes]);
  if (probe.status === 0) return launcher;
  const appDir = path.join(WORLD_DIR, 'app');
  fs.rmSync(appDir, { recursive: true, force: true });
  fs.mkdirSync(appDir, { recursive: true });
  for (const part of APP_PARTS) {
    fs.mkdirSync(path.dirname(path.join(appDir, part)), { recursive: true });
    sh('cp', ['-a', path.join(root, part), path.join(appDir, part)]);
  }
  sh('chmod', ['-R', 'a+rX', appDir]);
  return path.join(appDir, 'bin', 'agent-handoff.js');
}

/**
 * The folder holding what the world users run from the checkout (APP_PARTS: package.json, bin,
 * dist, node_modules, bench/baseline.sh): the checkout, or its copy when the checkout is private.
 */
export function appRoot(world: World): string {
  return path.dirname(path.dirname(world.app));
}

function authorize(user: WorldUser, keys: WorldUser[]): void {
  const text = keys.map((k) => fs.readFileSync(`${k.key}.pub`, 'utf8').trim()).join('\n') + '\n';
  writeOwned(user, path.join(user.home, '.ssh', 'authorized_keys'), text, 0o600);
}

function makeOrigin(dir: string, laptop: WorldUser): string {
  const origin = path.join(dir, 'origin', 'hark.git');
  if (fs.existsSync(origin)) return origin;
  fs.mkdirSync(path.dirname(origin), { recursive: true });
  const seed = fs.mkdtempSync(path.join(dir, 'seed-'));
  const git = (args: string[], cwd = seed) =>
    sh('git', ['-c', 'user.name=World', '-c', 'user.email=world@example.invalid', '-c', 'init.defaultBranch=main', ...args], { cwd });
  git(['init', '-q']);
  fs.writeFileSync(path.join(seed, 'README.md'), 'hello\n');
  fs.mkdirSync(path.join(seed, 'src'));
  fs.writeFileSync(path.join(seed, 'src', 'app.ts'), 'export const answer = 42;\n');
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'initial commit']);
  git(['clone', '-q', '--bare', seed, origin], dir);
  fs.rmSync(seed, { recursive: true, force: true });
  // Owned by the laptop user, world-readable: both machines clone and fetch from it.
  sh('chown', ['-R', `${laptop.uid}:${laptop.gid}`, path.dirname(origin)]);
  sh('chmod', ['-R', 'a+rX', path.dirname(origin)]);
  return origin;
}

function cloneFor(user: WorldUser, origin: string, rel: string): string {
  const dest = path.join(user.home, rel);
  // The origin belongs to another user; git refuses such repositories unless told they are safe.
  mustAs(user, ['git', 'config', '--global', '--replace-all', 'safe.directory', origin]);
  mustAs(user, ['git', 'config', '--global', 'user.name', user.name]);
  mustAs(user, ['git', 'config', '--global', 'user.email', `${user.name}@ah-world.invalid`]);
  mustAs(user, ['git', 'config', '--global', 'init.defaultBranch', 'main']);
  if (!fs.existsSync(path.join(dest, '.git'))) {
    mustAs(user, ['mkdir', '-p', path.dirname(dest)]);
    mustAs(user, ['git', 'clone', '-q', origin, dest]);
  }
  return dest;
}

/** The world's ssh config: the fragments tests add (see sshConfigFragment) first, then the machines. */
function sshConfigText(aliases: { name: string; user: string; port: number; host: string }[]): string {
  return [`Include ${SSH_FRAGMENTS}/*\n`, ...aliases.map((a) => `Host ${a.name}\n  HostName ${a.host}\n  Port ${a.port}\n  User ${a.user}\n`)].join('\n');
}

/** Folder of ssh config fragments, relative to ~/.ssh (Include'd at the top of the world's config). */
const SSH_FRAGMENTS = 'config.d';

/**
 * Add `Host` blocks to `user`'s ssh config as the fragment ~/.ssh/config.d/<name>, put in place
 * with a rename; returns its removal. Test files run side by side and each adds its own: the
 * main config is never rewritten, so no reader sees it half-written and no fragment is lost.
 */
export function sshConfigFragment(user: WorldUser, name: string, text: string): () => void {
  const dir = path.join(user.home, '.ssh', SSH_FRAGMENTS);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chownSync(dir, user.uid, user.gid);
  const file = path.join(dir, name);
  const tmp = path.join(user.home, '.ssh', `.${name}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.chownSync(tmp, user.uid, user.gid);
  fs.renameSync(tmp, file);
  return () => fs.rmSync(file, { force: true });
}

/**
 * An ssh alias `name` in laptop's config for the world's sshd reached at `port` (through a proxy
 * in front of it), as `user`, its host key under HostKeyAlias in a known_hosts file of its own;
 * `options` are more config lines. Returns its removal.
 */
export function laptopAlias(world: World, name: string, port: number, opts: { user?: string; options?: string[] } = {}): () => void {
  const laptop = world.users.laptop!;
  const kh = path.join(laptop.home, '.ssh', `known_hosts_${name}`);
  const hostKey = world.sshd.hostKeyLine.split(' ').slice(1).join(' ');
  fs.writeFileSync(kh, `${name} ${hostKey}\n`, { mode: 0o644 });
  fs.chownSync(kh, laptop.uid, laptop.gid);
  const lines = [`Host ${name}`, '  HostName 127.0.0.1', `  Port ${port}`, `  User ${opts.user ?? 'vega'}`, `  HostKeyAlias ${name}`, `  UserKnownHostsFile ${kh}`, ...(opts.options ?? []).map((o) => `  ${o}`), ''];
  const removeFragment = sshConfigFragment(laptop, name, lines.join('\n'));
  return () => {
    removeFragment();
    fs.rmSync(kh, { force: true });
  };
}

/** herdr (real or simulated) and the fake agents into the world's bin folder. */
async function installExecutables(world: World): Promise<void> {
  const herdr = path.join(world.binDir, 'herdr');
  if (world.herdrKind === 'real') {
    fs.writeFileSync(herdr, herdrGate(installRealHerdr(world), path.join(world.libDir, 'herdr', 'fault-gate.js')), { mode: 0o755 });
  } else {
    const herdrCli = path.join(world.libDir, 'herdr', 'cli.js');
    const launcher = `#!/usr/bin/env node\n// herdr simulator (agent-handoff test world)\nimport(${JSON.stringify(herdrCli)}).then(async (m) => { process.exitCode = await m.main(process.argv.slice(2)); });\n`;
    fs.writeFileSync(herdr, launcher, { mode: 0o755 });
  }
  const agentsInstall = path.join(world.libDir, 'agents', 'install.js');
  if (fs.existsSync(agentsInstall)) {
    const mod = (await import(agentsInstall)) as { writeAgentBins?: (binDir: string, libDir: string) => void };
    mod.writeAgentBins?.(world.binDir, world.libDir);
  }
  sh('chmod', ['-R', 'a+rX', world.binDir]);
}

/** A copy of the real binary every world user can run (the checkout may sit in a private folder). */
function installRealHerdr(world: World): string {
  const source = realHerdrSource();
  if (!fs.existsSync(source)) throw new Error(`real herdr 0.8.2 not found at ${source}: the world runs it (keep the shared folder beside the checkout), or set AH_WORLD_HERDR=simulator`);
  const dest = path.join(world.dir, 'herdr-0.8.2', 'herdr');
  const have = fs.statSync(dest, { throwIfNoEntry: false });
  if (!have || have.size !== fs.statSync(source).size) {
    fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o755 });
    fs.copyFileSync(source, `${dest}.tmp`);
    fs.chmodSync(`${dest}.tmp`, 0o755);
    fs.renameSync(`${dest}.tmp`, dest);
  }
  return dest;
}

/**
 * The world's `herdr`: the real binary, except that while a test has put faults in the user's
 * herdr config folder (herdr-sim-faults.json) a gate runs first and fails the matching call.
 */
function herdrGate(real: string, gate: string): string {
  return [
    '#!/bin/sh',
    '# herdr of the agent-handoff test world: the real herdr 0.8.2, behind a fault gate for tests',
    `faults="\${XDG_CONFIG_HOME:-$HOME/.config}/herdr/herdr-sim-faults.json"`,
    `if [ -s "$faults" ]; then node ${JSON.stringify(gate)} "$@" || exit 1; fi`,
    `exec ${JSON.stringify(real)} "$@"`,
    '',
  ].join('\n');
}

function herdrSocket(user: WorldUser): string {
  return path.join(user.home, '.config', 'herdr', 'herdr.sock');
}

async function startHerdrServer(world: World, user: WorldUser): Promise<number | undefined> {
  const bin = path.join(world.binDir, 'herdr');
  if (!fs.existsSync(bin)) return undefined;
  const old = world.herdrServers[user.name];
  if (alive(old)) return old;
  mustAs(user, ['mkdir', '-p', path.dirname(herdrSocket(user))]);
  return spawnHerdrServer(world, user, {}, path.join(world.dir, `herdr-server-${user.name}.log`));
}

/**
 * A herdr server of its own for `user` in the named session `session` (HERDR_SESSION): a test
 * that must see only its own agents (`send --all`) runs them there. Returns its stop.
 */
export async function startSessionHerdr(world: World, user: WorldUser, session: string, extraEnv: Record<string, string> = {}): Promise<() => void> {
  const env = { HERDR_SESSION: session };
  // Its panes inherit the server's environment: `extraEnv` reaches every program run there.
  const pid = await spawnHerdrServer(world, user, { ...extraEnv, ...env }, path.join(world.dir, `herdr-server-${user.name}-${session}.log`));
  return () => {
    runAsSync(user, [path.join(world.binDir, 'herdr'), 'server', 'stop'], { env });
    if (alive(pid)) process.kill(pid, 'SIGTERM');
  };
}

async function spawnHerdrServer(world: World, user: WorldUser, extraEnv: Record<string, string>, logFile: string): Promise<number> {
  const bin = path.join(world.binDir, 'herdr');
  const out = fs.openSync(logFile, 'a');
  fs.chownSync(logFile, user.uid, user.gid);
  const child = spawn(bin, ['server'], {
    uid: user.uid,
    gid: user.gid,
    cwd: user.home,
    // Real herdr draws its panes for a terminal of this kind.
    env: userEnv(user, { ...world.fastEnv, HERDR_BIN_PATH: bin, TERM: 'xterm-256color', ...extraEnv }),
    detached: true,
    stdio: ['ignore', out, out],
  });
  child.unref();
  fs.closeSync(out);
  const pid = child.pid;
  if (!pid) throw new Error(`herdr server of ${user.name} did not start`);
  await waitFor(() => {
    const r = runAsSync(user, [bin, 'status', 'server', '--json'], { env: extraEnv });
    return (r.status === 0 && r.stdout.includes('"running":true')) || !alive(pid);
  }, 15_000, `herdr server of ${user.name}`);
  if (!alive(pid)) throw new Error(`herdr server of ${user.name} exited; see ${logFile}`);
  return pid;
}

export function loadWorld(): World | null {
  try {
    return JSON.parse(fs.readFileSync(WORLD_FILE, 'utf8')) as World;
  } catch {
    return null;
  }
}

function saveWorld(world: World): void {
  fs.writeFileSync(WORLD_FILE, JSON.stringify(world, null, 2) + '\n');
  fs.chmodSync(WORLD_FILE, 0o644);
}

/** True when the world is fully up (sshd and every herdr server alive). */
export function worldIsUp(world: World | null = loadWorld()): boolean {
  if (!world || !alive(world.sshd.pid) || world.herdrKind !== wantedHerdrKind()) return false;
  return MACHINE_USERS.every((u) => alive(world.herdrServers[u]));
}

/**
 * Set the world up, or bring a half-up world back; idempotent. Returns its description.
 * A lock file keeps two processes (test workers) from setting it up at once.
 */
export async function setupWorld(): Promise<World> {
  if (process.getuid?.() !== 0) throw new Error('the two-machine test world needs root (useradd, sshd)');
  fs.mkdirSync(WORLD_DIR, { recursive: true, mode: 0o755 });
  return withLock(path.join(WORLD_DIR, '.setup.lock'), async () => {
    const existing = loadWorld();
    const fingerprint = libFingerprint();
    if (existing && worldIsUp(existing) && existing.libFingerprint === fingerprint) return existing;
    // World code changed since it was installed: servers must run the new code.
    if (existing && (existing.libFingerprint !== fingerprint || existing.herdrKind !== wantedHerdrKind())) await stopHerdrServers(existing);
    const users: Record<string, WorldUser> = {};
    for (const name of MACHINE_USERS) users[name] = ensureUser(name, '/bin/bash');
    for (const [name, shell] of Object.entries(SHELL_USERS)) users[name] = ensureUser(name, shell);
    const laptop = users.laptop!;
    const vega = users.vega!;
    authorize(vega, [laptop, vega]);
    authorize(laptop, [vega, laptop]);
    for (const name of Object.keys(SHELL_USERS)) authorize(users[name]!, [laptop]);

    const world: World = {
      dir: WORLD_DIR,
      binDir: path.join(WORLD_DIR, 'bin'),
      libDir: path.join(WORLD_DIR, 'lib'),
      sshd: existing?.sshd ?? { host: '127.0.0.1', port: 0, pid: 0, hostKeyLine: '', log: '', config: '' },
      users,
      origin: '',
      repos: { laptop: '', vega: '' },
      herdrServers: existing?.herdrServers ?? {},
      herdrKind: wantedHerdrKind(),
      app: '',
      fastEnv: FAST_ENV,
      libFingerprint: fingerprint,
    };
    installLib(world);
    await installExecutables(world);
    if (!alive(world.sshd.pid)) {
      world.sshd = await startSshd(path.join(WORLD_DIR, 'sshd'), { users: Object.keys(users) });
    }
    const knownHosts = world.sshd.hostKeyLine + '\n';
    for (const u of Object.values(users)) writeOwned(u, u.knownHosts, knownHosts, 0o644);
    const aliases = [
      { name: 'vega', user: 'vega', host: world.sshd.host, port: world.sshd.port },
      { name: 'laptop', user: 'laptop', host: world.sshd.host, port: world.sshd.port },
    ];
    writeOwned(laptop, path.join(laptop.home, '.ssh', 'config'), sshConfigText(aliases), 0o600);
    writeOwned(vega, path.join(vega.home, '.ssh', 'config'), sshConfigText(aliases), 0o600);

    for (const name of MACHINE_USERS) dropOldSimulatorCodexHook(users[name]!);
    world.origin = makeOrigin(WORLD_DIR, laptop);
    world.repos = { laptop: cloneFor(laptop, world.origin, 'src/hark'), vega: cloneFor(vega, world.origin, 'code/hark') };
    world.app = installApp(laptop);
    for (const name of MACHINE_USERS) {
      const pid = await startHerdrServer(world, users[name]!);
      if (pid) world.herdrServers[name] = pid;
    }
    saveWorld(world);
    return world;
  });
}

/**
 * Earlier simulators wrote herdr's codex hook as the bare script path; real herdr keeps such an
 * entry beside its own (`bash '<script>' session`), and codex would then list two hooks that run
 * herdr's script. The homes outlive the world, so the old entry goes when the world comes up.
 */
function dropOldSimulatorCodexHook(user: WorldUser): void {
  const file = path.join(user.home, '.codex', 'hooks.json');
  const script = path.join(user.home, '.codex', 'herdr-agent-state.sh');
  let parsed: { hooks?: { SessionStart?: { hooks?: { command?: unknown }[] }[] } };
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof parsed;
  } catch {
    return;
  }
  const start = parsed.hooks?.SessionStart;
  if (!Array.isArray(start)) return;
  const kept = start.filter((g) => !(Array.isArray(g.hooks) && g.hooks.length === 1 && g.hooks[0]?.command === script));
  if (kept.length === start.length) return;
  parsed.hooks!.SessionStart = kept;
  writeOwned(user, file, JSON.stringify(parsed, null, 2), 0o644);
}

async function withLock<T>(lockFile: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
      break;
    } catch {
      const holder = Number(fs.readFileSync(lockFile, 'utf8') || 0);
      if (!alive(holder)) {
        fs.rmSync(lockFile, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error('timed out waiting for another process to set the world up');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lockFile, { force: true });
  }
}

/** Pids of every process running as `uid` (from /proc), so they can be ended by id. */
export function pidsOfUser(uid: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = fs.readFileSync(`/proc/${entry}/status`, 'utf8');
      const m = /^Uid:\s+(\d+)/m.exec(status);
      if (m && Number(m[1]) === uid) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

function stopPid(pid: number | undefined, signal: NodeJS.Signals = 'SIGTERM'): void {
  if (!alive(pid)) return;
  try {
    process.kill(pid!, signal);
  } catch {
    // gone
  }
}

async function stopHerdrServers(world: World): Promise<void> {
  for (const [name, pid] of Object.entries(world.herdrServers)) {
    const user = world.users[name];
    if (user && alive(pid)) runAsSync(user, [path.join(world.binDir, 'herdr'), 'server', 'stop']);
    await waitFor(() => !alive(pid), 5_000, `herdr server ${name} to stop`).catch(() => stopPid(pid, 'SIGKILL'));
  }
  world.herdrServers = {};
}

/** Stop every process the world started (by pid) and remove its users and files. */
export async function teardownWorld(opts: { keepUsers?: boolean } = {}): Promise<void> {
  const world = loadWorld();
  if (world) {
    await stopHerdrServers(world);
    stopPid(world.sshd.pid);
    await waitFor(() => !alive(world.sshd.pid), 5_000, 'sshd to stop').catch(() => {
      if (alive(world.sshd.pid)) process.kill(world.sshd.pid, 'SIGKILL');
    });
    if (!opts.keepUsers) {
      for (const user of Object.values(world.users)) {
        // Processes a test left behind as this user (agents in panes) would block userdel.
        for (const pid of pidsOfUser(user.uid)) stopPid(pid, 'SIGKILL');
        trySh('userdel', ['-r', '-f', user.name]);
      }
    }
  }
  fs.rmSync(WORLD_DIR, { recursive: true, force: true });
}
