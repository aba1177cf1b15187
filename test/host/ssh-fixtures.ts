// Shared set-up for the ssh tests: an ssh config file (like `ssh -F`) that reaches the world's
// users with the laptop user's key and known_hosts, so tests run as root without touching
// root's ~/.ssh.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { World } from '../world/machines.js';
import type { SshHostOptions } from '../../src/host/ssh.js';
import { HostError } from '../../src/errors.js';

export interface SshFixture {
  dir: string;
  configFile: string;
  knownHosts: string;
  /** Options every test connection uses: our config file, no agent from the environment. */
  opts: SshHostOptions;
}

/** Host aliases `w-<user>` for every world user, plus `Host *` defaults (key, known_hosts). */
export function makeSshFixture(world: World, extraConfig = ''): SshFixture {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-host-ssh-'));
  const laptop = world.users.laptop!;
  const knownHosts = path.join(dir, 'known_hosts');
  fs.copyFileSync(laptop.knownHosts, knownHosts);
  const aliases = Object.keys(world.users)
    .map((u) => `Host w-${u}\n  HostName ${world.sshd.host}\n  Port ${world.sshd.port}\n  User ${u}\n`)
    .join('\n');
  const configFile = path.join(dir, 'config');
  fs.writeFileSync(configFile, `${extraConfig}\n${aliases}\nHost *\n  IdentityFile ${laptop.key}\n  IdentitiesOnly yes\n  UserKnownHostsFile ${knownHosts}\n  GlobalKnownHostsFile none\n`);
  return { dir, configFile, knownHosts, opts: { configFile, agent: null } };
}

export function sshdAcceptedCount(world: World): number {
  return (fs.readFileSync(world.sshd.log, 'utf8').match(/Accepted publickey/g) ?? []).length;
}

/** Await a rejection and check it is a HostError with `code`. */
export async function hostErrorOf(p: Promise<unknown>): Promise<{ code: string; message: string; fix: string | undefined; details: Record<string, unknown> | undefined }> {
  const err = await p.then(
    () => new Error('expected a HostError, but it resolved'),
    (e: unknown) => e,
  );
  if (!(err instanceof HostError)) throw err;
  return { code: err.code, message: err.message, fix: err.fix, details: err.details };
}
