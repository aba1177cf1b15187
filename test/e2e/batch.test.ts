// e2e: several agents in one handoff — names, a workspace, --all, --all --from — on a desk of
// their own: herdr servers in a named session on both machines (HERDR_SESSION; vega's through an
// sshd that sets it in the login environment), so `--all` sees only this file's agents while the
// other files' agents run beside them. Checked on the JSON and on both machines' real state.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { gitAs, handoff, herdr, herdrOk, installIntegration, makeProject, startFakeAgent, waitFor, withAgentControl, writeAs, type Project } from '../helpers/e2e.js';
import { laptopAlias, type World, type WorldUser } from '../world/machines.js';
import { openDesk, type Desk } from '../helpers/desk.js';

let world: World;
let laptop: WorldUser;
let vega: WorldUser;
let desk: Desk;
/** This file's herdr on either machine (see openDesk). */
let env: Record<string, string> = {};
/** vega as this file reaches it: its login environment names the desk's session. */
const VEGA = 'desk-vega';
let removeAlias: () => void = () => undefined;

beforeAll(async () => {
  world = await useWorld();
  laptop = world.users.laptop!;
  vega = world.users.vega!;
  desk = await openDesk(world, 'ahbatch');
  env = desk.env;
  removeAlias = laptopAlias(world, VEGA, desk.sshd.port, { user: 'vega' });
}, 120_000);

afterEach(async () => {
  // Each test starts with an empty desk, whatever the last one left.
  await clearVega();
  await clearLaptop();
});

afterAll(() => {
  removeAlias();
  desk?.close();
});

interface Agent {
  name?: string | null;
  agent?: string | null;
  agent_status: string;
  agent_session?: unknown;
  pane_id: string;
  workspace_id: string;
}

interface SendResult {
  target_worktree?: string;
  target_agent?: { name: string; pane: string; workspace: string };
  source_stash?: { stashed: boolean };
  plan?: { id: string; will_create: { worktree: string } };
}

interface BatchJson {
  ok: boolean;
  code?: string;
  batch: string;
  dry_run: boolean;
  summary: { chosen: number; moved: number; planned: number; failed: number; refused: number };
  checkouts: { repo: string; agents: string[]; target_worktree: string | null; stashed: boolean | null }[];
  agents: { agent: string; outcome: string; handoff: string | null; result: SendResult | null; error: { code: string; error: string; fix?: string } | null }[];
}

const suffix = () => Math.random().toString(36).slice(2, 6);

async function agentsOn(user: WorldUser): Promise<Agent[]> {
  const r = await herdrOk(world, user, ['agent', 'list'], env);
  return ((r.result as { agents: Agent[] }).agents ?? []).filter((a) => !!a.agent);
}

async function named(user: WorldUser, name: string): Promise<Agent | undefined> {
  return (await agentsOn(user)).find((a) => a.name === name);
}

/** A fake agent in this file's herdr on laptop that answered a prompt and is idle with its session. */
async function startIdle(kind: string, cwd: string, name: string, beside?: string): Promise<{ pane: string; workspace: string }> {
  let where: { pane: string; workspace: string };
  if (beside) {
    // In the workspace of the pane `beside`: a pane split off it (herdr's integration for the
    // kind first, as startFakeAgent does: it is what tells herdr the session).
    await installIntegration(world, laptop, kind);
    const split = (await herdrOk(world, laptop, ['pane', 'split', beside, '--direction', 'right', '--cwd', cwd, '--no-focus'], env)) as { result: { pane: { pane_id: string; workspace_id: string } } };
    where = { pane: split.result.pane.pane_id, workspace: split.result.pane.workspace_id };
    await waitFor(`${name} to start`, async () => {
      const r = await herdr(world, laptop, ['agent', 'start', name, '--kind', kind, '--pane', where.pane, '--', 'first prompt'], env);
      if (r.code === 0 || /"agent_not_ready"/.test(r.stderr)) return true;
      if (/not an available shell/.test(r.stderr)) return false;
      throw new Error(`agent start failed: ${r.stderr}`);
    });
  } else {
    where = await startFakeAgent(world, laptop, kind, cwd, { name, args: ['first prompt'], waitSession: false, env });
  }
  await waitFor(`${name}'s first reply`, async () => {
    const text = (await herdr(world, laptop, ['pane', 'read', where.pane, '--source', 'visible'], env)).stdout;
    if (/Trust this folder|Quick safety check|Do you trust/.test(text)) await herdrOk(world, laptop, ['pane', 'send-keys', where.pane, 'enter'], env);
    return /Fake reply: first prompt/.test(text);
  }, 40_000);
  await waitFor(`${name} idle with its session`, async () => {
    const a = await named(laptop, name);
    return a?.agent_session && (a.agent_status === 'idle' || a.agent_status === 'done') ? a : undefined;
  }, 40_000);
  return where;
}

async function send(args: string[], extra: Record<string, string> = {}): Promise<{ code: number; json: BatchJson; stderr: string }> {
  const r = await handoff(world, laptop, ['send', ...args], { env: { ...env, ...extra }, timeoutMs: 240_000 });
  return { code: r.code, json: r.json as unknown as BatchJson, stderr: r.stderr };
}

function entry(json: BatchJson, name: string): BatchJson['agents'][number] {
  const e = json.agents.find((a) => a.agent === name);
  if (!e) throw new Error(`${name} not in ${JSON.stringify(json.agents.map((a) => a.agent))}`);
  return e;
}

function stashCount(repo: string): number {
  return gitAs(laptop, repo, ['stash', 'list']).split('\n').filter(Boolean).length;
}

function status(user: WorldUser, repo: string): string {
  return gitAs(user, repo, ['status', '--porcelain']).trim();
}

function edit(p: Project, text: string): void {
  writeAs(laptop, path.join(p.laptop, 'README.md'), `hello\n${text}\n`);
}

/** Every agent on this desk's vega herdr closed (their workspaces), so the next test starts clean there. */
async function clearVega(): Promise<void> {
  const r = await herdrOk(world, vega, ['workspace', 'list'], env);
  for (const w of (r.result as { workspaces: { workspace_id: string }[] }).workspaces) await herdr(world, vega, ['workspace', 'close', w.workspace_id], env);
}

async function clearLaptop(): Promise<void> {
  const r = await herdrOk(world, laptop, ['workspace', 'list'], env);
  for (const w of (r.result as { workspaces: { workspace_id: string }[] }).workspaces) await herdr(world, laptop, ['workspace', 'close', w.workspace_id], env);
}

describe('send several agents at once', () => {
  it('moves named agents of two checkouts (two sharing one: one snapshot, placement and stash), and `--all --from` brings them all back', async () => {
    const s = suffix();
    const pA = makeProject(world, `batch-a-${s}`);
    const pB = makeProject(world, `batch-b-${s}`);
    const [a1, a2, b1] = [`a1-${s}`, `a2-${s}`, `b1-${s}`];
    await Promise.all([startIdle('pi', pA.laptop, a1), startIdle('omp', pA.laptop, a2), startIdle('claude', pB.laptop, b1)]);
    edit(pA, 'work of a1 and a2');
    writeAs(laptop, path.join(pB.laptop, 'src', 'app.ts'), 'export const answer = 43;\n');

    const out = await send([a1, a2, b1, VEGA, '--no-focus']);
    expect(out.json, `${JSON.stringify(out.json)}\n${out.stderr}`).toMatchObject({ ok: true, dry_run: false, summary: { chosen: 3, moved: 3, failed: 0, refused: 0 } });
    expect(out.code).toBe(0);
    const ea1 = entry(out.json, a1);
    const ea2 = entry(out.json, a2);
    // One checkout, one placement: both resume in the same worktree on vega, which holds the work.
    expect(ea1.result?.target_worktree).toBe(pA.vega);
    expect(ea2.result?.target_worktree).toBe(pA.vega);
    expect(fs.readFileSync(path.join(pA.vega, 'README.md'), 'utf8')).toBe('hello\nwork of a1 and a2\n');
    expect(fs.readFileSync(path.join(pB.vega, 'src', 'app.ts'), 'utf8')).toBe('export const answer = 43;\n');
    const shared = out.json.checkouts.find((c) => c.agents.length === 2)!;
    expect(shared.agents.sort()).toEqual([a1, a2].sort());
    expect(shared.stashed).toBe(true);
    // One stash per checkout at the source; both checkouts clean there now.
    expect(stashCount(pA.laptop)).toBe(1);
    expect(stashCount(pB.laptop)).toBe(1);
    expect(status(laptop, pA.laptop)).toBe('');
    // The agents run on vega (this file's herdr there), none at the source.
    const onVega = await agentsOn(vega);
    for (const n of [a1, a2, b1]) expect(onVega.some((a) => a.name === n), n).toBe(true);
    expect((await agentsOn(laptop)).filter((a) => [a1, a2, b1].includes(a.name ?? ''))).toEqual([]);
    // One id for the batch, an entry per agent: history lists them, show takes the batch id.
    const history = (await handoff(world, laptop, ['history'], { env })).json as { handoffs: { id: string; batch: string | null; outcome: string }[] };
    const mine = history.handoffs.filter((h) => h.batch === out.json.batch);
    expect(mine.map((h) => h.outcome)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const shown = (await handoff(world, laptop, ['show', out.json.batch], { env })).json as { batch: string; handoffs: { handoff: { id: string } }[] };
    expect(shown.batch).toBe(out.json.batch);
    expect(shown.handoffs).toHaveLength(3);

    // The morning command: everything on vega comes back here.
    const back = await send(['--all', '--from', VEGA, '--no-focus']);
    expect(back.json, `${JSON.stringify(back.json)}\n${back.stderr}`).toMatchObject({ ok: true, summary: { moved: 3 } });
    const here = await agentsOn(laptop);
    for (const n of [a1, a2, b1]) expect(here.some((a) => a.name === n), n).toBe(true);
    expect(await agentsOn(vega)).toEqual([]);
    expect(fs.readFileSync(path.join(pA.laptop, 'README.md'), 'utf8')).toBe('hello\nwork of a1 and a2\n');
    expect(entry(back.json, a1).result?.target_worktree).toBe(entry(back.json, a2).result?.target_worktree);
  });

  it('--workspace moves the agents of one herdr workspace, and they share one workspace on the target', async () => {
    const s = suffix();
    const p = makeProject(world, `batch-w-${s}`);
    const [w1, w2] = [`w1-${s}`, `w2-${s}`];
    const first = await startIdle('pi', p.laptop, w1);
    await startIdle('grok', p.laptop, w2, first.pane);
    edit(p, 'desk work');
    const label = w1; // startFakeAgent labels the workspace with the agent's name

    const out = await send(['--workspace', label, VEGA, '--no-focus']);
    expect(out.json, `${JSON.stringify(out.json)}\n${out.stderr}`).toMatchObject({ ok: true, summary: { moved: 2 } });
    const [r1, r2] = [entry(out.json, w1).result!, entry(out.json, w2).result!];
    expect(r1.target_agent!.workspace).toBe(r2.target_agent!.workspace);
    expect(r1.target_agent!.pane).not.toBe(r2.target_agent!.pane);
    const onVega = await agentsOn(vega);
    expect(onVega.filter((a) => a.name === w1 || a.name === w2).map((a) => a.workspace_id)).toEqual([r1.target_agent!.workspace, r1.target_agent!.workspace]);
    expect(stashCount(p.laptop)).toBe(1);
  });

  it('--all: one agent failing at its start goes back to the source; the others stay moved', async () => {
    const s = suffix();
    const pD = makeProject(world, `batch-d-${s}`);
    const pE = makeProject(world, `batch-e-${s}`);
    const [d1, e1] = [`d1-${s}`, `e1-${s}`];
    const [, eAt] = await Promise.all([startIdle('pi', pD.laptop, d1), startIdle('pi', pE.laptop, e1)]);
    edit(pD, 'd work');
    edit(pE, 'e work');

    // pi crashes as it starts in e1's checkout on vega only. `--all`: the desk's laptop holds these two.
    const out = await withAgentControl(vega, path.join(vega.home, '.pi', 'agent', 'fake-agent.json'), { crashOnStart: true, onlyIn: [pE.vega] }, () => send(['--all', VEGA, '--no-focus']));
    expect(out.json, `${JSON.stringify(out.json)}\n${out.stderr}`).toMatchObject({ ok: false, code: 'batch_incomplete', summary: { moved: 1, failed: 1 } });
    expect(out.code).toBe(1);
    expect(entry(out.json, d1).outcome).toBe('moved');
    expect(entry(out.json, e1)).toMatchObject({ outcome: 'failed', error: { code: 'start_failed' } });
    // e1 runs at the source again, in its pane, with its work untouched and nothing stashed.
    await waitFor('e1 back at the source', async () => (await named(laptop, e1))?.pane_id === eAt.pane);
    expect(fs.readFileSync(path.join(pE.laptop, 'README.md'), 'utf8')).toBe('hello\ne work\n');
    expect(stashCount(pE.laptop)).toBe(0);
    // d1 stays moved.
    expect((await named(vega, d1))?.agent).toBe('pi');
    expect(stashCount(pD.laptop)).toBe(1);
    expect(await named(vega, e1)).toBeUndefined();
  });

  it('a batch killed in the middle is put right by `recover BATCH`: every agent in exactly one place, no work lost', async () => {
    const s = suffix();
    const pF = makeProject(world, `batch-f-${s}`);
    const pG = makeProject(world, `batch-g-${s}`);
    const [f1, f2, g1] = [`f1-${s}`, `f2-${s}`, `g1-${s}`];
    await Promise.all([startIdle('pi', pF.laptop, f1), startIdle('omp', pF.laptop, f2), startIdle('pi', pG.laptop, g1)]);
    edit(pF, 'f work');
    edit(pG, 'g work');

    // Killed once the first session copy is done: the agents have quit, the work is on vega.
    const killed = await handoff(world, laptop, ['send', f1, f2, g1, VEGA, '--no-focus'], { env: { ...env, AGENT_HANDOFF_TEST_KILL_AT: 'after:session' } }).catch((err: unknown) => err);
    expect(killed).toBeInstanceOf(Error); // no JSON: the process died
    const history = (await handoff(world, laptop, ['history'], { env })).json as { handoffs: { id: string; agent: string | null; batch: string | null; outcome: string }[] };
    const batch = history.handoffs.find((h) => h.agent === f1 && h.batch)?.batch;
    expect(batch).toBeTruthy();
    expect(history.handoffs.filter((h) => h.batch === batch).map((h) => h.outcome)).toEqual(['unfinished', 'unfinished', 'unfinished']);

    const rec = (await handoff(world, laptop, ['recover', batch!], { env })).json as { ok: boolean; recovered: { id: string; action: string }[] };
    expect(rec.ok, JSON.stringify(rec)).toBe(true);
    expect(rec.recovered).toHaveLength(3);
    for (const r of rec.recovered) expect(['completed', 'rolled_back']).toContain(r.action);
    // Each agent in exactly one place.
    const here = await agentsOn(laptop);
    const there = await agentsOn(vega);
    for (const n of [f1, f2, g1]) expect(Number(here.some((a) => a.name === n)) + Number(there.some((a) => a.name === n)), n).toBe(1);
    // No work lost: at the source, or stashed there and on vega.
    for (const [p, text] of [[pF, 'f work'], [pG, 'g work']] as const) {
      const atSource = fs.readFileSync(path.join(p.laptop, 'README.md'), 'utf8').includes(text);
      const onVega = fs.existsSync(path.join(p.vega, 'README.md')) && fs.readFileSync(path.join(p.vega, 'README.md'), 'utf8').includes(text);
      expect(atSource || (onVega && stashCount(p.laptop) === 1), p.name).toBe(true);
    }
    // Nothing of the batch left on vega: no refs/handoff/*, no marker; a checkout whose agents all
    // went back has no trace of the work there.
    for (const [p, names] of [[pF, [f1, f2]], [pG, [g1]]] as const) {
      expect(gitAs(vega, p.vega, ['for-each-ref', 'refs/handoff']).trim(), p.name).toBe('');
      if (names.every((n) => here.some((a) => a.name === n))) expect(status(vega, p.vega), p.name).toBe('');
    }
    const incoming = path.join(desk.state.vega, 'agent-handoff', 'incoming');
    expect(fs.existsSync(incoming) ? fs.readdirSync(incoming).filter((f) => f.includes(batch!)) : []).toEqual([]);
    // Settled: nothing left to recover.
    const after = (await handoff(world, laptop, ['history'], { env })).json as { handoffs: { batch: string | null; outcome: string }[] };
    expect(after.handoffs.filter((h) => h.batch === batch).every((h) => h.outcome !== 'unfinished')).toBe(true);
  });

  it('--self in a batch: the agent asking moves with the others, once its turn ends', async () => {
    const s = suffix();
    const p = makeProject(world, `batch-s-${s}`);
    const [me, other] = [`me-${s}`, `other-${s}`];
    const [mine] = await Promise.all([startIdle('pi', p.laptop, me), startIdle('omp', p.laptop, other)]);
    edit(p, 'self work');
    // The agent is mid-turn when it asks (as it would be).
    await herdrOk(world, laptop, ['pane', 'send-text', mine.pane, 'sleep 3'], env);
    await new Promise((r) => setTimeout(r, 200));
    await herdrOk(world, laptop, ['pane', 'send-keys', mine.pane, 'enter'], env);
    await waitFor('me working', async () => (await named(laptop, me))?.agent_status === 'working', 10_000);

    const out = await send([me, other, VEGA, '--self', '--no-focus'], { HERDR_PANE_ID: mine.pane });
    const json = out.json as unknown as BatchJson & { deferred: boolean; helper: { workspace: string; pane: string; job: string } };
    expect(json, `${JSON.stringify(json)}\n${out.stderr}`).toMatchObject({ ok: true, deferred: true, summary: { planned: 2 } });
    // Nothing moves while the turn runs.
    expect((await named(laptop, me))?.pane_id).toBe(mine.pane);
    for (const n of [me, other]) await waitFor(`${n} on vega`, async () => (await named(vega, n))?.agent !== undefined, 60_000);
    const helperGone = async () => !((await herdrOk(world, laptop, ['workspace', 'list'], env)).result as { workspaces: { workspace_id: string }[] }).workspaces.some((w) => w.workspace_id === json.helper.workspace);
    await waitFor('the helper workspace to close', helperGone, 20_000);
    // One checkout: one stash at the source, both in the same worktree on vega.
    expect(stashCount(p.laptop)).toBe(1);
    expect(fs.readFileSync(path.join(p.vega, 'README.md'), 'utf8')).toBe('hello\nself work\n');
  }, 150_000);

  it('a dry run shows the whole batch and lists the agents that cannot go, with their reasons', async () => {
    const s = suffix();
    const p = makeProject(world, `batch-h-${s}`);
    const [h1, h2] = [`h1-${s}`, `h2-${s}`];
    const [, busy] = await Promise.all([startIdle('pi', p.laptop, h1), startIdle('claude', p.laptop, h2)]);
    // h2 is mid-turn: a send without --wait refuses it.
    await herdrOk(world, laptop, ['pane', 'send-text', busy.pane, 'sleep 8'], env);
    await new Promise((r) => setTimeout(r, 200));
    await herdrOk(world, laptop, ['pane', 'send-keys', busy.pane, 'enter'], env);
    await waitFor('h2 working', async () => (await named(laptop, h2))?.agent_status === 'working', 10_000);

    const out = await send([h1, h2, VEGA, '--dry-run']);
    expect(out.json, `${JSON.stringify(out.json)}\n${out.stderr}`).toMatchObject({ ok: false, dry_run: true, code: 'batch_incomplete', summary: { chosen: 2, planned: 1, refused: 1 } });
    expect(out.code).toBe(1);
    expect(entry(out.json, h1)).toMatchObject({ outcome: 'planned', result: { plan: { will_create: { worktree: p.vega } } } });
    expect(entry(out.json, h2)).toMatchObject({ outcome: 'refused', error: { code: 'agent_busy' } });
    // A name that finds no agent is a typo: the whole batch stops, naming it.
    const typo = await send([h1, 'no-such-agent', VEGA, '--dry-run']);
    expect(typo.json).toMatchObject({ ok: false, code: 'agent_not_found' });
    expect(String((typo.json as unknown as { error: string }).error)).toContain('no-such-agent');
    for (const e of out.json.agents.filter((a) => a.error)) expect(e.error!.fix, e.agent).toBeTruthy();
    // Nothing changed: both still here, nothing on vega, no stash.
    expect((await named(laptop, h1))?.agent).toBe('pi');
    expect(await agentsOn(vega)).toEqual([]);
    expect(stashCount(p.laptop)).toBe(0);
  });
});
