// e2e (issue #16): a session that goes laptop → vega, takes a turn there, comes back with
// `--from vega`, takes a turn on laptop and goes to vega once more. omp and grok rewrite their
// session files while they run (omp: the title line in place and the whole file when a read is
// superseded; grok: the JSON files of its session folder), so what comes back is not a
// continuation of the copy the earlier handoff left behind: the hand-back, and the second trip,
// meet a copy that is byte for byte what an earlier handoff of this session left there, which
// must be replaced, not refused with session_conflict (the journal says which files were
// replaced and which only got their new tail). pi only appends: the control.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { handoff, herdr, herdrOk, makeProject, startFakeAgent, waitFor, waitForScreen, type Project } from '../helpers/e2e.js';
import type { World, WorldUser } from '../world/machines.js';

let world: World;

beforeAll(async () => {
  world = await useWorld();
});

interface SendOut {
  ok: true;
  cwd: string;
  target_agent: { name: string; pane: string; workspace: string };
  plan: { id: string; session: { id: string }; transcript: string; will_create: { session_file: string; cwd: string } };
}

const KINDS = ['pi', 'omp', 'grok'] as const;
type Kind = (typeof KINDS)[number];

/** The session unit a session file stands for: grok's is its folder. */
function unitOf(kind: Kind, file: string): string {
  return kind === 'grok' ? path.dirname(file) : file;
}

/** The session's log: the transcript, or grok's update stream. */
function logOf(kind: Kind, file: string): string {
  return kind === 'grok' ? path.join(unitOf(kind, file), 'updates.jsonl') : file;
}

/** Every prompt the session holds, in its own format. */
function prompts(kind: Kind, file: string): string[] {
  const log = logOf(kind, file);
  const out: string[] = [];
  for (const line of fs.readFileSync(log, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as { type?: string; message?: { role?: string; content?: { type: string; text?: string }[] }; params?: { update?: { sessionUpdate?: string; content?: { text?: string } } } };
    if (kind === 'grok') {
      const u = r.params?.update;
      if (u?.sessionUpdate === 'user_message_chunk' && u.content?.text !== undefined) out.push(u.content.text);
    } else if (r.type === 'message' && r.message?.role === 'user') {
      for (const c of r.message.content ?? []) if (c.type === 'text' && c.text !== undefined) out.push(c.text);
    }
  }
  return out;
}

/**
 * How the session copy of handoff `id` (run from laptop) treated each file, by name: the journal's
 * session_copy record. `replaced` is the copy an earlier handoff left there, byte for byte as left.
 */
function copyActions(id: string): Record<string, string> {
  const journal = path.join(world.users.laptop!.home, '.local', 'state', 'agent-handoff', 'handoffs', `${id}.jsonl`);
  for (const line of fs.readFileSync(journal, 'utf8').split('\n')) {
    if (!line.includes('"session_copy"')) continue;
    const r = JSON.parse(line) as { type?: string; data?: { record?: { files?: { path: string; action: string }[] } } };
    const files = r.type === 'record' ? r.data?.record?.files : undefined;
    if (files) return Object.fromEntries(files.map((f) => [path.basename(f.path), f.action]));
  }
  throw new Error(`no session_copy record in ${journal}`);
}

/** What each kind's coming-back copy must do with the files it meets. */
const EXPECTED: Record<Kind, (file: string) => Record<string, string>> = {
  // pi appends only: the session that comes back continues the copy.
  pi: (file) => ({ [path.basename(file)]: 'appended' }),
  // omp wrote line 1 over and superseded a read (the whole file anew): the copy is replaced.
  omp: (file) => ({ [path.basename(file)]: 'replaced' }),
  // grok wrote its JSON files anew; its .jsonl logs only grew; its empty locks are as they were.
  grok: () => ({
    'prompt_context.json': 'replaced',
    'summary.json': 'replaced',
    'signals.json': 'replaced',
    'usage.json': 'replaced',
    'updates.jsonl': 'appended',
    'chat_history.jsonl': 'appended',
    'rewind_points.jsonl': 'appended',
    ...Object.fromEntries(['updates.jsonl.lock', 'chat_history.jsonl.lock', 'summary.json.lock', 'rewind_points.jsonl.lock'].map((f) => [f, 'unchanged'])),
  }),
};

async function waitIdle(user: WorldUser, name: string): Promise<void> {
  await waitFor(`${name} idle on ${user.name}`, async () => {
    const r = await herdr(world, user, ['agent', 'get', name]);
    const a = (r.json?.result as { agent?: { agent_status?: string } } | undefined)?.agent;
    return a?.agent_status === 'idle' || a?.agent_status === 'done';
  }, 20_000);
}

/** Type a prompt into the agent's pane as a person would, and wait for the reply. */
async function turn(user: WorldUser, pane: string, name: string, prompt: string): Promise<void> {
  await herdrOk(world, user, ['pane', 'send-text', pane, prompt]);
  await new Promise((res) => setTimeout(res, 250));
  await herdrOk(world, user, ['pane', 'send-keys', pane, 'enter']);
  await waitForScreen(world, user, pane, `the reply to "${prompt}" on ${user.name}`, (t) => t.includes(`Fake reply: ${prompt}`), 20_000);
  await waitIdle(user, name);
}

describe.each(KINDS)('%s: laptop → vega, a turn on vega, back with --from vega, a turn on laptop, to vega again', (kind) => {
  const workspaces: { user: WorldUser; id: string }[] = [];
  const units: string[] = [];
  let project: Project | undefined;

  afterAll(async () => {
    for (const w of workspaces.reverse()) await herdr(world, w.user, ['workspace', 'close', w.id]).catch(() => undefined);
    for (const u of units) fs.rmSync(u, { recursive: true, force: true });
    if (project) {
      for (const dir of [project.laptop, project.vega]) {
        fs.rmSync(dir, { recursive: true, force: true });
        fs.rmSync(`${dir}.worktrees`, { recursive: true, force: true });
      }
      fs.rmSync(project.origin, { recursive: true, force: true });
    }
  });

  it('hands the session back and forth although the agent rewrote its files in place', async () => {
    const laptop = world.users.laptop!;
    const vega = world.users.vega!;
    const p = makeProject(world, `round-trip-${kind}`);
    project = p;
    const name = `rt-${kind}-${Math.random().toString(36).slice(2, 6)}`;
    // A greeting first: omp names no session after one, so its title line is written over on vega.
    const agent = await startFakeAgent(world, laptop, kind, p.laptop, { name, args: ['hi'] });
    workspaces.push({ user: laptop, id: agent.workspace });
    await waitForScreen(world, laptop, agent.pane, 'the first reply on laptop', (t) => t.includes('Fake reply: hi'), 20_000);
    await waitIdle(laptop, name);

    // 1. laptop → vega, and a turn there (the agent rewrites its session files).
    const r1 = await handoff(world, laptop, ['send', name, 'vega', '--no-focus']);
    expect(r1.json, `send laptop → vega: ${JSON.stringify(r1.json)}\n${r1.stderr}`).toMatchObject({ ok: true, command: 'send', dry_run: false });
    const out1 = r1.json as unknown as SendOut;
    workspaces.push({ user: vega, id: out1.target_agent.workspace });
    const laptopFile = out1.plan.transcript;
    const vegaFile = out1.plan.will_create.session_file;
    units.push(unitOf(kind, laptopFile), unitOf(kind, vegaFile));
    const sessionId = out1.plan.session.id;
    await waitForScreen(world, vega, out1.target_agent.pane, 'the agent resumed on vega', (t) => t.includes(`cwd: ${out1.cwd}`) && t.includes('Fake reply: hi'), 20_000);
    await waitIdle(vega, out1.target_agent.name);
    await turn(vega, out1.target_agent.pane, out1.target_agent.name, 'turn on vega');
    expect(prompts(kind, vegaFile)).toEqual(['hi', 'turn on vega']);
    // What vega now holds is no continuation of what the send left on laptop.
    if (kind === 'omp') {
      const text = fs.readFileSync(vegaFile, 'utf8');
      expect(JSON.parse(text.slice(0, text.indexOf('\n')))).toMatchObject({ type: 'title', title: 'turn on vega' });
      expect(text).toContain('[Superseded by a newer read of this file]');
    }
    if (kind === 'grok') {
      const signals = (f: string) => (JSON.parse(fs.readFileSync(path.join(unitOf(kind, f), 'signals.json'), 'utf8')) as { turnCount: number }).turnCount;
      expect([signals(laptopFile), signals(vegaFile)]).toEqual([1, 2]);
    }

    // 2. Back with --from vega, run on laptop: it lands on the copy the first send left there.
    const r2 = await handoff(world, laptop, ['send', out1.target_agent.name, '--from', 'vega', '--no-focus']);
    expect(r2.json, `send --from vega: ${JSON.stringify(r2.json)}\n${r2.stderr}`).toMatchObject({ ok: true, command: 'send', dry_run: false });
    const out2 = r2.json as unknown as SendOut;
    workspaces.push({ user: laptop, id: out2.target_agent.workspace });
    expect(out2.plan.session.id).toBe(sessionId);
    expect(out2.plan.will_create.session_file).toBe(laptopFile);
    expect(out2.cwd).toBe(p.laptop);
    expect(copyActions(out2.plan.id)).toMatchObject(EXPECTED[kind](laptopFile));
    const back = await waitForScreen(world, laptop, out2.target_agent.pane, 'the agent resumed on laptop', (t) => t.includes(`cwd: ${p.laptop}`) && t.includes('Fake reply: turn on vega'), 20_000);
    expect(back).toContain('Fake reply: hi');
    await waitIdle(laptop, out2.target_agent.name);
    await turn(laptop, out2.target_agent.pane, out2.target_agent.name, 'turn on laptop');
    expect(prompts(kind, laptopFile)).toEqual(['hi', 'turn on vega', 'turn on laptop']);
    expect(fs.readFileSync(logOf(kind, laptopFile), 'utf8')).not.toContain(vega.home);

    // 3. laptop → vega again: it meets the copy the first send left on vega (handed back since).
    const r3 = await handoff(world, laptop, ['send', out2.target_agent.name, 'vega', '--no-focus']);
    expect(r3.json, `send laptop → vega again: ${JSON.stringify(r3.json)}\n${r3.stderr}`).toMatchObject({ ok: true, command: 'send', dry_run: false });
    const out3 = r3.json as unknown as SendOut;
    workspaces.push({ user: vega, id: out3.target_agent.workspace });
    expect(out3.plan.session.id).toBe(sessionId);
    expect(out3.plan.will_create.session_file).toBe(vegaFile);
    expect(copyActions(out3.plan.id)).toMatchObject(EXPECTED[kind](vegaFile));
    const again = await waitForScreen(world, vega, out3.target_agent.pane, 'the agent resumed on vega again', (t) => t.includes(`cwd: ${out3.cwd}`) && t.includes('Fake reply: turn on laptop'), 20_000);
    expect(again).toContain('Fake reply: turn on vega');
    await waitIdle(vega, out3.target_agent.name);
    await turn(vega, out3.target_agent.pane, out3.target_agent.name, 'back on vega');
    expect(prompts(kind, vegaFile)).toEqual(['hi', 'turn on vega', 'turn on laptop', 'back on vega']);
    expect(fs.readFileSync(logOf(kind, vegaFile), 'utf8')).not.toContain(laptop.home);
  }, 240_000);
});
