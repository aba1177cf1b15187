// Hostile input: agent refs and --session values full of shell syntax are refused with a clear
// error; a repository whose path, branch and file names are shell syntax is handed off intact to
// a user whose login shell is fish. Canary files (what `touch` in those strings would create)
// prove that no shell on either machine interpreted any of it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { gitAs, herdr, makeProject, runAs, startFakeAgent, waitFor, writeAs, type Project } from '../helpers/e2e.js';
import { runAsSync, userEnv, type World, type WorldUser } from '../world/machines.js';
import { agents, closeWorkspace, lastJson, runHandoff, sshAlias, targetLeftovers, treeHashes } from './crash-helpers.js';

const tag = Math.random().toString(36).slice(2, 6);
const CANARY = `canary-${tag}`;
const REPO_NAME = `it's "a" $(touch ${CANARY}) ü`;
// git refuses spaces in branch names; ${IFS} is how a shell would still get one.
const BRANCH = `feat/$(touch\${IFS}${CANARY});\`touch\${IFS}${CANARY}\``;
const HOSTILE = [`$(touch ${CANARY})`, `\`touch ${CANARY}\``, `x; touch ${CANARY}`, `a b`, `it's "q"`, `line\nbreak`, `-rf`, `--help`, `ünï ✓`, `|| touch ${CANARY} &`, `../../../etc/passwd`, `/etc/passwd`];

let world: World;
let laptop: WorldUser;
let fish: WorldUser;
let p: Project;
let fishServer: number | undefined;
let restoreAlias: (() => void) | undefined;
const opened: { user: WorldUser; id: string }[] = [];

/** Every file named like the canary under the world's homes and /tmp. */
function canaries(): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 7) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.name.startsWith(CANARY) || e.name === 'canary') found.push(full);
      else if (e.isDirectory() && !e.isSymbolicLink() && e.name !== '.git') walk(full, depth + 1);
    }
  };
  for (const u of Object.values(world.users)) walk(u.home, 0);
  walk('/tmp', 5);
  return found;
}

/** A herdr server for the fish user (it has none in the world); stopped by pid afterwards. */
async function startFishHerdr(): Promise<number> {
  const bin = path.join(world.binDir, 'herdr');
  runAsSync(fish, ['mkdir', '-p', path.join(fish.home, '.config', 'herdr')]);
  const child = spawn(bin, ['server'], { uid: fish.uid, gid: fish.gid, cwd: fish.home, env: userEnv(fish, { ...world.fastEnv, HERDR_BIN_PATH: bin }), detached: true, stdio: 'ignore' });
  child.unref();
  await waitFor('the fish user herdr server', async () => runAsSync(fish, [bin, 'status', 'server', '--json']).stdout.includes('"running":true'));
  // fish's first start generates completions in the pane's process group for a while; until it is
  // done, herdr does not count the pane as an available shell. Let that happen here, once.
  const ws = JSON.parse(runAsSync(fish, [bin, 'workspace', 'create', '--cwd', fish.home, '--label', 'warm-up', '--no-focus']).stdout) as { result: { workspace: { workspace_id: string }; root_pane: { pane_id: string } } };
  await waitFor('a fish pane at its prompt alone', async () => {
    const info = JSON.parse(runAsSync(fish, [bin, 'pane', 'process-info', '--pane', ws.result.root_pane.pane_id]).stdout) as { result: { process_info: { foreground_processes: { name: string }[] } } };
    const fg = info.result.process_info.foreground_processes;
    return fg.length === 1 && fg[0]!.name === 'fish';
  }, 90_000);
  runAsSync(fish, [bin, 'workspace', 'close', ws.result.workspace.workspace_id]);
  return child.pid!;
}

beforeAll(async () => {
  world = await useWorld();
  laptop = world.users.laptop!;
  fish = world.users.vegafish!;
  expect(canaries()).toEqual([]);
  p = makeProject(world, REPO_NAME);
  // The fish user's checkout of the same origin, where discovery will find it.
  const fishRepo = path.join(fish.home, 'code', REPO_NAME);
  fs.rmSync(fishRepo, { recursive: true, force: true });
  fs.rmSync(`${fishRepo}.worktrees`, { recursive: true, force: true });
  runAsSync(fish, ['mkdir', '-p', path.join(fish.home, 'code')]);
  runAsSync(fish, ['git', 'config', '--global', '--add', 'safe.directory', p.origin]);
  const cloned = runAsSync(fish, ['git', 'clone', '-q', p.origin, fishRepo]);
  if (cloned.status !== 0) throw new Error(cloned.stderr);
  fishServer = await startFishHerdr();
  restoreAlias = sshAlias(world, `vegafish-${tag}`, world.sshd.port, 'vegafish');
});

afterAll(async () => {
  if (!world) return;
  for (const w of opened) await closeWorkspace(world, w.user, w.id);
  restoreAlias?.();
  if (fishServer) {
    try {
      process.kill(fishServer, 'SIGTERM');
    } catch {
      // already gone
    }
  }
});

describe('hostile input', () => {
  it('herdr refuses agent names with shell syntax', async () => {
    const ws = await herdr(world, laptop, ['workspace', 'create', '--cwd', p.laptop, '--label', `hn-${tag}`, '--no-focus']);
    const id = (ws.json?.result as { workspace: { workspace_id: string }; root_pane: { pane_id: string } }).workspace.workspace_id;
    opened.push({ user: laptop, id });
    const pane = (ws.json?.result as { root_pane: { pane_id: string } }).root_pane.pane_id;
    for (const bad of [HOSTILE[0]!, HOSTILE[2]!, HOSTILE[5]!, HOSTILE[6]!, HOSTILE[8]!]) {
      const r = await herdr(world, laptop, ['agent', 'start', bad, '--kind', 'pi', '--pane', pane]);
      expect(r.code, bad).not.toBe(0);
    }
    expect(canaries()).toEqual([]);
  });

  it('refuses agent refs and --session values with shell syntax, clearly, touching nothing', async () => {
    gitAs(laptop, p.laptop, ['checkout', '-q', '-b', BRANCH]);
    const name = `hostile-${tag}`;
    const a = await startFakeAgent(world, laptop, 'pi', p.laptop, { name, args: ['first prompt'] });
    opened.push({ user: laptop, id: a.workspace });
    const outcomes: string[] = [];
    // Three at a time: each is a whole CLI run.
    const check = async (bad: string) => {
      const asRef = await runHandoff(world, laptop, ['send', bad, '--here', '--dry-run', '--quiet']);
      const refJson = lastJson(asRef);
      expect(asRef.code, `${JSON.stringify(bad)}: ${asRef.stdout}`).not.toBe(0);
      expect(refJson, `${JSON.stringify(bad)}: ${asRef.stdout}${asRef.stderr}`).toMatchObject({ ok: false });
      expect(typeof refJson?.code).toBe('string');
      const asSession = await runHandoff(world, laptop, ['send', name, '--here', '--dry-run', '--quiet', `--session=${bad}`]);
      const sessionJson = lastJson(asSession);
      expect(asSession.code, `--session ${JSON.stringify(bad)}: ${asSession.stdout}`).not.toBe(0);
      expect(sessionJson, `--session ${JSON.stringify(bad)}: ${asSession.stdout}${asSession.stderr}`).toMatchObject({ ok: false });
      outcomes.push(`${JSON.stringify(bad)} → ref: ${String(refJson?.code)}, --session: ${String(sessionJson?.code)}`);
    };
    for (let i = 0; i < HOSTILE.length; i += 3) await Promise.all(HOSTILE.slice(i, i + 3).map(check));
    console.log(outcomes.join('\n'));
    expect(canaries()).toEqual([]);
    // The agent is untouched.
    expect((await agents(world, laptop)).some((x) => x.pane_id === a.pane)).toBe(true);
  }, 300_000);

  it('hands off a repo, branch and files named with shell syntax to a fish user, intact', async () => {
    const name = `hostile-${tag}`;
    writeAs(laptop, path.join(p.laptop, `committed $(touch ${CANARY}).md`), 'committed\n');
    gitAs(laptop, p.laptop, ['add', '-A']);
    gitAs(laptop, p.laptop, ['commit', '-q', '-m', `commit; touch ${CANARY}`]);
    writeAs(laptop, path.join(p.laptop, `it's "q" $(touch ${CANARY}).txt`), 'quoted\n');
    writeAs(laptop, path.join(p.laptop, `\`touch ${CANARY}\`;.txt`), 'backticks\n');
    writeAs(laptop, path.join(p.laptop, '-rf --no-preserve-root.txt'), 'dash\n');
    writeAs(laptop, path.join(p.laptop, 'new\nline.txt'), 'newline in the name\n');
    writeAs(laptop, path.join(p.laptop, 'dir with space', 'ü – ✓.txt'), 'unicode\n');
    writeAs(laptop, path.join(p.laptop, 'README.md'), `hello\n$(touch ${CANARY})\n`);
    const before = treeHashes(p.laptop);
    await waitFor('the agent idle', async () => {
      const row = (await agents(world, laptop)).find((x) => x.name === name);
      return row && (row.agent_status === 'idle' || row.agent_status === 'done');
    });
    const r = await runHandoff(world, laptop, ['send', name, `vegafish-${tag}`, '--no-focus', '--quiet']);
    const out = lastJson(r) as { ok: boolean; target_worktree: string; branch: string; target_agent: { workspace: string; pane: string } } | null;
    if (out?.target_agent) opened.push({ user: fish, id: out.target_agent.workspace });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    const fishRepo = path.join(fish.home, 'code', REPO_NAME);
    expect(out!.branch).toBe(BRANCH);
    expect(out!.target_worktree.startsWith(`${fishRepo}.worktrees/`)).toBe(true);
    expect(treeHashes(out!.target_worktree)).toEqual(before);
    expect(gitAs(fish, out!.target_worktree, ['rev-parse', '--abbrev-ref', 'HEAD']).trim()).toBe(BRANCH);
    expect(targetLeftovers(fish, fishRepo, ['main', BRANCH]).filter((l) => l.startsWith('refs'))).toEqual([]);
    // The agent runs there, in that folder.
    const live = await runAs(fish, [path.join(world.binDir, 'herdr'), 'agent', 'list'], { env: world.fastEnv });
    expect(live.stdout).toContain(out!.target_agent.pane);
    expect(canaries()).toEqual([]);
  }, 150_000);
});
