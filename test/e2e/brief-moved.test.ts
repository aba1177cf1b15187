// e2e: the hand-off brief reaches the resumed agent on vega; afterwards `list` at the source shows
// that the session moved, so a stale copy restarted there is recognised.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { handoff, herdr, herdrOk, makeProject, screen, startFakeAgent, waitFor, writeAs } from '../helpers/e2e.js';
import type { World } from '../world/machines.js';

let world: World;
const cleanup: { user: 'laptop' | 'vega'; ws: string }[] = [];

beforeAll(async () => {
  world = await useWorld();
});

afterAll(async () => {
  for (const c of cleanup) await herdr(world, world.users[c.user]!, ['workspace', 'close', c.ws]).catch(() => undefined);
});

describe('hand-off brief and moved notes', () => {
  it('sends the brief once the agent is idle on vega, and list at the source says where the session went', async () => {
    const laptop = world.users.laptop!;
    const vega = world.users.vega!;
    const p = makeProject(world, 'brief');
    const name = `brief-${Math.random().toString(36).slice(2, 6)}`;
    const agent = await startFakeAgent(world, laptop, 'pi', p.laptop, { name, args: ['hello'] });
    cleanup.push({ user: 'laptop', ws: agent.workspace });
    await waitFor('the first reply', async () => (await screen(world, laptop, agent.pane)).includes('Fake reply: hello'));
    writeAs(laptop, `${p.laptop}/README.md`, 'hello\nedited\n');

    // (--focus TEXT is the brief's focus; the workspace is then focused — --no-focus goes with --brief.)
    const r = await handoff(world, laptop, ['send', name, 'vega', '--focus', 'finish the parser', '--done-when', 'npm test passes']);
    expect(r.json, JSON.stringify(r.json)).toMatchObject({ ok: true, brief: { status: 'delivered' } });
    const out = r.json as { target_agent: { pane: string; workspace: string }; brief: { text: string }; plan: { will_create: { session_file: string }; transcript: string } };
    cleanup.push({ user: 'vega', ws: out.target_agent.workspace });
    expect(out.brief.text).toContain('Focus: finish the parser');
    expect(out.brief.text).toContain('Done when: npm test passes');
    expect(out.brief.text).toContain('README.md');
    // It arrived as a prompt: the agent answered it and the session on vega holds it.
    await waitFor('the agent to answer the brief', async () => (await screen(world, vega, out.target_agent.pane)).includes('Fake reply: [agent-handoff]'), 20_000);
    expect(fs.readFileSync(out.plan.will_create.session_file, 'utf8')).toContain('[agent-handoff] This session was moved from');

    // A stale copy restarted at the source: list says the session moved to vega.
    await herdrOk(world, laptop, ['agent', 'start', `${name}-stale`, '--kind', 'pi', '--pane', agent.pane, '--', '--session', out.plan.transcript]);
    const listed = await waitFor('the stale copy in list', async () => {
      const l = await handoff(world, laptop, ['list']);
      return (l.json.agents as { pane: string; moved: unknown }[]).find((a) => a.pane === agent.pane && a.moved);
    });
    expect(listed.moved).toMatchObject({ to: expect.stringContaining('vega@'), path: out.plan.will_create.session_file });
  }, 150_000);
});
