// What establishing the ssh session costs over a slow link (issue #18): SshHost.connect through
// the counting tap and the delay proxy to the world's sshd, in-process. Three moments, each in ms
// from the start and in round trips the tap saw by then (its TCP connect counts one):
//   connect  — SshHost.connect resolved (TCP, key exchange, auth);
//   first    — the first `run(['true'])` answered (what every use waits for);
//   info     — the login probe's facts known (`info()`).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SshHost } from '../src/host/ssh.js';
import type { World } from '../test/world/machines.js';
import { startDelayProxy } from './delay-proxy.js';
import { isRoundTrip, startTap, type TapEvent } from './tap.js';

export interface Moment {
  ms: number;
  /** Round trips the tap counted up to this moment (TCP connect + request bursts). */
  rtts: number;
}

export interface HandshakeCost {
  oneWayDelayMs: number;
  connect: Moment;
  first: Moment;
  info: Moment;
}

const ALIAS = 'w-handshake-link';

/** One connection to the world's vega user through a link of `oneWayDelayMs` each way. */
export async function measureHandshake(world: World, oneWayDelayMs: number): Promise<HandshakeCost> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-handshake-'));
  const proxy = await startDelayProxy({ host: world.sshd.host, port: world.sshd.port }, oneWayDelayMs);
  // A gap below a third of the round trip separates dependent bursts from one flight's packets.
  const tap = await startTap({ host: '127.0.0.1', port: proxy.port }, { connectDelayMs: 2 * oneWayDelayMs, gapMs: Math.max(1, Math.floor((2 * oneWayDelayMs) / 3)) });
  try {
    const laptop = world.users.laptop!;
    const knownHosts = path.join(dir, 'known_hosts');
    fs.writeFileSync(knownHosts, `${ALIAS} ${world.sshd.hostKeyLine.split(' ').slice(1).join(' ')}\n`);
    const configFile = path.join(dir, 'config');
    fs.writeFileSync(configFile, [`Host ${ALIAS}`, '  HostName 127.0.0.1', `  Port ${tap.port}`, '  User vega', `  HostKeyAlias ${ALIAS}`, `  IdentityFile ${laptop.key}`, '  IdentitiesOnly yes', `  UserKnownHostsFile ${knownHosts}`, '  GlobalKnownHostsFile none', ''].join('\n'));
    const start = Date.now();
    const moment = (): Moment => {
      const at = Date.now();
      return { ms: at - start, rtts: tap.events.filter((e: TapEvent) => isRoundTrip(e) && e.at <= at).length };
    };
    const host = await SshHost.connect(ALIAS, { configFile, agent: null });
    try {
      const connect = moment();
      let info: Moment | undefined;
      const infoDone = host.info().then(() => {
        info = moment();
      });
      const r = await host.run(['true']);
      const first = moment();
      if (r.exitCode !== 0) throw new Error(`true exited ${r.exitCode}: ${r.stderr}`);
      await infoDone;
      return { oneWayDelayMs, connect, first, info: info! };
    } finally {
      await host.close();
    }
  } finally {
    await tap.close();
    await proxy.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function handshakeTable(runs: HandshakeCost[]): string {
  const rtt = 2 * (runs[0]?.oneWayDelayMs ?? 0);
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const row = (name: string, pick: (c: HandshakeCost) => Moment): string => {
    const ms = median(runs.map((c) => pick(c).ms));
    return `${name.padEnd(28)} ${String(median(runs.map((c) => pick(c).rtts))).padStart(4)} tap RTT  ${String(ms).padStart(5)} ms  (${(ms / rtt).toFixed(1)} × RTT)`;
  };
  return [`RTT ${rtt} ms, median of ${runs.length}`, row('connect() resolved', (c) => c.connect), row("first run(['true']) answer", (c) => c.first), row('info() (login probe) known', (c) => c.info)].join('\n');
}
