// e2e: re-running the same `send` after the controller died finishes the unfinished handoff of
// that agent instead of starting a second one beside it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { handoff, herdr, makeProject, screen, startFakeAgent, waitFor } from '../helpers/e2e.js';
import type { World } from '../world/machines.js';
import { locks, paneLockOf } from './crash-helpers.js';

let world: World;
const cleanup: { user: 'laptop' | 'vega'; ws: string }[] = [];

beforeAll(async () => {
  world = await useWorld();
});

afterAll(async () => {
  for (const c of cleanup) await herdr(world, world.users[c.user]!, ['workspace', 'close', c.ws]).catch(() => undefined);
});

async function killedSend(kill: string): Promise<{ name: string; pane: string }> {
  const laptop = world.users.laptop!;
  const p = makeProject(world, `resend-${kill.replace(':', '-')}`);
  const name = `rs-${Math.random().toString(36).slice(2, 6)}`;
  const agent = await startFakeAgent(world, laptop, 'pi', p.laptop, { name, args: ['hi'] });
  cleanup.push({ user: 'laptop', ws: agent.workspace });
  await waitFor('the first reply', async () => (await screen(world, laptop, agent.pane)).includes('Fake reply: hi'));
  const r = await handoff(world, laptop, ['send', name, 'vega', '--no-focus'], { env: { AGENT_HANDOFF_TEST_KILL_AT: kill } }).catch((err: Error) => err);
  // SIGKILL: no JSON at all.
  expect(r).toBeInstanceOf(Error);
  // The killed controller left its pane lock behind: the re-run must get past it.
  expect(locks(laptop)).toContain(paneLockOf(laptop, agent.pane));
  return { name, pane: agent.pane };
}

describe('send again after an uncertain end', () => {
  it('rolls back a handoff killed before placement, then moves the agent', async () => {
    const { name, pane } = await killedSend('before:place');
    // Another target than the unfinished handoff's is refused, with the way out.
    const other = await handoff(world, world.users.laptop!, ['send', name, '--here']);
    expect(other.json).toMatchObject({ ok: false, code: 'handoff_in_progress' });
    expect(other.json.fix).toMatch(/agent-handoff recover /);
    // The same send again finishes the earlier one (here: rolls it back), then moves the agent.
    const r = await handoff(world, world.users.laptop!, ['send', name, 'vega', '--no-focus']);
    expect(r.json.ok, JSON.stringify(r.json)).toBe(true);
    expect(r.json.resumed).toEqual([expect.objectContaining({ action: 'rolled_back' })]);
    const out = r.json as { target_agent: { workspace: string } };
    cleanup.push({ user: 'vega', ws: out.target_agent.workspace });
    expect(locks(world.users.laptop!)).not.toContain(paneLockOf(world.users.laptop!, pane));
  }, 180_000);

  it('completes a handoff killed after the agent started on the target, without a second one', async () => {
    const { name, pane } = await killedSend('before:stash');
    const r = await handoff(world, world.users.laptop!, ['send', name, 'vega', '--no-focus']);
    expect(r.json, JSON.stringify(r.json)).toMatchObject({ ok: true, resumed: [expect.objectContaining({ action: 'completed' })] });
    expect(r.json.plan).toBeUndefined();
    // Finishing it released the dead controller's locks.
    expect(locks(world.users.laptop!)).not.toContain(paneLockOf(world.users.laptop!, pane));
  }, 180_000);
});
