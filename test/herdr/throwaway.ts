// A throwaway herdr server for a test file: the real herdr 0.8.2 binary or our simulator, each in
// a temp folder of its own (HOME, HERDR_SOCKET_PATH), run as `herdr server </dev/null >log 2>&1 &`
// with TERM=xterm-256color, stopped with `herdr server stop` and then by its pid, the folder removed.
import { execFile, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeLauncher } from '../world/herdr/testing.js';
import { alive } from '../world/machines.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The real herdr: CI keeps /work/shared beside the checkout as `../shared`. */
export const REAL_HERDR = path.resolve(ROOT, '..', 'shared', 'herdr', '0.8.2', 'herdr');
export const SIM_CLI = path.join(ROOT, 'dist', 'test', 'world', 'herdr', 'cli.js');

export type Kind = 'simulator' | 'real';

export interface Run {
  stdout: string;
  stderr: string;
  exit: number;
}

export interface Throwaway {
  kind: Kind;
  /** The temp folder (removed by stop). */
  dir: string;
  home: string;
  socket: string;
  /** The `herdr` the tests run: the real binary, or a launcher of the simulator's CLI. */
  bin: string;
  /** Put on PATH ahead of the rest: fake agents go here. */
  binDir: string;
  env: Record<string, string>;
  herdr(args: readonly string[], extra?: Record<string, string>): Promise<Run>;
  stop(): Promise<void>;
}

/** The real binary, or an error that says where it was looked for (never a silent skip). */
export function requireRealHerdr(): string {
  if (!fs.existsSync(REAL_HERDR)) {
    throw new Error(`real herdr 0.8.2 not found at ${REAL_HERDR}: these tests run it beside the simulator (CI keeps /work/shared beside the checkout as ../shared)`);
  }
  return REAL_HERDR;
}

/** Make the simulator's dist current (a bare `vitest run` after editing the simulator). */
export function buildSimulatorIfStale(): void {
  const src = path.join(ROOT, 'test', 'world', 'herdr');
  const stale = fs
    .readdirSync(src)
    .filter((f) => f.endsWith('.ts'))
    .some((f) => (fs.statSync(path.join(path.dirname(SIM_CLI), f.replace(/\.ts$/, '.js')), { throwIfNoEntry: false })?.mtimeMs ?? 0) < fs.statSync(path.join(src, f)).mtimeMs);
  if (stale) spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'ignore' });
}

export async function startThrowaway(kind: Kind, opts: { extraEnv?: Record<string, string> } = {}): Promise<Throwaway> {
  const bin0 = kind === 'real' ? requireRealHerdr() : SIM_CLI;
  if (kind === 'simulator') buildSimulatorIfStale();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `herdr-${kind}-`));
  const home = path.join(dir, 'home');
  const binDir = path.join(dir, 'bin');
  fs.mkdirSync(home);
  fs.mkdirSync(binDir);
  const bin = kind === 'real' ? bin0 : path.join(binDir, 'herdr');
  if (kind === 'simulator') writeLauncher(bin, SIM_CLI);
  // Real herdr's pane shell is an interactive non-login bash (~/.bashrc); the simulator's a login
  // one (~/.profile, whose /etc/profile resets PATH). Both get the fake agents' folder and a prompt.
  const rc = `export PATH=${binDir}:$PATH\nPS1='$ '\n`;
  fs.writeFileSync(path.join(home, '.bashrc'), rc);
  fs.writeFileSync(path.join(home, '.profile'), rc);
  const socket = path.join(dir, 'herdr.sock');
  const env: Record<string, string> = {
    PATH: `${binDir}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    HERDR_SOCKET_PATH: socket,
    TERM: 'xterm-256color',
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    ...(kind === 'simulator' ? { HERDR_SIM_READY_MS: '300', HERDR_SIM_POLL_MS: '150' } : {}),
    ...opts.extraEnv,
  };
  const herdr = (args: readonly string[], extra: Record<string, string> = {}): Promise<Run> =>
    new Promise((resolve) => {
      execFile(bin, [...args], { env: { ...env, ...extra }, cwd: dir, timeout: 60_000 }, (err, stdout, stderr) => {
        const code = err ? ((err as { code?: unknown }).code ?? 1) : 0;
        resolve({ stdout: String(stdout), stderr: String(stderr), exit: typeof code === 'number' ? code : 1 });
      });
    });
  const log = fs.openSync(path.join(dir, 'server.log'), 'a');
  const child = spawn(bin, ['server'], { env, cwd: dir, detached: true, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  child.unref();
  const pid = child.pid ?? 0;
  const stop = async (): Promise<void> => {
    if (alive(pid)) await herdr(['server', 'stop']);
    const end = Date.now() + 5000;
    while (alive(pid) && child.exitCode === null && child.signalCode === null && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    if (child.exitCode === null && child.signalCode === null && alive(pid)) {
      process.kill(pid, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      if (child.exitCode === null && child.signalCode === null && alive(pid)) process.kill(pid, 'SIGKILL');
    }
    // A pane's process may still be writing into the home a moment after the server is gone.
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  };
  const end = Date.now() + 15_000;
  for (;;) {
    const r = await herdr(['status', 'server', '--json']);
    if (r.stdout.includes('"running":true')) break;
    if (Date.now() > end || child.exitCode !== null) {
      const text = fs.readFileSync(path.join(dir, 'server.log'), 'utf8');
      await stop();
      throw new Error(`${kind} herdr server did not come up: ${text.slice(0, 500)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { kind, dir, home, socket, bin, binDir, env, herdr, stop };
}
