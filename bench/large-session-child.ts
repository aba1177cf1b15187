// The measured side of bench/large-session.ts, in a process of its own so its peak RSS is the
// copy's (plus what any agent-handoff process holds), not the benchmark's or the delay proxies'.
// Connects, copies one session file through the real copy path, prints one JSON line.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import ssh2 from 'ssh2';
import type { Host } from '../src/host/host.js';
import { LocalHost } from '../src/host/local.js';
import { SshHost } from '../src/host/ssh.js';
import { copyUnit, type CopyEntry } from '../src/transcript/copy.js';
import type { RewritePlan } from '../src/transcript/rewrite-plan.js';

export interface ChildJob {
  /** ssh alias (in `configFile`) or 'local'. */
  source: string;
  target: string;
  configFile: string;
  /** The target's local HOME when it is 'local'. */
  localHome?: string;
  entry: CopyEntry;
  targetRoot: string;
  plan: RewritePlan;
}

export interface ChildReport {
  connect_ms: number;
  copy_ms: number;
  /** Bytes on the ssh sockets during the copy, both hosts, both ways. */
  wire_bytes: number;
  rss_before_mb: number;
  /** The kernel's high-water mark of the process (ru_maxrss). */
  peak_rss_mb: number;
  /** Highest of each part of memoryUsage() while copying (sampled every 10 ms). */
  peaks_mb: Record<string, number>;
  /** Each part of memoryUsage() just before copying. */
  before_mb: Record<string, number>;
  /** CPU time of the process while copying (every thread), and of its main thread alone. */
  cpu_ms: number;
  main_thread_ms: number;
  ciphers: string[];
  size: number;
  sha256: string;
  action: string;
}

const MB = 1024 * 1024;

async function main(): Promise<void> {
  // Hold what an agent-handoff process holds (the bundled CLI, loaded, not run), so the peak is
  // comparable with a real send's; AH_BENCH_CLI=0 measures the copy path alone.
  const bundle = new URL('../cli.cjs', import.meta.url);
  if (process.env.AH_BENCH_CLI !== '0' && fs.existsSync(bundle)) createRequire(import.meta.url)(bundle.pathname);
  const job = JSON.parse(process.env.AH_LARGE_JOB ?? '') as ChildJob;
  // Which cipher each connection negotiated (ssh2 reports it on the client's 'handshake').
  const ciphers: string[] = [];
  const proto = ssh2.Client.prototype as unknown as { connect(this: InstanceType<typeof ssh2.Client>, cfg: unknown): unknown };
  const connect = proto.connect;
  proto.connect = function (this: InstanceType<typeof ssh2.Client>, cfg: unknown) {
    this.on('handshake', (n: { cs: { cipher: string } }) => ciphers.push(n.cs.cipher));
    return connect.call(this, cfg);
  };
  const t0 = Date.now();
  const open = (name: string): Promise<Host> =>
    name === 'local' ? Promise.resolve(new LocalHost({ env: { ...process.env, ...(job.localHome ? { HOME: job.localHome } : {}) } })) : SshHost.connect(name, { configFile: job.configFile, agent: null });
  const [source, target] = await Promise.all([open(job.source), open(job.target)]);
  // Let the warm-up (login probe, shell, SFTP) finish, as it has in a real handoff by this step.
  await Promise.all([source.info(), target.info()]);
  const connectMs = Date.now() - t0;
  const wire = () => [source, target].reduce((n, h) => (h instanceof SshHost ? n + h.counters.bytesIn + h.counters.bytesOut : n), 0);
  const before = process.memoryUsage();
  const rssBefore = before.rss;
  const w0 = wire();
  const peaks: Record<string, number> = {};
  const sample = () => {
    for (const [k, v] of Object.entries(process.memoryUsage())) peaks[k] = Math.max(peaks[k] ?? 0, +(v / MB).toFixed(1));
  };
  const sampler = setInterval(sample, 10);
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const t1 = Date.now();
  const record = await copyUnit({ source, target, entries: [job.entry], targetRoot: job.targetRoot, plan: job.plan, tag: 'bench' });
  const copyMs = Date.now() - t1;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  clearInterval(sampler);
  sample();
  const wireBytes = wire() - w0;
  const f = record.files[0]!;
  const report: ChildReport = {
    connect_ms: connectMs,
    copy_ms: copyMs,
    wire_bytes: wireBytes,
    rss_before_mb: +(rssBefore / MB).toFixed(1),
    before_mb: Object.fromEntries(Object.entries(before).map(([k, v]) => [k, +(v / MB).toFixed(1)])),
    peaks_mb: peaks,
    cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    main_thread_ms: Math.round(elu.active),
    peak_rss_mb: +((process.resourceUsage().maxRSS * 1024) / MB).toFixed(1),
    ciphers,
    size: f.size,
    sha256: f.sha256,
    action: f.action,
  };
  await Promise.all([source.close(), target.close()]);
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
