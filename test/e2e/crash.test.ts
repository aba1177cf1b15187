// Kill injection: a pi handoff laptop → vega is SIGKILLed at every step boundary in turn (the
// lid closes), then `agent-handoff recover` runs. After each: the agent runs in exactly one place
// (its source pane or vega), no uncommitted byte is lost (source files + stash against the
// hashes taken before), and nothing is left on either side — no refs/handoff/*, no orphan
// worktree or branch, no workspace, no marker, no lock. Two more rows lose the record of a step
// that died inside `place` / the session copy (their intents must be enough). One project is reused
// with a reset between cases; the table of outcomes is printed at the end.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { gitAs, herdr, herdrOk, makeProject, resetClone, screen, waitFor, writeAs, type Project } from '../helpers/e2e.js';
import type { World, WorldUser } from '../world/machines.js';
import { agents, closeWorkspace, journalEvents, journals, lastJson, locks, markers, runHandoff, stashHashes, targetLeftovers, treeHashes, under, workspaces } from './crash-helpers.js';

let world: World;
let laptop: WorldUser;
let vega: WorldUser;

/** One project, agent and source pane; two lanes run their cases side by side to halve the time. */
interface Lane {
  p: Project;
  name: string;
  branch: string;
  workspace: string;
  pane: string;
}
const lanes: Lane[] = [];

beforeAll(async () => {
  world = await useWorld();
  laptop = world.users.laptop!;
  vega = world.users.vega!;
  await herdrOk(world, laptop, ['integration', 'install', 'pi']);
  for (const tag of ['a', 'b']) {
    const p = makeProject(world, `crash-kill-${tag}`);
    const name = `crash-${tag}-${Math.random().toString(36).slice(2, 6)}`;
    const ws = (await herdrOk(world, laptop, ['workspace', 'create', '--cwd', p.laptop, '--label', name, '--no-focus'])) as { result: { workspace: { workspace_id: string }; root_pane: { pane_id: string } } };
    lanes.push({ p, name, branch: `feat-crash-${tag}`, workspace: ws.result.workspace.workspace_id, pane: ws.result.root_pane.pane_id });
  }
});

afterAll(async () => {
  if (!world) return;
  for (const lane of lanes) await closeWorkspace(world, laptop, lane.workspace);
  for (const w of await workspaces(world, vega)) if (w.label?.startsWith('feat-crash-')) await closeWorkspace(world, vega, w.workspace_id);
});

/** Start pi in the source pane (a fresh session with one exchange) unless it already runs there. */
async function ensureAgentAtSource({ name, pane: sourcePane }: Lane): Promise<void> {
  if ((await agents(world, laptop)).some((a) => a.pane_id === sourcePane)) return;
  await waitFor('pi to start in the source pane', async () => {
    const r = await herdr(world, laptop, ['agent', 'start', name, '--kind', 'pi', '--pane', sourcePane, '--', 'first prompt']);
    if (r.code === 0) return true;
    if (/not an available shell/.test(r.stderr)) return false;
    throw new Error(`agent start failed: ${r.stderr}`);
  });
  await waitFor('the first reply', async () => /Fake reply: first prompt/.test(await screen(world, laptop, sourcePane)));
  await waitFor(`${name} idle with a session`, async () => {
    const a = (await agents(world, laptop)).find((x) => x.pane_id === sourcePane) as { agent_status?: string; agent_session?: unknown } | undefined;
    return a?.agent_session && (a.agent_status === 'idle' || a.agent_status === 'done');
  });
}

/** Both checkouts back to main, the branch with one commit, and uncommitted work of every sort. */
function freshWork({ p, branch }: Lane): void {
  resetClone(world, laptop, p.laptop);
  resetClone(world, vega, p.vega);
  fs.rmSync(`${p.vega}.worktrees`, { recursive: true, force: true });
  gitAs(laptop, p.laptop, ['checkout', '-q', '-b', branch]);
  writeAs(laptop, path.join(p.laptop, 'src', 'crash.ts'), `export const at = ${Date.now()};\n`);
  gitAs(laptop, p.laptop, ['add', '-A']);
  gitAs(laptop, p.laptop, ['commit', '-q', '-m', 'crash branch work']);
  writeAs(laptop, path.join(p.laptop, 'README.md'), 'hello\nedited before the crash\n');
  writeAs(laptop, path.join(p.laptop, 'notes', 'untracked ü.txt'), `untracked ${Math.random()}\n`);
  fs.rmSync(path.join(p.laptop, 'src', 'app.ts'));
}

interface Row {
  point: string;
  sendExit: string;
  action: string;
  agentAt: 'source' | 'target' | 'nowhere' | 'both';
  filesKept: boolean;
  leftovers: string;
}
const table: Row[] = [];
const timings: string[] = [];

const STEPS = ['wait', 'quit', 'snapshot', 'transfer', 'place', 'session', 'integration', 'start', 'verify', 'stash'];
// `after:X` and `before:<next step>` are the same boundary: nothing runs between them and the
// journal holds the same events (the before-hook fires ahead of `begin`). So every boundary is
// `before:<step>`, plus `after:stash` (all done, no outcome written).
const POINTS = [...STEPS.map((s) => `before:${s}`), 'after:stash'];

/**
 * One case: fresh work, a send killed at `point` (optionally with the step's record cut from the
 * journal afterwards, as if it died inside the step), recover, then the checks.
 */
async function crashCase(lane: Lane, point: string, loseRecord?: 'placement' | 'session_copy'): Promise<Row> {
  const { p, name, pane: sourcePane, branch: BRANCH } = lane;
  const t00 = Date.now();
  await ensureAgentAtSource(lane);
  freshWork(lane);
  timings.push(`${point}: setup ${Date.now() - t00} ms`);
  const t0 = Date.now();
  const before = treeHashes(p.laptop);
  const stashBefore = gitAs(laptop, p.laptop, ['stash', 'list', '--format=%H']);
  const journalsBefore = new Set(journals(laptop));
  const sent = await runHandoff(world, laptop, ['send', name, 'vega', '--no-focus', '--wait', '--quiet'], { AGENT_HANDOFF_TEST_KILL_AT: point });
  // Other test files run handoffs as laptop too: ours is the new journal naming our agent.
  const journal = journals(laptop).find((j) => !journalsBefore.has(j) && (journalEvents(j).find((e) => e.type === 'header')?.data as { agent?: string } | undefined)?.agent === name);
  expect(journal, `no journal for ${point}: ${sent.stderr}`).toBeTruthy();
  if (loseRecord) {
    // Cut the step's record: the controller died inside the step, after all its changes.
    const lines = fs.readFileSync(journal!, 'utf8').split('\n').filter((l) => !l.includes(`"kind":"${loseRecord}"`));
    fs.writeFileSync(journal!, lines.join('\n'));
  }
  const header = journalEvents(journal!).find((e) => e.type === 'header')!.data as { session: string; plan: { will_create: { session_file: string; worktree: string } } };
  const id = path.basename(journal!, '.jsonl');

  const t1 = Date.now();
  // Only this handoff: other test files may have handoffs of their own running as laptop.
  const rec = await runHandoff(world, laptop, ['recover', id, '--quiet']);
  timings.push(`${point}: send ${t1 - t0} ms, recover ${Date.now() - t1} ms`);
  const out = lastJson(rec);
  expect(out, `recover printed no JSON: ${rec.stdout}\n${rec.stderr}`).toBeTruthy();
  expect(rec.code, `${point}: ${JSON.stringify(out)}`).toBe(0);
  const mine = (out!.recovered as { id: string; action: string; steps: { status: string }[] }[]).find((r) => r.id === id);
  expect(mine, `${point}: recover did not pick up ${id}: ${JSON.stringify(out)}`).toBeTruthy();

  // Where does the agent run?
  const atSource = (await agents(world, laptop)).some((a) => a.pane_id === sourcePane);
  const onVega = (await agents(world, vega)).filter((a) => under(a.foreground_cwd ?? a.cwd, p.vega));
  const agentAt: Row['agentAt'] = atSource && onVega.length === 0 ? 'source' : !atSource && onVega.length === 1 ? 'target' : atSource ? 'both' : 'nowhere';

  // Were the uncommitted files kept?
  let filesKept: boolean;
  const leftovers: string[] = [];
  const vegaWs = (await workspaces(world, vega)).filter((w) => w.label?.startsWith(BRANCH));
  if (agentAt === 'target') {
    const wt = header.plan.will_create.worktree;
    const newStash = gitAs(laptop, p.laptop, ['stash', 'list', '--format=%H']).trim().split('\n')[0]!;
    filesKept =
      JSON.stringify(treeHashes(wt)) === JSON.stringify(before) &&
      JSON.stringify(sorted(stashHashes(laptop, p.laptop, newStash))) === JSON.stringify(sorted(before)) &&
      gitAs(laptop, p.laptop, ['status', '--porcelain']).trim() === '';
    leftovers.push(...targetLeftovers(vega, p.vega, ['main', BRANCH]).filter((l) => !l.startsWith('worktrees:') && !l.startsWith('files in')));
    if (vegaWs.length !== 1) leftovers.push(`vega workspaces: ${vegaWs.length}`);
  } else {
    filesKept = JSON.stringify(treeHashes(p.laptop)) === JSON.stringify(before) && gitAs(laptop, p.laptop, ['stash', 'list', '--format=%H']) === stashBefore;
    leftovers.push(...targetLeftovers(vega, p.vega));
    if (vegaWs.length) leftovers.push(`vega workspaces: ${vegaWs.map((w) => w.workspace_id).join(', ')}`);
    if (fs.existsSync(header.plan.will_create.session_file)) leftovers.push(`session file ${header.plan.will_create.session_file}`);
  }
  if (gitAs(laptop, p.laptop, ['for-each-ref', 'refs/handoff']).trim()) leftovers.push('laptop refs/handoff');
  if (markers(vega).some((m) => m.startsWith(id))) leftovers.push('marker on vega');
  const myLocks = locks(laptop).filter((l) => l.includes(header.session));
  if (myLocks.length) leftovers.push(`locks: ${myLocks.join(', ')}`);

  // Reset for the next case: the target agent and its session leave vega.
  for (const w of vegaWs) await closeWorkspace(world, vega, w.workspace_id);
  fs.rmSync(path.dirname(header.plan.will_create.session_file), { recursive: true, force: true });
  return {
    point: loseRecord ? `${point}, ${loseRecord} record lost` : point,
    sendExit: sent.code === -1 ? 'killed' : `exit ${sent.code}`,
    action: mine!.action,
    agentAt,
    filesKept,
    leftovers: leftovers.join('; ') || 'none',
  };
}

function sorted(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

describe('kill injection at every step boundary', () => {
  it('recover leaves the agent in exactly one place, every file kept, nothing orphaned', async () => {
    const cases: [string, ('placement' | 'session_copy')?][] = [...POINTS.map((pt): [string] => [pt]), ['after:place', 'placement'], ['after:session', 'session_copy']];
    const only = process.env.CRASH_ONLY?.split(',');
    const todo = cases.filter(([point]) => !only || only.includes(point));
    // Each lane takes every other case; rows are put back in the order of the cases.
    const rows = await Promise.all(
      lanes.map(async (lane, l) => {
        const out: [number, Row][] = [];
        for (let i = l; i < todo.length; i += lanes.length) out.push([i, await crashCase(lane, todo[i]![0], todo[i]![1])]);
        return out;
      }),
    );
    table.push(...rows.flat().sort(([a], [b]) => a - b).map(([, r]) => r));
    const lines = ['| kill point | send | recover | agent runs at | files kept | leftovers |', '|---|---|---|---|---|---|', ...table.map((r) => `| ${r.point} | ${r.sendExit} | ${r.action} | ${r.agentAt} | ${r.filesKept ? 'yes' : 'NO'} | ${r.leftovers} |`)];
    console.log(lines.join('\n'));
    console.log(timings.join('\n'));
    fs.writeFileSync('/tmp/ah-crash-table.md', lines.join('\n') + '\n');
    for (const r of table) {
      expect(r, r.point).toMatchObject({ sendExit: 'killed', filesKept: true, leftovers: 'none' });
      expect(['source', 'target'], r.point).toContain(r.agentAt);
    }
  }, 300_000);
});
