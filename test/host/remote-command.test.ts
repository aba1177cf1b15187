// The command encoding, checked against every login shell installed here (no ssh involved):
// `$SHELL -c EXEC_COMMAND` with the header on stdin is exactly what sshd runs.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildHeader, EXEC_COMMAND, execCommandCarrying, printfOctal, printfOctalBytes, StartMarkFilter } from '../../src/host/remote-command.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { hostileArgs } from './hostile-args.js';

const SHELLS = ['/bin/sh', '/bin/bash', '/usr/bin/zsh', '/usr/bin/fish'].filter((s) => fs.existsSync(s));

describe('remote command encoding', () => {
  it('keeps the exec string free of quote and backslash inside its script', () => {
    expect(EXEC_COMMAND).toBe(`exec /bin/sh -c 'IFS= read -r h && eval "$h"'`);
    const script = EXEC_COMMAND.slice(EXEC_COMMAND.indexOf("'") + 1, EXEC_COMMAND.lastIndexOf("'"));
    expect(script).not.toMatch(/['\\]/);
  });

  it('keeps printable ASCII as it is and escapes the rest, a leading dash included', () => {
    expect(printfOctal('a b\n')).toBe('a b\\12');
    expect(printfOctal('%\\\'')).toBe('%%\\\\\\47');
    expect(printfOctal('é\r\t\x01')).toBe('\\303\\251\\15\\11\\1');
    expect(printfOctal('-n x-')).toBe('\\55n x-');
    // A digit after an escape: all three of its digits, so printf does not read the digit as a fourth.
    expect(printfOctal('\n1\x002\x008x')).toBe('\\0121\\0002\\0008x');
    expect(printfOctal('$(touch x) `y` "z"')).toBe('$(touch x) `y` "z"');
  });

  it('gives back every byte through printf, under every shell that runs the header', () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const digitsAfterEscapes = Buffer.from(Array.from({ length: 256 }, (_, i) => [i, 0x30 + (i % 10)]).flat());
    for (const bytes of [all, digitsAfterEscapes, Buffer.from('-leading dash\n'), Buffer.from('%s %d %% \\n \\\\ \\047 end'), Buffer.from("'"), Buffer.alloc(0)]) {
      for (const shell of ['/bin/sh', ...POSIX_SHELLS.map((s) => s.join(' '))]) {
        const [bin, ...flags] = shell.split(' ');
        const r = spawnSync(bin!, [...flags, '-c', `printf '${printfOctalBytes(bytes)}'`]);
        expect(r.status).toBe(0);
        expect(Buffer.compare(r.stdout, bytes)).toBe(0);
      }
    }
  });

  it('rejects NUL bytes and bad env names', () => {
    expect(() => buildHeader({ argv: ['a\0b'] })).toThrow(/NUL/);
    expect(() => buildHeader({ argv: ['x'], env: { 'A-B': '1' } })).toThrow(/variable name/);
    expect(() => buildHeader({ argv: [] })).toThrow(/Empty/);
  });

  for (const shell of SHELLS) {
    it(`round-trips the hostile argv, env, cwd and stdin under ${path.basename(shell)}`, () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-enc-'));
      const args = hostileArgs(dir);
      const header = buildHeader({ argv: ['printf', '%s\\0', ...args], env: { AH_X: 'a b\n$(x)\n' }, cwd: dir });
      const r = spawnSync(shell, ['-c', EXEC_COMMAND], { input: `${header}\n`, encoding: 'utf8', cwd: '/' });
      expect(r.stderr).toBe('');
      const got = r.stdout.split('\0');
      expect(got.pop()).toBe('');
      expect(got).toEqual(args);
      const h2 = buildHeader({ argv: ['sh', '-c', 'printf "%s|%s|" "$AH_X" "$(pwd)"; cat'], env: { AH_X: 'a b\n$(x)\n' }, cwd: dir });
      const r2 = spawnSync(shell, ['-c', EXEC_COMMAND], { input: `${h2}\nline one\n\nlast`, encoding: 'utf8', cwd: '/' });
      expect(r2.stdout).toBe(`a b\n$(x)\n|${fs.realpathSync(dir)}|line one\n\nlast`);
      expect(fs.readdirSync(dir)).toEqual([]);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }

  for (const [shell, oneLine] of SHELLS.flatMap((sh) => [[sh, true], [sh, false]] as const)) {
    it(`runs a ${oneLine ? 'one-line' : 'multi-line'} header carried in the exec request, hostile argv, env and cwd included, under ${path.basename(shell)}`, () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-carry-'));
      // (The 100 kB argument is too long to be carried: such a header goes on stdin.)
      const args = [...hostileArgs(dir).filter((a) => a.length < 10_000), 'a\\b\\\\c', "it's", '!!', '!$', '\\047', '%s%%%d', '\\', '-n', 'it\'s $HOME, "q" `x` \\ \'\'', 'a=b', '~', 'x:~/y'];
      const env = { AH_X: 'a b\n$(x)\n!\\ \'' };
      const command = execCommandCarrying(buildHeader({ argv: ['sh', '-c', 'printf "%s|%s|" "$AH_X" "$(pwd)"; printf "%s\\0" "$@"; cat', 'sh', ...args], env, cwd: dir }, { oneLine }));
      expect(command).not.toBeNull();
      // Inside its single quotes only what every shell keeps: no quote, backslash-quote or double backslash, no `!`, no line end.
      const quoted = command!.slice(command!.lastIndexOf(" '") + 2, -1);
      expect(quoted).not.toMatch(/['!\n\r]|\\\\|\\[^0-7]/);
      const r = spawnSync(shell, ['-c', command!], { input: 'stdin is the program\'s own\n', cwd: '/' });
      expect(r.stderr.toString()).toBe('');
      const [head, ...rest] = r.stdout.toString('utf8').split('\0');
      expect(head).toBe(`${env.AH_X}|${fs.realpathSync(dir)}|${args[0]}`);
      expect(rest.slice(0, -1)).toEqual(args.slice(1));
      expect(rest.at(-1)).toBe("stdin is the program's own\n");
      expect(fs.readdirSync(dir)).toEqual([]);
      fs.rmSync(dir, { recursive: true, force: true });
    });
  }

  /** Under every login shell, carried and (one line) on stdin, the header's program prints `args` back, each as it was. */
  function expectArgsBack(header: string, oneLine: boolean, args: readonly string[]): void {
    for (const shell of SHELLS) {
      const command = execCommandCarrying(header)!;
      for (const r of [spawnSync(shell, ['-c', command], { cwd: '/' }), spawnSync(shell, ['-c', EXEC_COMMAND], { input: oneLine ? `${header}\n` : '', cwd: '/' })].slice(0, oneLine ? 2 : 1)) {
        expect(r.stderr.toString()).toBe('');
        const got = r.stdout.toString('utf8').split('\0');
        expect(got.pop()).toBe('');
        expect(got).toEqual(args);
      }
    }
  }

  it('names a folder that many arguments repeat once, hostile as it may be, and gives back every argument', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-folder-'));
    const folder = `${dir}/it's "$_p" \\ %2F!x $(touch ${dir}/c1) \`touch ${dir}/c2\`/sessions/`;
    const args = [
      ...Array.from({ length: 8 }, (_, i) => `${folder}file-${i}.json`),
      folder,
      `${folder}${folder}`,
      `{"path":"${folder}x.json","n":1}`,
      'x/y/z/not/a/path/start/aaaaaaaa/',
      '"$_p"',
      '',
      `${folder.slice(0, -1)}`,
    ];
    for (const oneLine of [true, false]) {
      const spec = { argv: ['sh', '-c', 'printf "%s\\0" "$@"', 'sh', ...args] };
      const header = buildHeader(spec, { oneLine });
      expect(header).toContain('_p=');
      // Shorter by most of the folder's seven extra copies.
      expect(header.length).toBeLessThan(args.join(' ').length - 6 * folder.length);
      expectArgsBack(header, oneLine, args);
    }
    expect(fs.readdirSync(dir)).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names several folders that arguments repeat, each once, and gives back every argument', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-folders-'));
    const base = `${dir}/sessions/%2Fhome%2Fme%2Fcode%2F$(touch ${dir}/c1) '$_q'`;
    const here = `${base}/01a24a53-7abf/`;
    const there = `${base}.worktrees%2Ffeature \`$_p\`/01a24a53-7abf/`;
    const names = ['chat_history.jsonl', 'chat_history.jsonl.lock', 'prompt_context.json', 'summary.json', 'usage.json', 'updates.jsonl'];
    const args = [`${dir}/left`, ...[here, there].flatMap((folder) => names.flatMap((n) => [`${folder}${n}`, `${n}.json`])), `${here}${there}`, '"$_q"', '$_r'];
    for (const oneLine of [true, false]) {
      const spec = { argv: ['sh', '-c', 'printf "%s\\0" "$@"', 'sh', ...args] };
      const header = buildHeader(spec, { oneLine });
      expect(header).toContain('_p=');
      expect(header).toContain('_q=');
      // Shorter by most of each folder's extra copies.
      expect(header.length).toBeLessThan(args.join(' ').length - 5 * here.length - 5 * there.length);
      expectArgsBack(header, oneLine, args);
    }
    expect(fs.readdirSync(dir)).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('leaves an argument with a line end whole (a program), naming the folder only in the others', () => {
    const folder = '/home/someone/.pi/agent/sessions/--home-someone-code-x--/';
    const program = `printf "%s\\0" "$@"\n# ${folder}a ${folder}b ${folder}c\n`;
    const paths = Array.from({ length: 6 }, (_, i) => `${folder}f${i}.jsonl`);
    for (const oneLine of [true, false]) {
      const header = buildHeader({ argv: ['sh', '-c', program, 'sh', ...paths] }, { oneLine });
      expect(header).toContain('_p=');
      // The program's copies of the folder stay as they were: only the paths use "$_p".
      if (!oneLine) expect(header).toContain(`# ${folder}a ${folder}b ${folder}c`);
      expectArgsBack(header, oneLine, paths);
    }
  });

  it('names no folder when that would not shorten the header', () => {
    expect(buildHeader({ argv: ['cat', '/home/someone/a/long/folder/x'] })).not.toContain('_p=');
    expect(buildHeader({ argv: ['cat', '/a/b/', '/a/b/'] })).not.toContain('_p=');
  });

  it('carries a header only up to what one argument may hold', () => {
    expect(execCommandCarrying(buildHeader({ argv: ['printf', 'x'.repeat(20_000)] }))).not.toBeNull();
    expect(execCommandCarrying(buildHeader({ argv: ['printf', '\n'.repeat(20_000)] }))).toBeNull();
  });

  it('drops what start-up files print before the start mark, even when the mark is split', () => {
    const f = new StartMarkFilter('AHGO1234');
    expect(f.feed(Buffer.from('junk AHGO12')).toString()).toBe('');
    expect(f.found).toBe(false);
    expect(f.feed(Buffer.from('34out')).toString()).toBe('out');
    expect(f.feed(Buffer.from('AHGO1234 more')).toString()).toBe('AHGO1234 more');
    const header = buildHeader({ argv: ['printf', 'x'], startMark: 'AHGO9' });
    const r = spawnSync('/bin/sh', ['-c', EXEC_COMMAND], { input: `${header}\n`, encoding: 'utf8' });
    expect(r.stdout).toBe('AHGO9x');
  });

  it('exits 126 with a message when the folder is missing, 127 when the program is', () => {
    const r = spawnSync('/bin/sh', ['-c', EXEC_COMMAND], { input: `${buildHeader({ argv: ['true'], cwd: '/nonexistent/x y' })}\n`, encoding: 'utf8' });
    expect(r.status).toBe(126);
    expect(r.stderr).toContain('cannot change to folder: /nonexistent/x y');
    const r2 = spawnSync('/bin/sh', ['-c', EXEC_COMMAND], { input: `${buildHeader({ argv: ['no-such-program-ah'] })}\n`, encoding: 'utf8' });
    expect(r2.status).toBe(127);
  });
});
