// login-env.ts's probe as its shells run it: the facts it prints, HOME's real path among them,
// with hostile folder names as data (never run), under dash, `bash --posix` and busybox sh.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLoginProbe } from '../../src/host/login-env.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { canaryFolder, hostileFileNames } from './hostile-args.js';

let root: string;
let canaries: string;

beforeAll(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-login-probe-')));
  canaries = canaryFolder(root);
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

/** The probe's facts, its header run by `shell` with this HOME (none: unset). */
function factsUnder(shell: readonly string[], home: string | undefined) {
  const probe = makeLoginProbe();
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', SHELL: '/bin/sh', ...(home === undefined ? {} : { HOME: home }) };
  // stdin not a socket: bash reads ~/.bashrc when it thinks sshd started it.
  const out = execFileSync(shell[0]!, [...shell.slice(1), '-c', probe.header], { env, cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  return probe.parse(out)?.facts;
}

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('the login probe under %s', (_name, shell) => {
  it("tells HOME's real path for a HOME that is a link, whatever its name", () => {
    for (const [i, name] of hostileFileNames(canaries).entries()) {
      const real = path.join(root, `real-${i}`, name);
      fs.mkdirSync(real, { recursive: true });
      const link = path.join(root, `link-${i}-${shell[0]}`);
      fs.symlinkSync(real, link);
      const facts = factsUnder(shell, link);
      expect(facts?.home, JSON.stringify(name)).toBe(link);
      expect(facts?.homeReal, JSON.stringify(name)).toBe(real);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it("tells no real path for a HOME that cannot be entered, or none; the other facts still come", () => {
    const missing = factsUnder(shell, path.join(root, 'no-such-home'));
    expect(missing).toMatchObject({ home: path.join(root, 'no-such-home'), homeReal: '', shell: '/bin/sh' });
    expect(missing?.tmpdir).toBe(fs.realpathSync(os.tmpdir()));
    expect(factsUnder(shell, undefined)).toMatchObject({ home: '', homeReal: '' });
  });
});
