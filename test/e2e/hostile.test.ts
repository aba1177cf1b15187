// Hostile input: agent refs and --session values full of shell syntax are refused with a clear
// error; a repository whose path, branch and file names are shell syntax is handed off intact
// along a chain that puts every login shell on both ends: laptop (bash, local) → fish → sh → zsh
// → vega (bash), the later hops driven from the laptop with --from. Canary files (what `touch` in
// those strings would create) prove that no shell on any machine interpreted any of it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { gitAs, herdr, herdrOk, makeProject, startFakeAgent, waitFor, writeAs, type Project } from '../helpers/e2e.js';
import { runAsSync, userEnv, type World, type WorldUser } from '../world/machines.js';
import { agents, closeWorkspace, lastJson, runHandoff, sshAlias, targetLeftovers, treeHashes } from './crash-helpers.js';

const tag = Math.random().toString(36).slice(2, 6);
const CANARY = `canary-${tag}`;
const REPO_NAME = `it's "a" $(touch ${CANARY}) ü`;
// git refuses spaces in branch names; ${IFS} is how a shell would still get one.
const BRANCH = `feat/$(touch\${IFS}${CANARY});\`touch\${IFS}${CANARY}\``;
const HOSTILE = [`$(touch ${CANARY})`, `\`touch ${CANARY}\``, `x; touch ${CANARY}`, `a b`, `it's "q"`, `line\nbreak`, `-rf`, `--help`, `ünï ✓`, `|| touch ${CANARY} &`, `../../../etc/passwd`, `/etc/passwd`];

// The target users whose login shells differ; each gets a herdr server and a clone for the test.
const SHELL_HOPS = ['vegafish', 'vegash', 'vegazsh'] as const;

let world: World;
let laptop: WorldUser;
let p: Project;
/** A project of its own for the refusal checks, so they run beside the handoff chain. */
let q: Project;
const servers: number[] = [];
const restoreAliases: (() => void)[] = [];
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

/**
 * A herdr server for a shell user (they have none in the world); stopped by pid afterwards. Waits
 * until a fresh pane is at its login shell's prompt alone (fish's first start may run completion
 * generation in the pane's process group; until it is done herdr sees no available shell).
 */
async function startUserHerdr(user: WorldUser): Promise<number> {
  const bin = path.join(world.binDir, 'herdr');
  runAsSync(user, ['mkdir', '-p', path.join(user.home, '.config', 'herdr')]);
  const child = spawn(bin, ['server'], { uid: user.uid, gid: user.gid, cwd: user.home, env: userEnv(user, { ...world.fastEnv, HERDR_BIN_PATH: bin }), detached: true, stdio: 'ignore' });
  child.unref();
  await waitFor(`the ${user.name} herdr server`, async () => runAsSync(user, [bin, 'status', 'server', '--json']).stdout.includes('"running":true'));
  const ws = (await herdrOk(world, user, ['workspace', 'create', '--cwd', user.home, '--label', 'warm-up', '--no-focus'])) as { result: { workspace: { workspace_id: string }; root_pane: { pane_id: string } } };
  const shell = path.basename(user.shell);
  await waitFor(`a ${shell} pane at its prompt alone`, async () => {
    const info = (await herdrOk(world, user, ['pane', 'process-info', '--pane', ws.result.root_pane.pane_id])) as { result: { process_info: { foreground_processes: { name: string }[] } } };
    const fg = info.result.process_info.foreground_processes;
    return fg.length === 1 && fg[0]!.name === shell;
  }, 90_000);
  await closeWorkspace(world, user, ws.result.workspace.workspace_id);
  return child.pid!;
}

/** The user's checkout of the project's origin, where discovery will find it. */
function cloneFor(user: WorldUser): string {
  const repo = path.join(user.home, 'code', REPO_NAME);
  fs.rmSync(repo, { recursive: true, force: true });
  fs.rmSync(`${repo}.worktrees`, { recursive: true, force: true });
  runAsSync(user, ['mkdir', '-p', path.join(user.home, 'code')]);
  runAsSync(user, ['git', 'config', '--global', '--add', 'safe.directory', p.origin]);
  const cloned = runAsSync(user, ['git', 'clone', '-q', p.origin, repo]);
  if (cloned.status !== 0) throw new Error(cloned.stderr);
  return repo;
}

beforeAll(async () => {
  world = await useWorld();
  laptop = world.users.laptop!;
  expect(canaries()).toEqual([]);
  p = makeProject(world, REPO_NAME);
  q = makeProject(world, `${REPO_NAME} refs`);
  gitAs(laptop, p.laptop, ['checkout', '-q', '-b', BRANCH]);
  await Promise.all([
    ...SHELL_HOPS.map(async (name) => {
      const user = world.users[name]!;
      cloneFor(user);
      servers.push(await startUserHerdr(user));
    }),
    // The agent the chain hands off, on the hostile branch.
    startFakeAgent(world, laptop, 'pi', p.laptop, { name: `hostile-${tag}`, args: ['first prompt'] }).then((a) => opened.push({ user: laptop, id: a.workspace })),
  ]);
  for (const name of [...SHELL_HOPS, 'vega']) restoreAliases.push(sshAlias(world, `${name}-${tag}`, world.sshd.port, name));
}, 180_000);

afterAll(async () => {
  if (!world) return;
  for (const w of opened) await closeWorkspace(world, w.user, w.id);
  for (const restore of restoreAliases) restore();
  for (const pid of servers) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  // fish keeps its runtime files in /tmp/fish.<user> when XDG_RUNTIME_DIR is not set (it is not, over
  // ssh): made by the fish logins of this test, removed with them (fish makes it again when needed).
  fs.rmSync('/tmp/fish.vegafish', { recursive: true, force: true });
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

  // The refusals and the handoff chain use their own projects and agents: they run side by side.
  it.concurrent('refuses agent refs and --session values with shell syntax, clearly, touching nothing', async ({ expect }) => {
    const name = `hostile-refs-${tag}`;
    const a = await startFakeAgent(world, laptop, 'pi', q.laptop, { name, args: ['first prompt'] });
    opened.push({ user: laptop, id: a.workspace });
    const outcomes: string[] = [];
    // Three at a time: each is a whole CLI run.
    const check = async (bad: string) => {
      const asRef = await runHandoff(world, laptop, ['send', bad, '--here', '--dry-run', '--quiet']);
      const refJson = lastJson(asRef);
      if (bad === '--help' || bad === '-h') {
        // Not a ref but the help flag: send's usage, and nothing else happens.
        expect(asRef.code, `${JSON.stringify(bad)}: ${asRef.stdout}`).toBe(0);
        expect(refJson).toMatchObject({ ok: true, command: 'help' });
      } else {
        expect(asRef.code, `${JSON.stringify(bad)}: ${asRef.stdout}`).not.toBe(0);
        expect(refJson, `${JSON.stringify(bad)}: ${asRef.stdout}${asRef.stderr}`).toMatchObject({ ok: false });
        expect(typeof refJson?.code).toBe('string');
      }
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

  it.concurrent('hands off a repo, branch and files named with shell syntax through fish, sh, zsh and bash logins, intact', async ({ expect }) => {
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
    // Each hop: the agent leaves `from` (laptop itself first) for `to`, the controller is laptop.
    let from: { user: WorldUser; alias: string | null; agent: string; worktree: string } = { user: laptop, alias: null, agent: name, worktree: p.laptop };
    const hops: string[] = [];
    for (const toName of [...SHELL_HOPS, 'vega']) {
      const to = world.users[toName]!;
      const t0 = Date.now();
      const args = ['send', from.agent, `${toName}-${tag}`, ...(from.alias ? ['--from', from.alias] : []), '--wait', '--no-focus', '--quiet'];
      const r = await runHandoff(world, laptop, args);
      const out = lastJson(r) as { ok: boolean; target_worktree: string; branch: string; target_agent: { name: string; workspace: string; pane: string } } | null;
      if (out?.target_agent) opened.push({ user: to, id: out.target_agent.workspace });
      const hop = `${from.user.name} (${path.basename(from.user.shell)}) → ${toName} (${path.basename(to.shell)})`;
      expect(r.code, `${hop}: ${r.stdout}\n${r.stderr}`).toBe(0);
      const repo = toName === 'vega' ? p.vega : path.join(to.home, 'code', REPO_NAME);
      expect(out!.branch, hop).toBe(BRANCH);
      expect(out!.target_worktree.startsWith(`${repo}.worktrees/`), hop).toBe(true);
      expect(treeHashes(out!.target_worktree), hop).toEqual(before);
      expect(gitAs(to, out!.target_worktree, ['rev-parse', '--abbrev-ref', 'HEAD']).trim(), hop).toBe(BRANCH);
      expect(targetLeftovers(to, repo, ['main', BRANCH]).filter((l) => l.startsWith('refs')), hop).toEqual([]);
      // The agent runs there, in that folder, and no longer at the source, whose changes went to a stash.
      expect((await agents(world, to)).some((a) => a.pane_id === out!.target_agent.pane), hop).toBe(true);
      expect((await agents(world, from.user)).some((a) => a.name === from.agent), hop).toBe(false);
      expect(gitAs(from.user, from.worktree, ['status', '--porcelain', '--untracked-files=all']).trim(), hop).toBe('');
      expect(canaries(), hop).toEqual([]);
      hops.push(`${hop}: ${Date.now() - t0} ms`);
      from = { user: to, alias: `${toName}-${tag}`, agent: out!.target_agent.name, worktree: out!.target_worktree };
    }
    console.log(hops.join('\n'));
  }, 420_000);
});
