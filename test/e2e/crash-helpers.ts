// Shared checks for the crash, recover-marker, hostile and concurrent e2e tests: where the agent
// runs, what the target holds, and whether any uncommitted byte went missing.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { gitAs, herdr, herdrOk, makeProject, resetClone, runAs, screen, waitFor, writeAs, type ProcResult, type Project } from '../helpers/e2e.js';
import { laptopAlias, type World, type WorldUser } from '../world/machines.js';
import { lockName, paneLockKey } from '../../src/handoff/lock.js';
import { expectedSocket } from '../../src/herdr/socket-path.js';

/** git blob id of a file's bytes (as `git hash-object` computes it). */
export function blobId(data: Buffer): string {
  return createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
}

/** Every file of a checkout except .git, as path → blob id. */
export function treeHashes(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out[path.relative(root, p)] = blobId(fs.readFileSync(p));
    }
  };
  walk(root);
  return out;
}

/** The files a stash entry brings back (tracked tree + untracked parent), path → blob id. */
export function stashHashes(user: WorldUser, repo: string, stash: string): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (rev: string) => {
    for (const l of gitAs(user, repo, ['ls-tree', '-r', '-z', rev]).split('\0').filter(Boolean)) {
      const [meta, file] = l.split('\t');
      out[file!] = meta!.split(' ')[2]!;
    }
  };
  add(stash);
  const parents = gitAs(user, repo, ['rev-list', '--parents', '-n', '1', stash]).trim().split(' ');
  if (parents.length === 4) add(`${stash}^3`);
  return out;
}

export interface AgentRow {
  pane_id: string;
  name?: string | null;
  agent?: string | null;
  cwd?: string | null;
  foreground_cwd?: string | null;
  agent_status?: string;
}

export async function agents(world: World, user: WorldUser): Promise<AgentRow[]> {
  const r = await herdrOk(world, user, ['agent', 'list']);
  return ((r.result as { agents?: AgentRow[] }).agents ?? []).filter((a) => !!a.agent);
}

export async function workspaces(world: World, user: WorldUser): Promise<{ workspace_id: string; label?: string }[]> {
  const r = await herdrOk(world, user, ['workspace', 'list']);
  return (r.result as { workspaces?: { workspace_id: string; label?: string }[] }).workspaces ?? [];
}

export function under(p: string | null | undefined, dir: string): boolean {
  return !!p && (p === dir || p.startsWith(`${dir}/`) || p.startsWith(`${dir}.worktrees/`));
}

/** Run agent-handoff as a user without assuming it finishes (it may be SIGKILLed by a hook). */
export function runHandoff(world: World, user: WorldUser, args: string[], env: Record<string, string> = {}, timeoutMs = 120_000): Promise<ProcResult> {
  return runAs(user, [process.execPath, world.app, ...args], { env: { ...world.fastEnv, ...env }, timeoutMs });
}

export function lastJson(r: ProcResult): Record<string, unknown> | null {
  const text = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

export function journalDir(user: WorldUser): string {
  return path.join(user.home, '.local', 'state', 'agent-handoff', 'handoffs');
}

/** Journal files of a user, newest last. */
export function journals(user: WorldUser): string[] {
  const dir = journalDir(user);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => path.join(dir, f));
}

export function journalEvents(file: string): { type: string; step?: string; data?: Record<string, unknown> }[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { type: string; step?: string; data?: Record<string, unknown> }];
      } catch {
        return [];
      }
    });
}

/** What the target repository holds besides its main checkout: refs, worktrees, branches. */
export function targetLeftovers(user: WorldUser, repo: string, keepBranches: string[] = ['main']): string[] {
  const out: string[] = [];
  const refs = gitAs(user, repo, ['for-each-ref', '--format=%(refname)', 'refs/handoff']).trim();
  if (refs) out.push(`refs: ${refs}`);
  const wts = gitAs(user, repo, ['worktree', 'list', '--porcelain']).split('\n').filter((l) => l.startsWith('worktree ')).slice(1);
  if (wts.length) out.push(`worktrees: ${wts.join(', ')}`);
  const branches = gitAs(user, repo, ['for-each-ref', '--format=%(refname:short)', 'refs/heads']).trim().split('\n').filter((b) => b && !keepBranches.includes(b));
  if (branches.length) out.push(`branches: ${branches.join(', ')}`);
  const home = `${repo}.worktrees`;
  if (fs.existsSync(home) && fs.readdirSync(home).length > 0) out.push(`files in ${home}: ${fs.readdirSync(home).join(', ')}`);
  return out;
}

/** Incoming markers left on a user's machine. */
export function markers(user: WorldUser): string[] {
  const dir = path.join(user.home, '.local', 'state', 'agent-handoff', 'incoming');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

/** Lock folders left on a user's machine. */
/** The lock folder of a pane of the user's own (default) herdr server, as the source names it. */
export function paneLockOf(user: WorldUser, pane: string): string {
  return lockName(paneLockKey(pane, expectedSocket({}, user.home)));
}

export function locks(user: WorldUser): string[] {
  const dir = path.join(user.home, '.local', 'state', 'agent-handoff', 'locks');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

export async function closeWorkspace(world: World, user: WorldUser, id: string): Promise<void> {
  await herdr(world, user, ['workspace', 'close', id]).catch(() => undefined);
}

/** An ssh alias for vega (or `user`) in laptop's ssh config, pointing at `port`. */
export function sshAlias(world: World, name: string, port: number, user = 'vega'): () => void {
  return laptopAlias(world, name, port, { user, options: ['ConnectTimeout 5'] });
}

/** A loopback TCP proxy to sshd whose open connections can be cut at will (the network drops). */
export async function cuttableProxy(target: { host: string; port: number }): Promise<{ port: number; cut: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    cut: () => {
      const n = sockets.size;
      for (const s of sockets) s.destroy();
      return n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A TCP listener that accepts and never says a word (a hung machine behind a live port). */
export async function silentListener(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A laptop project with a source pane for one agent (crash lanes, recover-marker cases). */
export interface Lane {
  p: Project;
  name: string;
  branch: string;
  workspace: string;
  pane: string;
}

/** A project `<prefix>-<tag>` and an empty workspace for the agent on laptop. */
export async function makeLane(world: World, prefix: string, tag: string): Promise<Lane> {
  const p = makeProject(world, `${prefix}-${tag}`);
  const name = `${prefix}-${tag}-${Math.random().toString(36).slice(2, 6)}`;
  const ws = (await herdrOk(world, world.users.laptop!, ['workspace', 'create', '--cwd', p.laptop, '--label', name, '--no-focus'])) as { result: { workspace: { workspace_id: string }; root_pane: { pane_id: string } } };
  return { p, name, branch: `feat-${prefix}-${tag}`, workspace: ws.result.workspace.workspace_id, pane: ws.result.root_pane.pane_id };
}

/** Start pi in the source pane (a fresh session with one exchange) unless it already runs there. */
export async function ensureAgentAtSource(world: World, { name, pane }: Lane): Promise<void> {
  const laptop = world.users.laptop!;
  if ((await agents(world, laptop)).some((a) => a.pane_id === pane)) return;
  await waitFor('pi to start in the source pane', async () => {
    const r = await herdr(world, laptop, ['agent', 'start', name, '--kind', 'pi', '--pane', pane, '--', 'first prompt']);
    if (r.code === 0) return true;
    if (/not an available shell/.test(r.stderr)) return false;
    throw new Error(`agent start failed: ${r.stderr}`);
  });
  await waitFor('the first reply', async () => /Fake reply: first prompt/.test(await screen(world, laptop, pane)));
  await waitFor(`${name} idle with a session`, async () => {
    const a = (await agents(world, laptop)).find((x) => x.pane_id === pane) as { agent_status?: string; agent_session?: unknown } | undefined;
    return a?.agent_session && (a.agent_status === 'idle' || a.agent_status === 'done');
  });
}

/** Both checkouts back to main, the branch with one commit, and uncommitted work of every sort. */
export function freshWork(world: World, { p, branch }: Lane): void {
  const laptop = world.users.laptop!;
  resetClone(world, laptop, p.laptop);
  resetClone(world, world.users.vega!, p.vega);
  fs.rmSync(`${p.vega}.worktrees`, { recursive: true, force: true });
  gitAs(laptop, p.laptop, ['checkout', '-q', '-b', branch]);
  writeAs(laptop, path.join(p.laptop, 'src', 'crash.ts'), `export const at = ${Date.now()};\n`);
  gitAs(laptop, p.laptop, ['add', '-A']);
  gitAs(laptop, p.laptop, ['commit', '-q', '-m', 'crash branch work']);
  writeAs(laptop, path.join(p.laptop, 'README.md'), 'hello\nedited before the crash\n');
  writeAs(laptop, path.join(p.laptop, 'notes', 'untracked ü.txt'), `untracked ${Math.random()}\n`);
  fs.rmSync(path.join(p.laptop, 'src', 'app.ts'));
}

/** What the crash checks need from before the send. */
export interface Before {
  files: Record<string, string>;
  stash: string;
}

export function takeBefore(world: World, { p }: Lane): Before {
  return { files: treeHashes(p.laptop), stash: gitAs(world.users.laptop!, p.laptop, ['stash', 'list', '--format=%H']) };
}

/** The journal header fields the checks use. */
export interface Header {
  session: string;
  plan: { will_create: { session_file: string; worktree: string } };
}

/** `send <agent> vega` as laptop with a kill hook; returns the new journal of this agent. */
export async function killedSend(world: World, lane: Lane, hook: string): Promise<{ sent: ProcResult; journal: string; id: string; header: Header }> {
  const laptop = world.users.laptop!;
  const before = new Set(journals(laptop));
  const sent = await runHandoff(world, laptop, ['send', lane.name, 'vega', '--no-focus', '--wait', '--quiet'], { AGENT_HANDOFF_TEST_KILL_AT: hook });
  // Other test files run handoffs as laptop too: ours is the new journal naming our agent.
  const journal = journals(laptop).find((j) => !before.has(j) && (journalEvents(j).find((e) => e.type === 'header')?.data as { agent?: string } | undefined)?.agent === lane.name);
  if (!journal) throw new Error(`no journal for ${hook}: ${sent.stdout}\n${sent.stderr}`);
  const header = journalEvents(journal).find((e) => e.type === 'header')!.data as unknown as Header;
  return { sent, journal, id: path.basename(journal, '.jsonl'), header };
}

export interface EndState {
  agentAt: 'source' | 'target' | 'nowhere' | 'both';
  filesKept: boolean;
  leftovers: string[];
}

function sorted(o: Record<string, string>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b))));
}

/**
 * After recover: where the agent runs (exactly one of source pane / vega), whether every
 * uncommitted byte is where it should be (target worktree + source stash, or still at the source),
 * and what is left over (refs, worktrees, branches, workspaces, session file, marker, lock).
 */
export async function endState(world: World, lane: Lane, before: Before, id: string, header: Header): Promise<EndState> {
  const laptop = world.users.laptop!;
  const vega = world.users.vega!;
  const { p, pane, branch } = lane;
  const atSource = (await agents(world, laptop)).some((a) => a.pane_id === pane);
  const onVega = (await agents(world, vega)).filter((a) => under(a.foreground_cwd ?? a.cwd, p.vega));
  const agentAt: EndState['agentAt'] = atSource && onVega.length === 0 ? 'source' : !atSource && onVega.length === 1 ? 'target' : atSource ? 'both' : 'nowhere';
  let filesKept: boolean;
  const leftovers: string[] = [];
  const vegaWs = (await workspaces(world, vega)).filter((w) => w.label?.startsWith(branch));
  if (agentAt === 'target') {
    const newStash = gitAs(laptop, p.laptop, ['stash', 'list', '--format=%H']).trim().split('\n')[0]!;
    filesKept =
      sorted(treeHashes(header.plan.will_create.worktree)) === sorted(before.files) &&
      sorted(stashHashes(laptop, p.laptop, newStash)) === sorted(before.files) &&
      gitAs(laptop, p.laptop, ['status', '--porcelain']).trim() === '';
    leftovers.push(...targetLeftovers(vega, p.vega, ['main', branch]).filter((l) => !l.startsWith('worktrees:') && !l.startsWith('files in')));
    if (vegaWs.length !== 1) leftovers.push(`vega workspaces: ${vegaWs.length}`);
  } else {
    filesKept = sorted(treeHashes(p.laptop)) === sorted(before.files) && gitAs(laptop, p.laptop, ['stash', 'list', '--format=%H']) === before.stash;
    leftovers.push(...targetLeftovers(vega, p.vega));
    if (vegaWs.length) leftovers.push(`vega workspaces: ${vegaWs.map((w) => w.workspace_id).join(', ')}`);
    if (fs.existsSync(header.plan.will_create.session_file)) leftovers.push(`session file ${header.plan.will_create.session_file}`);
  }
  if (gitAs(laptop, p.laptop, ['for-each-ref', 'refs/handoff']).trim()) leftovers.push('laptop refs/handoff');
  if (markers(vega).some((m) => m.startsWith(id))) leftovers.push('marker on vega');
  const myLocks = locks(laptop).filter((l) => l.includes(header.session));
  if (myLocks.length) leftovers.push(`locks: ${myLocks.join(', ')}`);
  return { agentAt, filesKept, leftovers };
}

/** Reset for the next case: the target agent and its session leave vega. */
export async function clearVega(world: World, lane: Lane, header: Header): Promise<void> {
  const vega = world.users.vega!;
  for (const w of (await workspaces(world, vega)).filter((x) => x.label?.startsWith(lane.branch))) await closeWorkspace(world, vega, w.workspace_id);
  fs.rmSync(path.dirname(header.plan.will_create.session_file), { recursive: true, force: true });
}
