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
