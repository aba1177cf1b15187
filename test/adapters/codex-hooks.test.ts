// Codex's hook-trust programs (adapters/codex-hooks.ts), run directly under each POSIX shell
// here with hostile paths and keys, against a stub `codex app-server` on the PATH: the data stays
// data (no canary file appears), the requests reach codex verbatim, the write adds exactly the two
// lines (private, the rest byte for byte), the undo takes exactly them out again, and the answers parse.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  appServerRequests,
  CODEX_HOOK_TRUST_UNDO_PROGRAM,
  CODEX_HOOK_TRUST_WRITE_PROGRAM,
  CODEX_HOOKS_LOOK_PROGRAM,
  HERDR_HOOK_SCRIPT,
  keyNeedles,
  parseLook,
  tomlString,
  trustLines,
} from '../../adapters/codex-hooks.js';
import { hostileArgs } from '../host/hostile-args.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});
function tempDir(): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-codex-hooks-')));
  temps.push(d);
  return d;
}

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** A `codex` whose app-server logs each request line and answers hooks/list with $STUB_ANSWER's file. */
const STUB_CODEX = [
  '#!/bin/sh',
  '[ "$1" = app-server ] || exit 2',
  `printf '%s\\n' '{"method":"remoteControl/status/changed","params":{"status":"disabled"}}'`,
  'while IFS= read -r l; do',
  '  printf "%s\\n" "$l" >>"$STUB_LOG"',
  `  case $l in *'"id":2,'*) cat "$STUB_ANSWER" ;; esac`,
  'done',
  '',
].join('\n');

interface Stub {
  bin: string;
  log: string;
  answer: string;
  tmp: string;
}

function stub(dir: string): Stub {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(bin, 'codex'), STUB_CODEX, { mode: 0o755 });
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
  return { bin, log: path.join(dir, 'requests.log'), answer: path.join(dir, 'answer.json'), tmp };
}

/** hooks/list's answer with herdr's hook (and another one) under `root`. */
function answer(root: string, cwd: string, trustStatus = 'untrusted'): string {
  const hook = (command: string, key: string) => ({
    key,
    eventName: 'sessionStart',
    handlerType: 'command',
    command,
    async: false,
    matcher: null,
    timeoutSec: 10,
    statusMessage: null,
    sourcePath: `${root}/hooks.json`,
    source: 'user',
    pluginId: null,
    environmentId: null,
    displayOrder: 0,
    enabled: true,
    isManaged: false,
    currentHash: `sha256:${'ab'.repeat(32)}`,
    trustStatus,
  });
  const hooks = [hook('echo other', `${root}/hooks.json:session_start:0:0`), hook(`bash '${root}/${HERDR_HOOK_SCRIPT}' session`, `${root}/hooks.json:session_start:1:0`)];
  return `${JSON.stringify({ id: 2, result: { data: [{ cwd, hooks, warnings: [], errors: [] }] } })}\n`;
}

function run(shell: readonly string[], program: string, args: readonly string[], s: Stub, withCodex = true): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(shell[0]!, [...shell.slice(1), '-c', program, 'sh', ...args], {
    encoding: 'utf8',
    env: { PATH: `${withCodex ? `${s.bin}:` : ''}/usr/bin:/bin`, TMPDIR: s.tmp, STUB_LOG: s.log, STUB_ANSWER: s.answer, HOME: os.tmpdir() },
    timeout: 30_000,
  });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Hostile texts usable as one folder name. */
function folderNames(canaries: string): string[] {
  return hostileArgs(canaries).filter((n) => n !== '' && !n.includes('/') && !n.includes('\0') && n !== '.' && n !== '..' && Buffer.byteLength(n) < 200);
}

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('codex hook-trust programs under %s', (_name, shell) => {
  it('look: hashes the script and relays codex app-server, hostile paths and cwds as data', () => {
    const dir = tempDir();
    const canaries = path.join(dir, 'canaries');
    fs.mkdirSync(canaries);
    const s = stub(dir);
    for (const [i, name] of folderNames(canaries).entries()) {
      const root = path.join(dir, `home ${i}`, name, '.codex');
      fs.mkdirSync(root, { recursive: true });
      const script = path.join(root, HERDR_HOOK_SCRIPT);
      fs.writeFileSync(script, `#!/bin/sh\n# HERDR_INTEGRATION_VERSION=8 ${name}\n`);
      const cwd = path.join(dir, name, `$(touch ${canaries}/cwd)`);
      fs.writeFileSync(s.answer, answer(root, cwd));
      fs.rmSync(s.log, { force: true });
      const r = run(shell, CODEX_HOOKS_LOOK_PROGRAM, [script, ...appServerRequests(cwd)], s);
      expect(r.status, r.stderr).toBe(0);
      expect(fs.readFileSync(s.log, 'utf8')).toBe(`${appServerRequests(cwd).join('\n')}\n`);
      const look = parseLook(r.stdout, r.status, root);
      expect(look).toMatchObject({ root, script, scriptSha256: sha(fs.readFileSync(script)), problem: null });
      expect(look.hook).toMatchObject({ key: `${root}/hooks.json:session_start:1:0`, command: `bash '${root}/${HERDR_HOOK_SCRIPT}' session`, trust: 'untrusted' });
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
    // The fifo's private folder is gone each time.
    expect(fs.readdirSync(s.tmp)).toEqual([]);
  });

  it('look: no script, no codex on the PATH, a codex that exits without answering', () => {
    const dir = tempDir();
    const s = stub(dir);
    const root = path.join(dir, '.codex');
    const script = path.join(root, HERDR_HOOK_SCRIPT);
    const none = run(shell, CODEX_HOOKS_LOOK_PROGRAM, [script, ...appServerRequests(dir)], s, false);
    expect(parseLook(none.stdout, none.status, root)).toMatchObject({ scriptSha256: null, hook: null, problem: 'codex is not on the login PATH' });
    fs.writeFileSync(path.join(s.bin, 'codex'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const t0 = Date.now();
    const mute = run(shell, CODEX_HOOKS_LOOK_PROGRAM, [script, ...appServerRequests(dir)], s);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(parseLook(mute.stdout, mute.status, root)).toMatchObject({ hook: null, problem: '`codex app-server` gave no answer to hooks/list' });
    // One that reads a line and goes: the writes after it fail quietly (no SIGPIPE ends the program).
    fs.writeFileSync(path.join(s.bin, 'codex'), '#!/bin/sh\nhead -n 1 >/dev/null\nexit 0\n', { mode: 0o755 });
    const gone = run(shell, CODEX_HOOKS_LOOK_PROGRAM, [script, ...appServerRequests(dir), ...Array.from({ length: 2000 }, () => 'x'.repeat(100))], s);
    expect(gone.status).toBe(0);
    expect(parseLook(gone.stdout, gone.status, root).problem).toBe('`codex app-server` gave no answer to hooks/list');
    expect(fs.readdirSync(s.tmp)).toEqual([]);
  });

  it('write and undo: exactly the two lines, private, the rest byte for byte; hostile paths and keys as data', () => {
    const dir = tempDir();
    const canaries = path.join(dir, 'canaries');
    fs.mkdirSync(canaries);
    const s = stub(dir);
    const originals = ['[features]\nhooks = true\n', 'model = "x" # no newline at the end', ''];
    for (const [i, name] of folderNames(canaries).entries()) {
      const root = path.join(dir, `w ${i}`, name, '.codex');
      fs.mkdirSync(root, { recursive: true });
      const file = path.join(root, 'config.toml');
      const temp = path.join(root, '.config.toml.ah-t.tmp');
      const original = originals[i % originals.length]!;
      const absent = i % originals.length === 2 && i % 2 === 0;
      if (!absent) fs.writeFileSync(file, original, { mode: 0o644 });
      const key = `${root}/hooks.json:session_start:0:0 ${name}`;
      const [header, value] = trustLines(key, `sha256:${'cd'.repeat(32)}`);
      expect(header).not.toMatch(/[\n\r]/);
      fs.writeFileSync(s.answer, answer(root, dir, 'trusted'));
      const w = run(shell, CODEX_HOOK_TRUST_WRITE_PROGRAM, [file, temp, header, value, ...keyNeedles(key), path.join(root, HERDR_HOOK_SCRIPT), ...appServerRequests(dir)], s);
      expect(w.status, w.stderr).toBe(0);
      const sep = original === '' || original.endsWith('\n') ? '' : '\n';
      expect(fs.readFileSync(file, 'utf8')).toBe(`${original}${sep}\n${header}\n${value}\n`);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.existsSync(temp)).toBe(false);
      expect(parseLook(w.stdout, w.status, root).hook?.trust).toBe('trusted');
      // Codex adds its own tables after ours; the undo takes out our two lines (and the empty one before them) only.
      fs.appendFileSync(file, '\n[tui]\nx = 1\n');
      const u = run(shell, CODEX_HOOK_TRUST_UNDO_PROGRAM, [file, temp, header, value], s);
      expect(u.status, u.stderr).toBe(0);
      expect(fs.readFileSync(file, 'utf8')).toBe(`${original}${sep}\n[tui]\nx = 1\n`);
      // Once more: nothing of ours is left, so nothing changes.
      const again = run(shell, CODEX_HOOK_TRUST_UNDO_PROGRAM, [file, temp, header, value], s);
      expect(again.status).toBe(0);
      expect(fs.readFileSync(file, 'utf8')).toBe(`${original}${sep}\n[tui]\nx = 1\n`);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('write refuses a config that already names the key, or that is not a regular file; nothing changes', () => {
    const dir = tempDir();
    const s = stub(dir);
    const root = path.join(dir, '.codex');
    fs.mkdirSync(root);
    const file = path.join(root, 'config.toml');
    const key = `${root}/hooks.json:session_start:0:0`;
    const [header, value] = trustLines(key, `sha256:${'ef'.repeat(32)}`);
    const args = [file, path.join(root, '.t.tmp'), header, value, ...keyNeedles(key), path.join(root, HERDR_HOOK_SCRIPT), ...appServerRequests(dir)];
    const present = `[hooks.state."${key}"]\nenabled = false\n`;
    fs.writeFileSync(file, present);
    expect(run(shell, CODEX_HOOK_TRUST_WRITE_PROGRAM, args, s).status).toBe(3);
    expect(fs.readFileSync(file, 'utf8')).toBe(present);
    const real = path.join(dir, 'dotfiles-config.toml');
    fs.writeFileSync(real, 'model = "x"\n');
    fs.rmSync(file);
    fs.symlinkSync(real, file);
    expect(run(shell, CODEX_HOOK_TRUST_WRITE_PROGRAM, args, s).status).toBe(4);
    expect(fs.lstatSync(file).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(real, 'utf8')).toBe('model = "x"\n');
    // The undo leaves a symlinked or foreign config alone too.
    expect(run(shell, CODEX_HOOK_TRUST_UNDO_PROGRAM, [file, path.join(root, '.t.tmp'), header, value], s).status).toBe(0);
    expect(fs.readFileSync(real, 'utf8')).toBe('model = "x"\n');
  });
});

describe('parseLook', () => {
  const root = '/home/v/.codex';
  const line = (v: unknown) => JSON.stringify(v);
  const hash = 'a'.repeat(64);
  const list = (hooks: unknown[]) => line({ id: 2, result: { data: [{ cwd: '/w', hooks, warnings: [], errors: [] }] } });
  const herdrHook = (extra: Record<string, unknown> = {}) => ({
    key: `${root}/hooks.json:session_start:0:0`,
    eventName: 'sessionStart',
    handlerType: 'command',
    command: `bash '${root}/${HERDR_HOOK_SCRIPT}' session`,
    async: false,
    matcher: null,
    timeoutSec: 10,
    statusMessage: null,
    sourcePath: `${root}/hooks.json`,
    source: 'user',
    enabled: true,
    isManaged: false,
    currentHash: `sha256:${'b'.repeat(64)}`,
    trustStatus: 'trusted',
    ...extra,
  });

  it('finds herdr hook among the others, after notification lines', () => {
    const out = [hash, line({ method: 'remoteControl/status/changed', params: {} }), line({ id: 1, result: {} }), list([herdrHook({ command: 'echo x' }), { handlerType: 'prompt' }, herdrHook()])].join('\n');
    expect(parseLook(out, 0, root)).toEqual({
      root,
      script: `${root}/${HERDR_HOOK_SCRIPT}`,
      scriptSha256: hash,
      problem: null,
      hook: { key: `${root}/hooks.json:session_start:0:0`, event: 'sessionStart', matcher: null, command: `bash '${root}/${HERDR_HOOK_SCRIPT}' session`, timeoutSec: 10, async: false, statusMessage: null, enabled: true, currentHash: `sha256:${'b'.repeat(64)}`, trust: 'trusted' },
    });
  });

  it('says why when codex cannot tell', () => {
    expect(parseLook(`-\n${line({ method: 'configWarning', params: { summary: 'Invalid configuration; using defaults.', details: 'config.toml:7:14: duplicate key' } })}\n${list([herdrHook()])}`, 0, root).problem).toBe('its config.toml does not parse: config.toml:7:14: duplicate key');
    expect(parseLook(`-\n${line({ id: 2, error: { code: -32601, message: 'no such method' } })}`, 0, root).problem).toBe('hooks/list failed: no such method');
    expect(parseLook('-\n', 0, root).problem).toBe('`codex app-server` gave no answer to hooks/list');
    expect(parseLook('-\n', 69, root).problem).toBe('neither sha256sum nor shasum is installed');
    expect(parseLook(`-\n${list([herdrHook(), herdrHook({ key: 'k2' })])}`, 0, root).problem).toBe(`2 hooks run ${root}/${HERDR_HOOK_SCRIPT}`);
  });

  it('takes no project or plugin hook for herdr own, and a managed one as managed', () => {
    expect(parseLook(`${hash}\n${list([herdrHook({ source: 'project' })])}`, 0, root)).toMatchObject({ hook: null, problem: null });
    expect(parseLook(`${hash}\n${list([herdrHook({ isManaged: true, trustStatus: 'managed' })])}`, 0, root).hook?.trust).toBe('managed');
  });
});

describe('tomlString', () => {
  it('escapes what a TOML basic string cannot hold', () => {
    expect(tomlString('/home/v/.codex/hooks.json:session_start:0:0')).toBe('"/home/v/.codex/hooks.json:session_start:0:0"');
    expect(tomlString('a"b\\c\nd\te\x7f')).toBe('"a\\"b\\\\c\\u000ad\\u0009e\\u007f"');
    expect(tomlString('ünï 🚀')).toBe('"ünï 🚀"');
  });
});
