// Large session transfers (issue #18): a generated, realistic pi transcript (bench/transcript-gen.ts)
// copied through the real copy path (copyUnit: read, rewrite, write, install) to the world's vega
// user over delay proxies (25 ms each way by default, ≈50 ms RTT). Each copy runs in a child
// process (bench/large-session-child.ts) so its peak RSS is the copy's own; the bytes the target
// got are checked against the rewritten source. Reports wall, MB/s, bytes on the wire, peak RSS.
//   npm run build && node dist/bench/large-session.js
//   AH_BENCH_MB=0.02,1,200 AH_BENCH_MODES=push,relay,pull AH_BENCH_RUNS=3 node dist/bench/large-session.js
//   AH_BENCH_MBIT=100 …                             # a 100 Mbit/s link (each way) besides the delay
// Modes: push = laptop (local) → vega (ssh); relay = laptop (ssh) → vega (ssh), the bytes passing
// through this machine; pull = laptop (ssh) → here (local), as `--from` does. Needs root and the world.
// AH_BENCH_CHILD: the child of another build (an A/B of two commits under the same load).
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { setupWorld, type World } from '../test/world/machines.js';
import { buildRewritePlan, type RewritePlan } from '../src/transcript/rewrite-plan.js';
import { createRewriteStream } from '../src/transcript/rewrite.js';
import { startDelayProxy, type DelayProxy } from './delay-proxy.js';
import type { ChildJob, ChildReport } from './large-session-child.js';
import { generateTranscript } from './transcript-gen.js';

const MB = 1024 * 1024;
const sizesMb = (process.env.AH_BENCH_MB ?? '200').split(',').map(Number);
const modes = (process.env.AH_BENCH_MODES ?? 'push').split(',') as Mode[];
const runs = Number(process.env.AH_BENCH_RUNS ?? 1);
const oneWayDelayMs = Number(process.env.AH_BENCH_DELAY_MS ?? 25);
/** A bandwidth for the link, each way (default none: loopback speed, so only latency and CPU count). */
const mbit = Number(process.env.AH_BENCH_MBIT ?? 0);
const link = mbit > 0 ? { bytesPerSecond: (mbit * 1e6) / 8 } : {};
const here = path.dirname(fileURLToPath(import.meta.url));

type Mode = 'push' | 'relay' | 'pull';

interface Row {
  mode: Mode;
  mb: number;
  wall_ms: number;
  mb_per_s: number;
  wire_mb: number;
  peak_rss_mb: number;
  rss_before_mb: number;
  cpu_ms: number;
  main_thread_ms: number;
  ciphers: string[];
}

/** An ssh config reaching laptop and vega through the two proxies (one host key alias for both). */
function sshConfig(world: World, dir: string, ports: { laptop: number; vega: number }): string {
  const laptop = world.users.laptop!;
  const kh = path.join(dir, 'known_hosts');
  fs.writeFileSync(kh, `lb-world ${world.sshd.hostKeyLine.split(' ').slice(1).join(' ')}\n`);
  const host = (name: string, port: number) => `Host lb-${name}\n  HostName 127.0.0.1\n  Port ${port}\n  User ${name}\n  HostKeyAlias lb-world\n`;
  const file = path.join(dir, 'config');
  fs.writeFileSync(file, `${host('laptop', ports.laptop)}\n${host('vega', ports.vega)}\nHost *\n  IdentityFile ${laptop.key}\n  IdentitiesOnly yes\n  UserKnownHostsFile ${kh}\n  GlobalKnownHostsFile none\n`);
  return file;
}

/** The transcript of `mb` in laptop's pi store (kept between runs: generating takes a while). */
async function transcriptOf(world: World, repo: string, mb: number): Promise<{ file: string; size: number }> {
  const laptop = world.users.laptop!;
  const dir = path.join(laptop.home, '.pi', 'agent', 'sessions', '--home-laptop-code-hark--');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `2026-11-30T09-00-00-000Z_bench-${mb}mb.jsonl`);
  const want = Math.round(mb * MB);
  const st = fs.statSync(file, { throwIfNoEntry: false });
  if (!st || st.size < want || st.size > want + 2 * MB) {
    await generateTranscript({ file, bytes: want, repo, home: laptop.home, textRoot: path.join(here, '..', '..', 'node_modules') });
  }
  execFileSync('chown', ['-R', `${laptop.uid}:${laptop.gid}`, path.join(laptop.home, '.pi')]);
  return { file, size: fs.statSync(file).size };
}

/** sha256 of the file as the rewriter makes it (what the target must hold). */
async function expectedHash(file: string, plan: RewritePlan): Promise<string> {
  const h = createHash('sha256');
  await pipeline(
    fs.createReadStream(file, { highWaterMark: 256 * 1024 }),
    createRewriteStream(plan),
    new Writable({
      write(chunk: Buffer, _e, cb) {
        h.update(chunk);
        cb();
      },
    }),
  );
  return h.digest('hex');
}

async function fileSha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

function runChild(job: ChildJob): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(process.env.AH_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), process.env.AH_BENCH_CHILD ?? path.join(here, 'large-session-child.js')], { env: { ...process.env, AH_LARGE_JOB: JSON.stringify(job) }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ChildReport) : reject(new Error(`child exited ${code}: ${out}`))));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const world = await setupWorld();
  const laptop = world.users.laptop!;
  const vega = world.users.vega!;
  const repo = path.join(laptop.home, 'code', 'hark');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-large-'));
  const proxies: DelayProxy[] = [];
  try {
    const pl = await startDelayProxy({ host: world.sshd.host, port: world.sshd.port }, oneWayDelayMs, '127.0.0.1', link);
    proxies.push(pl);
    const pv = await startDelayProxy({ host: world.sshd.host, port: world.sshd.port }, oneWayDelayMs, '127.0.0.1', link);
    proxies.push(pv);
    const configFile = sshConfig(world, dir, { laptop: pl.port, vega: pv.port });
    const rows: Row[] = [];
    for (const mb of sizesMb) {
      const src = await transcriptOf(world, repo, mb);
      for (const mode of modes) {
        const here = mode === 'pull';
        const targetHome = here ? path.join(dir, 'home') : vega.home;
        const targetRoot = path.join(targetHome, '.pi', 'agent');
        fs.mkdirSync(targetHome, { recursive: true });
        const plan = buildRewritePlan({
          renames: [{ from: path.join(laptop.home, '.pi', 'agent', 'sessions', '--home-laptop-code-hark--'), to: path.join(targetRoot, 'sessions', '--home-vega-src-hark--') }],
          repo: { source: [repo], target: path.join(targetHome, 'src', 'hark') },
          configRoot: { source: [path.join(laptop.home, '.pi', 'agent')], target: targetRoot },
          home: { source: [laptop.home], target: targetHome },
        });
        const want = await expectedHash(src.file, plan);
        const dest = path.join('sessions', '--home-vega-src-hark--', path.basename(src.file));
        const got: ChildReport[] = [];
        for (let r = 0; r < runs; r++) {
          fs.rmSync(path.join(targetRoot, dest), { force: true });
          const job: ChildJob = {
            source: mode === 'push' ? 'local' : 'lb-laptop',
            target: here ? 'local' : 'lb-vega',
            configFile,
            ...(here ? { localHome: targetHome } : {}),
            entry: { source: src.file, dest, verbatim: false, mode: 0o600, mtimeMs: Date.UTC(2026, 10, 30, 12) },
            targetRoot,
            plan,
          };
          const rep = await runChild(job);
          // Streamed: a child spawned later inherits this process's memory high-water mark in its
          // own ru_maxrss (Linux records the forked copy's at exec), so a whole file read here
          // would show up as the next run's peak.
          const onDisk = await fileSha256(path.join(targetRoot, dest));
          if (rep.sha256 !== want || onDisk !== want) throw new Error(`${mode} ${mb} MB: the target holds other bytes than the rewritten source`);
          got.push(rep);
          process.stderr.write(`${mode} ${mb} MB run ${r + 1}: ${rep.copy_ms} ms, ${(rep.wire_bytes / MB).toFixed(1)} MB on the wire, peak RSS ${rep.peak_rss_mb} MB, cpu ${rep.cpu_ms} ms (main thread ${rep.main_thread_ms} ms), peaks ${JSON.stringify(rep.peaks_mb)} before ${JSON.stringify(rep.before_mb)} (${rep.ciphers.join(', ')})\n`);
        }
        const wall = median(got.map((g) => g.copy_ms));
        rows.push({
          mode,
          mb: +(src.size / MB).toFixed(2),
          wall_ms: wall,
          mb_per_s: +(src.size / MB / (wall / 1000)).toFixed(1),
          wire_mb: +(median(got.map((g) => g.wire_bytes)) / MB).toFixed(2),
          peak_rss_mb: Math.max(...got.map((g) => g.peak_rss_mb)),
          rss_before_mb: median(got.map((g) => g.rss_before_mb)),
          cpu_ms: median(got.map((g) => g.cpu_ms)),
          main_thread_ms: median(got.map((g) => g.main_thread_ms)),
          ciphers: got[0]!.ciphers,
        });
        fs.rmSync(path.join(targetRoot, dest), { force: true });
      }
    }
    process.stderr.write(`\n${'mode'.padEnd(6)} ${'MB'.padStart(7)} ${'wall ms'.padStart(8)} ${'MB/s'.padStart(7)} ${'wire MB'.padStart(8)} ${'peak RSS'.padStart(9)} ${'RSS before'.padStart(10)}\n`);
    for (const r of rows) {
      process.stderr.write(`${r.mode.padEnd(6)} ${String(r.mb).padStart(7)} ${String(r.wall_ms).padStart(8)} ${String(r.mb_per_s).padStart(7)} ${String(r.wire_mb).padStart(8)} ${String(r.peak_rss_mb).padStart(9)} ${String(r.rss_before_mb).padStart(10)}\n`);
    }
    console.log(JSON.stringify({ bench: 'large-session', one_way_delay_ms: oneWayDelayMs, mbit: mbit || null, runs, node: process.version, cpus: os.cpus().length, rows }));
  } finally {
    for (const p of proxies) await p.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
