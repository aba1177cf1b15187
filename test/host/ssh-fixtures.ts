// Shared set-up for the ssh tests: an ssh config file (like `ssh -F`) that reaches the world's
// users with the laptop user's key and known_hosts, so tests run as root without touching
// root's ~/.ssh.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { World } from '../world/machines.js';
import { SshHost, type SshHostOptions } from '../../src/host/ssh.js';
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

/** A TCP proxy in front of the world's sshd that can stop passing bytes, and cut its connections. */
export interface CuttableProxy {
  port: number;
  /** Stop passing bytes both ways (a link that dies: backpressure builds up). */
  stall(): void;
  /** Destroy every connection through it, both sides. */
  cut(): void;
  close(): Promise<void>;
}

export async function cuttableProxy(world: World): Promise<CuttableProxy> {
  const pairs: [net.Socket, net.Socket][] = [];
  const server = net.createServer((client) => {
    const up = net.connect(world.sshd.port, world.sshd.host);
    for (const s of [client, up]) s.on('error', () => undefined);
    client.pipe(up);
    up.pipe(client);
    pairs.push([client, up]);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as net.AddressInfo).port,
    stall: () => {
      for (const [client, up] of pairs) {
        client.unpipe(up);
        up.unpipe(client);
        client.pause();
        up.pause();
      }
    },
    cut: () => {
      for (const pair of pairs) for (const s of pair) s.destroy();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The world's vega through `proxy`, named `ah-cut` (its host key under an alias of its own). */
export async function connectThrough(world: World, fx: SshFixture, proxy: CuttableProxy, opts: SshHostOptions = {}): Promise<SshHost> {
  const kh = path.join(fx.dir, 'known_hosts_cut');
  fs.writeFileSync(kh, `ah-cut-vega ${world.sshd.hostKeyLine.split(' ').slice(1).join(' ')}\n`);
  const configFile = path.join(fx.dir, `config-cut-${proxy.port}`);
  const alias = `Host ah-cut\n  HostName 127.0.0.1\n  Port ${proxy.port}\n  User vega\n  HostKeyAlias ah-cut-vega\n  UserKnownHostsFile ${kh}\n`;
  fs.writeFileSync(configFile, `${alias}\n${fs.readFileSync(fx.configFile, 'utf8')}`);
  return SshHost.connect('ah-cut', { ...fx.opts, configFile, ...opts });
}
