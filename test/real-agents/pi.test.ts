// The real pi CLI (the pinned devDependency in node_modules) against a loopback mock model: a genuine session made as
// the laptop user is moved to the vega user with the product's own session code (pi adapter →
// placement and unit, rewrite plan, copyUnit from a LocalHost to an SshHost), and the real pi
// resumes it there: it shows the old history, works in the vega checkout and appends to the
// moved file. Recipe and traps: /work/shared/real-agents.md (§3, §4.3, addendum).
//
// Network: pi runs with PI_OFFLINE=1 (no tool downloads, version check or telemetry), its only
// provider is the mock on 127.0.0.1, and its environment is the clean one of the world user.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sideCtx, type SideCtx } from '../../adapters/adapter.js';
import { adapterFor } from '../../adapters/index.js';
import { connectHost } from '../../src/host/connect.js';
import type { Host } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { copyUnit } from '../../src/transcript/copy.js';
import { buildRewritePlan } from '../../src/transcript/rewrite-plan.js';
import { makeProject, waitFor, writeAs, type Project } from '../helpers/e2e.js';
import { useWorld } from '../helpers/world.js';
import { makeSshFixture } from '../host/ssh-fixtures.js';
import { appRoot, type World, type WorldUser } from '../world/machines.js';
import { startMockModel, type MockModel } from './mock-model.js';
import { UserTmux } from './tmux.js';

const PI_VERSION = '0.73.1';

const SessionHeader = z.object({ type: z.literal('session'), id: z.string(), cwd: z.string() }).loose();
const SessionLine = z.object({ type: z.string() }).loose();

let world: World;
/** pi's entry point, in the node_modules the world users can read (the checkout's, or the world's copy of it). */
let piCli: string;
let laptop: WorldUser;
let vega: WorldUser;
let project: Project;
let mock: MockModel;
let vegaHost: Host | undefined;
const tag = randomBytes(4).toString('hex');
const scratch: Record<string, string> = {};
const tmuxes: UserTmux[] = [];

/** A throwaway pi config root under the user's home: the mock as the only provider, pinned as default. */
function agentDir(user: WorldUser): string {
  const base = path.join(user.home, `.ah-real-pi-${tag}`);
  scratch[user.name] = base;
  const dir = path.join(base, 'agent');
  const models = { providers: { mock: { baseUrl: mock.baseUrl, api: 'openai-completions', apiKey: 'mock-not-a-key', compat: { supportsDeveloperRole: false, supportsReasoningEffort: false }, models: [{ id: 'mock-model' }] } } };
  writeAs(user, path.join(dir, 'models.json'), JSON.stringify(models, null, 2) + '\n');
  writeAs(user, path.join(dir, 'settings.json'), JSON.stringify({ defaultProvider: 'mock', defaultModel: 'mock-model', lastChangelogVersion: PI_VERSION }, null, 2) + '\n');
  return dir;
}

function tmuxFor(user: WorldUser): UserTmux {
  const t = new UserTmux(user, path.join(scratch[user.name]!, 'tmux.sock'));
  tmuxes.push(t);
  t.start();
  return t;
}

function piEnv(dir: string): Record<string, string> {
  return { PI_CODING_AGENT_DIR: dir, PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1' };
}

/** Poll a pane until `want` shows (the screen is attached to the failure for diagnosis). */
async function screenShows(t: UserTmux, win: string, want: string[], timeoutMs = 60_000): Promise<string> {
  let last = '';
  try {
    return await waitFor(
      `${want.join(' + ')} on ${t.user.name}'s pi screen`,
      async () => {
        last = t.capture(win);
        return want.every((w) => last.includes(w)) ? last : undefined;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- screen ---\n${last}`, { cause: err });
  }
}

/** Where the pane's wrapper writes pi's exit status (see UserTmux.run). */
function exitStatusFile(user: WorldUser, win: string): string {
  return path.join(scratch[user.name]!, `${win}.exit-status`);
}

function readStatus(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined; // not written yet
  }
}

async function quitPi(t: UserTmux, win: string): Promise<number> {
  await t.type(win, '/quit');
  const text = await waitFor(`pi on ${t.user.name} to exit`, async () => readStatus(exitStatusFile(t.user, win)), 30_000).catch((err: unknown) => {
    throw new Error(`pi did not exit after /quit; screen:\n${t.capture(win)}`, { cause: err });
  });
  return Number(text);
}

function sessionLines(file: string): { type: string }[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => SessionLine.parse(JSON.parse(l)));
}

beforeAll(async () => {
  world = await useWorld();
  piCli = path.join(appRoot(world), 'node_modules', '@mariozechner', 'pi-coding-agent', 'dist', 'cli.js');
  laptop = world.users.laptop!;
  vega = world.users.vega!;
  project = makeProject(world, 'real-pi-product');
  // The vega checkout differs from laptop's, so a reply quoting README.md tells which one pi read.
  writeAs(vega, path.join(project.vega, 'README.md'), 'hello from the vega checkout\n');
  mock = await startMockModel();
});

afterAll(async () => {
  for (const t of tmuxes) t.stop();
  await mock?.close();
  await vegaHost?.close();
  for (const dir of Object.values(scratch)) fs.rmSync(dir, { recursive: true, force: true });
  if (project) for (const dir of [project.laptop, project.vega]) fs.rmSync(dir, { recursive: true, force: true });
});

describe('real pi: session made on laptop, moved with the product code, resumed on vega', () => {
  it('resumes with the history, in the vega checkout, appending to the moved file', async () => {
    const pi = adapterFor('pi');

    // 1. A genuine session on laptop.
    const laptopDir = agentDir(laptop);
    const lt = tmuxFor(laptop);
    const startedAtMs = Date.now();
    lt.run('pi', project.laptop, piEnv(laptopDir), [process.execPath, piCli, 'alpha: what does README.md say?'], exitStatusFile(laptop, 'pi'));
    await screenShows(lt, 'pi', ['alpha: what does README.md say?', 'Mock reply to alpha: hello']);
    expect(await quitPi(lt, 'pi')).toBe(0);

    const folder = path.join(laptopDir, 'sessions', `--${project.laptop.slice(1).replace(/\//g, '-')}--`);
    const made = fs.readdirSync(folder).filter((n) => n.endsWith('.jsonl'));
    expect(made).toHaveLength(1);
    const sourceFile = path.join(folder, made[0]!);
    expect(SessionHeader.parse(JSON.parse(fs.readFileSync(sourceFile, 'utf8').split('\n')[0]!)).cwd).toBe(project.laptop);

    // 2. The product's session step: find it, place it on vega, copy it through the rewriter.
    const local = new LocalHost();
    const laptopCtx: SideCtx = { home: laptop.home, homeReal: laptop.home, env: { PI_CODING_AGENT_DIR: laptopDir }, tmpdir: '/tmp' };
    const ref = await pi.locate(local, { kind: 'path', value: sourceFile }, laptopCtx);
    const guessed = await pi.guess(local, { cwd: project.laptop, startedAtMs, ctx: laptopCtx });
    expect(guessed.file).toBe(sourceFile);
    expect(ref.configRoot).toBe(laptopDir);

    const fx = makeSshFixture(world);
    try {
      vegaHost = await connectHost('w-vega', fx.opts);
    } finally {
      fs.rmSync(fx.dir, { recursive: true, force: true });
    }
    const vegaDir = agentDir(vega);
    const vegaInfo = await sideCtx(vegaHost);
    expect(vegaInfo.home).toBe(vega.home);
    // As if vega's login environment named its pi config root.
    const target = { ...vegaInfo, env: { ...vegaInfo.env, PI_CODING_AGENT_DIR: vegaDir }, cwd: project.vega };
    const placement = pi.placement(ref, target);
    expect(placement.file).toBe(path.join(vegaDir, 'sessions', `--${project.vega.slice(1).replace(/\//g, '-')}--`, made[0]!));
    const unit = await pi.unit(local, ref, placement);
    const plan = buildRewritePlan({
      renames: placement.renames,
      repo: { source: [project.laptop, fs.realpathSync(project.laptop)], target: project.vega },
      configRoot: { source: [ref.configRoot], target: placement.configRoot },
      home: { source: [laptop.home], target: vegaInfo.home },
    });
    const record = await copyUnit({ source: local, target: vegaHost, entries: unit, targetRoot: placement.configRoot, plan });
    expect(record.files.map((f) => [f.path, f.action])).toEqual([[placement.file, 'created']]);

    const moved = fs.readFileSync(placement.file, 'utf8');
    expect(SessionHeader.parse(JSON.parse(moved.split('\n')[0]!)).cwd).toBe(project.vega);
    expect(moved).not.toContain(laptop.home);
    expect(fs.statSync(placement.file).uid).toBe(vega.uid);
    const linesBefore = sessionLines(placement.file).length;

    // 3. The real pi resumes it as vega, launched from vega's home (pi takes the header's cwd).
    const vt = tmuxFor(vega);
    vt.run('pi', vega.home, piEnv(vegaDir), [process.execPath, piCli, '--session', placement.file], exitStatusFile(vega, 'pi'));
    // The footer's branch comes a moment after the history on a busy machine: it is waited for too.
    const resumed = await screenShows(vt, 'pi', ['alpha: what does README.md say?', 'Mock reply to alpha: hello', `pi v${PI_VERSION}`, ' (main)']);
    // The footer shows the working directory and its branch (pi abbreviates HOME to ~).
    const footerCwd = resumed.split('\n').find((l) => /^\S+ \(main\)\s*$/.test(l))?.replace(/ \(main\)\s*$/, '');
    expect(footerCwd === project.vega || footerCwd === `~${project.vega.slice(vega.home.length)}`, `footer cwd ${footerCwd}`).toBe(true);

    await vt.type('pi', 'bravo: and now?');
    // The relative README.md resolves in the vega checkout: the reply quotes vega's copy.
    await screenShows(vt, 'pi', ['Mock reply to bravo: hello from the vega checkout']);
    expect(await quitPi(vt, 'pi')).toBe(0);

    const after = fs.readFileSync(placement.file, 'utf8');
    expect(after.startsWith(moved)).toBe(true);
    expect(sessionLines(placement.file).length).toBeGreaterThan(linesBefore);
    expect(SessionHeader.parse(JSON.parse(after.split('\n')[0]!)).cwd).toBe(project.vega);
    expect(after).toContain('bravo: and now?');
    expect(after).toContain('Mock reply to bravo: hello from the vega checkout');
    // pi made no second session file on vega: it continued the moved one.
    expect(fs.readdirSync(path.dirname(placement.file)).filter((n) => n.endsWith('.jsonl'))).toEqual([made[0]]);

    // Every model call went to the mock: two per prompt (tool call, then the text reply).
    expect(mock.requests.map((r) => `${r.method} ${r.url} ${r.model} ${r.stream} ${r.answer}`)).toEqual([
      'POST /v1/chat/completions mock-model true tool:read',
      'POST /v1/chat/completions mock-model true text:Mock reply to alpha: hello',
      'POST /v1/chat/completions mock-model true tool:read',
      'POST /v1/chat/completions mock-model true text:Mock reply to bravo: hello from the vega checkout',
    ]);
  }, 180_000);
});
