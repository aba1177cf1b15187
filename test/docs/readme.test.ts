// README.md is run, not just read: every `agent-handoff …` line of its bash blocks runs as the
// test world's `laptop` user (its ~/.ssh/config names `vega` and `laptop` on the loopback sshd,
// so no documented host ever leaves this machine) and must print exactly one JSON object with
// `ok` and never a usage error. `send` lines that would move a live agent run with --dry-run
// against an agent that does not exist, so they must end in a domain error (agent_not_found).
// The flags, error codes and screens the README names must be the product's own.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { handoff, runAs } from '../helpers/e2e.js';
import type { World, WorldUser } from '../world/machines.js';
import { allUsage, bashBlocks, flagsIn, HERDR_CODES, productCodes, ROOT, shellWords, waitingScreens } from './facts.js';

const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const LINES = bashBlocks(README)
  .flatMap((b) => b.split('\n'))
  .map((l) => l.trim())
  .filter((l) => l.startsWith('agent-handoff'));
/** The only hosts documented commands may name: the world's two machines. */
const WORLD_HOSTS = new Set(['vega', 'laptop']);

let world: World;
let laptop: WorldUser;
let stateHome: string;

beforeAll(async () => {
  world = await useWorld();
  laptop = world.users.laptop!;
  // A state folder of its own: `recover` must not touch the journals of other tests.
  stateHome = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-readme-state-'));
  fs.chownSync(stateHome, laptop.uid, laptop.gid);
});

afterAll(() => {
  if (stateHome) fs.rmSync(stateHome, { recursive: true, force: true });
});

/** The hosts a command line would connect to. */
function hostsOf(args: string[]): string[] {
  const hosts: string[] = [];
  const plain: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') break;
    if (a === '--from') hosts.push(args[++i] ?? '');
    else if (['--dir', '--name', '--session', '--timeout', '--wait-timeout', '--shell', '--workspace', '--focus', '--done-when', '--brief'].includes(a)) i++;
    else if (!a.startsWith('-')) plain.push(a);
  }
  // send's words: the agents, then the target (the only word with --all/--workspace; none with --here).
  const words = plain[0] === 'send' ? plain.slice(1) : [];
  const chooses = args.includes('--all') || args.includes('--workspace');
  if (!args.includes('--here') && (chooses ? words.length === 1 : words.length >= 2)) hosts.push(words[words.length - 1]!);
  if (plain[0] === 'doctor' && plain[1]) hosts.push(plain[1]);
  return hosts;
}

describe('README commands', () => {
  it('documents a good number of commands', () => {
    expect(LINES.length).toBeGreaterThan(30);
  });

  describe.concurrent.each(LINES)('%s', (line) => {
    it('runs and answers with one JSON object, never a usage error', async () => {
      const args = shellWords(line, laptop.home).slice(1);
      for (const h of hostsOf(args)) expect(WORLD_HOSTS.has(h), `README names host ${h}; use vega or laptop`).toBe(true);
      const env = { XDG_STATE_HOME: stateHome };
      if (args[0] === 'completion') {
        const r = await runAs(laptop, [process.execPath, world.app, ...args], { env });
        expect(r.code).toBe(0);
        expect(r.stdout).toContain('agent-handoff __complete');
        return;
      }
      const isSend = args[0] === 'send' && !args.includes('--help');
      const run = isSend && !args.includes('--dry-run') ? [...args.slice(0, args.indexOf('--') < 0 ? args.length : args.indexOf('--')), '--dry-run', ...(args.includes('--') ? args.slice(args.indexOf('--')) : [])] : args;
      const r = await handoff(world, laptop, run, { env, timeoutMs: 90_000 });
      expect(typeof r.json.ok, JSON.stringify(r.json)).toBe('boolean');
      expect(r.json.code, JSON.stringify(r.json)).not.toBe('usage');
      expect(r.code).not.toBe(2);
      if (isSend) {
        // api-claude does not run anywhere in the world: planning must stop at finding it.
        expect(r.json, r.stderr).toMatchObject({ ok: false, command: 'send', code: 'agent_not_found' });
        expect(r.code).toBe(1);
      } else if (r.json.ok === false) {
        // Commands about handoffs that do not exist fail with the domain's code and a fix.
        expect(['handoff_not_found'], JSON.stringify(r.json)).toContain(r.json.code);
        expect(typeof r.json.fix).toBe('string');
      }
    }, 180_000);
  });
});

describe('README names only what exists', () => {
  let usage: Record<string, string>;
  beforeAll(async () => {
    usage = await allUsage();
  });

  it('shows every command, and every send flag, of the CLI', () => {
    const commands = Object.keys(usage).filter(Boolean);
    for (const c of commands) expect(LINES.some((l) => l.startsWith(`agent-handoff ${c}`)), c).toBe(true);
    for (const f of flagsIn(usage.send!)) {
      if (f === 'focus' || f === 'trust') continue; // on by default: documented as --no-focus / --no-trust
      expect(README, `--${f}`).toContain(`--${f}`);
    }
  });

  it('mentions no flag the CLI does not have', () => {
    const known = new Set(Object.values(usage).flatMap((u) => [...flagsIn(u)]));
    const prose = README.replace(/npx --yes/g, '');
    const mentioned = new Set([...prose.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!));
    // Flags of other programs shown in the README (herdr's --remote, the agent's --model, npm's).
    for (const other of ['remote', 'model', 'keep', 'resume', 'session']) mentioned.delete(other);
    for (const f of mentioned) expect(known.has(f), `--${f}`).toBe(true);
    expect(known.has('session')).toBe(true);
  });

  it('troubleshoots only codes the product (or herdr) returns, and every waiting screen', () => {
    const section = README.slice(README.indexOf('## Troubleshooting'), README.indexOf('## How it differs'));
    const codes = [...section.matchAll(/^\| `([a-z_]+)`(?: \/ `([a-z_]+)`)? \|/gm)].flatMap((m) => [m[1]!, m[2]].filter((x): x is string => !!x));
    const screens = waitingScreens();
    const known = new Set([...productCodes(), ...HERDR_CODES]);
    const errorCodes = codes.filter((c) => !screens.includes(c));
    expect(errorCodes.length).toBeGreaterThan(20);
    for (const c of errorCodes) expect(known.has(c), c).toBe(true);
    for (const s of screens) expect(codes, s).toContain(s);
    for (const c of ['host_key_unknown', 'host_key_changed', 'auth_failed', 'auth_key_encrypted', 'connect_timeout', 'herdr_not_installed', 'server_not_running', 'herdr_too_old', 'protocol_mismatch', 'no_remote', 'target_dirty', 'target_diverged', 'apply_conflict', 'unborn_head', 'session_not_found', 'agent_busy', 'own_pane', 'quit_failed', 'start_failed']) {
      expect(codes, c).toContain(c);
    }
  });
});
