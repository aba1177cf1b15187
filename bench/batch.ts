// `node dist/bench/batch.js`: several agents in one handoff. 1, 3 and 5 fake pi agents (in 1, 2
// and 3 checkouts; two share a checkout where there are more agents than checkouts) move laptop →
// vega with `send A B … vega`, and come back with `send --all --from vega`, over a loopback link
// of ≈50 ms RTT, on a desk of their own (test/helpers/desk.ts). Reports per size the medians of
// wall time, SSH handshakes, round trips and bytes each way, and each size's wall as a ratio of
// one agent's. One JSON object on stdout, a table on stderr.
//   AH_BENCH_RUNS=3 AH_BENCH_DELAY_MS=25 node dist/bench/batch.js
//   AH_BENCH_SIZES=5 AH_BENCH_LOG_DIR=/tmp/bb …   # only 5 agents, each run's progress lines kept
// Needs root and the world (it is set up here).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { handoff, herdr, herdrOk, makeProject, runAs, startFakeAgent, waitFor, writeAs } from '../test/helpers/e2e.js';
import { openDesk, type Desk } from '../test/helpers/desk.js';
import { appRoot, setupWorld, type World } from '../test/world/machines.js';
import { diff, openLink, type Link } from './link.js';
import { median, ratio } from './report.js';

interface Way {
  wall_ms: number;
  handshakes: number;
  round_trips: number;
  bytes_up: number;
  bytes_down: number;
}

export interface BatchBenchReport {
  bench: 'batch';
  rtt_ms: number;
  runs: number;
  sizes: { agents: number; checkouts: number; there: Way; back: Way; there_vs_one: number; back_vs_one: number }[];
}

/** How many agents each checkout holds for a batch of `n`. */
function layout(n: number): number[] {
  return n === 1 ? [1] : n === 3 ? [2, 1] : [2, 2, 1];
}

async function idleAgents(world: World, desk: Desk, tag: string, n: number): Promise<string[]> {
  const laptop = world.users.laptop!;
  const names: string[] = [];
  const starting: Promise<unknown>[] = [];
  layout(n).forEach((count, c) => {
    const p = makeProject(world, `${tag}-c${c}`);
    writeAs(laptop, path.join(p.laptop, 'README.md'), `hello\nwork of checkout ${c}\n`);
    for (let i = 0; i < count; i++) {
      const name = `${tag}-c${c}-a${i}`;
      names.push(name);
      starting.push(
        (async () => {
          await startFakeAgent(world, laptop, 'pi', p.laptop, { name, args: ['first prompt'], waitSession: false, env: desk.env });
          await waitFor(`${name} idle with its session`, async () => {
            const r = await herdr(world, laptop, ['agent', 'get', name], desk.env);
            const a = (r.json?.result as { agent?: { agent_status?: string; agent_session?: unknown } } | undefined)?.agent;
            return a?.agent_session && (a.agent_status === 'idle' || a.agent_status === 'done');
          }, 30_000);
        })(),
      );
    }
  });
  await Promise.all(starting);
  return names;
}

async function timedSend(world: World, desk: Desk, link: Link, args: string[], expectMoved: number): Promise<Way> {
  const before = link.counters();
  const t0 = Date.now();
  const r = process.env.AH_BENCH_TRACE === '1' ? await traced(world, ['send', ...args, '--no-focus'], desk.env) : await handoff(world, world.users.laptop!, ['send', ...args, '--no-focus'], { env: desk.env, timeoutMs: 300_000 });
  const wall = Date.now() - t0;
  // AH_BENCH_LOG_DIR: each run's progress lines (stderr), to see where a batch spends its time.
  if (process.env.AH_BENCH_LOG_DIR) fs.writeFileSync(path.join(process.env.AH_BENCH_LOG_DIR, `${args.length}-${t0}.log`), `${args.join(' ')}\n${r.stderr}`);
  const moved = diff(link.counters(), before);
  const summary = (r.json as { summary?: { moved?: number } }).summary;
  // A single agent's result has no summary: it moved when ok.
  const count = summary?.moved ?? (r.json.ok ? 1 : 0);
  if (count !== expectMoved) throw new Error(`send ${args.join(' ')}: ${count} of ${expectMoved} moved: ${JSON.stringify(r.json)}\n${r.stderr}`);
  return { wall_ms: wall, handshakes: moved.handshakes, round_trips: moved.bursts + moved.handshakes, bytes_up: moved.bytesUp, bytes_down: moved.bytesDown };
}

/** AH_BENCH_TRACE=1: the compiled modules with bench/trace-hook.js, which prints every host call on stderr. */
async function traced(world: World, args: string[], env: Record<string, string>): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  const root = appRoot(world);
  const cli = `import(${JSON.stringify(path.join(root, 'dist', 'src', 'cli.js'))}).then((m) => m.main(process.argv.slice(1)))`;
  const r = await runAs(world.users.laptop!, [process.execPath, `--import=${path.join(root, 'dist', 'bench', 'trace-hook.js')}`, '-e', cli, ...args], { env: { ...world.fastEnv, ...env, ...(process.env.AH_BENCH_TRACE_ARGV ? { AH_BENCH_TRACE_ARGV: process.env.AH_BENCH_TRACE_ARGV } : {}) }, timeoutMs: 300_000 });
  return { code: r.code, json: JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>, stderr: r.stderr };
}

async function closeAll(world: World, desk: Desk): Promise<void> {
  for (const user of [world.users.laptop!, world.users.vega!]) {
    const r = await herdrOk(world, user, ['workspace', 'list'], desk.env);
    for (const w of (r.result as { workspaces: { workspace_id: string }[] }).workspaces) await herdr(world, user, ['workspace', 'close', w.workspace_id], desk.env);
  }
}

const medianWay = (ways: Way[]): Way => ({
  wall_ms: median(ways.map((w) => w.wall_ms)),
  handshakes: median(ways.map((w) => w.handshakes)),
  round_trips: median(ways.map((w) => w.round_trips)),
  bytes_up: median(ways.map((w) => w.bytes_up)),
  bytes_down: median(ways.map((w) => w.bytes_down)),
});

export async function runBatchBench(opts: { runs: number; oneWayDelayMs: number; log?: (l: string) => void }): Promise<BatchBenchReport> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const world = await setupWorld();
  const desk = await openDesk(world, 'ahbench');
  const link = await openLink(world, { alias: 'ah-batch-vega', oneWayDelayMs: opts.oneWayDelayMs, to: { host: desk.sshd.host, port: desk.sshd.port } });
  const sizes: BatchBenchReport['sizes'] = [];
  try {
    const only = process.env.AH_BENCH_SIZES ? process.env.AH_BENCH_SIZES.split(',').map(Number) : [1, 3, 5];
    for (const n of only) {
      const there: Way[] = [];
      const back: Way[] = [];
      for (let i = 0; i < opts.runs; i++) {
        const tag = `bb${n}-${i}-${Math.random().toString(36).slice(2, 6)}`;
        const names = await idleAgents(world, desk, tag, n);
        try {
          there.push(await timedSend(world, desk, link, [...names, link.alias], n));
          back.push(await timedSend(world, desk, link, n === 1 ? [names[0]!, '--from', link.alias] : ['--all', '--from', link.alias], n));
          log(`${n} agents, run ${i + 1}/${opts.runs}: there ${there.at(-1)!.wall_ms} ms, back ${back.at(-1)!.wall_ms} ms`);
        } finally {
          await closeAll(world, desk);
        }
      }
      const t = medianWay(there);
      const b = medianWay(back);
      const one = sizes[0];
      sizes.push({ agents: n, checkouts: layout(n).length, there: t, back: b, there_vs_one: one ? ratio(t.wall_ms, one.there.wall_ms) : 1, back_vs_one: one ? ratio(b.wall_ms, one.back.wall_ms) : 1 });
    }
  } finally {
    await link.close();
    desk.close();
  }
  return { bench: 'batch', rtt_ms: 2 * opts.oneWayDelayMs, runs: opts.runs, sizes };
}

export function batchTable(r: BatchBenchReport): string {
  const row = (label: string, w: Way, vsOne: number) => `  ${label.padEnd(6)} ${String(w.wall_ms).padStart(7)} ms ${vsOne.toFixed(2).padStart(5)}× ${String(w.handshakes).padStart(3)} ${String(w.round_trips).padStart(5)} ${String(w.bytes_up).padStart(9)} ${String(w.bytes_down).padStart(9)}`;
  return [
    `batch benchmark: fake pi agents laptop → vega and back (--all --from), RTT ${r.rtt_ms} ms, median of ${r.runs} runs`,
    `  agents/checkouts, way: wall, × one agent's, handshakes, round trips, bytes up, bytes down`,
    ...r.sizes.flatMap((s) => [`${s.agents} agents in ${s.checkouts} checkouts`, row('there', s.there, s.there_vs_one), row('back', s.back, s.back_vs_one)]),
  ].join('\n');
}

async function main(): Promise<void> {
  const report = await runBatchBench({ runs: Number(process.env.AH_BENCH_RUNS ?? 3), oneWayDelayMs: Number(process.env.AH_BENCH_DELAY_MS ?? 25) });
  process.stderr.write(`${batchTable(report)}\n`);
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
