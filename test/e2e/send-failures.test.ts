// e2e: a handoff laptop → vega that fails at each target step in turn (transfer, place, session,
// the workspace, `agent start`, an agent that dies at once). Every time the target must be as
// before (no worktree, branch, refs, session files, marker or workspace of ours), the agent must
// run again in its source pane with the uncommitted work intact, and the JSON must say what
// failed, what was undone and that the agent was restarted.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { gitAs, handoff, herdr, herdrOk, makeProject, screen, startFakeAgent, waitFor, withAgentControl, writeAs, type Project, type StartedAgent } from '../helpers/e2e.js';
import { runAsSync, type World, type WorldUser } from '../world/machines.js';

let world: World;
let laptop: WorldUser;
let vega: WorldUser;
let p: Project;
let agent: StartedAgent;
let name: string;
/** Where the pieces of this handoff would land on vega. */
let worktree: string;
let sessionFolder: string;
let baseline: { vega: TargetState; hashes: Record<string, string>; status: string; stash: string };
const workspaces: { user: WorldUser; id: string }[] = [];

interface AgentJson {
  name?: string | null;
  agent?: string | null;
  agent_status: string;
  agent_session?: { kind: string; value: string } | null;
  pane_id: string;
  cwd?: string | null;
  foreground_cwd?: string | null;
}

interface FailJson {
  ok: boolean;
  code: string;
  error: string;
  details: {
    failed_step: string;
    undone: string[];
    undo_errors: { what: string; error: string }[];
    source_restart: { restarted: boolean; name: string | null; pane: string; error: string | null } | null;
    last_output?: string;
  };
}

const CHANGED = ['README.md', 'notes/todo.txt', 'src/app.ts'];

beforeAll(async () => {
  world = await useWorld();
  laptop = world.users.laptop!;
  vega = world.users.vega!;
  p = makeProject(world, 'send-failures');
  gitAs(laptop, p.laptop, ['checkout', '-q', '-b', 'feature-f']);
  writeAs(laptop, path.join(p.laptop, 'src', 'feature.ts'), 'export const f = 1;\n');
  gitAs(laptop, p.laptop, ['add', '-A']);
  gitAs(laptop, p.laptop, ['commit', '-q', '-m', 'feature work']);
  name = `fail-${Math.random().toString(36).slice(2, 6)}`;
  agent = await startFakeAgent(world, laptop, 'omp', p.laptop, { name, args: ['first prompt'], waitSession: false });
  workspaces.push({ user: laptop, id: agent.workspace });
  await waitFor('the first reply', async () => /Fake reply: first prompt/.test(await screen(world, laptop, agent.pane)), 20_000);
  await sourceAgentIdle();
  writeAs(laptop, path.join(p.laptop, 'README.md'), 'hello\nuncommitted edit\n');
  writeAs(laptop, path.join(p.laptop, 'notes', 'todo.txt'), 'untracked work\n');
  writeAs(laptop, path.join(p.laptop, 'src', 'app.ts'), 'export const answer = 43;\n');

  const plan = await handoff(world, laptop, ['send', name, 'vega', '--dry-run']);
  expect(plan.json, JSON.stringify(plan.json)).toMatchObject({ ok: true });
  const will = (plan.json.plan as { will_create: { worktree: string; session_file: string } }).will_create;
  worktree = will.worktree;
  sessionFolder = path.dirname(will.session_file);
  expect(worktree).toBe(`${p.vega}.worktrees/feature-f`);
  // A session folder left by an earlier run of this file (the project is re-cloned, not it).
  fs.rmSync(sessionFolder, { recursive: true, force: true });
  baseline = { vega: await targetState(), ...sourceState() };
}, 120_000);

afterAll(async () => {
  if (!world) return;
  for (const w of workspaces) await herdr(world, w.user, ['workspace', 'close', w.id]).catch(() => undefined);
});

async function agentList(user: WorldUser): Promise<AgentJson[]> {
  return ((await herdrOk(world, user, ['agent', 'list'])).result as { agents: AgentJson[] }).agents;
}

async function sourceAgentIdle(): Promise<AgentJson> {
  return waitFor(`${name} idle with its session at the source`, async () => {
    const a = (await agentList(laptop)).find((x) => x.pane_id === agent.pane);
    return a?.agent === 'omp' && a.agent_session && (a.agent_status === 'idle' || a.agent_status === 'done') ? a : undefined;
  }, 20_000);
}

interface TargetState {
  refs: string;
  worktrees: string;
  stash: string;
  worktreeExists: boolean;
  sessionFolder: boolean;
  agentsHere: string[];
  workspaces: string[];
  markers: string[];
}

/** What of this handoff could be on vega. */
async function targetState(): Promise<TargetState> {
  const incoming = path.join(vega.home, '.local', 'state', 'agent-handoff', 'incoming');
  const markers = fs.existsSync(incoming)
    ? fs.readdirSync(incoming).filter((f) => {
        try {
          return (JSON.parse(fs.readFileSync(path.join(incoming, f), 'utf8')) as { agent?: string }).agent === name;
        } catch {
          return false;
        }
      })
    : [];
  const wsList = ((await herdrOk(world, vega, ['workspace', 'list'])).result as { workspaces: { label: string }[] }).workspaces;
  return {
    refs: gitAs(vega, p.vega, ['for-each-ref', '--format=%(objectname) %(refname)']),
    worktrees: gitAs(vega, p.vega, ['worktree', 'list', '--porcelain']),
    stash: gitAs(vega, p.vega, ['stash', 'list']),
    worktreeExists: fs.existsSync(worktree),
    sessionFolder: fs.existsSync(sessionFolder) && fs.statSync(sessionFolder).isDirectory(),
    agentsHere: (await agentList(vega)).filter((a) => (a.foreground_cwd ?? a.cwd ?? '').startsWith(p.vega) || a.name === name).map((a) => `${a.name} ${a.pane_id}`),
    workspaces: wsList.map((w) => w.label).filter((l) => l.startsWith('feature-f ')),
    markers,
  };
}

/** This agent's handoff journals on laptop. */
function journalFiles(): string[] {
  const dir = path.join(laptop.home, '.local', 'state', 'agent-handoff', 'handoffs');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .map((f) => path.join(dir, f))
    .filter((f) => fs.readFileSync(f, 'utf8').includes(`"agent":"${name}"`));
}

function sourceState(): { hashes: Record<string, string>; status: string; stash: string } {
  const hashes: Record<string, string> = {};
  for (const f of CHANGED) hashes[f] = createHash('sha256').update(fs.readFileSync(path.join(p.laptop, f))).digest('hex');
  return { hashes, status: gitAs(laptop, p.laptop, ['status', '--porcelain', '--untracked-files=all']), stash: gitAs(laptop, p.laptop, ['stash', 'list']) };
}

/** Run the handoff, expect it to fail at `step`, and check both machines are as before. */
async function failsAt(step: string, code: RegExp, undo: () => void | Promise<void> = () => undefined, env: Record<string, string> = {}): Promise<FailJson> {
  let r: Awaited<ReturnType<typeof handoff>>;
  const t0 = Date.now();
  try {
    // Bounded below the test's own limit: a send that hangs fails with what it printed so far.
    r = await handoff(world, laptop, ['send', name, 'vega', '--no-focus'], { env, timeoutMs: 100_000 });
    if (process.env.AH_TIMING) console.log(`send (${step}): ${Date.now() - t0} ms\n${r.stderr}`);
  } finally {
    await undo();
  }
  const out = r.json as unknown as FailJson & { target_agent?: { workspace: string } };
  if (out.target_agent) workspaces.push({ user: vega, id: out.target_agent.workspace });
  expect(out, `${JSON.stringify(out)}\n${r.stderr}`).toMatchObject({ ok: false, details: { failed_step: step } });
  expect(r.code).toBe(1);
  expect(out.code).toMatch(code);
  expect(out.details.undone.length).toBeGreaterThan(0);
  expect(out.details.undo_errors).toEqual([]);
  expect(out.details.source_restart, JSON.stringify(out.details.source_restart)).toMatchObject({ restarted: true, pane: agent.pane, name });

  // The target is as it was.
  expect(await targetState()).toEqual(baseline.vega);
  // The agent runs again in its pane, with the same kind and name, and the work is untouched.
  const back = await sourceAgentIdle();
  expect(back).toMatchObject({ name, agent: 'omp' });
  expect(sourceState()).toEqual({ hashes: baseline.hashes, status: baseline.status, stash: baseline.stash });
  return out;
}

describe('send: a failing target step is undone and the agent restarted at the source', () => {
  it('transfer: the target repository cannot store the commits', async () => {
    // vega may not write git objects: the pack with the feature commit (and the snapshot) is refused.
    const objects = path.join(p.vega, '.git', 'objects');
    const dirs = [objects, path.join(objects, 'pack')];
    for (const d of dirs) fs.chmodSync(d, 0o555);
    await failsAt('transfer', /./, () => {
      for (const d of dirs) fs.chmodSync(d, 0o755);
    });
  }, 150_000);

  it('place: the worktree folder cannot be created', async () => {
    // <repo>.worktrees exists but vega may not write in it: `git worktree add` fails.
    const home = `${p.vega}.worktrees`;
    runAsSync(vega, ['mkdir', '-p', home]);
    fs.chmodSync(home, 0o555);
    await failsAt('place', /./, () => {
      fs.chmodSync(home, 0o755);
      fs.rmSync(home, { recursive: true, force: true });
    });
  }, 150_000);

  it('session: the project folder in the target config root is a file', async () => {
    writeAs(vega, sessionFolder, 'in the way\n');
    const out = await failsAt('session', /unsafe_destination/, () => fs.rmSync(sessionFolder, { force: true }));
    expect(out.error).toContain(sessionFolder);
  }, 150_000);

  it('start: herdr gives no workspace for the agent', async () => {
    // Real herdr makes a workspace for any folder (one that is gone: in the home), and the
    // request goes on its socket: the hook fails it where herdr is asked.
    await failsAt('start', /injected_failure/, () => undefined, { AGENT_HANDOFF_TEST_FAIL_AT: 'start:workspace' });
  }, 150_000);

  it('start: herdr cannot start the agent (the pane never gets to a bare shell)', async () => {
    // vega's shell runs a program in the foreground as it starts in the new worktree (as a
    // profile that starts something might), so herdr finds no shell there to start the agent in.
    const rc = path.join(vega.home, '.bashrc');
    const before = fs.readFileSync(rc);
    fs.appendFileSync(rc, `\nif [ "$PWD" = '${worktree}' ]; then sleep 120; fi\n`);
    await failsAt('start', /agent_pane_busy/, () => fs.writeFileSync(rc, before));
  }, 150_000);

  // Steps whose real failures the world cannot provoke without disturbing other tests: the hook
  // makes the step fail as it begins, after everything before it was done on vega (for verify and
  // stash: a running agent there, a worktree, a session copy, a workspace).
  for (const step of ['integration', 'verify', 'stash']) {
    it(`${step}: an injected failure as the step begins`, async () => {
      await failsAt(step, /injected_failure/, () => undefined, { AGENT_HANDOFF_TEST_FAIL_AT: step });
    }, 150_000);
  }

  it('quit: the agent will not quit; what went to vega while it was asked is undone, and it runs on untouched', async () => {
    // Asked of this agent only (its folder), at each quit attempt: it shows why and stays.
    const since = new Set(journalFiles());
    const r = await withAgentControl(laptop, path.join(laptop.home, '.omp', 'agent', 'fake-agent.json'), { holdQuit: true, onlyIn: [p.laptop] }, () => handoff(world, laptop, ['send', name, 'vega', '--no-focus', '--timeout', '5']));
    expect(r.json, `${JSON.stringify(r.json)}\n${r.stderr}`).toMatchObject({ ok: false, code: 'quit_failed' });
    expect(r.code).toBe(1);
    expect(r.json.error as string).toContain('background task is still running');
    // The commits and the work had gone to vega while the agent was asked to quit: all undone.
    const [journal] = journalFiles().filter((f) => !since.has(f));
    const events = fs.readFileSync(journal!, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { type: string; data?: { kind?: string; undone?: string[]; errors?: unknown[] } });
    expect(events.some((e) => e.type === 'record' && e.data?.kind === 'placement')).toBe(true);
    const undone = events.find((e) => e.type === 'undone')?.data;
    expect(undone?.undone).toEqual(expect.arrayContaining([`undid the placement in ${worktree}`, expect.stringMatching(/^removed refs\/handoff\//), 'removed the handoff marker on the target']));
    expect(undone?.errors).toEqual([]);
    expect(await targetState()).toEqual(baseline.vega);
    // Never quit, so never restarted: the same agent in its pane, the work untouched.
    const still = await sourceAgentIdle();
    expect(still).toMatchObject({ name, agent: 'omp', pane_id: agent.pane });
    expect(sourceState()).toEqual({ hashes: baseline.hashes, status: baseline.status, stash: baseline.stash });
  }, 150_000);

  it('start: the agent exits on the target right after starting', async () => {
    const control = path.join(vega.home, '.omp', 'agent', 'fake-agent.json');
    writeAs(vega, control, JSON.stringify({ crashOnStart: true, onlyIn: [p.vega] }));
    const out = await failsAt('start', /start_failed/, () => fs.rmSync(control, { force: true }));
    expect(out.details.last_output).toMatch(/fatal: could not start/);
  }, 150_000);
});
