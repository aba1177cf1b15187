// The two sides of a handoff and how the modes map onto hosts:
//   send AGENT TARGET        source = this machine, target = ssh(TARGET)
//   send AGENT --here        source = target = this machine
//   send AGENT --from HOST   source = ssh(HOST), target = this machine (or ssh(TARGET))
// One ssh connection per host per handoff; every step runs against these Hosts.
import { HerdrClient } from '../herdr/client.js';
import { connectHost } from '../host/connect.js';
import type { Host, HostInfo } from '../host/host.js';
import { recallHostFacts, rememberHostFacts, sameHostFacts } from './host-facts-memory.js';
import type { SendOptions } from './options.js';

export interface Side {
  role: 'source' | 'target';
  /** What the user called it ('local' for this machine). */
  spec: string;
  host: Host;
  herdr: HerdrClient;
  info: HostInfo;
}

export interface Sides {
  source: Side;
  target: Side;
  /** Same machine on both sides (--here, or a target that is the source). */
  sameHost: boolean;
  /** Work left running off the critical path (a cache write): close() waits for it first. */
  background(work: Promise<unknown>): void;
  close(): Promise<void>;
}

/** The two sides being opened: the source as soon as it is ready (the plan starts there), and both. */
export interface OpeningSides {
  /** Same machine on both sides (known from the names, before connecting). */
  sameHost: boolean;
  source: Promise<Side>;
  /**
   * The target as soon as it is connected, with the facts remembered from last time in place of
   * its login probe's (null: nothing remembered, or the same machine): for reads sent early. It
   * is `sides`' target when the probe finds the same facts; otherwise the reads are to be redone
   * on that one.
   */
  earlyTarget: Promise<Side | null>;
  sides: Promise<Sides>;
  /** Close whatever was opened, on every path (the source may be in use when the target fails). */
  close(): Promise<void>;
}

/**
 * Open both machines at once (--from HOST TARGET opens two connections). The source's side is
 * given as soon as its host answers, so work there overlaps the target's handshake; `sides`
 * settles when both are ready. The caller calls close() on every path (a failed target leaves
 * the source open: its locks are still to be released).
 */
export function openSides(opts: SendOptions): OpeningSides {
  const sourceSpec = opts.from ?? 'local';
  const targetSpec = opts.here ? 'local' : (opts.target ?? 'local');
  const sameHost = targetSpec === sourceSpec;
  const timeouts = { connectTimeoutMs: opts.timeoutS * 1000, commandTimeoutMs: opts.timeoutS * 1000 };
  const herdrTimeout = { timeoutMs: opts.timeoutS * 1000 };
  const sourceConn = connectHost(sourceSpec, timeouts);
  const targetConn = sameHost ? sourceConn : connectHost(targetSpec, timeouts);
  const source = sourceConn.then(async (host): Promise<Side> => ({ role: 'source', spec: sourceSpec, host, herdr: new HerdrClient(host, herdrTimeout), info: await host.info() }));
  // This machine's facts are known at once: only another's are remembered.
  const earlyTarget = sameHost
    ? Promise.resolve(null)
    : targetConn.then((host): Side | null => {
        const remembered = host.isThisMachine ? null : recallHostFacts(host.address);
        return remembered && { role: 'target', spec: targetSpec, host, herdr: new HerdrClient(host, herdrTimeout), info: remembered };
      });
  const pending: Promise<unknown>[] = [];
  let closing: Promise<void> | null = null;
  const closeAll = (): Promise<void> =>
    (closing ??= (async () => {
      await Promise.all(pending);
      const hosts = new Set<Host>();
      for (const c of [sourceConn, targetConn]) await c.then((h) => hosts.add(h), () => undefined);
      await Promise.all([...hosts].map((h) => h.close()));
    })());
  const sides = (async (): Promise<Sides> => {
    const [sourceAsked, targetAsked] = await Promise.allSettled([source, targetConn.then(async (host) => ({ host, info: await host.info() }))]);
    if (sourceAsked.status === 'rejected') throw sourceAsked.reason;
    if (targetAsked.status === 'rejected') throw targetAsked.reason;
    const src = sourceAsked.value;
    const { host: targetHost, info: targetInfo } = targetAsked.value;
    const early = await earlyTarget;
    const target: Side = sameHost
      ? { ...src, role: 'target', spec: targetSpec }
      : early && sameHostFacts(early.info, targetInfo)
        ? early
        : { role: 'target', spec: targetSpec, host: targetHost, herdr: new HerdrClient(targetHost, herdrTimeout), info: targetInfo };
    if (!sameHost && !targetHost.isThisMachine && target !== early) pending.push(rememberHostFacts(targetHost.address, targetInfo));
    return {
      source: src,
      target,
      sameHost,
      background: (work) => {
        pending.push(work.catch(() => undefined));
      },
      close: closeAll,
    };
  })();
  source.catch(() => undefined);
  earlyTarget.catch(() => undefined);
  sides.catch(() => undefined);
  return { sameHost, source, earlyTarget, sides, close: closeAll };
}
