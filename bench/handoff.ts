// `npm run bench`: a scripted handoff of a fake agent laptop → vega in the test world, over a loopback link with
// ≈50 ms RTT, by agent-handoff and by a straightforward OpenSSH script (bench/baseline.sh) doing
// the same job. Reports, per variant, SSH handshakes, a round-trip estimate, bytes each way, wall
// time and the tool's overhead (wall − the agent's own quit and start), with per-step costs; then
// the ratios ours/baseline of the medians. Before each of our sends, the `--dry-run` of the same
// agent; both are reported against the link's limit (report.ts: limitModel), which is the measure
// that matters, the script only a floor. One JSON object on stdout, a table on stderr.
//   npm run bench                                   # 3 runs each, 25 ms each way
//   AH_BENCH_RUNS=5 AH_BENCH_DELAY_MS=25 node dist/bench/handoff.js   # the issue's figures: 5 runs, 50 ms RTT
//   AH_BENCH_TRACE=1 …                              # + agent-handoff's host calls per step (runs the
//                                                   #   compiled modules, not the bundle: slower start-up),
//                                                   #   a run's line with its argv/stdin/stdout bytes;
//                                                   #   AH_BENCH_TRACE_ARGV=FILE: each run's argv there
//   AH_BENCH_PROFILE=/tmp/prof …                    # + a V8 CPU profile of each agent-handoff run
//   AH_BENCH_AGENT=grok …                           # another kind than pi (grok: a 16-file session);
//                                                   #   agent-handoff alone (the script moves pi only)
//   AH_BENCH_BACK=1 …                               # + each agent brought back after its send
//                                                   #   (`send PANE --from vega`), measured alike
//   AH_BENCH_ONLY=dry-run …                         # only `--dry-run`s of one agent, each beside a
//                                                   #   `--version` (quick: for work on the start-up)
//   AH_BENCH_EVENTS=1 …                             # + each dry run's link traffic and output lines,
//                                                   #   by time (what waited for what)
//   AH_BENCH_NODE_FLAGS='--trace-gc' …              # node flags for agent-handoff's runs
// Needs root and the world (`npm run world -- up`, or it is set up here).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { herdr, herdrBin, herdrOk } from '../test/helpers/e2e.js';
import { appRoot, setupWorld, type World } from '../test/world/machines.js';
import { diff, openLink, type Link } from './link.js';
import { criticalChain, limitModel, median, offlineMs, ratio, stepCosts, summarize, summarizeDryRuns, table, type DryRunNumbers, type LimitModel, type Mark, remoteLinks, type RunNumbers, type StepCost, type Summary, type TracedCall } from './report.js';
import { cleanUp, prepare, verifyLanded, type Landed } from './scenario.js';
import { runTimed, type TimedRun } from './timed-run.js';

export interface BenchOptions {
  runs: number;
  oneWayDelayMs: number;
  /** Names the ssh alias (ah-<name>-vega) and the projects (<name>-ours, <name>-baseline), so two runs never share them. Default 'bench'. */
  name?: string;
  /** Wrap agent-handoff's host calls (bench/trace-hook.ts) and report them per step. */
  trace?: boolean;
  /** Progress lines (default: to stderr). */
  log?: (line: string) => void;
  /** After each of our sends, bring the agent back (`send PANE --from vega`) and measure that too. */
  back?: boolean;
  /** The agent's kind (default pi). The baseline script moves pi only: for another, agent-handoff runs alone. */
  agent?: string;
}

export interface BenchReport {
  bench: 'handoff';
  agent: string;
  one_way_delay_ms: number;
  rtt_ms: number;
  runs: number;
  /** The baseline: null for another agent than pi. */
  variants: { ours: { median: Summary; runs: RunNumbers[] }; baseline: { median: Summary; runs: RunNumbers[] } | null };
  ratios: { handshakes: number; round_trips: number; overhead_ms: number; wall_ms: number; bytes_up: number; bytes_down: number } | null;
  /** Bringing it back after each send (`send PANE --from vega`; medians), when asked (BenchOptions.back). */
  back: Summary | null;
  /** agent-handoff's `--dry-run` of the same agent (medians). */
  dry_run: Omit<DryRunNumbers, 'steps' | 'trace'>;
  /** The physical limit over this link, and how far the medians are from it. */
  limit: LimitModel;
  goal: { handshakes_per_host: number; overhead_ratio_max: number; handshakes_met: boolean; overhead_met: boolean | null };
}

type Variant = 'ours' | 'baseline';

/** The step names agent-handoff prints on stderr without a TTY: `HH:MM:SS <step> …`. */
function oursMarks(run: TimedRun): Mark[] {
  return run.lines.filter((l) => l.stream === 'stderr').flatMap((l) => {
    const m = /^\d\d:\d\d:\d\d (.+) …$/.exec(l.text);
    return m ? [{ step: m[1]!, at: l.at }] : [];
  });
}

function baselineMarks(run: TimedRun): Mark[] {
  return run.lines.filter((l) => l.stream === 'stdout').flatMap((l) => {
    const m = /^step (\S+)$/.exec(l.text);
    return m ? [{ step: m[1]!, at: l.at }] : [];
  });
}

/** The hook's lines, each under the step that was running when the call ended. */
function tracedCalls(run: TimedRun, marks: Mark[]): TracedCall[] {
  return run.lines.flatMap((l) => {
    const m = /^AHTRACE (\S+) (\S+) (\d+) (.*)$/.exec(l.text);
    if (l.stream !== 'stderr' || !m) return [];
    const step = [...marks].reverse().find((k) => k.at <= l.at)?.step ?? 'start-up';
    return [{ step, host: m[1]!, op: m[2]!, ms: Number(m[3]), what: m[4]!, end_ms: l.at - run.startedAt }];
  });
}

interface VariantRun {
  run: TimedRun;
  landed: Landed;
  quitMs: number;
  startMs: number;
  offlineMs: number;
  marks: Mark[];
  trace?: TracedCall[];
}

/** agent-handoff as laptop runs it (the bundle, or the compiled modules when traced). */
function oursArgv(world: World, trace: boolean): { argv: string[]; env: Record<string, string> } {
  // The files laptop runs come from the world's app folder (the checkout, or its copy if private).
  const root = appRoot(world);
  const argvFile = process.env.AH_BENCH_TRACE_ARGV;
  const env = { ...world.fastEnv, ...(trace ? { NODE_OPTIONS: `--import=${path.join(root, 'dist', 'bench', 'trace-hook.js')}`, ...(argvFile ? { AH_BENCH_TRACE_ARGV: argvFile } : {}) } : {}) };
  // AH_BENCH_PROFILE=<folder>: a V8 CPU profile of each agent-handoff run (open it in Chrome's DevTools).
  const profile = process.env.AH_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.AH_BENCH_PROFILE}`] : [];
  // The trace hook wraps the compiled modules' classes: traced runs load those, not the bundle.
  const cli = trace ? ['-e', `import(${JSON.stringify(path.join(root, 'dist', 'src', 'cli.js'))}).then((m) => m.main(process.argv.slice(1)))`] : [world.app];
  const flags = (process.env.AH_BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  return { argv: [process.execPath, ...flags, ...profile, ...cli], env };
}

/** `send AGENT TARGET` (or, `words` given, `send …words`) as laptop runs it. */
async function runOurs(world: World, link: Link, agentName: string, trace: boolean, words = [agentName, link.alias]): Promise<VariantRun> {
  const laptop = world.users.laptop!;
  const { argv, env } = oursArgv(world, trace);
  const run = await runTimed(laptop, [...argv, 'send', ...words, '--no-focus'], { env });
  const last = run.stdout.trim().split('\n').pop() ?? '';
  let json: { ok?: boolean; target_worktree?: string; target_agent?: { pane: string; workspace: string }; steps?: { step: string; ms: number }[] };
  try {
    json = JSON.parse(last) as typeof json;
  } catch {
    throw new Error(`agent-handoff printed no JSON (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  }
  if (!json.ok || !json.target_agent || !json.target_worktree) throw new Error(`agent-handoff failed (exit ${run.code}): ${last}\n${run.stderr}`);
  const stepMs = (re: RegExp) => json.steps?.find((s) => re.test(s.step))?.ms ?? NaN;
  const marks = oursMarks(run);
  return {
    run,
    landed: { pane: json.target_agent.pane, workspace: json.target_agent.workspace, worktree: json.target_worktree },
    quitMs: stepMs(/^quitting /),
    startMs: stepMs(/^starting /),
    offlineMs: offlineMs(marks, /^quitting /, /^starting /),
    marks,
    ...(trace ? { trace: [...tracedCalls(run, marks), ...agentQuit(run, marks, stepMs(/^quitting /))] } : {}),
  };
}

/**
 * The agent's own quit as one call of the trace (from its step's start, for as long as the
 * result says it took): what runs beside it (the placement) is then off the critical path, and
 * what waits for it (the session copy) follows it there, not whatever call ended last before.
 */
function agentQuit(run: TimedRun, marks: Mark[], quitMs: number): TracedCall[] {
  const begun = marks.find((m) => /^quitting /.test(m.step));
  if (!begun || !Number.isFinite(quitMs)) return [];
  return [{ step: begun.step, host: 'agent', op: 'quit', ms: quitMs, what: 'the agent quits (its own time)', end_ms: begun.at - run.startedAt + quitMs }];
}

/** `send --dry-run` of the same agent: the plan alone (handshake + the looks at both machines). */
async function runDryRun(world: World, link: Link, agentName: string, trace: boolean): Promise<DryRunNumbers> {
  const { argv, env } = oursArgv(world, trace);
  const before = link.counters();
  const run = await runTimed(world.users.laptop!, [...argv, 'send', agentName, link.alias, '--dry-run'], { env });
  const moved = diff(link.counters(), before);
  let json: { ok?: boolean; dry_run?: boolean } = {};
  try {
    json = JSON.parse(run.stdout.trim().split('\n').pop() ?? '') as typeof json;
  } catch {
    // Reported below with what it printed.
  }
  if (!json.ok || !json.dry_run) throw new Error(`agent-handoff --dry-run failed (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  const marks = oursMarks(run);
  const events = link.events().filter((e) => e.at >= run.startedAt && e.at <= run.endedAt);
  // The link's traffic as the client sees it and the run's lines, by time since the run began.
  if (process.env.AH_BENCH_EVENTS === '1') process.stderr.write(events.map((e) => `  +${e.at - run.startedAt} ${e.kind} ${e.up ?? ''}/${e.down ?? ''}`).join('\n') + '\n' + run.lines.map((l) => `  +${l.at - run.startedAt} ${l.stream} ${l.text.slice(0, 100)}`).join('\n') + '\n');
  return {
    handshakes: moved.handshakes,
    round_trips: moved.bursts + moved.handshakes,
    bytes_up: moved.bytesUp,
    bytes_down: moved.bytesDown,
    wall_ms: run.endedAt - run.startedAt,
    steps: stepCosts(marks, run.startedAt, run.endedAt, events),
    ...(trace ? { trace: tracedCalls(run, marks) } : {}),
  };
}

/** How long laptop's `agent-handoff --version` takes: node's start and the bundle's load, no work. */
async function processStartMs(world: World): Promise<number> {
  const { argv, env } = oursArgv(world, false);
  const run = await runTimed(world.users.laptop!, [...argv, '--version'], { env });
  if (run.code !== 0) throw new Error(`agent-handoff --version failed (exit ${run.code}): ${run.stderr}`);
  return run.endedAt - run.startedAt;
}

async function runBaseline(world: World, link: Link, agentName: string): Promise<VariantRun> {
  const laptop = world.users.laptop!;
  // Readable by laptop even when the checkout is in a private folder (see appRoot).
  const script = path.join(appRoot(world), 'bench', 'baseline.sh');
  const run = await runTimed(laptop, ['/bin/bash', script, agentName, link.alias, herdrBin(world)], { env: world.fastEnv });
  const done = /^done (\S+) (\S+) (.+)$/m.exec(run.stdout);
  if (run.code !== 0 || !done) throw new Error(`baseline failed (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  const marks = baselineMarks(run);
  const span = (name: string) => {
    const i = marks.findIndex((m) => m.step === name);
    const next = marks[i + 1];
    return i >= 0 && next ? next.at - marks[i]!.at : NaN;
  };
  return { run, landed: { pane: done[1]!, workspace: done[2]!, worktree: done[3]! }, quitMs: span('quit'), startMs: span('start'), offlineMs: offlineMs(marks, /^quit$/, /^start$/), marks };
}

/** The numbers of one run over the link (its counters moved from `before`). */
function runNumbers(link: Link, before: ReturnType<Link['counters']>, out: VariantRun): Omit<RunNumbers, 'dry_run' | 'back'> {
  const moved = diff(link.counters(), before);
  const wall = out.run.endedAt - out.run.startedAt;
  const events = link.events().filter((e) => e.at >= out.run.startedAt && e.at <= out.run.endedAt);
  return {
    handshakes: moved.handshakes,
    round_trips: moved.bursts + moved.handshakes,
    request_bursts: moved.bursts,
    bytes_up: moved.bytesUp,
    bytes_down: moved.bytesDown,
    wall_ms: wall,
    quit_ms: out.quitMs,
    start_ms: out.startMs,
    overhead_ms: wall - out.quitMs - out.startMs,
    offline_ms: out.offlineMs,
    steps: stepCosts(out.marks, out.run.startedAt, out.run.endedAt, events),
    ...(out.trace ? { trace: out.trace } : {}),
  };
}

async function oneRun(world: World, link: Link, name: string, kind: string, variant: Variant, index: number, trace: boolean, back = false): Promise<RunNumbers> {
  const agentName = `${name}-${variant}-${index}-${Math.random().toString(36).slice(2, 6)}`;
  const prep = await prepare(world, `${name}-${variant}`, agentName, kind);
  let landed: Partial<Landed> & { back?: Landed } = {};
  try {
    const dryRun = variant === 'ours' ? await runDryRun(world, link, agentName, trace) : undefined;
    const before = link.counters();
    const out = variant === 'ours' ? await runOurs(world, link, agentName, trace) : await runBaseline(world, link, agentName);
    landed = out.landed;
    const numbers = runNumbers(link, before, out);
    await verifyLanded(world, prep, out.landed);
    // And back: `send PANE --from vega` brings the agent here again (its session files now exist on both sides).
    let returned: RunNumbers['back'];
    if (back && variant === 'ours') {
      const beforeBack = link.counters();
      const home = await runOurs(world, link, agentName, trace, [out.landed.pane, '--from', link.alias]);
      landed = { ...landed, back: home.landed };
      returned = runNumbers(link, beforeBack, home);
    }
    return { ...numbers, ...(dryRun ? { dry_run: dryRun } : {}), ...(returned ? { back: returned } : {}) };
  } finally {
    await cleanUp(world, prep, landed);
    // The agent brought back runs here in a workspace of its own.
    if (landed.back) await herdr(world, world.users.laptop!, ['workspace', 'close', landed.back.workspace]).catch(() => undefined);
  }
}

/** The world with vega's herdr answering, and the link to it that a bench's runs go through. */
async function benchSetup(opts: BenchOptions): Promise<{ log: (line: string) => void; world: World; name: string; link: Link; kind: string }> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const world = await setupWorld();
  await herdrOk(world, world.users.vega!, ['status', 'server', '--json']);
  const name = opts.name ?? 'bench';
  const link = await openLink(world, { alias: `ah-${name}-vega`, oneWayDelayMs: opts.oneWayDelayMs });
  return { log, world, name, link, kind: opts.agent ?? 'pi' };
}

export async function runBench(opts: BenchOptions): Promise<BenchReport> {
  const { log, world, name, link, kind } = await benchSetup(opts);
  const variants: Variant[] = kind === 'pi' ? ['ours', 'baseline'] : ['ours'];
  const runs: Record<Variant, RunNumbers[]> = { ours: [], baseline: [] };
  const starts: number[] = [];
  try {
    // Interleaved, so drift in the machine's load touches both alike.
    for (let i = 0; i < opts.runs; i++) {
      for (const variant of variants) {
        const r = await oneRun(world, link, name, kind, variant, i, opts.trace ?? false, opts.back ?? false);
        runs[variant].push(r);
        if (variant === 'ours') starts.push(await processStartMs(world));
        log(`run ${i + 1}/${opts.runs} ${variant}: ${r.handshakes} handshakes, ${r.round_trips} round trips, wall ${r.wall_ms} ms, overhead ${r.overhead_ms} ms`);
        // Traced: the way back's host calls by when they began and ended, from its process's start.
        for (const c of r.back?.trace ?? []) log(`  back ${tracedLine(c)}`);
      }
    }
  } finally {
    await link.close();
  }
  const ours = summarize(runs.ours);
  const baseline = variants.includes('baseline') ? summarize(runs.baseline) : null;
  const dryRun = summarizeDryRuns(runs.ours.flatMap((r) => (r.dry_run ? [r.dry_run] : [])));
  const backs = runs.ours.flatMap((r) => (r.back ? [r.back] : []));
  return {
    bench: 'handoff',
    agent: kind,
    one_way_delay_ms: opts.oneWayDelayMs,
    rtt_ms: 2 * opts.oneWayDelayMs,
    runs: opts.runs,
    variants: { ours: { median: ours, runs: runs.ours }, baseline: baseline && { median: baseline, runs: runs.baseline } },
    back: backs.length > 0 ? summarize(backs) : null,
    ratios: baseline && {
      handshakes: ratio(ours.handshakes, baseline.handshakes),
      round_trips: ratio(ours.round_trips, baseline.round_trips),
      overhead_ms: ratio(ours.overhead_ms, baseline.overhead_ms),
      wall_ms: ratio(ours.wall_ms, baseline.wall_ms),
      bytes_up: ratio(ours.bytes_up, baseline.bytes_up),
      bytes_down: ratio(ours.bytes_down, baseline.bytes_down),
    },
    // The issue's goal: one handshake per host (the source here is this machine: vega only).
    dry_run: dryRun,
    limit: limitModel(2 * opts.oneWayDelayMs, median(starts), dryRun.wall_ms, ours.overhead_ms),
    goal: { handshakes_per_host: ours.handshakes, overhead_ratio_max: 0.25, handshakes_met: ours.handshakes === 1, overhead_met: baseline && ours.overhead_ms <= baseline.overhead_ms / 4 },
  };
}

export function humanTable(report: BenchReport): string {
  const { ours, baseline } = report.variants;
  const steps = (name: string, runs: RunNumbers[]) => {
    const mid = [...runs].sort((a, b) => a.wall_ms - b.wall_ms)[Math.floor(runs.length / 2)];
    if (!mid) return [];
    const calls = (step: string) => (mid.trace ? ` ${String(mid.trace.filter((c) => c.step === step && c.host === 'ssh').length).padStart(4)}` : '');
    const critical = mid.trace ? criticalChain(mid.trace) : [];
    const chain = remoteLinks(critical);
    return [
      `${name} steps (median run): ms / handshakes / round trips / bytes up / bytes down${mid.trace ? ' / ssh host calls' : ''}`,
      ...mid.steps.map((s) => `  ${s.step.padEnd(48)} ${stepColumns(s)}${calls(s.step)}`),
      ...(mid.trace ? [`${name} critical path (median run): ${critical.filter((c) => c.host === 'ssh').length} remote calls, each after the call (or the agent's quit) that ended last before it began`, ...chain.map((l) => `  ${l}`)] : []),
    ];
  };
  const { limit, dry_run: dry } = report;
  const dryMid = [...ours.runs].flatMap((r) => (r.dry_run ? [r.dry_run] : [])).sort((a, b) => a.wall_ms - b.wall_ms)[Math.floor(ours.runs.length / 2)];
  return [
    `handoff benchmark: ${report.agent} laptop → vega, RTT ${report.rtt_ms} ms, median of ${report.runs} runs`,
    table(ours.median, baseline?.median ?? null, report.ratios ?? {}),
    `limit (process start ${limit.process_start_ms} ms + ${limit.handshake_rtts} handshake RTTs + phases × RTT): dry run ${limit.dry_run_ms} ms, send overhead ${limit.send_overhead_ms} ms`,
    `  --dry-run: ${dry.wall_ms} ms, ${dry.handshakes} handshakes, ${dry.round_trips} round trips, ${dry.bytes_up}/${dry.bytes_down} bytes up/down = ${limit.dry_run.times_limit} × the limit, ${limit.dry_run.rtts_above} RTTs above it`,
    `  send overhead: ${limit.send_overhead.measured_ms} ms = ${limit.send_overhead.times_limit} × the limit, ${limit.send_overhead.rtts_above} RTTs above it`,
    `  the agent offline: ${ours.median.offline_ms} ms, ${median(ours.runs.map((r) => r.offline_ms - r.quit_ms - r.start_ms))} ms beyond its own quit and start (goal ≤ 500 ms)`,
    ...(dryMid ? [`--dry-run steps (median run): ms / handshakes / round trips / bytes up / bytes down`, ...dryMid.steps.map((s) => `  ${s.step.padEnd(48)} ${stepColumns(s)}`)] : []),
    ...steps('agent-handoff', ours.runs),
    ...(report.back ? [`back (send --from): overhead ${report.back.overhead_ms} ms (quit ${report.back.quit_ms}, start ${report.back.start_ms}), wall ${report.back.wall_ms} ms, ${report.back.round_trips} round trips, ${report.back.bytes_up}/${report.back.bytes_down} bytes up/down`, ...steps('back', ours.runs.flatMap((r) => (r.back ? [{ ...r.back, wall_ms: r.wall_ms }] : [])))] : []),
    ...(baseline ? steps('baseline', baseline.runs) : []),
  ].join('\n');
}

/** A traced host call as a line: when it began and ended (from its process's start), where, what. */
function tracedLine(c: TracedCall): string {
  return `${String(c.end_ms - c.ms).padStart(5)}–${String(c.end_ms).padEnd(5)} ${c.host} ${c.op} ${c.what.slice(0, 110)}`;
}

/**
 * `--dry-run`s of one prepared agent, each followed by a `--version` (the process start the limit
 * counts): the quick measure of the start-up and the look. A line per run, then the medians.
 */
export async function runDryRunBench(opts: BenchOptions): Promise<{ wall_ms: number; process_start_ms: number; limit_ms: number; runs: { wall_ms: number; process_start_ms: number; steps: StepCost[] }[] }> {
  const { log, world, name, link, kind } = await benchSetup(opts);
  const agentName = `${name}-dry-${Math.random().toString(36).slice(2, 6)}`;
  const prep = await prepare(world, `${name}-dry`, agentName, kind);
  const runs: { wall_ms: number; process_start_ms: number; steps: StepCost[] }[] = [];
  try {
    for (let i = 0; i < opts.runs; i++) {
      const dry = await runDryRun(world, link, agentName, opts.trace ?? false);
      const start = await processStartMs(world);
      runs.push({ wall_ms: dry.wall_ms, process_start_ms: start, steps: dry.steps });
      log(`dry run ${i + 1}/${opts.runs}: ${dry.wall_ms} ms (${dry.steps.map((s) => `${s.step} ${s.ms}`).join(', ')}; --version ${start} ms)`);
      // Traced: each host call by when it began and ended, from the process's start.
      for (const c of dry.trace ?? []) log(`  ${tracedLine(c)}`);
    }
  } finally {
    await link.close();
    await cleanUp(world, prep, {});
  }
  const wall = median(runs.map((r) => r.wall_ms));
  const start = median(runs.map((r) => r.process_start_ms));
  const limit = limitModel(2 * opts.oneWayDelayMs, start, wall, wall);
  log(`--dry-run (${kind}, RTT ${2 * opts.oneWayDelayMs} ms, median of ${opts.runs}): ${wall} ms; limit ${limit.dry_run_ms} ms (process start ${start} ms); ${limit.dry_run.times_limit} × the limit`);
  return { wall_ms: wall, process_start_ms: start, limit_ms: limit.dry_run_ms, runs };
}

async function main(): Promise<void> {
  if (process.env.AH_BENCH_ONLY === 'dry-run') {
    const report = await runDryRunBench({ runs: Number(process.env.AH_BENCH_RUNS ?? 9), oneWayDelayMs: Number(process.env.AH_BENCH_DELAY_MS ?? 25), trace: process.env.AH_BENCH_TRACE === '1', ...(process.env.AH_BENCH_AGENT ? { agent: process.env.AH_BENCH_AGENT } : {}) });
    process.stdout.write(`${JSON.stringify({ bench: 'dry-run', ...report })}\n`);
    return;
  }
  const report = await runBench({ runs: Number(process.env.AH_BENCH_RUNS ?? 3), oneWayDelayMs: Number(process.env.AH_BENCH_DELAY_MS ?? 25), trace: process.env.AH_BENCH_TRACE === '1', ...(process.env.AH_BENCH_AGENT ? { agent: process.env.AH_BENCH_AGENT } : {}), back: process.env.AH_BENCH_BACK === '1' });
  process.stderr.write(`${humanTable(report)}\n`);
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

/** A step's figures as table columns: ms, handshakes, round trips, bytes up and down. */
function stepColumns(s: StepCost): string {
  return `${String(s.ms).padStart(6)} ${String(s.handshakes).padStart(3)} ${String(s.round_trips).padStart(4)} ${String(s.bytes_up).padStart(7)} ${String(s.bytes_down).padStart(7)}`;
}
