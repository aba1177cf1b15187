// The plan's free-space check: one program that walks up to an existing folder and asks df.
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { checkDisk, freeSpaceAndProgram } from '../../src/handoff/disk.js';
import { LocalHost } from '../../src/host/local.js';

const host = new LocalHost();
const missingRoot = path.join(os.tmpdir(), `ah-disk-${process.pid}`, 'not', 'there yet', '$(touch canary)');
const entry = (size: number) => [{ source: '/dev/null', dest: 'x.jsonl', size, mode: 0o600, mtimeMs: 0, verbatim: false }];

describe('checkDisk', () => {
  it('accepts a session that fits, under a config root that does not exist yet', async () => {
    await expect(checkDisk({ host }, missingRoot, entry(1024))).resolves.toBeUndefined();
  });

  it('refuses a session larger than the free space, naming the folder it measured', async () => {
    const err = (await checkDisk({ host }, missingRoot, entry(2 ** 60)).catch((e: unknown) => e)) as { code?: string; message?: string };
    expect(err.code).toBe('target_disk_full');
    expect(err.message).toContain(os.tmpdir());
  });

  it('finds the agent CLI on the login PATH in the same program (a hostile name is only a name)', async () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-disk-bin-'));
    fs.writeFileSync(path.join(bin, 'fake-cli'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(bin, 'not-exec'), 'x', { mode: 0o644 });
    const withBin = new LocalHost({ env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` } });
    try {
      const found = await freeSpaceAndProgram({ host: withBin }, missingRoot, 'fake-cli');
      expect(found.program).toBe(path.join(bin, 'fake-cli'));
      expect(found.free.availKb).toBeGreaterThan(0);
      expect(found.free.dir).toBe(os.tmpdir());
      expect((await freeSpaceAndProgram({ host: withBin }, missingRoot, 'not-exec')).program).toBeNull();
      expect((await freeSpaceAndProgram({ host: withBin }, missingRoot, '$(touch canary); x')).program).toBeNull();
      expect(fs.existsSync(path.join(os.homedir(), 'canary'))).toBe(false);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });
});
