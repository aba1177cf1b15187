// runSideBySide: independent programs at once in one program, each result whole and apart.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.js';
import { LocalHost } from '../../src/host/local.js';
import { parseSideBySide, runSideBySide, sideBySideArgv } from '../../src/host/run-side-by-side.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { hostileArgs } from './hostile-args.js';
import { execFileSync } from 'node:child_process';

const host = new LocalHost();
const tmp = tempDirs('ah-sbs-');

const MARK = 'AHSIDEtest0123456789';

/** The runner's argv under one shell instead of /bin/sh: its stdout as text. */
function under(shell: readonly string[], argv: string[], env: Record<string, string> = {}): string {
  const [, , program, ...rest] = argv;
  return execFileSync(shell[0]!, [...shell.slice(1), '-c', program!, ...rest], { encoding: 'utf8', env: { ...process.env, ...env } });
}

describe('runSideBySide', () => {
  it('gives each program its own exit code, stdout and stderr, in order, with arguments as data', async () => {
    const dir = tmp();
    const canaries = tmp();
    const hostile = [...hostileArgs(canaries), '-n', '${10}', '$1', ''];
    const sub = path.join(dir, "sub dir $(touch pwned) 'q'");
    fs.mkdirSync(sub);
    const results = await runSideBySide(host, [
      { argv: ['sh', '-c', 'printf "%s\\0" "$@"', 'sh', ...hostile] },
      { argv: ['sh', '-c', 'echo to stderr >&2; printf "no newline"; exit 3'] },
      { argv: ['pwd'], cwd: sub },
      { argv: ['sh', '-c', 'printf "%s" "$AH_X"'], env: { AH_X: "value with 'quotes' and $(touch x)" } },
      { argv: ['true'], cwd: path.join(dir, 'missing') },
    ]);
    expect(results[0]).toMatchObject({ exitCode: 0, stdout: hostile.map((h) => `${h}\0`).join(''), stderr: '' });
    expect(results[1]).toMatchObject({ exitCode: 3, stdout: 'no newline', stderr: 'to stderr\n' });
    expect(results[2]!.stdout.trim()).toBe(sub);
    expect(results[3]!.stdout).toBe("value with 'quotes' and $(touch x)");
    expect(results[4]!.exitCode).toBe(126);
    expect(fs.readdirSync(canaries)).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
  });

  it('runs the programs at the same time, not one after another', async () => {
    // Four 1 s sleeps: 4 s one after another; side by side about 1 s, with room for a busy machine.
    const started = Date.now();
    const results = await runSideBySide(host, Array.from({ length: 4 }, () => ({ argv: ['sleep', '1'] })));
    expect(results.every((r) => r.exitCode === 0)).toBe(true);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('runs a program marked alone to its end before the next one starts, and keeps its exit code', () => {
    const dir = tmp();
    const done = path.join(dir, "done $(touch x)");
    const programs = (alone: boolean) => [
      { argv: ['sh', '-c', 'sleep 0.3; : >"$1"; exit 7', 'sh', done], alone },
      { argv: ['sh', '-c', 'if [ -e "$1" ]; then echo after; else echo during; fi', 'sh', done] },
    ];
    for (const shell of POSIX_SHELLS) {
      for (const alone of [true, false]) {
        fs.rmSync(done, { force: true });
        const [first, next] = parseSideBySide(under(shell, sideBySideArgv(programs(alone), MARK)), MARK, 2);
        expect(first!.exitCode).toBe(7);
        expect(next!.stdout).toBe(alone ? 'after\n' : 'during\n');
      }
    }
  });

  it('keeps output that looks like its own framing, with or without a last newline, and leaves no temporary folder behind', async () => {
    const dir = tmp();
    // Lines like the runner's own, a NUL, no newline at the end.
    fs.writeFileSync(path.join(dir, 'tricky'), `0 0\nAHSIDE 0 0\n\n end\n\u0000\u00e9 no newline`);
    const argv = sideBySideArgv([{ argv: ['cat', path.join(dir, 'tricky')] }, { argv: ['printf', ''] }, { argv: ['printf', 'after\n\n'] }], MARK);
    for (const shell of POSIX_SHELLS) {
      const [first, empty, last] = parseSideBySide(under(shell, argv, { TMPDIR: dir }), MARK, 3);
      expect(first!.stdout).toBe(fs.readFileSync(path.join(dir, 'tricky'), 'utf8'));
      expect(empty).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
      expect(last!.stdout).toBe('after\n\n');
      expect(fs.readdirSync(dir)).toEqual(['tricky']);
    }
  });

  it('under every POSIX shell here: the same answers for hostile arguments', () => {
    const canaries = tmp();
    const hostile = hostileArgs(canaries);
    const argv = sideBySideArgv([{ argv: ['printf', '%s\\n', ...hostile] }, { argv: ['sh', '-c', 'exit 5'] }], MARK);
    for (const shell of POSIX_SHELLS) {
      const [a, b] = parseSideBySide(under(shell, argv), MARK, 2);
      expect(a!.stdout).toBe(hostile.map((h) => `${h}\n`).join(''));
      expect(b!.exitCode).toBe(5);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('refuses an answer that is cut short, or where a program printed the mark, instead of guessing', () => {
    expect(() => parseSideBySide(`\n${MARK} 0 0\nout\n${MARK}\n`, MARK, 1)).toThrow(/does not frame/);
    expect(() => parseSideBySide('', MARK, 1)).toThrow(/does not frame/);
    expect(() => parseSideBySide(`\n${MARK} 0 0\nout\n${MARK} 1 0\n\n${MARK}\n\n${MARK} end\n`, MARK, 1)).toThrow(/does not frame/);
  });
});
