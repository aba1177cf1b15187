// Two `send`s of one agent at once: exactly one proceeds, the other is refused with
// handoff_in_progress and changes nothing — also from a second controller that cannot see the
// first one's journal and starts after the agent was quit; a dry run meanwhile is answered. Then the stale lock a SIGKILLed controller leaves
// behind is taken over by the next send (its holder is dead). Then the network: a target that
// never answers is bounded by --timeout; a connection cut during the transfer or the session copy
// ends in a rollback that says what it could not undo, and `recover` finishes it later.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { gitAs, makeProject, resetClone, startFakeAgent, waitFor, writeAs, type Project } from '../helpers/e2e.js';
import type { World, WorldUser } from '../world/machines.js';
import { agents, closeWorkspace, paneLockOf, cuttableProxy, journalEvents, journals, lastJson, locks, markers, runHandoff, silentListener, sshAlias, targetLeftovers, treeHashes } from './crash-helpers.js';

let world: World;
let laptop: WorldUser;
let vega: WorldUser;
let p: Project;
const opened: { user: WorldUser; id: string }[] = [];

beforeAll(async () => {
  world = await useWorld();
  laptop = world.users.laptop!;
  vega = world.users.vega!;
  p = makeProject(world, 'concurrent-send');
});

afterAll(async () => {
  if (!world) return;
  for (const w of opened) await closeWorkspace(world, w.user, w.id);
});

async function agentWithWork(name: string): Promise<{ pane: string }> {
  resetClone(world, laptop, p.laptop);
  resetClone(world, vega, p.vega);
  // A branch of its own: the work lands in a new worktree on vega, never in vega's main checkout.
  gitAs(laptop, p.laptop, ['checkout', '-q', '-b', name]);
  writeAs(laptop, path.join(p.laptop, 'README.md'), `hello\n${name}\n`);
  const a = await startFakeAgent(world, laptop, 'pi', p.laptop, { name, args: ['first prompt'] });
  opened.push({ user: laptop, id: a.workspace });
  await waitFor(`${name} idle`, async () => {
    const row = (await agents(world, laptop)).find((x) => x.pane_id === a.pane);
    return row && (row.agent_status === 'idle' || row.agent_status === 'done');
  });
  return { pane: a.pane };
}

function journalsOf(name: string, since: Set<string>): string[] {
  return journals(laptop).filter((j) => !since.has(j) && (journalEvents(j).find((e) => e.type === 'header')?.data as { agent?: string } | undefined)?.agent === name);
}
const journalOf = (name: string, since: Set<string>) => journalsOf(name, since)[0];

/** Wait until the journal of the send of `name` shows `step` begun or done. */
function journalReaches(what: string, name: string, since: Set<string>, type: 'begin' | 'done', step: string): Promise<unknown> {
  return waitFor(what, async () => {
    const j = journalOf(name, since);
    return j && journalEvents(j).some((e) => e.type === type && e.step === step);
  }, 60_000);
}

/** The pane lock folder of an agent's pane, as the source keeps it. */
const paneLock = (pane: string) => paneLockOf(world.users.laptop!, pane);

function targetWorkspaceOf(json: Record<string, unknown> | null): string | null {
  return (json?.target_agent as { workspace?: string } | undefined)?.workspace ?? null;
}

describe('the source changes while the agent quits', () => {
  it('a branch switched meanwhile: the work lands on a new handoff branch, and the session copy begun for the planned worktree is made again for that one', async () => {
    const name = `conc-s-${Math.random().toString(36).slice(2, 6)}`;
    await agentWithWork(name);
    const since = new Set(journals(laptop));
    const sending = runHandoff(world, laptop, ['send', name, 'vega', '--no-focus', '--quiet'], { AGENT_HANDOFF_TEST_PAUSE_AT: 'quit', AGENT_HANDOFF_TEST_PAUSE_MS: '4000' });
    await journalReaches('the quit to begin', name, since, 'begin', 'quit');
    gitAs(laptop, p.laptop, ['checkout', '-q', '-b', `${name}-moved`]);
    const r = await sending;
    const json = lastJson(r) as { ok: boolean; branch: string; target_worktree: string; plan: { will_create: { branch: string; worktree: string; session_file: string } } } | null;
    const ws = targetWorkspaceOf(json as Record<string, unknown> | null);
    if (ws) opened.push({ user: vega, id: ws });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const planned = json!.plan.will_create;
    expect(planned.branch).toBe(name);
    // The branch it planned with is gone at the source: a new branch, in a worktree of its own.
    expect(json!.branch).toMatch(/^handoff\//);
    expect(json!.target_worktree).not.toBe(planned.worktree);
    // The session went where the agent now runs; nothing is left where it was first copied.
    expect(fs.existsSync(planned.session_file)).toBe(false);
    expect(fs.existsSync(path.dirname(planned.session_file))).toBe(false);
    const sessions = path.dirname(path.dirname(planned.session_file));
    const copies = fs.readdirSync(sessions).filter((d) => fs.existsSync(path.join(sessions, d, path.basename(planned.session_file))));
    expect(copies).toEqual([`--${json!.target_worktree.slice(1).replace(/\//g, '-')}--`]);
    const events = journalEvents(journalOf(name, since)!);
    expect(events.filter((e) => e.type === 'begin' && e.step === 'session')).toHaveLength(2);
  }, 120_000);
});

describe('two sends of one agent', () => {
  it('the second, started while the first holds the lock, gets handoff_in_progress and changes nothing', async () => {
    const name = `conc-a-${Math.random().toString(36).slice(2, 6)}`;
    const { pane } = await agentWithWork(name);
    const since = new Set(journals(laptop));
    // The first holds its lock and pauses at the quit, so the second plans against a live agent.
    const first = runHandoff(world, laptop, ['send', name, 'vega', '--no-focus', '--quiet'], { AGENT_HANDOFF_TEST_PAUSE_AT: 'quit', AGENT_HANDOFF_TEST_PAUSE_MS: '15000' });
    await journalReaches('the first send to begin its quit', name, since, 'begin', 'quit');
    const [second, dry] = await Promise.all([
      runHandoff(world, laptop, ['send', name, 'vega', '--no-focus', '--quiet']),
      // A dry run changes nothing: it is answered, and says a handoff of the agent is running.
      runHandoff(world, laptop, ['send', name, 'vega', '--dry-run', '--quiet']),
    ]);
    const secondJson = lastJson(second);
    expect(second.code, second.stderr).not.toBe(0);
    expect(secondJson).toMatchObject({ ok: false, code: 'handoff_in_progress' });
    const firstId = path.basename(journalOf(name, since)!, '.jsonl');
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    expect(lastJson(dry)).toMatchObject({ ok: true, dry_run: true, running_handoff: { id: firstId } });
    const one = await first;
    const oneJson = lastJson(one);
    const ws = targetWorkspaceOf(oneJson);
    if (ws) opened.push({ user: vega, id: ws });
    expect(one.code, `${one.stdout}\n${one.stderr}`).toBe(0);
    // Only the first made a journal; the agent runs on vega once.
    expect(journalsOf(name, since)).toHaveLength(1);
    // history and show: id, time, agent, kind, from → to, outcome, step reached.
    const id = path.basename(journalsOf(name, since)[0]!, '.jsonl');
    const hist = lastJson(await runHandoff(world, laptop, ['history', '--quiet'])) as { handoffs: Record<string, unknown>[] };
    expect(hist.handoffs.find((h) => h.id === id)).toMatchObject({ id, agent: name, kind: 'pi', from: expect.any(String), to: expect.stringContaining('vega'), outcome: 'succeeded', step: 'stash', failed_step: null });
    expect(Date.parse(String(hist.handoffs.find((h) => h.id === id)!.time))).toBeGreaterThan(Date.now() - 600_000);
    const shown = lastJson(await runHandoff(world, laptop, ['show', id.slice(0, 24), '--quiet'])) as { handoff: Record<string, unknown>; events: { type: string }[] };
    expect(shown.handoff).toMatchObject({ id, outcome: 'succeeded' });
    expect(shown.events.filter((e) => e.type === 'done').length).toBeGreaterThanOrEqual(8);
    const onVega = (await agents(world, vega)).filter((a) => (a.foreground_cwd ?? a.cwd ?? '') === `${p.vega}.worktrees/${name}`);
    expect(onVega).toHaveLength(1);
    const session = (oneJson?.plan as { session: { id: string } }).session.id;
    expect(locks(laptop).filter((l) => l.includes(session) || l.startsWith(paneLock(pane)))).toEqual([]);
  }, 120_000);

  it('a second controller that starts after the first quit the agent gets handoff_in_progress, not agent_not_found', async () => {
    const name = `conc-q-${Math.random().toString(36).slice(2, 6)}`;
    const { pane } = await agentWithWork(name);
    const since = new Set(journals(laptop));
    // The first pauses right after its quit: the agent is gone from laptop's herdr.
    const first = runHandoff(world, laptop, ['send', name, 'vega', '--no-focus', '--quiet'], { AGENT_HANDOFF_TEST_PAUSE_AT: 'snapshot', AGENT_HANDOFF_TEST_PAUSE_MS: '8000' });
    await journalReaches('the first send to quit the agent', name, since, 'done', 'quit');
    // herdr drops the quit agent from its list within a detection tick of the quit.
    await waitFor(`${name} gone from laptop's herdr`, async () => !(await agents(world, laptop)).some((a) => a.pane_id === pane), 5_000);
    // --from laptop: laptop reached over ssh, as another controller would; the first one's journal
    // is not for this source, so only the lock on laptop can tell what happened.
    const second = await runHandoff(world, laptop, ['send', name, 'vega', '--from', 'laptop', '--no-focus', '--quiet']);
    expect(second.code, second.stderr).not.toBe(0);
    expect(lastJson(second), second.stdout).toMatchObject({ ok: false, code: 'handoff_in_progress', fix: expect.any(String) });
    const one = await first;
    const ws = targetWorkspaceOf(lastJson(one));
    if (ws) opened.push({ user: vega, id: ws });
    expect(one.code, `${one.stdout}\n${one.stderr}`).toBe(0);
    expect(journalsOf(name, since)).toHaveLength(1);
    expect(locks(laptop).filter((l) => l.startsWith(paneLock(pane)))).toEqual([]);
  }, 120_000);

  it('started at the same moment: exactly one proceeds, the other is refused', async () => {
    const name = `conc-b-${Math.random().toString(36).slice(2, 6)}`;
    await agentWithWork(name);
    const [a, b] = await Promise.all([
      runHandoff(world, laptop, ['send', name, 'vega', '--no-focus', '--quiet']),
      runHandoff(world, laptop, ['send', name, 'vega', '--no-focus', '--quiet']),
    ]);
    const results = [a, b].map((r) => ({ code: r.code, json: lastJson(r) }));
    for (const r of results) {
      const ws = targetWorkspaceOf(r.json);
      if (ws) opened.push({ user: vega, id: ws });
    }
    const ok = results.filter((r) => r.code === 0);
    const refused = results.filter((r) => r.code !== 0);
    expect(ok, JSON.stringify(results)).toHaveLength(1);
    expect(refused[0]?.json, JSON.stringify(results)).toMatchObject({ ok: false, code: 'handoff_in_progress' });
    const targetPane = (ok[0]!.json?.target_agent as { pane: string }).pane;
    expect((await agents(world, vega)).filter((x) => x.pane_id === targetPane)).toHaveLength(1);
  }, 120_000);

  it('a stale lock left by a killed controller is taken over by the next send', async () => {
    const name = `conc-c-${Math.random().toString(36).slice(2, 6)}`;
    const { pane } = await agentWithWork(name);
    const since = new Set(journals(laptop));
    const killed = await runHandoff(world, laptop, ['send', name, 'vega', '--no-focus', '--quiet'], { AGENT_HANDOFF_TEST_KILL_AT: 'before:quit' });
    expect(killed.code).toBe(-1);
    const header = journalEvents(journalOf(name, since)!).find((e) => e.type === 'header')!.data as { session: string };
    expect(locks(laptop).some((l) => l.includes(header.session))).toBe(true);
    expect(locks(laptop).some((l) => l === paneLock(pane))).toBe(true);
    // The agent never left its pane (killed before the quit): a new send takes the stale lock over.
    expect((await agents(world, laptop)).some((a) => a.pane_id === pane)).toBe(true);
    const again = await runHandoff(world, laptop, ['send', name, 'vega', '--no-focus', '--quiet']);
    const json = lastJson(again);
    const ws = targetWorkspaceOf(json);
    if (ws) opened.push({ user: vega, id: ws });
    expect(again.code, `${again.stdout}\n${again.stderr}`).toBe(0);
    expect(locks(laptop).some((l) => l.includes(header.session) || l.startsWith(paneLock(pane)))).toBe(false);
    expect(targetLeftovers(vega, p.vega, ['main']).filter((l) => l.startsWith('refs'))).toEqual([]);
    expect(fs.existsSync(path.join(p.laptop, 'README.md'))).toBe(true);
    expect(gitAs(laptop, p.laptop, ['stash', 'list'])).toMatch(/agent-handoff/);
  }, 120_000);
});

describe('bounded by --timeout, and network loss mid-handoff', () => {
  it('a target that accepts and never answers ends in a clear error within --timeout, nothing changed', async () => {
    const name = `hung-${Math.random().toString(36).slice(2, 6)}`;
    const { pane } = await agentWithWork(name);
    const hung = await silentListener();
    const alias = `vega-hung-${name.slice(-4)}`;
    const restore = sshAlias(world, alias, hung.port);
    const since = new Set(journals(laptop));
    const started = Date.now();
    const r = await runHandoff(world, laptop, ['send', name, alias, '--no-focus', '--quiet', '--timeout', '5']).finally(async () => {
      restore();
      await hung.close();
    });
    const took = Date.now() - started;
    const json = lastJson(r);
    expect(r.code).not.toBe(0);
    expect(json, r.stdout + r.stderr).toMatchObject({ ok: false });
    expect(String(json?.error)).toMatch(/within 5 s/);
    // 5 s for the connection plus the CLI's own start-up; never the 60 s default or a hang.
    expect(took).toBeLessThan(12_000);
    expect(journalsOf(name, since)).toEqual([]);
    expect((await agents(world, laptop)).some((a) => a.pane_id === pane)).toBe(true);
  }, 60_000);

  for (const step of ['transfer', 'session'] as const) {
    it(`the connection to the target drops during the ${step}: rollback, source agent restarted, recover cleans the target later`, async () => {
      const name = `drop-${step.slice(0, 4)}-${Math.random().toString(36).slice(2, 6)}`;
      const { pane } = await agentWithWork(name);
      const before = treeHashes(p.laptop);
      const proxy = await cuttableProxy({ host: world.sshd.host, port: world.sshd.port });
      const alias = `vega-drop-${name.slice(-4)}`;
      const restore = sshAlias(world, alias, proxy.port);
      try {
        const since = new Set(journals(laptop));
        const sending = runHandoff(world, laptop, ['send', name, alias, '--no-focus', '--quiet', '--timeout', '10'], { AGENT_HANDOFF_TEST_PAUSE_AT: step, AGENT_HANDOFF_TEST_PAUSE_MS: '2000' });
        await journalReaches(`the ${step} step to begin`, name, since, 'begin', step);
        expect(proxy.cut()).toBeGreaterThan(0);
        const r = await sending;
        const json = lastJson(r) as { ok: boolean; code: string; details: { failed_step: string; undo_errors: unknown[]; source_restart: { restarted: boolean } } } | null;
        expect(r.code, r.stdout + r.stderr).not.toBe(0);
        // The transfer and place run while the agent quits, the session copy from the quit on
        // (beside the snapshot and what is left of them): a cut while one of them runs may fail
        // another first.
        const failedStep = json?.details.failed_step;
        const beside = step === 'session' ? ['transfer', 'place', 'session'] : ['transfer', 'session'];
        expect(beside, JSON.stringify(json) + r.stderr.slice(-3000)).toContain(failedStep);
        // The target could not be rolled back (unreachable): said so, not hidden.
        expect(json?.details.undo_errors.length, JSON.stringify(json)).toBeGreaterThan(0);
        expect(json?.details.source_restart.restarted).toBe(true);
        expect((await agents(world, laptop)).some((a) => a.pane_id === pane)).toBe(true);
        expect(treeHashes(p.laptop)).toEqual(before);
        const id = path.basename(journalOf(name, since)!, '.jsonl');
        const hist = lastJson(await runHandoff(world, laptop, ['history', '--quiet'])) as { handoffs: { id: string; outcome: string; step: string; failed_step: string; agent: string; kind: string; from: string; to: string }[] };
        expect(hist.handoffs.find((h) => h.id === id)).toMatchObject({ outcome: 'rollback_incomplete', failed_step: failedStep, agent: name, kind: 'pi', to: expect.stringContaining('vega') });
        // The network is back: recover finishes the rollback on the target.
        const rec = await runHandoff(world, laptop, ['recover', id, '--quiet']);
        expect(rec.code, rec.stdout + rec.stderr).toBe(0);
        expect(targetLeftovers(vega, p.vega)).toEqual([]);
        expect(markers(vega).filter((m) => m.startsWith(id))).toEqual([]);
        const shown = lastJson(await runHandoff(world, laptop, ['show', id, '--quiet'])) as { handoff: { outcome: string; step: string } };
        // The step begun last: the paused one, or one begun beside it before the cut.
        expect(shown.handoff.outcome).toBe('rolled_back');
        expect(['snapshot', 'transfer', 'place', 'session']).toContain(shown.handoff.step);
        expect((await agents(world, laptop)).filter((a) => a.pane_id === pane)).toHaveLength(1);
      } finally {
        restore();
        await proxy.close();
      }
    }, 120_000);
  }
});
