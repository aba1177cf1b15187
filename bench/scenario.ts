// The job both variants do: a fake agent (pi unless asked) with a conversation, on a feature branch with
// uncommitted work of every sort, moves from the laptop to vega. Set up before the clock starts,
// checked after it stops (so a variant that leaves the wrong end state does not count).
import fs from 'node:fs';
import path from 'node:path';
import { gitAs, herdr, herdrOk, installIntegration, makeProject, screen, startFakeAgent, waitFor, writeAs, type Project, type StartedAgent } from '../test/helpers/e2e.js';
import type { World } from '../test/world/machines.js';

export interface Prepared {
  /** The agent's kind: pi, claude, codex, omp or grok. */
  kind: string;
  project: Project;
  agent: StartedAgent;
  branch: string;
  head: string;
}

export interface Landed {
  pane: string;
  workspace: string;
  worktree: string;
}

export async function prepare(world: World, project: string, agentName: string, kind = 'pi'): Promise<Prepared> {
  const laptop = world.users.laptop!;
  const vega = world.users.vega!;
  const p = makeProject(world, project);
  const branch = 'feature';
  gitAs(laptop, p.laptop, ['checkout', '-q', '-b', branch]);
  writeAs(laptop, path.join(p.laptop, 'src', 'feature.ts'), 'export const feature = true;\n');
  gitAs(laptop, p.laptop, ['add', '-A']);
  gitAs(laptop, p.laptop, ['commit', '-q', '-m', 'feature work']);
  // Both variants find the agent's integration in place on vega (agent-handoff would install it).
  await installIntegration(world, vega, kind);
  const agent = await startFakeAgent(world, laptop, kind, p.laptop, { name: agentName, args: ['first prompt'], waitSession: false });
  try {
    // A new folder: claude and codex first ask whether to trust it (yes is the first choice).
    let answered = false;
    await waitFor('the first reply', async () => {
      const text = await screen(world, laptop, agent.pane);
      if (!answered && /trust this folder/i.test(text)) {
        answered = true;
        await herdr(world, laptop, ['pane', 'send-keys', agent.pane, 'enter']);
      }
      return /Fake reply: first prompt/.test(text);
    });
    await waitFor(`${agentName} idle with its session`, async () => {
      const r = await herdr(world, laptop, ['agent', 'get', agentName]);
      const a = (r.json?.result as { agent?: { agent_status?: string; agent_session?: unknown } } | undefined)?.agent;
      return a?.agent_session && (a.agent_status === 'idle' || a.agent_status === 'done');
    });
  } catch (err) {
    await herdr(world, laptop, ['workspace', 'close', agent.workspace]).catch(() => undefined);
    throw err;
  }
  writeAs(laptop, path.join(p.laptop, 'README.md'), 'hello\nedited on the laptop\n');
  writeAs(laptop, path.join(p.laptop, 'notes', 'new file.txt'), 'untracked work\n');
  fs.rmSync(path.join(p.laptop, 'src', 'app.ts'));
  return { kind, project: p, agent, branch, head: gitAs(laptop, p.laptop, ['rev-parse', 'HEAD']).trim() };
}

/** The end state the issue asks for; throws with what is wrong. */
export async function verifyLanded(world: World, prep: Prepared, landed: Landed): Promise<void> {
  const laptop = world.users.laptop!;
  const vega = world.users.vega!;
  const wt = landed.worktree;
  const expectThat = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`end state: ${what}`);
  };
  // The resumed agent shows its cwd and the earlier conversation (so it has its session).
  await waitFor(`the resumed agent in ${wt}`, async () => {
    const text = await screen(world, vega, landed.pane);
    return text.includes(`cwd: ${wt}`) && text.includes('Fake reply: first prompt');
  }, 15_000);
  const got = await herdrOk(world, vega, ['agent', 'get', prep.agent.name]);
  expectThat((got.result as { agent: { agent: string } }).agent.agent === prep.kind, `a ${prep.kind} agent on vega`);
  expectThat(gitAs(vega, wt, ['rev-parse', 'HEAD']).trim() === prep.head, 'HEAD on vega equals the laptop HEAD');
  expectThat(gitAs(vega, wt, ['symbolic-ref', '--short', 'HEAD']).trim() === prep.branch, 'the branch checked out on vega');
  expectThat(fs.readFileSync(path.join(wt, 'README.md'), 'utf8') === 'hello\nedited on the laptop\n', 'the edit on vega');
  expectThat(fs.readFileSync(path.join(wt, 'notes', 'new file.txt'), 'utf8') === 'untracked work\n', 'the untracked file on vega');
  expectThat(!fs.existsSync(path.join(wt, 'src', 'app.ts')), 'the deletion on vega');
  expectThat(gitAs(vega, prep.project.vega, ['for-each-ref', 'refs/handoff']) === '', 'no transfer refs left on vega');
  expectThat(gitAs(laptop, prep.project.laptop, ['stash', 'list']).trim() !== '', 'the changes stashed on the laptop');
  expectThat(fs.readFileSync(path.join(prep.project.laptop, 'README.md'), 'utf8') === 'hello\n', 'the laptop files back at HEAD');
}

export async function cleanUp(world: World, prep: Prepared, landed: Partial<Landed>): Promise<void> {
  await herdr(world, world.users.laptop!, ['workspace', 'close', prep.agent.workspace]).catch(() => undefined);
  const vega = world.users.vega!;
  let workspace = landed.workspace;
  if (!workspace) {
    // A variant that failed half-way may still have started the agent on vega.
    const r = await herdr(world, vega, ['agent', 'get', prep.agent.name]).catch(() => null);
    workspace = (r?.json?.result as { agent?: { workspace_id?: string } } | undefined)?.agent?.workspace_id;
  }
  if (workspace) await herdr(world, vega, ['workspace', 'close', workspace]).catch(() => undefined);
}
