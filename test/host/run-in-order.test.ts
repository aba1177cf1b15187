// runInOrder: commands in order in one program, stopping at the first failure, telling which ran.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.js';
import { LocalHost } from '../../src/host/local.js';
import { runInOrder } from '../../src/host/run-in-order.js';
import { hostileArgs } from './hostile-args.js';

const host = new LocalHost();
const tmp = tempDirs('ah-rio-');

describe('runInOrder', () => {
  it('runs every command in its folder, in order, with arguments passed as they are', async () => {
    const dir = tmp();
    const sub = path.join(dir, "sub dir $(touch pwned) 'q'");
    fs.mkdirSync(sub);
    const canaries = tmp();
    const hostile = [...hostileArgs(canaries), '-n', '${10}', '$1'];
    const r = await runInOrder(host, [
      { cwd: dir, argv: ['sh', '-c', 'printf "%s\\n" "$@" > out1', 'sh', ...hostile] },
      { cwd: sub, argv: ['sh', '-c', 'pwd > out2'] },
      { cwd: dir, argv: ['sh', '-c', 'cat out1 > out3'] },
    ]);
    expect(r).toEqual({ done: 3, failed: null });
    expect(fs.readFileSync(path.join(dir, 'out1'), 'utf8')).toBe(hostile.map((h) => `${h}\n`).join(''));
    expect(fs.readFileSync(path.join(sub, 'out2'), 'utf8').trim()).toBe(sub);
    expect(fs.existsSync(path.join(dir, 'out3'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
    expect(fs.existsSync(path.join(sub, 'pwned'))).toBe(false);
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('stops at the first failure and reports it with its exit code and its own stderr only', async () => {
    const dir = tmp();
    const r = await runInOrder(host, [
      { cwd: dir, argv: ['sh', '-c', 'echo noise from the first >&2; touch one'] },
      { cwd: dir, argv: ['sh', '-c', 'echo it went wrong >&2; exit 7'] },
      { cwd: dir, argv: ['touch', 'three'] },
    ]);
    expect(r.done).toBe(1);
    expect(r.failed).toEqual({ exitCode: 7, stderr: 'it went wrong\n' });
    expect(fs.existsSync(path.join(dir, 'one'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'three'))).toBe(false);
  });

  it('a missing folder or program fails that command', async () => {
    const dir = tmp();
    expect((await runInOrder(host, [{ cwd: path.join(dir, 'nope'), argv: ['true'] }])).done).toBe(0);
    const missing = await runInOrder(host, [{ cwd: dir, argv: ['true'] }, { cwd: dir, argv: ['no-such-program-ah'] }]);
    expect(missing.done).toBe(1);
    expect(missing.failed?.exitCode).toBe(127);
  });

  it('spreads long command lists over several programs, in order, still stopping at the first failure', async () => {
    const dir = tmp();
    const long = 'x'.repeat(2000);
    const commands = Array.from({ length: 120 }, (_, i) => ({ cwd: dir, argv: ['sh', '-c', 'printf "%s\\n" "$1" >> log', 'sh', `${i} ${long}`] }));
    expect(await runInOrder(host, commands)).toEqual({ done: 120, failed: null });
    expect(fs.readFileSync(path.join(dir, 'log'), 'utf8').split('\n').filter(Boolean).map((l) => Number(l.split(' ')[0]))).toEqual(commands.map((_, i) => i));
    const failing = [...commands.slice(0, 70), { cwd: dir, argv: ['false'] }, ...commands.slice(0, 5)];
    expect((await runInOrder(host, failing)).done).toBe(70);
  });

  it('more than nine arguments reach the command whole', async () => {
    const dir = tmp();
    const many = Array.from({ length: 14 }, (_, i) => `arg ${i}`);
    expect((await runInOrder(host, [{ cwd: dir, argv: ['sh', '-c', 'printf "%s|" "$@" > out', 'sh', ...many] }])).done).toBe(1);
    expect(fs.readFileSync(path.join(dir, 'out'), 'utf8')).toBe(many.map((m) => `${m}|`).join(''));
  });
});
