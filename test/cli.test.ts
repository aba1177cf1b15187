import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/agent-handoff.js', import.meta.url));

describe('cli', () => {
  it('prints its version as JSON', async () => {
    const r = await execa(process.execPath, [bin, '--version'], { reject: false });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, version: '0.1.0' });
  });
  it('answers a usage error with JSON and exit 2', async () => {
    const r = await execa(process.execPath, [bin, '--bogus'], { reject: false });
    expect(r.exitCode).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: 'usage' });
  });
});

describe('cli usage errors are JSON with exit 2', () => {
  const cases: [string[], RegExp][] = [
    [['send', 'a'], /No target given/],
    [['send', '--all', 'vega', '--here'], /takes no target/],
    [['send', '--all', 'a', 'vega'], /--all chooses the agents itself/],
    [['send', 'a', 'b', 'vega', '--name', 'x'], /--name names one agent/],
    [['send', 'a', '--new-worktree', '--from', 'x'], /--new-worktree only/],
    [['frobnicate'], /Unknown/],
    [[], /No command/],
  ];
  for (const [argv, re] of cases) {
    it(`agent-handoff ${argv.join(' ')}`, async () => {
      const r = await execa(process.execPath, [bin, ...argv], { reject: false });
      expect(r.exitCode).toBe(2);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ ok: false, code: 'usage' });
      expect(out.error).toMatch(re);
      expect(typeof out.fix).toBe('string');
    });
  }
  it('prints every result schema', async () => {
    const r = await execa(process.execPath, [bin, 'schema'], { reject: false });
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out.schemas)).toEqual(expect.arrayContaining(['error', 'list', 'doctor']));
  });
});
