// The two sides of a handoff and how the modes map onto hosts:
//   send AGENT TARGET        source = this machine, target = ssh(TARGET)
//   send AGENT --here        source = target = this machine
//   send AGENT --from HOST   source = ssh(HOST), target = this machine (or ssh(TARGET))
// One ssh connection per host per handoff; every step runs against these Hosts.
import { HerdrClient } from '../herdr/client.js';
import { connectHost } from '../host/connect.js';
import type { Host, HostInfo } from '../host/host.js';
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

export async function openSides(opts: SendOptions): Promise<Sides> {
  const sourceSpec = opts.from ?? 'local';
  const targetSpec = opts.here ? 'local' : (opts.target ?? 'local');
  const timeouts = { connectTimeoutMs: opts.timeoutS * 1000, commandTimeoutMs: opts.timeoutS * 1000 };
  const opened: Host[] = [];
  try {
    // Both machines at once (--from HOST TARGET opens two connections).
    const [sourceConn, targetConn] = await Promise.allSettled([connectHost(sourceSpec, timeouts), targetSpec === sourceSpec ? null : connectHost(targetSpec, timeouts)]);
    for (const r of [sourceConn, targetConn]) if (r.status === 'fulfilled' && r.value) opened.push(r.value);
    if (sourceConn.status === 'rejected') throw sourceConn.reason;
    if (targetConn.status === 'rejected') throw targetConn.reason;
    const sourceHost = sourceConn.value;
    const targetHost = targetConn.value ?? sourceHost;
    const [sourceInfo, targetInfo] = await Promise.all([sourceHost.info(), targetHost.info()]);
    const herdrTimeout = { timeoutMs: opts.timeoutS * 1000 };
    const source: Side = { role: 'source', spec: sourceSpec, host: sourceHost, herdr: new HerdrClient(sourceHost, herdrTimeout), info: sourceInfo };
    const target: Side = targetHost === sourceHost ? { ...source, role: 'target', spec: targetSpec } : { role: 'target', spec: targetSpec, host: targetHost, herdr: new HerdrClient(targetHost, herdrTimeout), info: targetInfo };
    const pending: Promise<unknown>[] = [];
    return {
      source,
      target,
      sameHost: targetHost === sourceHost,
      background: (work) => {
        pending.push(work.catch(() => undefined));
      },
      close: async () => {
        await Promise.all(pending);
        await Promise.all(opened.map((h) => h.close()));
      },
    };
  } catch (err) {
    await Promise.all(opened.map((h) => h.close()));
    throw err;
  }
}
