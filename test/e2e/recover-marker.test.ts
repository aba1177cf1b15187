// Recovery seen from the other end: a laptop → vega handoff dies (SIGKILL, the lid closes) after it
// changed vega, and the person is now on vega, whose `agent-handoff` has no journal of it — only
// the incoming marker the handoff left there. `recover` on vega must find the unfinished handoff
// through that marker, say where and how to finish it, and change nothing (the agent must not end
// up running twice, no file may be lost); `recover` on the laptop then finishes it or rolls it
// back, and leaves both machines clean. Two cases side by side: killed before the agent was
// started on vega (it runs nowhere), and killed before the source stash (it already runs on vega).
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { installIntegration, waitFor } from '../helpers/e2e.js';
import type { World, WorldUser } from '../world/machines.js';
import {
  agents,
  clearVega,
  closeWorkspace,
  endState,
  ensureAgentAtSource,
  freshWork,
  journalEvents,
  lastJson,
  makeLane,
  markers,
  runHandoff,
  takeBefore,
  targetLeftovers,
  under,
  workspaces,
  killedSend,
  type Lane,
} from './crash-helpers.js';

let world: World;
let laptop: WorldUser;
let vega: WorldUser;
const lanes: Lane[] = [];
/** What `recover <id>` on vega printed, per case. */
const byIdAnswers: { point: string; id: string; text: string }[] = [];

beforeAll(async () => {
  world = await useWorld();
  laptop = world.users.laptop!;
  vega = world.users.vega!;
  await installIntegration(world, laptop, 'pi');
  for (const tag of ['a', 'b']) lanes.push(await makeLane(world, 'marker', tag));
});

afterAll(async () => {
  if (!world) return;
  for (const lane of lanes) await closeWorkspace(world, laptop, lane.workspace);
  for (const w of await workspaces(world, vega)) if (w.label?.startsWith('feat-marker-')) await closeWorkspace(world, vega, w.workspace_id);
});

interface Incoming {
  id: string | null;
  journal_here: boolean;
  marker: { id: string; controller: string; from: string; to: string; agent: string; worktree: string; branch: string } | null;
  fix: string | null;
}

/** What vega holds of one lane's handoff: its checkout's refs/worktrees/branches, marker, agents there. */
async function vegaState(lane: Lane, id: string): Promise<string> {
  const onVega = (await agents(world, vega)).filter((a) => under(a.foreground_cwd ?? a.cwd, lane.p.vega)).map((a) => a.pane_id);
  const marker = markers(vega).filter((m) => m.startsWith(id));
  return JSON.stringify({ repo: targetLeftovers(vega, lane.p.vega, ['main']), marker, onVega });
}

async function markerCase(lane: Lane, point: string, expected: { agentOnVega: boolean; action: string }): Promise<string> {
  await ensureAgentAtSource(world, lane);
  freshWork(world, lane);
  const before = takeBefore(world, lane);
  const { sent, journal, id, header } = await killedSend(world, lane, point);
  expect(sent.code, `${point}: ${sent.stdout}${sent.stderr}`).toBe(-1);
  const journalBefore = fs.readFileSync(journal, 'utf8');
  const vegaBefore = await vegaState(lane, id);
  // The agent quit before the kill; herdr drops it from its list on its next detection tick.
  const atSourceBefore = !(await waitFor(`herdr to see ${lane.name} gone from the laptop`, async () => !(await agents(world, laptop)).some((a) => a.pane_id === lane.pane), 5_000).catch(() => false));
  // The handoff changed vega: its worktree is placed and the marker says whose it is.
  expect(vegaBefore, point).toContain('worktrees:');
  expect(markers(vega), point).toContain(`${id}.json`);
  expect(JSON.parse(vegaBefore).onVega.length, point).toBe(expected.agentOnVega ? 1 : 0);
  expect(atSourceBefore, point).toBe(false);

  // On vega, as vega: the unfinished handoff is found and reported with the next step.
  const onVega = await runHandoff(world, vega, ['recover', '--quiet']);
  const out = lastJson(onVega) as { ok: boolean; recovered: { id: string }[]; incoming: Incoming[] } | null;
  expect(out, `recover on vega printed no JSON: ${onVega.stdout}\n${onVega.stderr}`).toBeTruthy();
  expect(onVega.code, JSON.stringify(out)).toBe(0);
  expect(out!.recovered.some((r) => r.id === id)).toBe(false);
  const mine = out!.incoming.find((i) => i.id === id);
  expect(mine, `recover on vega did not report ${id}: ${JSON.stringify(out)}`).toBeTruthy();
  expect(mine!.journal_here).toBe(false);
  expect(mine!.marker).toMatchObject({ id, agent: lane.name, branch: lane.branch, worktree: header.plan.will_create.worktree });
  // It names the account that started it (on vega, "local" or a bare host name would not).
  expect(mine!.marker).toMatchObject({ controller: `laptop@${os.hostname()}`, from: `laptop@${os.hostname()}` });
  expect(mine!.fix).toContain(`agent-handoff recover ${id}`);
  expect(mine!.fix).toContain(`laptop@${os.hostname()}`);
  // Asked by the id the marker gave, vega should say the same (checked at the end, see below).
  const byId = await runHandoff(world, vega, ['recover', id, '--quiet']);
  const byIdText = JSON.stringify(lastJson(byId));
  byIdAnswers.push({ point, id, text: byIdText });
  expect(byId.code, `recover ${id} on vega: ${byIdText}`).toBe(0);
  // A unique prefix of the id finds the same marker.
  const byPrefix = lastJson(await runHandoff(world, vega, ['recover', id.slice(0, -4), '--quiet'])) as { incoming?: Incoming[] } | null;
  expect(byPrefix?.incoming?.map((i) => i.id), `recover ${id.slice(0, -4)} on vega`).toEqual([id]);

  // Nothing moved: vega as it was, the laptop's journal untouched, the agent not started twice.
  expect(await vegaState(lane, id), point).toBe(vegaBefore);
  expect(fs.readFileSync(journal, 'utf8'), point).toBe(journalBefore);
  expect((await agents(world, laptop)).some((a) => a.pane_id === lane.pane), point).toBe(false);

  // On the laptop: recover finishes or rolls back, and both machines end clean.
  const rec = await runHandoff(world, laptop, ['recover', id, '--quiet']);
  const recOut = lastJson(rec) as { recovered: { id: string; action: string }[] } | null;
  expect(rec.code, `${point}: ${rec.stdout}${rec.stderr}`).toBe(0);
  const action = recOut!.recovered.find((r) => r.id === id)?.action;
  expect(action, point).toBe(expected.action);
  const end = await endState(world, lane, before, id, header);
  expect(end, point).toEqual({ agentAt: expected.agentOnVega ? 'target' : 'source', filesKept: true, leftovers: [] });
  expect(journalEvents(journal).some((e) => e.type === 'outcome'), point).toBe(true);
  // And vega no longer reports it.
  const after = lastJson(await runHandoff(world, vega, ['recover', '--quiet'])) as { incoming: Incoming[] } | null;
  expect(after!.incoming.some((i) => i.id === id), point).toBe(false);
  await clearVega(world, lane, header);
  return `| ${point} | ${expected.agentOnVega ? 'vega' : 'nowhere'} | reported, fix: ${mine!.fix} | \`recover ${id.slice(0, 8)}…\` on vega: exit ${byId.code}, ${byIdText.slice(0, 160)} | ${action} → agent at ${end.agentAt} |`;
}

describe('recover on the target of a handoff whose controller died', () => {
  it('finds it through the marker, says how to finish it, changes nothing; recover on the laptop then ends it cleanly', async () => {
    const rows = await Promise.all([
      markerCase(lanes[0]!, 'before:start', { agentOnVega: false, action: 'rolled_back' }),
      markerCase(lanes[1]!, 'before:stash', { agentOnVega: true, action: 'completed' }),
    ]);
    console.log(['| killed at | agent then | `recover` on vega | `recover <id>` on vega | `recover <id>` on laptop |', '|---|---|---|---|---|', ...rows].join('\n'));
    // `recover <id>` with the id from the marker must not answer "no such handoff, see history"
    // (vega's history is empty): it should point at the controller as plain `recover` does.
    for (const a of byIdAnswers) expect(a.text, `recover ${a.id} on vega (${a.point})`).toContain(`agent-handoff recover ${a.id}\` on laptop@${os.hostname()}`);
  }, 300_000);
});
