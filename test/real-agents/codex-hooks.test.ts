// The real Codex CLI 0.171.0 and real herdr 0.8.2 against the product's hook-trust programs and the
// fake codex's model of hooks: in throwaway homes (no world, no model), herdr installs its codex
// integration; the fake's list of hooks (keys, hashes, trust) equals what real codex's app-server
// answers, for herdr's hook (also under a home whose path herdr must quote) and for hooks with a
// matcher, a default or zero timeout, a status message; the product carries a trust that real
// codex then reads as trusted, and its undo leaves config.toml as it was.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codexHookTrust, CODEX_HOOKS_LOOK_PROGRAM, HERDR_HOOK_SCRIPT, appServerRequests, parseLook, trustLines } from '../../adapters/codex-hooks.js';
import type { HookTrustWrite } from '../../adapters/hook-trust.js';
import { LocalHost } from '../../src/host/local.js';
import { listHooks } from '../world/agents/codex-hooks.js';
import { realHerdrSource } from '../world/machines.js';
import { realBinary, type RealKind } from './round-trip.js';

const CODEX: RealKind = { kind: 'codex', version: '0.171.0', bin: 'node_modules/.bin/codex', env: () => ({}), configure: () => () => undefined, rewrittenFiles: () => [], unitsBeside: () => [], cleanup: () => undefined };

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});

/** A home with the real herdr's codex integration in it (herdr installs only where ~/.codex exists). */
function home(parent: string, name: string): { home: string; root: string } {
  const h = path.join(parent, name);
  const root = path.join(h, '.codex');
  fs.mkdirSync(root, { recursive: true });
  execFileSync(realHerdrSource(), ['integration', 'install', 'codex'], { env: { PATH: '/usr/bin:/bin', HOME: h }, stdio: 'pipe' });
  return { home: h, root };
}

/** `codex` on the PATH: the real one. */
function pathWithCodex(dir: string): string {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.symlinkSync(realBinary(CODEX), path.join(bin, 'codex'));
  return `${bin}:/usr/bin:/bin`;
}

interface RealHook {
  key: string;
  currentHash: string;
  trustStatus: string;
  timeoutSec: number;
}

/** Real codex's hooks/list answer, through the product's look program. */
function realHooks(root: string, cwd: string, PATH: string): { stdout: string; status: number; hooks: RealHook[] } {
  let stdout = '';
  let status = 0;
  try {
    stdout = execFileSync('/bin/sh', ['-c', CODEX_HOOKS_LOOK_PROGRAM, 'sh', path.join(root, HERDR_HOOK_SCRIPT), ...appServerRequests(cwd)], { env: { PATH, HOME: path.dirname(root), CODEX_HOME: root, TMPDIR: os.tmpdir() }, encoding: 'utf8', timeout: 30_000 });
  } catch (err) {
    status = (err as { status?: number }).status ?? 1;
  }
  const answer = stdout
    .split('\n')
    .map((l) => {
      try {
        return JSON.parse(l) as { id?: number; result?: { data: { hooks: RealHook[] }[] } };
      } catch {
        return null;
      }
    })
    .find((v) => v?.id === 2);
  return { stdout, status, hooks: answer?.result?.data[0]?.hooks ?? [] };
}

const fakeView = (root: string) => listHooks(root).map((h) => ({ key: h.key, currentHash: h.currentHash, trustStatus: h.trust, timeoutSec: h.timeoutSec }));
const realView = (hooks: RealHook[]) => hooks.map((h) => ({ key: h.key, currentHash: h.currentHash, trustStatus: h.trustStatus, timeoutSec: h.timeoutSec }));

describe('real codex 0.171 and real herdr 0.8.2: hook trust', () => {
  it('the fake lists hooks as real codex does, and a carried trust is one real codex reads', async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-real-codex-hooks-')));
    temps.push(dir);
    const PATH = pathWithCodex(dir);
    const cwd = path.join(dir, 'work');
    fs.mkdirSync(cwd);

    // herdr's hook, as installed, under an ordinary home and under one herdr must quote.
    const laptop = home(dir, 'laptop');
    const odd = home(dir, "it's vega");
    expect((JSON.parse(fs.readFileSync(path.join(odd.root, 'hooks.json'), 'utf8')) as { hooks: { SessionStart: { hooks: { command: string }[] }[] } }).hooks.SessionStart[0]!.hooks[0]!.command).toContain(`it'"'"'s vega`);
    for (const m of [laptop, odd]) {
      const real = realHooks(m.root, cwd, PATH);
      expect(real.status).toBe(0);
      expect(real.hooks).toHaveLength(1);
      expect(fakeView(m.root)).toEqual(realView(real.hooks));
      const look = parseLook(real.stdout, real.status, m.root);
      expect(look).toMatchObject({ problem: null, hook: { trust: 'untrusted', key: `${m.root}/hooks.json:session_start:0:0` } });
    }

    // Hooks of other shapes: a matcher, a status message, async, a default and a zero timeout.
    const other = path.join(dir, 'other', '.codex');
    fs.mkdirSync(other, { recursive: true });
    fs.writeFileSync(
      path.join(other, 'hooks.json'),
      JSON.stringify({
        hooks: {
          SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'echo a', statusMessage: 'starting' }] }],
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo b', timeout: 5 }] }, { hooks: [{ type: 'command', command: 'echo c' }, { type: 'command', command: 'echo d', timeout: 0 }] }],
          UserPromptSubmit: [{ hooks: [{ type: 'command', command: "printf '%s' \"$x\"", timeout: 3 }] }],
        },
      }),
    );
    const others = realHooks(other, cwd, PATH);
    expect(others.hooks).toHaveLength(5);
    expect(fakeView(other)).toEqual(realView(others.hooks));

    // laptop trusts herdr's hook (the entry as codex writes it); the trust is carried to the odd home.
    const laptopLook = parseLook(realHooks(laptop.root, cwd, PATH).stdout, 0, laptop.root);
    fs.appendFileSync(path.join(laptop.root, 'config.toml'), `\n${trustLines(laptopLook.hook!.key, laptopLook.hook!.currentHash).join('\n')}\n`);
    const source = parseLook(realHooks(laptop.root, cwd, PATH).stdout, 0, laptop.root);
    expect(source.hook?.trust).toBe('trusted');
    expect(fakeView(laptop.root)[0]?.trustStatus).toBe('trusted');

    const config = path.join(odd.root, 'config.toml');
    const before = fs.readFileSync(config, 'utf8');
    const savedPath = process.env.PATH;
    process.env.PATH = PATH;
    try {
      const host = new LocalHost();
      const writes: HookTrustWrite[] = [];
      const out = await codexHookTrust.carry({ target: host, ctx: { home: odd.home, env: {}, tmpdir: os.tmpdir() }, cwd, source, early: null, sourceLabel: 'laptop', tag: 't1', allowed: true, journal: (w) => writes.push(w) });
      expect(out, out.detail).toMatchObject({ status: 'carried', help: null });
      expect(writes).toEqual([{ agentKind: 'codex', file: config, lines: trustLines(`${odd.root}/hooks.json:session_start:0:0`, realHooks(odd.root, cwd, PATH).hooks[0]!.currentHash), tag: 't1' }]);
      expect(realHooks(odd.root, cwd, PATH).hooks[0]?.trustStatus).toBe('trusted');
      expect(fakeView(odd.root)[0]?.trustStatus).toBe('trusted');
      // Once more: nothing to do.
      expect((await codexHookTrust.carry({ target: host, ctx: { home: odd.home, env: {}, tmpdir: os.tmpdir() }, cwd, source, early: null, sourceLabel: 'laptop', tag: 't2', allowed: true, journal: (w) => writes.push(w) })).status).toBe('already_trusted');
      await codexHookTrust.undo(host, writes[0]!);
      expect(fs.readFileSync(config, 'utf8')).toBe(before);
      expect(realHooks(odd.root, cwd, PATH).hooks[0]?.trustStatus).toBe('untrusted');
      // A source that does not trust it: left for the user, with the keys.
      const untrusted = parseLook(realHooks(odd.root, cwd, PATH).stdout, 0, odd.root);
      const left = await codexHookTrust.carry({ target: host, ctx: { home: laptop.home, env: {}, tmpdir: os.tmpdir() }, cwd, source: untrusted, early: null, sourceLabel: 'vega', tag: 't3', allowed: true, journal: (w) => writes.push(w) });
      expect(left.status).toBe('already_trusted');
      fs.writeFileSync(path.join(laptop.root, 'config.toml'), '[features]\nhooks = true\n');
      const left2 = await codexHookTrust.carry({ target: host, ctx: { home: laptop.home, env: {}, tmpdir: os.tmpdir() }, cwd, source: untrusted, early: null, sourceLabel: 'vega', tag: 't4', allowed: true, journal: (w) => writes.push(w) });
      expect(left2).toMatchObject({ status: 'left_for_user' });
      expect(left2.detail).toContain('the agent on vega does not trust herdr\'s hook (untrusted)');
      expect(left2.help).toContain('press t to trust that one hook');
      expect(writes).toHaveLength(1);
    } finally {
      process.env.PATH = savedPath;
    }
  }, 120_000);
});
