// A real agent CLI (installed by scripts/install-real-agents.sh) moved with the product's own
// `agent-handoff send`, in herdr panes of the two-machine world: laptop → vega, back with
// `--from vega`, and laptop → vega once more, each landing checked (resumed in the target
// checkout, the old conversation shown, a new prompt answered by that machine's mock and appended
// to the same session file, no laptop path left, every recorded cwd the target's, the work applied,
// the source pane at its shell with its changes stashed).
//
// How the world users run the real binary for this test's project only: the herdr simulator types
// `<kind> <args>` into a login shell, so a shell function of that name (in
// ~/.ah-real-agents/<kind>.sh, sourced by the interactive part of ~/.bashrc) runs the real binary,
// with the offline settings in its environment, when the shell is in one of this project's
// checkouts, and the world's fake agent (`command <kind>`) everywhere else. Test files running
// side by side with fake agents of the same kind are untouched. The agent's own config files
// (model provider → this machine's mock) go where the product expects the session store: the
// default config root in the user's home, and only the files the fakes do not read.
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { gitAs, handoff, herdr, herdrOk, installIntegration, makeProject, screen, startFakeAgent, waitFor, waitForScreen, writeAs, type Project } from '../helpers/e2e.js';
import { useWorld } from '../helpers/world.js';
import type { World, WorldUser } from '../world/machines.js';
import { startMockModels, type MockModels } from './mock-models.js';

export const REAL_AGENTS_DIR = process.env.AH_REAL_AGENTS_DIR || (process.getuid?.() === 0 ? '/var/cache/agent-handoff/real-agents' : path.join(process.env.XDG_CACHE_HOME || path.join(process.env.HOME ?? '/root', '.cache'), 'agent-handoff', 'real-agents'));

export interface Machine {
  user: WorldUser;
  checkout: string;
  mock: MockModels;
}

export interface RealKind {
  kind: 'claude' | 'codex' | 'pi' | 'omp' | 'grok';
  version: string;
  /** Binary relative to the prefix `<REAL_AGENTS_DIR>/<kind>-<version>`. */
  bin: string;
  /** Environment of the real binary (set by the shell function; PATH is prepended). */
  env(m: Machine, prefix: string): Record<string, string>;
  /** Arguments put before the product's (codex `-c` overrides). */
  args?(m: Machine): string[];
  /** Write the agent's config for this machine; returns its removal. */
  configure(m: Machine, project: Project): () => void;
  /** After the config and herdr's integration are in place (codex: trust the integration's hook once). */
  prepare?(m: Machine, world: World): Promise<void>;
  /** The files of a session unit (main file given) that must hold no laptop path (verbatim ones left out). */
  rewrittenFiles(file: string): string[];
  /** The session units of the store that holds `file` for `checkout` (to prove no new one was made). */
  unitsBeside(file: string, checkout: string): string[];
  /** Session folders/files made by this test, removed at the end. */
  cleanup(m: Machine): void;
  /**
   * Agents that ask to trust a folder (claude, codex): how to take the checkout's trust away, and
   * whether the agent's trust store covers it. They make one more leg, back to a laptop whose
   * trust was removed: the product answers the screen and the store covers the folder.
   */
  folderTrust?: { remove(m: Machine): void; covers(m: Machine): boolean };
  /** Checks of one leg's send result (codex: what came of herdr's hook trust). */
  afterLeg?(leg: string, result: Record<string, unknown>): void;
}

export function prefixOf(k: RealKind): string {
  return path.join(REAL_AGENTS_DIR, `${k.kind}-${k.version}`);
}

/** The real binary, or a failure naming the install step (a missing agent never skips a test). */
export function realBinary(k: RealKind): string {
  const prefix = prefixOf(k);
  const bin = path.join(prefix, k.bin);
  if (!fs.existsSync(path.join(prefix, '.installed')) || !fs.existsSync(bin)) {
    throw new Error(`${k.kind} ${k.version} is not installed at ${prefix}: run sh scripts/install-real-agents.sh (CI runs it from .ci/run)`);
  }
  return bin;
}

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const BASHRC_HOOK = 'for f in "$HOME"/.ah-real-agents/*.sh; do [ -r "$f" ] && . "$f"; done # agent-handoff real-agent tests';

/** The shell function of `kind` for `dirs`; returns its removal. */
function installLauncher(k: RealKind, m: Machine, dirs: string[]): () => void {
  const { user } = m;
  const bashrc = path.join(user.home, '.bashrc');
  const text = fs.existsSync(bashrc) ? fs.readFileSync(bashrc, 'utf8') : '';
  if (!text.includes(BASHRC_HOOK)) {
    const tmp = `${bashrc}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${text}${text.endsWith('\n') || text === '' ? '' : '\n'}${BASHRC_HOOK}\n`, { mode: 0o644 });
    fs.chownSync(tmp, user.uid, user.gid);
    fs.renameSync(tmp, bashrc);
  }
  const prefix = prefixOf(k);
  // PATH is put in front of the shell's own (omp runs on bun); the rest are literal.
  const env = Object.entries(k.env(m, prefix)).map(([n, v]) => (n === 'PATH' ? `PATH=${shq(v)}:"$PATH"` : `${n}=${shq(v)}`)).join(' ');
  const args = (k.args?.(m) ?? []).map(shq).join(' ');
  const cases = dirs.flatMap((d) => [`${d}`, `${d}/*`, `${d}.worktrees/*`]).map((p) => `${shq(p).replace(/\*'$/, "'*")}`).join('|');
  const fn = [
    `# real ${k.kind} ${k.version} for the checkouts of one real-agent test (agent-handoff test world)`,
    `${k.kind}() {`,
    `  case "$PWD" in`,
    `    ${cases}) ${env} ${shq(path.join(prefix, k.bin))} ${args} "$@" ;;`,
    `    *) command ${k.kind} "$@" ;;`,
    '  esac',
    '}',
    '',
  ].join('\n');
  const file = path.join(user.home, '.ah-real-agents', `${k.kind}.sh`);
  writeAs(user, file, fn);
  return () => fs.rmSync(file, { force: true });
}

interface SendOut {
  ok: boolean;
  target_agent: { name: string; pane: string; workspace: string };
  source_pane_at_shell: boolean;
  source_stash: { stashed: boolean };
  plan: { will_create: { session_file: string } };
}

function jsonLines(file: string): unknown[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
}

/** Every value of a `cwd` key anywhere in a JSON value. */
function cwdsIn(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) for (const x of v) cwdsIn(x, out);
  else if (v && typeof v === 'object') {
    for (const [key, x] of Object.entries(v)) {
      if (key === 'cwd' && typeof x === 'string') out.push(x);
      else cwdsIn(x, out);
    }
  }
  return out;
}

const pct = (s: string) => s.replace(/[^A-Za-z0-9\-._~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

export interface Timing {
  leg: string;
  ms: number;
}

/** The whole round trip for one kind; returns the wall time of each send. */
export async function roundTrip(k: RealKind): Promise<Timing[]> {
  const bin = realBinary(k);
  expect(fs.existsSync(bin)).toBe(true);
  const world: World = await useWorld();
  const laptopUser = world.users.laptop!;
  const vegaUser = world.users.vega!;
  const project = makeProject(world, `real-${k.kind}`);
  const mocks = [await startMockModels(project.laptop), await startMockModels(project.vega)];
  const laptop: Machine = { user: laptopUser, checkout: project.laptop, mock: mocks[0]! };
  const vega: Machine = { user: vegaUser, checkout: project.vega, mock: mocks[1]! };
  const undo: (() => void)[] = [];
  const workspaces: { user: WorldUser; id: string }[] = [];
  const timings: Timing[] = [];
  const name = `real-${k.kind}-${Math.random().toString(36).slice(2, 6)}`;
  try {
    for (const m of [laptop, vega]) {
      undo.push(installLauncher(k, m, [m.checkout]));
      undo.push(k.configure(m, project));
      await installIntegration(world, m.user, k.kind);
      await k.prepare?.(m, world);
    }
    // Uncommitted work: a tracked edit and an untracked file.
    writeAs(laptopUser, path.join(project.laptop, 'README.md'), 'hello edited on the laptop\n');
    writeAs(laptopUser, path.join(project.laptop, 'notes', 'untracked.txt'), 'untracked work\n');

    // 1. The real agent on laptop, one prompt answered by laptop's mock.
    const started = await startFakeAgent(world, laptopUser, k.kind, project.laptop, { name, args: ['alpha: what does README.md say?'], waitSession: false });
    workspaces.push({ user: laptopUser, id: started.workspace });
    await waitFor(`${k.kind}'s first reply on laptop`, async () => {
      const text = await screen(world, laptopUser, started.pane);
      if (/Quick safety check|Trust this folder|Do you trust/.test(text)) await herdrOk(world, laptopUser, ['pane', 'send-keys', started.pane, 'enter']);
      return text.includes('Mock reply to alpha: hello edited on the laptop');
    }, 90_000).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}; screen:\n${await screen(world, laptopUser, started.pane)}`, { cause: err });
    });
    // Settled, as before every leg (see checkLanded): omp, in a full suite run, was seen working
    // again moments after herdr first called it idle, and the first leg was refused as busy.
    let idleSince: number | null = null;
    await waitFor(`${name} idle on laptop for ${SETTLED_IDLE_MS} ms`, async () => {
      const r = await herdr(world, laptopUser, ['agent', 'get', name]);
      const a = (r.json?.result as { agent?: { agent_status?: string } } | undefined)?.agent;
      const idle = a?.agent_status === 'idle' || a?.agent_status === 'done';
      idleSince = idle ? (idleSince ?? Date.now()) : null;
      return idleSince !== null && Date.now() - idleSince >= SETTLED_IDLE_MS;
    }, 30_000);

    // 2. laptop → vega; 3. back with --from vega; 4. laptop → vega again.
    const legs: { leg: string; args: string[]; to: Machine; from: Machine; word: string; old: string[]; untrusted?: boolean }[] = [
      { leg: 'send laptop → vega', args: ['send', name, 'vega', '--no-focus'], to: vega, from: laptop, word: 'bravo', old: ['alpha'] },
      { leg: 'send --from vega (hand-back)', args: ['send', name, '--from', 'vega', '--no-focus'], to: laptop, from: vega, word: 'charlie', old: ['alpha', 'bravo'] },
      { leg: 'send laptop → vega again', args: ['send', name, 'vega', '--no-focus'], to: vega, from: laptop, word: 'delta', old: ['alpha', 'bravo', 'charlie'] },
    ];
    const trust = k.folderTrust;
    if (trust) legs.push({ leg: "send --from vega, laptop's folder trust removed", args: ['send', name, '--from', 'vega', '--no-focus'], to: laptop, from: vega, word: 'echo', old: ['alpha', 'bravo', 'charlie', 'delta'], untrusted: true });
    for (const leg of legs) {
      if (leg.untrusted) {
        trust!.remove(leg.to);
        expect(trust!.covers(leg.to), `${k.kind}'s trust of ${leg.to.checkout} removed`).toBe(false);
      }
      const t0 = Date.now();
      const r = await handoff(world, laptopUser, leg.args, { timeoutMs: 240_000 });
      const ms = Date.now() - t0;
      timings.push({ leg: leg.leg, ms });
      expect(r.json, `${leg.leg}: ${JSON.stringify(r.json)}\n${r.stderr}`).toMatchObject({ ok: true, command: 'send', dry_run: false });
      const out = r.json as unknown as SendOut;
      console.log(`${k.kind} ${leg.leg}: ${(ms / 1000).toFixed(1)} s, trust ${String(r.json.trust)}${r.json.hook_trust ? `, hook trust ${(r.json.hook_trust as { status: string }).status}` : ''}, waiting for user ${JSON.stringify(r.json.waiting_for_user ?? [])}`);
      workspaces.push({ user: leg.to.user, id: out.target_agent.workspace });
      if (leg.untrusted) expect(r.json.trust, `${leg.leg}: the trust screen answered`).toBe('answered');
      expect(r.json.waiting_for_user ?? [], `${leg.leg}: nothing left for the user`).toEqual([]);
      k.afterLeg?.(leg.leg, r.json);
      await checkLanded(world, k, leg.to, leg.from, out, leg.word, leg.old);
      if (trust) expect(trust.covers(leg.to), `${leg.leg}: ${k.kind}'s trust store covers ${leg.to.checkout}`).toBe(true);
    }
    return timings;
  } finally {
    for (const w of workspaces.reverse()) await herdr(world, w.user, ['workspace', 'close', w.id]).catch(() => undefined);
    for (const u of undo.reverse()) {
      try {
        u();
      } catch {
        // best effort
      }
    }
    for (const m of [laptop, vega]) {
      try {
        k.cleanup(m);
      } catch {
        // best effort
      }
    }
    for (const m of mocks) await m.close();
    for (const dir of [project.laptop, project.vega]) {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(`${dir}.worktrees`, { recursive: true, force: true });
    }
    fs.rmSync(project.origin, { recursive: true, force: true });
  }
}

async function checkLanded(world: World, k: RealKind, to: Machine, from: Machine, out: SendOut, word: string, old: string[]): Promise<void> {
  const laptopHome = world.users.laptop!.home;
  const { user, checkout } = to;
  const pane = out.target_agent.pane;
  // Resumed in the target checkout, showing the old conversation.
  const shown = await waitForScreen(world, user, pane, `${k.kind} resumed on ${user.name} showing the old conversation`, (t) => t.includes(`Mock reply to ${old[old.length - 1]}:`), 60_000);
  // The whole conversation, scrolled back (a long one no longer fits the 40 rows of the pane).
  const history = `${(await herdr(world, user, ['pane', 'read', pane, '--source', 'recent', '--lines', '400'])).stdout}\n${shown}`;
  for (const w of old) expect(history, `old turn ${w} on the resumed screen or scrolled back`).toContain(`Mock reply to ${w}:`);
  const info = (await herdrOk(world, user, ['agent', 'get', out.target_agent.name])) as { result: { agent: { agent?: string; foreground_cwd?: string } } };
  expect(info.result.agent.agent).toBe(k.kind);
  expect(info.result.agent.foreground_cwd).toBe(checkout);
  // The work moved; the source is back at its shell with its changes stashed.
  expect(fs.readFileSync(path.join(checkout, 'README.md'), 'utf8')).toBe('hello edited on the laptop\n');
  expect(fs.readFileSync(path.join(checkout, 'notes', 'untracked.txt'), 'utf8')).toBe('untracked work\n');
  expect(out.source_pane_at_shell).toBe(true);
  expect(out.source_stash).toMatchObject({ stashed: true });
  expect(gitAs(from.user, from.checkout, ['stash', 'list'])).toMatch(/agent-handoff/);
  expect(gitAs(from.user, from.checkout, ['status', '--porcelain'])).toBe('');

  // The session on the target: its files name no laptop path, every recorded cwd is the checkout.
  const file = out.plan.will_create.session_file;
  const before = fs.readFileSync(file);
  const units = k.unitsBeside(file, checkout);
  const clean = () => {
    for (const f of k.rewrittenFiles(file)) {
      const text = fs.readFileSync(f, 'utf8');
      if (user.name !== 'laptop') {
        expect(text.includes(laptopHome), `${f} names ${laptopHome}`).toBe(false);
        expect(text.includes(pct(laptopHome)), `${f} names ${pct(laptopHome)}`).toBe(false);
      }
      if (f.endsWith('.jsonl') || f.endsWith('.json')) {
        const values = f.endsWith('.jsonl') ? jsonLines(f) : [JSON.parse(text) as unknown];
        const cwds = [...new Set(cwdsIn(values))];
        // (codex also records it as a file URL)
        expect(cwds.every((c) => [checkout, `${checkout}/`, `file://${checkout}`].includes(c)), `${f} records cwds ${cwds.join(', ')}`).toBe(true);
      }
    }
  };
  clean();

  // A new prompt, answered by this machine's mock, lands in the same session file.
  const repliesBefore = to.mock.replies().length;
  await herdrOk(world, user, ['pane', 'send-text', pane, `${word}: and now what does README.md say?`]);
  await new Promise((r) => setTimeout(r, 700));
  await herdrOk(world, user, ['pane', 'send-keys', pane, 'enter']);
  await waitForScreen(world, user, pane, `${k.kind} on ${user.name} answering ${word}`, (t) => t.includes(`Mock reply to ${word}: hello edited on the laptop`), 90_000).catch((err: unknown) => {
    const unquoted = to.mock.answers.filter((a) => a.toolOutput !== undefined).map((a) => `${a.answer} after reading:\n${a.toolOutput}`);
    throw new Error(`${(err as Error).message}${unquoted.length ? `\nthe mock found no hello line in:\n${unquoted.join('\n')}` : ''}`, { cause: err });
  });
  expect(to.mock.replies().slice(repliesBefore)).toContain(`Mock reply to ${word}: hello edited on the laptop`);
  await waitFor(`${word} in ${file}`, async () => fs.readFileSync(file, 'utf8').includes(`${word}: and now`), 20_000);
  const after = fs.readFileSync(file);
  expect(after.length).toBeGreaterThan(before.length);
  expect(k.unitsBeside(file, checkout)).toEqual(units);
  clean();
  // The turn is over for herdr too before the next leg moves the agent (the reply is drawn a
  // moment before the agent reports idle; a working agent is refused without --wait). Idle for a
  // while, not once: after a turn an agent may work again briefly on its own (omp, under a
  // loaded CI, was seen idle and then working when the next leg planned).
  const idle = async () => {
    const r = await herdr(world, user, ['agent', 'get', out.target_agent.name]);
    const a = (r.json?.result as { agent?: { agent_status?: string } } | undefined)?.agent;
    return a?.agent_status === 'idle' || a?.agent_status === 'done';
  };
  let idleSince = 0;
  await waitFor(`${out.target_agent.name} idle on ${user.name} for ${SETTLED_IDLE_MS} ms after its turn`, async () => {
    if (!(await idle())) {
      idleSince = 0;
      return false;
    }
    idleSince ||= Date.now();
    return Date.now() - idleSince >= SETTLED_IDLE_MS;
  }, 30_000);
}

/** How long an agent must stay idle after a turn before the next leg moves it. */
const SETTLED_IDLE_MS = 1_500;

/** A folder's entries (absolute), sorted; none when it is missing. */
export function entries(dir: string, keep: (name: string) => boolean = () => true): string[] {
  try {
    return fs
      .readdirSync(dir)
      .filter(keep)
      .sort()
      .map((n) => path.join(dir, n));
  } catch {
    return [];
  }
}

export { makeProject };
