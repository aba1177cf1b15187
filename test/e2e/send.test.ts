// e2e: laptop → vega over ssh, for each of the five kinds with fake agents: the agent runs on vega
// in the vega checkout with its session, on the right branch, with the uncommitted changes; the
// source pane is at a shell; the source changes are stashed; the JSON says so.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { withCodexHooks } from '../helpers/codex-hooks.js';
import { gitAs, handoff, herdr, herdrOk, makeProject, screen, startFakeAgent, waitFor, waitForScreen, writeAs, type Project } from '../helpers/e2e.js';
import type { World } from '../world/machines.js';

let world: World;
const workspaces: { user: 'laptop' | 'vega'; id: string }[] = [];

beforeAll(async () => {
  world = await useWorld();
});

afterAll(async () => {
  for (const w of workspaces) await herdr(world, world.users[w.user]!, ['workspace', 'close', w.id]).catch(() => undefined);
});

/** Uncommitted work of every sort in the laptop checkout. */
function makeChanges(p: Project): void {
  const laptop = world.users.laptop!;
  writeAs(laptop, path.join(p.laptop, 'README.md'), 'hello\nedited on the laptop\n');
  writeAs(laptop, path.join(p.laptop, 'notes', 'new file ü.txt'), 'untracked work\n');
  writeAs(laptop, path.join(p.laptop, 'blob.bin'), Buffer.from([0, 1, 2, 255, 254, 0, 10, 13]));
  fs.rmSync(path.join(p.laptop, 'src', 'app.ts'));
}

const KINDS = ['claude', 'codex', 'pi', 'omp', 'grok'] as const;

describe.each(KINDS)('send %s laptop → vega', (kind) => {
  // codex relies on herdr's hook being trusted, which other test files change meanwhile.
  const serial = (fn: () => Promise<void>) => (kind === 'codex' ? withCodexHooks(fn) : fn());
  it('moves the agent with its session, branch and uncommitted changes', () => serial(async () => {
    const laptop = world.users.laptop!;
    const vega = world.users.vega!;
    const p = makeProject(world, `send-${kind}`);
    gitAs(laptop, p.laptop, ['checkout', '-q', '-b', `feature-${kind}`]);
    writeAs(laptop, path.join(p.laptop, 'src', 'feature.ts'), 'export const feature = true;\n');
    gitAs(laptop, p.laptop, ['add', '-A']);
    gitAs(laptop, p.laptop, ['commit', '-q', '-m', 'feature work']);
    const name = `s-${kind}-${Math.random().toString(36).slice(2, 6)}`;
    // Claude and codex ask for folder trust in a repository they do not know yet; trust it at the
    // source as the user did, so the handoff finds an agent at its prompt.
    const agent = await startFakeAgent(world, laptop, kind, p.laptop, { name, args: ['first prompt'], waitSession: false });
    workspaces.push({ user: 'laptop', id: agent.workspace });
    // (The folder may be trusted already from an earlier run: then no screen shows.)
    await waitFor('the first reply', async () => {
      const text = await screen(world, laptop, agent.pane);
      if (/Trust this folder|Quick safety check/.test(text)) await herdrOk(world, laptop, ['pane', 'send-keys', agent.pane, 'enter']);
      return /Fake reply: first prompt/.test(text);
    }, 20_000);
    await waitFor(`${name} idle`, async () => {
      const r = await herdr(world, laptop, ['agent', 'get', name]);
      const a = (r.json?.result as { agent?: { agent_status?: string; agent_session?: unknown } } | undefined)?.agent;
      return a?.agent_session && (a.agent_status === 'idle' || a.agent_status === 'done');
    });
    makeChanges(p);

    const r = await handoff(world, laptop, ['send', name, 'vega', '--no-focus']);
    expect(r.json, `${JSON.stringify(r.json)}\n${r.stderr}`).toMatchObject({ ok: true, command: "send", dry_run: false });
    expect(r.code).toBe(0);
    const out = r.json as Record<string, unknown> & { target_agent: { name: string; pane: string; workspace: string } };
    workspaces.push({ user: 'vega', id: out.target_agent.workspace });
    expect(out).toMatchObject({ branch: `feature-${kind}`, changes_applied: true, source_pane_at_shell: true, attach: 'herdr --remote vega' });
    expect(out.target_worktree).toBe(`${p.vega}.worktrees/feature-${kind}`);
    expect(out.source_stash).toMatchObject({ stashed: true });
    // The target is named as typed (the alias) in the stash message, the progress and the plan;
    // its address only where details report it.
    const planned = out.plan as { id: string; target: { host: string; address: string } };
    expect((out.source_stash as { note: string }).note).toContain(`(agent-handoff ${planned.id} → vega)`);
    expect(planned.target).toMatchObject({ host: 'vega', address: `vega@127.0.0.1:${world.sshd.port}` });
    expect(r.stderr).toContain('sending commits to vega');
    expect(r.stderr).not.toContain('@127.0.0.1');

    // On vega: the agent runs in the vega checkout with its session, and shows it.
    const cwd = out.target_worktree as string;
    const shown = await waitForScreen(world, vega, out.target_agent.pane, 'the resumed agent to show its cwd', (t) => t.includes(`cwd: ${cwd}`), 15_000);
    expect(shown).toContain('Fake reply: first prompt');
    const listed = await herdrOk(world, vega, ['agent', 'get', out.target_agent.name]);
    expect((listed.result as { agent: { agent: string } }).agent.agent).toBe(kind);
    // The work: HEAD, the edits, the untracked file, the binary, the deletion.
    expect(gitAs(vega, cwd, ['rev-parse', 'HEAD']).trim()).toBe(gitAs(laptop, p.laptop, ['rev-parse', 'HEAD']).trim());
    expect(fs.readFileSync(path.join(cwd, 'README.md'), 'utf8')).toBe('hello\nedited on the laptop\n');
    expect(fs.readFileSync(path.join(cwd, 'notes', 'new file ü.txt'), 'utf8')).toBe('untracked work\n');
    expect([...fs.readFileSync(path.join(cwd, 'blob.bin'))]).toEqual([0, 1, 2, 255, 254, 0, 10, 13]);
    expect(fs.existsSync(path.join(cwd, 'src', 'app.ts'))).toBe(false);
    expect(gitAs(vega, p.vega, ['for-each-ref', 'refs/handoff'])).toBe('');
    // At the source: the changes are stashed, the files back at HEAD.
    expect(gitAs(laptop, p.laptop, ['stash', 'list'])).toMatch(/agent-handoff/);
    expect(fs.readFileSync(path.join(p.laptop, 'README.md'), 'utf8')).toBe('hello\n');
    // The resumed session continues in the same file on vega.
    await herdrOk(world, vega, ['pane', 'send-text', out.target_agent.pane, 'after the move']);
    await new Promise((res) => setTimeout(res, 200));
    await herdrOk(world, vega, ['pane', 'send-keys', out.target_agent.pane, 'enter']);
    await waitForScreen(world, vega, out.target_agent.pane, 'a reply on vega', (t) => t.includes('Fake reply: after the move'), 15_000);
    const sessionFile = (out.plan as { will_create: { session_file: string } }).will_create.session_file;
    expect(fs.readFileSync(sessionFile, 'utf8')).toContain('after the move');
    expect(fs.readFileSync(sessionFile, 'utf8')).not.toContain(p.laptop);
  }), 150_000);
});
