// runSideBySide: independent programs at once in one program, each result whole and apart.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalHost } from '../../src/host/local.js';
import { parseSideBySide, runSideBySide, sideBySideArgv } from '../../src/host/run-side-by-side.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { hostileArgs } from './hostile-args.js';
import { execFileSync } from 'node:child_process';

const host = new LocalHost();
const made: string[] = [];
const tmp = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-sbs-'));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** The runner's argv under one shell instead of /bin/sh. */
function under(shell: readonly string[], argv: string[]): Buffer {
  const [, , program, ...rest] = argv;
  return execFileSync(shell[0]!, [...shell.slice(1), '-c', program!, ...rest]);
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

  it('keeps any byte of the output, and leaves no temporary folder behind', async () => {
    const dir = tmp();
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    fs.writeFileSync(path.join(dir, 'all'), Buffer.concat([bytes, Buffer.from('\n3 4 5\n')]));
    const argv = sideBySideArgv([{ argv: ['cat', path.join(dir, 'all')] }, { argv: ['printf', 'after'] }]);
    for (const shell of POSIX_SHELLS) {
      const env = { ...process.env, TMPDIR: dir };
      const [, , program, ...rest] = argv;
      const out = execFileSync(shell[0]!, [...shell.slice(1), '-c', program!, ...rest], { env });
      const [first, second] = parseSideBySide(out, 2);
      expect(Buffer.from(first!.stdout, 'utf8').length).toBeGreaterThan(0);
      expect(second!.stdout).toBe('after');
      expect(fs.readdirSync(dir)).toEqual(['all']);
    }
  });

  it('under every POSIX shell here: the same answers for hostile arguments', () => {
    const canaries = tmp();
    const hostile = hostileArgs(canaries);
    const argv = sideBySideArgv([{ argv: ['printf', '%s\\n', ...hostile] }, { argv: ['sh', '-c', 'exit 5'] }]);
    for (const shell of POSIX_SHELLS) {
      const [a, b] = parseSideBySide(under(shell, argv), 2);
      expect(a!.stdout).toBe(hostile.map((h) => `${h}\n`).join(''));
      expect(b!.exitCode).toBe(5);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('refuses output that is cut short instead of guessing', () => {
    expect(() => parseSideBySide(Buffer.from('0 10 0\nshort'), 1)).toThrow(/cut short/);
    expect(() => parseSideBySide(Buffer.from(''), 1)).toThrow(/no header/);
  });
});
