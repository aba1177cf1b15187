// The benchmark's WAN link to vega: client → counting tap (TCP connect RTT) → delay proxy
// (one-way delay each direction) → the world's sshd. The laptop user reaches it through an ssh
// alias of its own (HostKeyAlias + its own known_hosts file, no connection sharing), an ssh
// config fragment for the run, removed afterwards.
import { laptopAlias, type World } from '../test/world/machines.js';
import { startDelayProxy, type DelayProxy } from './delay-proxy.js';
import { startTap, type Tap, type TapEvent } from './tap.js';

export interface LinkCounters {
  handshakes: number;
  bursts: number;
  bytesUp: number;
  bytesDown: number;
}

export interface Link {
  alias: string;
  /** Counters so far (take two and subtract for one run). */
  counters(): LinkCounters;
  events(): readonly TapEvent[];
  close(): Promise<void>;
}

export function diff(after: LinkCounters, before: LinkCounters): LinkCounters {
  return { handshakes: after.handshakes - before.handshakes, bursts: after.bursts - before.bursts, bytesUp: after.bytesUp - before.bytesUp, bytesDown: after.bytesDown - before.bytesDown };
}

/** `to`: the sshd behind the link (default: the world's). */
export async function openLink(world: World, opts: { alias: string; oneWayDelayMs: number; gapMs?: number; to?: { host: string; port: number } }): Promise<Link> {
  const vega = world.users.vega!;
  let proxy: DelayProxy | undefined;
  let tap: Tap | undefined;
  let restore: (() => void) | undefined;
  try {
    proxy = await startDelayProxy(opts.to ?? { host: world.sshd.host, port: world.sshd.port }, opts.oneWayDelayMs);
    tap = await startTap({ host: '127.0.0.1', port: proxy.port }, { connectDelayMs: 2 * opts.oneWayDelayMs, gapMs: opts.gapMs ?? 10 });
    restore = laptopAlias(world, opts.alias, tap.port, { user: vega.name, options: ['StrictHostKeyChecking yes', 'ControlMaster no', 'ControlPath none'] });
  } catch (err) {
    await tap?.close();
    await proxy?.close();
    throw err;
  }
  const p = proxy;
  const t = tap;
  const undo = restore;
  return {
    alias: opts.alias,
    // Handshakes from the proxy (every connection through it is one SSH handshake); bursts and
    // bytes from the tap, which sees the client side.
    counters: () => ({ handshakes: p.connections, bursts: t.bursts, bytesUp: t.bytesUp, bytesDown: t.bytesDown }),
    events: () => t.events,
    close: async () => {
      undo();
      await t.close();
      await p.close();
    },
  };
}

