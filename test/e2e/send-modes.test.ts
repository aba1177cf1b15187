// e2e: the other ways to run `send` — --here (another checkout, a new worktree, --dir refused),
// --from (bring an agent home without ssh back), --self (from inside the agent's own pane), --wait,
// agent arguments after `--`, the screens on the target (trust, login) and --dry-run — each checked
// on the JSON and on the two machines' real state.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { gitAs, handoff, herdr, herdrOk, makeProject, screen, startFakeAgent, waitFor, waitForScreen, withAgentControl, writeAs, type Project, type StartedAgent } from '../helpers/e2e.js';
import { runAsSync, type World, type WorldUser } from '../world/machines.js';
import { locks, paneLockOf } from './crash-helpers.js';
import { codexRootOf, herdrCodexHookTrusted, trustHerdrCodexHook, untrustCodexHooks, withCodexHooks } from '../helpers/codex-hooks.js';

let world: World;
let laptop: WorldUser;
let vega: WorldUser;
const workspaces: { user: 'laptop' | 'vega'; id: string }[] = [];

beforeAll(async () => {
  world = await useWorld();
  laptop = world.users.laptop!;
  vega = world.users.vega!;
});

afterAll(async () => {
  for (const w of workspaces) await herdr(world, world.users[w.user]!, ['workspace', 'close', w.id]).catch(() => undefined);
});

interface AgentJson {
  name?: string | null;
  agent?: string | null;
  agent_status: string;
  agent_session?: { kind: string; value: string } | null;
  pane_id: string;
  workspace_id: string;
  cwd?: string | null;
  foreground_cwd?: string | null;
}

interface SendJson {
  ok: boolean;
  code?: string;
  error?: string;
  details?: Record<string, unknown>;
  deferred?: boolean;
  dry_run?: boolean;
  attach?: string | null;
  target_worktree?: string;
  branch?: string;
  worktree_created?: boolean;
  trust?: string;
  integration_installed?: boolean;
  cwd?: string;
  hook_trust?: { status: string; detail: string };
  waiting_for_user?: string[];
  next_steps?: string[];
  target_agent?: { name: string; pane: string; workspace: string };
  helper?: { workspace: string; pane: string; job: string };
  source_stash?: { stashed: boolean };
  plan: { id: string; session: { id: string }; target: { repo: string }; will_create: { branch: string; worktree: string; session_file: string; resume_argv: string[]; cwd: string } };
}

const suffix = () => Math.random().toString(36).slice(2, 6);

async function agentList(user: WorldUser): Promise<AgentJson[]> {
  const r = await herdrOk(world, user, ['agent', 'list']);
  return (r.result as { agents: AgentJson[] }).agents;
}

async function agentNamed(user: WorldUser, name: string): Promise<AgentJson | undefined> {
  return (await agentList(user)).find((a) => a.name === name);
}

/** Type a prompt into a pane and submit it. */
async function prompt(user: WorldUser, pane: string, text: string): Promise<void> {
  await herdrOk(world, user, ['pane', 'send-text', pane, text]);
  await new Promise((r) => setTimeout(r, 200));
  await herdrOk(world, user, ['pane', 'send-keys', pane, 'enter']);
}

/** A fake agent that answered one prompt and is idle with its session known to herdr. */
async function startIdle(user: WorldUser, kind: string, cwd: string, name: string): Promise<StartedAgent> {
  const t0 = Date.now();
  try {
    return await startIdleInner(user, kind, cwd, name);
  } finally {
    if (process.env.AH_TIMING) console.log(`startIdle ${name}: ${Date.now() - t0} ms`);
  }
}

async function startIdleInner(user: WorldUser, kind: string, cwd: string, name: string): Promise<StartedAgent> {
  const agent = await startFakeAgent(world, user, kind, cwd, { name, args: ['first prompt'], waitSession: false });
  workspaces.push({ user: user.name as 'laptop' | 'vega', id: agent.workspace });
  await waitFor(`${name}'s first reply`, async () => {
    const text = await screen(world, user, agent.pane);
    // claude and codex ask for folder trust in a folder they do not know: the user says yes.
    if (/Trust this folder|Quick safety check|Do you trust/.test(text)) await herdrOk(world, user, ['pane', 'send-keys', agent.pane, 'enter']);
    return /Fake reply: first prompt/.test(text);
  }, 20_000);
  await waitIdle(user, name);
  return agent;
}

async function waitIdle(user: WorldUser, name: string): Promise<AgentJson> {
  return waitFor(`${name} idle with its session`, async () => {
    const a = await agentNamed(user, name);
    return a?.agent_session && (a.agent_status === 'idle' || a.agent_status === 'done') ? a : undefined;
  });
}

async function waitWorking(user: WorldUser, name: string): Promise<void> {
  await waitFor(`${name} working`, async () => (await agentNamed(user, name))?.agent_status === 'working', 10_000);
}

function sha(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** A clone of the project's origin on laptop at ~/work/<name> (a second checkout of the same repo). */
function secondCheckout(p: Project): string {
  const dest = path.join(laptop.home, 'work', p.name);
  fs.rmSync(dest, { recursive: true, force: true });
  fs.rmSync(`${dest}.worktrees`, { recursive: true, force: true });
  runAsSync(laptop, ['mkdir', '-p', path.dirname(dest)]);
  const r = runAsSync(laptop, ['git', 'clone', '-q', p.origin, dest]);
  if (r.status !== 0) throw new Error(`clone: ${r.stderr}`);
  return dest;
}

/** Run `send` and keep the target workspace for cleanup. */
async function send(args: string[], opts: { env?: Record<string, string>; user?: WorldUser } = {}): Promise<{ code: number; json: SendJson; stderr: string }> {
  const t0 = Date.now();
  const r = await handoff(world, opts.user ?? laptop, ['send', ...args], opts.env ? { env: opts.env } : {});
  if (process.env.AH_TIMING) console.log(`send ${args.join(' ')}: ${Date.now() - t0} ms`, JSON.stringify((r.json as { steps?: unknown }).steps ?? null), r.stderr);
  const json = r.json as unknown as SendJson;
  if (json.target_agent) {
    // --here and --from (no target) end on this machine.
    const onLaptop = args.includes('--here') || args.includes('--from');
    workspaces.push({ user: onLaptop ? 'laptop' : 'vega', id: json.target_agent.workspace });
  }
  return { code: r.code, json, stderr: r.stderr };
}

function expectOk(r: { json: SendJson; stderr: string }): void {
  expect(r.json, `${JSON.stringify(r.json)}\n${r.stderr}`).toMatchObject({ ok: true });
}

describe('send --here', () => {
  it('moves the agent into another checkout of the repository on this machine', async () => {
    const p = makeProject(world, 'modes-here');
    const other = secondCheckout(p);
    const name = `here-${suffix()}`;
    const agent = await startIdle(laptop, 'pi', p.laptop, name);
    writeAs(laptop, path.join(p.laptop, 'README.md'), 'hello\nedited before --here\n');

    const r = await send([name, '--here', '--no-focus']);
    expectOk(r);
    expect(r.code).toBe(0);
    expect(r.json.attach).toBeNull();
    expect(r.json.plan.target.repo).toBe(other);
    expect(r.json.target_worktree).toBe(other);
    expect(r.json.branch).toBe('main');
    expect(r.json.worktree_created).toBe(false);
    const moved = r.json.target_agent!;
    // The agent now runs in the other checkout, with the edit; the source is back at HEAD.
    const now = await agentNamed(laptop, moved.name);
    expect(now).toMatchObject({ agent: 'pi', pane_id: moved.pane });
    expect(moved.pane).not.toBe(agent.pane);
    await waitFor('the agent to show its new cwd', async () => (await screen(world, laptop, moved.pane)).includes(`cwd: ${other}`), 15_000);
    expect(await screen(world, laptop, moved.pane)).toContain('Fake reply: first prompt');
    expect(fs.readFileSync(path.join(other, 'README.md'), 'utf8')).toBe('hello\nedited before --here\n');
    expect(fs.readFileSync(path.join(p.laptop, 'README.md'), 'utf8')).toBe('hello\n');
    expect(gitAs(laptop, p.laptop, ['stash', 'list'])).toMatch(/agent-handoff/);
    expect((await agentList(laptop)).some((a) => a.pane_id === agent.pane)).toBe(false);
  }, 90_000);

  it('refuses --dir naming the agent\'s own checkout, and makes a new worktree with --new-worktree', async () => {
    const p = makeProject(world, 'modes-newwt');
    secondCheckout(p); // another checkout exists, but --new-worktree must not use it
    const name = `newwt-${suffix()}`;
    const agent = await startIdle(laptop, 'pi', p.laptop, name);
    writeAs(laptop, path.join(p.laptop, 'notes.txt'), 'untracked before --new-worktree\n');

    const looked = await send([name, '--here', '--new-worktree', '--dry-run']);
    const sessionId = (looked.json as { plan: { session: { id: string } } }).plan.session.id;
    const refused = await send([name, '--here', '--dir', p.laptop]);
    expect(refused.json, JSON.stringify(refused.json)).toMatchObject({ ok: false, code: 'dir_is_source' });
    expect(refused.code).toBe(1);
    const inside = await send([name, '--here', '--dir', path.join(p.laptop, 'src')]);
    expect(inside.json, JSON.stringify(inside.json)).toMatchObject({ ok: false, code: 'dir_is_source' });
    expect((await agentNamed(laptop, name))?.pane_id).toBe(agent.pane);
    // A refused plan leaves no lock: not the pane's, nor the session's (taken once the session was found).
    expect(locks(laptop).filter((l) => l.includes(sessionId) || l === paneLockOf(laptop, agent.pane))).toEqual([]);

    const r = await send([name, '--here', '--new-worktree', '--no-focus']);
    expectOk(r);
    expect(r.json.attach).toBeNull();
    // A short name: the session's first 8 letters and digits.
    const short = r.json.plan.session.id.replace(/[^A-Za-z0-9]+/g, '').slice(0, 8);
    expect(r.json.branch).toBe(`handoff/${short}`);
    expect(r.json.target_worktree).toBe(`${p.laptop}.worktrees/handoff-${short}`);
    expect(r.json.worktree_created).toBe(true);
    const wt = r.json.target_worktree!;
    expect(gitAs(laptop, p.laptop, ['worktree', 'list', '--porcelain'])).toContain(`worktree ${wt}\n`);
    expect(gitAs(laptop, wt, ['rev-parse', '--abbrev-ref', 'HEAD']).trim()).toBe(`handoff/${short}`);
    expect(fs.readFileSync(path.join(wt, 'notes.txt'), 'utf8')).toBe('untracked before --new-worktree\n');
    await waitFor('the agent to show the new worktree', async () => (await screen(world, laptop, r.json.target_agent!.pane)).includes(`cwd: ${wt}`), 15_000);
    expect((await agentNamed(laptop, r.json.target_agent!.name))?.agent).toBe('pi');
  }, 90_000);
});

describe('send --from', () => {
  it('brings an agent from vega to this machine with no ssh from vega back to laptop', async () => {
    const p = makeProject(world, 'modes-from');
    const name = `from-${suffix()}`;
    const agent = await startIdle(vega, 'pi', p.vega, name);
    writeAs(vega, path.join(p.vega, 'from-vega.txt'), 'written on vega\n');

    // vega may not log in to laptop: the controller (laptop) relays everything.
    const keys = path.join(laptop.home, '.ssh', 'authorized_keys');
    const original = fs.readFileSync(keys, 'utf8');
    let r: Awaited<ReturnType<typeof send>>;
    try {
      fs.writeFileSync(keys, original.split('\n').filter((l) => !l.includes('vega@ah-world')).join('\n'));
      expect(runAsSync(vega, ['ssh', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=5', 'laptop', 'true']).status).not.toBe(0);
      r = await send([name, '--from', 'vega', '--no-focus']);
    } finally {
      fs.writeFileSync(keys, original);
    }
    expectOk(r);
    expect(r.json.attach).toBeNull();
    expect(r.json.target_worktree).toBe(p.laptop);
    const moved = r.json.target_agent!;
    expect(await agentNamed(laptop, moved.name)).toMatchObject({ agent: 'pi', pane_id: moved.pane });
    await waitFor('the agent on laptop to show its cwd', async () => (await screen(world, laptop, moved.pane)).includes(`cwd: ${p.laptop}`), 15_000);
    expect(fs.readFileSync(path.join(p.laptop, 'from-vega.txt'), 'utf8')).toBe('written on vega\n');
    // Gone from vega: its pane is back at a shell, the work stashed there.
    expect((await agentList(vega)).some((a) => a.pane_id === agent.pane)).toBe(false);
    expect(fs.existsSync(path.join(p.vega, 'from-vega.txt'))).toBe(false);
    expect(gitAs(vega, p.vega, ['stash', 'list'])).toMatch(/agent-handoff/);
  }, 90_000);
});

describe('codex and herdr\'s hook', () => {
  /** vega without herdr's codex integration, and without any trust of it left from earlier runs. */
  async function vegaWithoutIntegration(): Promise<void> {
    await herdrOk(world, vega, ['integration', 'uninstall', 'codex']);
    untrustCodexHooks(vega);
    expect(fs.existsSync(path.join(codexRootOf(vega), 'herdr-agent-state.sh'))).toBe(false);
  }

  async function agentInPane(user: WorldUser, pane: string): Promise<AgentJson | undefined> {
    return (await agentList(user)).find((a) => a.pane_id === pane);
  }

  it('the source trusts it and vega has no integration: the trust is carried, nothing waits, herdr there learns the session, and it comes back', async () => {
    await withCodexHooks(async () => {
      const p = makeProject(world, 'modes-hooks');
      const name = `hooks-${suffix()}`;
      await startIdle(laptop, 'codex', p.laptop, name);
      expect(herdrCodexHookTrusted(laptop)).toBe(true);
      await vegaWithoutIntegration();

      const r = await send([name, 'vega', '--no-focus']);
      expectOk(r);
      expect(r.json).toMatchObject({ integration_installed: true, hook_trust: { status: 'carried' }, waiting_for_user: [] });
      expect(r.json.hook_trust!.detail).toContain(path.join(codexRootOf(vega), 'config.toml'));
      expect(r.json.next_steps).toBeUndefined();
      expect(herdrCodexHookTrusted(vega)).toBe(true);
      const moved = r.json.target_agent!;
      await waitForScreen(world, vega, moved.pane, 'codex resumed on vega at its prompt', (t) => t.includes(`cwd: ${r.json.cwd}`) && t.includes('Fake reply: first prompt'), 15_000);
      // Codex runs its session-start hooks with the first prompt: herdr's reports the session.
      await prompt(vega, moved.pane, 'on vega');
      await waitForScreen(world, vega, moved.pane, 'a reply on vega', (t) => t.includes('Fake reply: on vega'), 15_000);
      const known = await waitFor('herdr on vega knowing the session', async () => {
        const a = await agentInPane(vega, moved.pane);
        return a?.agent_session ? a : undefined;
      }, 15_000);
      expect(known.agent_session?.value).toBe(r.json.plan.session.id);
      await waitFor('codex idle on vega', async () => (await agentInPane(vega, moved.pane))?.agent_status === 'idle', 15_000);

      const back = await send([moved.name, '--from', 'vega', '--no-focus']);
      expectOk(back);
      expect(back.json).toMatchObject({ target_worktree: p.laptop, hook_trust: { status: 'already_trusted' }, waiting_for_user: [] });
      expect((back.json.plan as unknown as { session: { via: string; id: string } }).session).toMatchObject({ via: 'herdr', id: r.json.plan.session.id });
      await waitForScreen(world, laptop, back.json.target_agent!.pane, 'codex back on laptop', (t) => t.includes(`cwd: ${p.laptop}`) && t.includes('Fake reply: on vega'), 15_000);
    });
  }, 150_000);

  it('a failure after the trust was carried takes it out of vega again, and the agent runs on at the source', async () => {
    await withCodexHooks(async () => {
      const p = makeProject(world, 'modes-hooks-fail');
      const name = `hooksfail-${suffix()}`;
      const agent = await startIdle(laptop, 'codex', p.laptop, name);
      await vegaWithoutIntegration();
      const config = path.join(codexRootOf(vega), 'config.toml');
      const r = await send([name, 'vega', '--no-focus'], { env: { AGENT_HANDOFF_TEST_FAIL_AT: 'verify' } });
      expect(r.json, JSON.stringify(r.json)).toMatchObject({ ok: false, code: 'injected_failure', details: { failed_step: 'verify', undo_errors: [] } });
      expect(r.json.details!.undone).toContain(`removed the trust of herdr's codex hook from ${config} on vega`);
      expect(herdrCodexHookTrusted(vega)).toBe(false);
      expect(fs.readFileSync(config, 'utf8')).not.toContain(`[hooks.state.${JSON.stringify(`${codexRootOf(vega)}/hooks.json:`).slice(0, -1)}`);
      await waitFor('codex running again on laptop', async () => (await agentInPane(laptop, agent.pane))?.agent === 'codex', 15_000);
    });
  }, 150_000);

  it('the source does not trust it: left for review with the keys that answer it, which trust herdr\'s hook alone; it comes back with the session the handoff recorded, though herdr never learnt it', async () => {
    await withCodexHooks(async () => {
      const p = makeProject(world, 'modes-own');
      const name = `own-${suffix()}`;
      untrustCodexHooks(laptop);
      try {
        // On laptop the user went on without trusting herdr's hook (Esc): herdr learns no session.
        const agent = await startFakeAgent(world, laptop, 'codex', p.laptop, { name, args: ['first prompt'], waitSession: false, trustHook: false });
        workspaces.push({ user: 'laptop', id: agent.workspace });
        await waitFor(`${name}'s first reply`, async () => {
          const text = await screen(world, laptop, agent.pane);
          if (/Trust this folder/.test(text)) await herdrOk(world, laptop, ['pane', 'send-keys', agent.pane, 'enter']);
          else if (/Hooks need review/.test(text)) await herdrOk(world, laptop, ['pane', 'send-keys', agent.pane, 'escape']);
          return /Fake reply: first prompt/.test(text);
        }, 20_000);
        await waitFor('codex idle on laptop', async () => (await agentInPane(laptop, agent.pane))?.agent_status === 'idle', 15_000);
        expect((await agentInPane(laptop, agent.pane))?.agent_session ?? null).toBeNull();
        await vegaWithoutIntegration();

        const r = await send([name, 'vega', '--no-focus']);
        expectOk(r);
        expect(r.json).toMatchObject({ integration_installed: true, hook_trust: { status: 'left_for_user' } });
        expect(r.json.waiting_for_user).toContain('hook_review');
        expect(r.json.hook_trust!.detail).toContain("does not trust herdr's hook (untrusted)");
        const script = path.join(codexRootOf(vega), 'herdr-agent-state.sh');
        expect(r.json.next_steps).toEqual([expect.stringContaining(`bash '${script}' session`)]);
        expect(r.json.next_steps![0]).toContain('press Enter; in the Hooks list press Enter on SessionStart');
        expect(r.json.next_steps![0]).toContain('press t to trust that one hook');
        expect(herdrCodexHookTrusted(vega)).toBe(false);
        const moved = r.json.target_agent!;

        // The user follows the steps on vega.
        await waitForScreen(world, vega, moved.pane, 'the hook review on vega', (t) => t.includes('Hooks need review') && t.includes('› 1. Review hooks'), 15_000);
        await herdrOk(world, vega, ['pane', 'send-keys', moved.pane, 'enter']);
        await waitForScreen(world, vega, moved.pane, 'the Hooks list', (t) => t.includes('⚠ 1 hook needs review before it can run.') && t.includes('› SessionStart'), 15_000);
        await herdrOk(world, vega, ['pane', 'send-keys', moved.pane, 'enter']);
        await waitForScreen(world, vega, moved.pane, "herdr's hook", (t) => t.includes(`Command   bash '${script}' session`) && t.includes('t trust · esc back'), 15_000);
        await herdrOk(world, vega, ['pane', 'send-keys', moved.pane, 't']);
        await waitForScreen(world, vega, moved.pane, 'the hook trusted', (t) => t.includes('Trust     Trusted'), 15_000);
        await herdrOk(world, vega, ['pane', 'send-keys', moved.pane, 'escape']);
        await waitForScreen(world, vega, moved.pane, 'the Hooks list again', (t) => t.includes('enter details · esc close'), 15_000);
        await herdrOk(world, vega, ['pane', 'send-keys', moved.pane, 'escape']);
        await waitForScreen(world, vega, moved.pane, 'codex going on', (t) => t.includes(`cwd: ${p.vega}`), 15_000);
        expect(herdrCodexHookTrusted(vega)).toBe(true);
        // No prompt yet on vega: codex has run no session-start hook, herdr knows no session.
        const onVega = await waitFor('codex idle on vega', async () => {
          const a = await agentInPane(vega, moved.pane);
          return a && a.agent_status === 'idle' ? a : undefined;
        }, 15_000);
        expect(onVega.agent_session ?? null).toBeNull();

        const back = await send([moved.name, '--from', 'vega', '--no-focus']);
        expectOk(back);
        const sessionOf = (j: SendJson) => (j.plan as unknown as { session: { via: string; id: string } }).session;
        expect(sessionOf(back.json)).toEqual(expect.objectContaining({ via: 'handoff', id: sessionOf(r.json).id }));
        expect(back.json.target_worktree).toBe(p.laptop);
        // vega trusts it now, laptop not: carried the other way, nothing waits on laptop.
        expect(back.json).toMatchObject({ hook_trust: { status: 'carried' }, waiting_for_user: [] });
        expect(herdrCodexHookTrusted(laptop)).toBe(true);
      } finally {
        trustHerdrCodexHook(laptop);
      }
    });
  }, 150_000);
});

describe('send --self', () => {
  it('is refused from the agent\'s own pane without --self; with --self a helper moves it after its turn', async () => {
    const p = makeProject(world, 'modes-self');
    const name = `self-${suffix()}`;
    const agent = await startIdle(laptop, 'pi', p.laptop, name);
    const env = { HERDR_PANE_ID: agent.pane };

    const refused = await send([name, 'vega', '--no-focus'], { env });
    expect(refused.json, JSON.stringify(refused.json)).toMatchObject({ ok: false, code: 'own_pane' });
    // The agent moving itself runs here: --from makes no sense with --self.
    const fromElsewhere = await send([name, '--from', 'vega', '--self'], { env });
    expect(fromElsewhere.json).toMatchObject({ ok: false, code: 'usage' });
    expect(fromElsewhere.code).toBe(2);

    // The agent is mid-turn when it asks to move itself (as it would be).
    await prompt(laptop, agent.pane, 'sleep 3');
    await waitWorking(laptop, name);
    const r = await send([name, 'vega', '--self', '--no-focus', '--', '--model', 'self-model'], { env });
    expectOk(r);
    expect(r.json.deferred).toBe(true);
    const helper = r.json.helper!;
    expect(helper.workspace).toBeTruthy();
    expect(helper.pane).toBeTruthy();
    workspaces.push({ user: 'laptop', id: helper.workspace });
    const helperWorkspaces = async () => ((await herdrOk(world, laptop, ['workspace', 'list'])).result as { workspaces: { workspace_id: string }[] }).workspaces;
    expect((await helperWorkspaces()).some((w) => w.workspace_id === helper.workspace)).toBe(true);
    // Nothing moves while the turn runs.
    expect((await agentNamed(laptop, name))?.pane_id).toBe(agent.pane);

    const onVega = await waitFor('the agent on vega', async () => {
      const a = await agentNamed(vega, name);
      return a?.agent === 'pi' ? a : undefined;
    }, 45_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; helper pane shows:\n${await screen(world, laptop, helper.pane).catch(() => '(gone)')}`);
    });
    workspaces.push({ user: 'vega', id: onVega.workspace_id });
    await waitFor('the helper workspace to close', async () => !(await helperWorkspaces()).some((w) => w.workspace_id === helper.workspace), 15_000);
    const cwd = `${p.vega}`;
    const shown = await waitFor('the resumed agent on vega', async () => {
      const text = await screen(world, vega, onVega.pane_id);
      return text.includes(`cwd: ${cwd}`) && text.includes('Fake reply: sleep 3') ? text : undefined;
    }, 15_000);
    // The agent arguments survived the trip through the helper's job file.
    expect(shown).toContain('args: --model self-model');
    expect((await agentList(laptop)).some((a) => a.pane_id === agent.pane)).toBe(false);
    expect(fs.existsSync(helper.job)).toBe(false);
  }, 120_000);
});

/** Forget that vega's claude trusted `folder` (an earlier run may have). */
function untrustOnVega(folder: string): void {
  const file = path.join(vega.home, '.claude.json');
  if (!fs.existsSync(file)) return;
  const state = JSON.parse(fs.readFileSync(file, 'utf8')) as { projects?: Record<string, unknown> };
  if (!state.projects) return;
  for (const key of Object.keys(state.projects)) if (key === folder || key.startsWith(`${folder}.worktrees`)) delete state.projects[key];
  fs.writeFileSync(file, JSON.stringify(state, null, 2) + '\n');
}

describe('send --wait, agent args, trust', () => {
  it('refuses a working agent without --wait; with --wait moves it after its turn, with the args after -- and trust answered', async () => {
    const p = makeProject(world, 'modes-wait');
    untrustOnVega(p.vega);
    const name = `wait-${suffix()}`;
    const agent = await startIdle(laptop, 'claude', p.laptop, name);
    // A long turn, so the agent is still working when the handoff is planned on a loaded machine.
    await prompt(laptop, agent.pane, 'sleep 8');
    await waitWorking(laptop, name);

    const busy = await send([name, 'vega', '--no-focus']);
    expect(busy.json, JSON.stringify(busy.json)).toMatchObject({ ok: false, code: 'agent_busy' });
    expect((await agentNamed(laptop, name))?.pane_id).toBe(agent.pane);

    const r = await send([name, 'vega', '--no-focus', '--wait', '--', '--model', 'x']);
    expectOk(r);
    expect(r.json.plan.will_create.resume_argv.slice(-2)).toEqual(['--model', 'x']);
    // vega's claude had not trusted the folder: the screen was answered and it is at its prompt.
    expect(r.json.trust).toBe('answered');
    expect(r.json.waiting_for_user).toEqual([]);
    const moved = r.json.target_agent!;
    expect(await agentNamed(vega, moved.name)).toMatchObject({ agent: 'claude' });
    // The whole turn came along (it ended before the agent was quit), and the args reached claude.
    const text = await waitFor('the turn on vega', async () => {
      const t = await screen(world, vega, moved.pane);
      return t.includes('Fake reply: sleep 8') ? t : undefined;
    }, 15_000);
    expect(text).toContain('args: --model x');
    expect(text).not.toContain('Quick safety check');
    expect(fs.readFileSync(r.json.plan.will_create.session_file, 'utf8')).toContain('sleep 8');
  }, 120_000);
});

describe('send: an agent that changes its work as it quits', () => {
  it('places the work as it was left, and the agent starts there in the one pane (the one made ahead is closed)', async () => {
    const p = makeProject(world, 'modes-quitwrite');
    const name = `quitwrite-${suffix()}`;
    await startIdle(laptop, 'pi', p.laptop, name);
    writeAs(laptop, path.join(p.laptop, 'README.md'), 'hello\nedited before the quit\n');
    // laptop's pi, in this project only, writes a note in its folder as it quits: the work
    // placed on vega while it quit is not the work it left, and is placed again.
    const r = await withAgentControl(laptop, path.join(laptop.home, '.pi', 'agent', 'fake-agent.json'), { writeOnQuit: 'quit-note.txt', onlyIn: [p.laptop] }, () => send([name, 'vega', '--no-focus']));
    expectOk(r);
    // Placed twice: ahead of the quit as planned, then as the agent left it.
    const steps = (r.json as unknown as { steps: { step: string }[] }).steps.map((x) => x.step);
    expect(steps.filter((x) => x.startsWith('placing'))).toHaveLength(2);
    const wt = r.json.target_worktree!;
    expect(fs.readFileSync(path.join(wt, 'quit-note.txt'), 'utf8')).toBe('written by pi as it quit\n');
    expect(fs.readFileSync(path.join(wt, 'README.md'), 'utf8')).toBe('hello\nedited before the quit\n');
    // On vega, one pane is in that worktree: the agent's, which runs there.
    const panes = ((await herdrOk(world, vega, ['pane', 'list'])).result as { panes: { pane_id: string; cwd?: string | null }[] }).panes;
    expect(panes.filter((x) => x.cwd === wt).map((x) => x.pane_id)).toEqual([r.json.target_agent!.pane]);
    await waitForScreen(world, vega, r.json.target_agent!.pane, 'the resumed agent in the worktree', (t) => t.includes(`cwd: ${wt}`), 15_000);
  }, 90_000);
});

describe('send: screens on the target', () => {
  it('leaves the trust screen to the user with --no-trust', async () => {
    const p = makeProject(world, 'modes-notrust');
    untrustOnVega(p.vega);
    const name = `notrust-${suffix()}`;
    await startIdle(laptop, 'claude', p.laptop, name);
    const r = await send([name, 'vega', '--no-focus', '--no-trust']);
    expectOk(r);
    expect(r.json.trust).toBe('disabled');
    expect(r.json.waiting_for_user).toContain('trust');
    expect(await screen(world, vega, r.json.target_agent!.pane)).toContain('Quick safety check');
  }, 90_000);

  it('answers a trust screen drawn only after herdr calls the agent ready (a slow start)', async () => {
    const p = makeProject(world, 'modes-slowtrust');
    untrustOnVega(p.vega);
    const name = `slow-${suffix()}`;
    await startIdle(laptop, 'claude', p.laptop, name);
    // vega's claude, in this project only, draws nothing for 2 s: herdr's simulator calls an agent
    // ready 0.3 s after it starts (real herdr: 3 s), long before its trust screen shows.
    const r = await withAgentControl(vega, path.join(vega.home, '.claude', 'fake-agent.json'), { slowStartMs: 2000, onlyIn: [p.vega] }, () => send([name, 'vega', '--no-focus']));
    expectOk(r);
    expect(r.json.trust).toBe('answered');
    expect(r.json.waiting_for_user).toEqual([]);
    const text = await waitForScreen(world, vega, r.json.target_agent!.pane, 'the resumed agent at its prompt', (t) => t.includes(`cwd: ${r.json.target_worktree}`), 15_000);
    expect(text).not.toContain('Quick safety check');
  }, 90_000);

  it('reports a login screen on the target', async () => {
    const p = makeProject(world, 'modes-login');
    const name = `login-${suffix()}`;
    await startIdle(laptop, 'claude', p.laptop, name);
    const r = await withAgentControl(vega, path.join(vega.home, '.claude', 'fake-agent.json'), { loggedOut: true, onlyIn: [p.vega] }, () => send([name, 'vega', '--no-focus']));
    expectOk(r);
    expect(r.json.waiting_for_user).toContain('login');
    expect(await screen(world, vega, r.json.target_agent!.pane)).toContain('Select login method');
  }, 90_000);
});

/** Everything a handoff could change, on both machines, for one project. */
function stateOf(p: Project, sessionDirs: string[]): Record<string, unknown> {
  const refs = (user: WorldUser, repo: string) => gitAs(user, repo, ['for-each-ref', '--format=%(objectname) %(refname)']);
  const cacheEntry = (user: WorldUser) => {
    const file = path.join(user.home, '.config', 'agent-handoff', 'repos.json');
    if (!fs.existsSync(file)) return null;
    const cache = JSON.parse(fs.readFileSync(file, 'utf8')) as { remotes?: Record<string, unknown> };
    return cache.remotes?.[p.origin] ?? null;
  };
  const tree = (dir: string): string[] => {
    if (!fs.existsSync(dir)) return [];
    return fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => {
      const st = fs.statSync(path.join(dir, f));
      return `${f} ${st.size} ${st.mtimeMs}`;
    }).sort();
  };
  return {
    laptopRefs: refs(laptop, p.laptop),
    vegaRefs: refs(vega, p.vega),
    laptopWorktrees: gitAs(laptop, p.laptop, ['worktree', 'list', '--porcelain']),
    vegaWorktrees: gitAs(vega, p.vega, ['worktree', 'list', '--porcelain']),
    laptopStash: gitAs(laptop, p.laptop, ['stash', 'list']),
    vegaStash: gitAs(vega, p.vega, ['stash', 'list']),
    laptopStatus: gitAs(laptop, p.laptop, ['status', '--porcelain', '--untracked-files=all']),
    vegaStatus: gitAs(vega, p.vega, ['status', '--porcelain', '--untracked-files=all']),
    vegaWorktreeHome: fs.existsSync(`${p.vega}.worktrees`),
    laptopCache: cacheEntry(laptop),
    vegaCache: cacheEntry(vega),
    sessions: sessionDirs.map((d) => [d, tree(d)]),
    changedHash: sha(path.join(p.laptop, 'README.md')),
  };
}

describe('send --dry-run', () => {
  it('changes nothing on either machine and does not refuse a busy agent', async () => {
    const p = makeProject(world, 'modes-dry');
    gitAs(laptop, p.laptop, ['checkout', '-q', '-b', 'feature-dry']);
    const name = `dry-${suffix()}`;
    const agent = await startIdle(laptop, 'pi', p.laptop, name);
    writeAs(laptop, path.join(p.laptop, 'README.md'), 'hello\ndry run edit\n');
    writeAs(laptop, path.join(p.laptop, 'new.txt'), 'untracked\n');

    // The agent's own session folder at the source.
    const laptopSessions = path.dirname((await agentNamed(laptop, name))!.agent_session!.value);
    const before = stateOf(p, [laptopSessions]);

    const r = await send([name, 'vega', '--dry-run']);
    expectOk(r);
    expect(r.code).toBe(0);
    expect(r.json.dry_run).toBe(true);
    expect(r.json.target_agent).toBeUndefined();
    expect(r.json.plan.will_create).toMatchObject({ branch: 'feature-dry', worktree: `${p.vega}.worktrees/feature-dry` });
    expect(stateOf(p, [laptopSessions])).toEqual(before);
    // This machine remembers where vega keeps the checkout (a hint of its own, checked each time):
    // the send that follows looks there at once.
    const memory = JSON.parse(fs.readFileSync(path.join(laptop.home, '.local', 'state', 'agent-handoff', 'checkouts.json'), 'utf8')) as { hosts: Record<string, Record<string, string[]>> };
    expect(Object.values(memory.hosts).flatMap((repos) => Object.values(repos).flat())).toContain(p.vega);
    // And where vega's first TCP connect went, for the launcher to dial at once next time.
    const dials = JSON.parse(fs.readFileSync(path.join(laptop.home, '.cache', 'agent-handoff', 'dial.json'), 'utf8')) as { targets: Record<string, unknown> };
    expect(dials.targets.vega).toEqual({ host: world.sshd.host, port: world.sshd.port });
    // Where the session would go on vega does not exist.
    const vegaSessions = path.dirname(r.json.plan.will_create.session_file);
    expect(fs.existsSync(vegaSessions)).toBe(false);
    expect((await agentNamed(laptop, name))?.pane_id).toBe(agent.pane);

    // A working agent is planned, not refused; still nothing changes (its own turn aside).
    await prompt(laptop, agent.pane, 'sleep 8');
    await waitWorking(laptop, name);
    const busy = await send([name, 'vega', '--dry-run']);
    expectOk(busy);
    expect(busy.json.dry_run).toBe(true);
    expect((busy.json.plan as unknown as { agent: { status: string } }).agent.status).toBe('working');
    const after = stateOf(p, []);
    for (const key of ['laptopRefs', 'vegaRefs', 'laptopWorktrees', 'vegaWorktrees', 'laptopStash', 'vegaStash', 'laptopStatus', 'vegaStatus', 'vegaWorktreeHome', 'laptopCache', 'vegaCache', 'changedHash']) {
      expect(after[key], key).toEqual(before[key]);
    }
    expect(fs.existsSync(vegaSessions)).toBe(false);
    expect((await agentNamed(laptop, name))?.pane_id).toBe(agent.pane);
  }, 90_000);

  it('asks the look again when the target is no longer what was remembered of it', async () => {
    const p = makeProject(world, 'modes-dry-facts');
    gitAs(laptop, p.laptop, ['checkout', '-q', '-b', 'feature-facts']);
    const name = `facts-${suffix()}`;
    await startIdle(laptop, 'pi', p.laptop, name);
    const first = await send([name, 'vega', '--dry-run']);
    expectOk(first);
    // What the first run learned of vega (its login probe's facts), kept for the next run's early look.
    const file = path.join(laptop.home, '.local', 'state', 'agent-handoff', 'hosts.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const learned = JSON.parse(fs.readFileSync(file, 'utf8')) as { hosts: Record<string, { home: string; loginEnv: Record<string, string> }> };
    // (The entry of the world's sshd: a bench run leaves others for vega, through its own ports.)
    const [address, facts] = Object.entries(learned.hosts).find(([a, f]) => f.home === vega.home && a.endsWith(`:${world.sshd.port}`))!;

    // Remembered facts that no longer hold (another home): an early look on them would place
    // the session under it.
    const stale = { ...facts, loginEnv: { ...facts.loginEnv, HOME: '/tmp' }, home: '/tmp' };
    writeAs(laptop, file, JSON.stringify({ version: 1, hosts: { ...learned.hosts, [address]: stale } }));
    const again = await send([name, 'vega', '--dry-run']);
    expectOk(again);
    expect({ ...again.json.plan, id: null }).toEqual({ ...first.json.plan, id: null });
    // And the facts the probe found replace the stale ones.
    expect((JSON.parse(fs.readFileSync(file, 'utf8')) as typeof learned).hosts[address]).toEqual(facts);
  }, 90_000);
});
