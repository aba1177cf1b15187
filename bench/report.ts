// Numbers of one benchmark run, laid over its steps; medians, ratios and the human table.
import { isRoundTrip, type TapEvent } from './tap.js';

export interface StepCost {
  step: string;
  ms: number;
  handshakes: number;
  round_trips: number;
  bytes_up: number;
  bytes_down: number;
}

/** One host call of agent-handoff (AH_BENCH_TRACE=1, bench/trace-hook.ts). */
export interface TracedCall {
  step: string;
  host: string;
  op: string;
  ms: number;
  what: string;
  /** When the call ended, from the program's start (start = end_ms − ms). */
  end_ms: number;
}

export interface RunNumbers {
  handshakes: number;
  /** request bursts + TCP connects (see bench/tap.ts). */
  round_trips: number;
  request_bursts: number;
  bytes_up: number;
  bytes_down: number;
  wall_ms: number;
  /** The agent's own parts: quitting it, and starting it on the target (workspace + agent start). */
  quit_ms: number;
  start_ms: number;
  /** wall − (quit + start): what the tool itself costs. */
  overhead_ms: number;
  /** The agent's time offline: from the quit's start to the end of its start on the target. */
  offline_ms: number;
  steps: StepCost[];
  trace?: TracedCall[];
  /** The `--dry-run` of the same agent just before (agent-handoff only). */
  dry_run?: DryRunNumbers;
  /** Bringing the agent back afterwards (`send --from`), when measured. */
  back?: Omit<RunNumbers, 'dry_run' | 'back'>;
}

export type Summary = Omit<RunNumbers, 'steps' | 'trace' | 'dry_run' | 'back'>;

export interface DryRunNumbers {
  handshakes: number;
  round_trips: number;
  bytes_up: number;
  bytes_down: number;
  wall_ms: number;
  steps: StepCost[];
  trace?: TracedCall[];
}

/**
 * The physical limit of a handoff over this link: the process's own start, one ssh handshake, one
 * round trip per dependent phase, and the bytes over the bandwidth (unbounded on the bench's
 * loopback link, so 0). The handshake's round trips are those no client can save: TCP connect,
 * version and KEXINIT, key exchange, NEWKEYS with the service request, one signed publickey
 * request (no query first), and the first channel's open. The phases: a dry run looks (one
 * program); a send looks, receives and places, and starts (the agent's own quit and herdr's start
 * are not ours, so they are outside the overhead).
 */
export const LIMIT_HANDSHAKE_RTTS = 6;
export const LIMIT_PHASES = { dry_run: 1, send: 3 } as const;

export interface LimitModel {
  rtt_ms: number;
  process_start_ms: number;
  handshake_rtts: number;
  phases: typeof LIMIT_PHASES;
  /** process start + (handshake + 1 phase) × RTT. */
  dry_run_ms: number;
  /** process start + (handshake + 3 phases) × RTT + bytes / bandwidth (0 here). */
  send_overhead_ms: number;
  /** Measured medians against it: how many times the limit, and how many RTTs above it. */
  dry_run: { measured_ms: number; times_limit: number; rtts_above: number };
  send_overhead: { measured_ms: number; times_limit: number; rtts_above: number };
}

export function limitModel(rttMs: number, processStartMs: number, dryRunMs: number, overheadMs: number): LimitModel {
  const dry = processStartMs + (LIMIT_HANDSHAKE_RTTS + LIMIT_PHASES.dry_run) * rttMs;
  const send = processStartMs + (LIMIT_HANDSHAKE_RTTS + LIMIT_PHASES.send) * rttMs;
  const against = (measured: number, limit: number) => ({ measured_ms: measured, times_limit: ratio(measured, limit), rtts_above: Math.round(((measured - limit) / rttMs) * 10) / 10 });
  return {
    rtt_ms: rttMs,
    process_start_ms: processStartMs,
    handshake_rtts: LIMIT_HANDSHAKE_RTTS,
    phases: LIMIT_PHASES,
    dry_run_ms: dry,
    send_overhead_ms: send,
    dry_run: against(dryRunMs, dry),
    send_overhead: against(overheadMs, send),
  };
}

const DRY_FIELDS = ['handshakes', 'round_trips', 'bytes_up', 'bytes_down', 'wall_ms'] as const;

export function summarizeDryRuns(runs: DryRunNumbers[]): Omit<DryRunNumbers, 'steps' | 'trace'> {
  const out = {} as Omit<DryRunNumbers, 'steps' | 'trace'>;
  for (const f of DRY_FIELDS) out[f] = median(runs.map((r) => r[f]));
  return out;
}

export interface Mark {
  step: string;
  at: number;
}

/**
 * Split [startedAt, endedAt] at the marks (each step's start) and count the link's connects and
 * bursts in each part; the part before the first mark is the program's start-up.
 */
/** From the mark of the quit step to the mark after the start step (the next step begins when the start ends); NaN when either is missing. */
export function offlineMs(marks: Mark[], quit: RegExp, start: RegExp): number {
  const sorted = [...marks].sort((a, b) => a.at - b.at);
  const from = sorted.find((m) => quit.test(m.step));
  const i = sorted.findIndex((m) => start.test(m.step));
  const to = i >= 0 ? sorted[i + 1] : undefined;
  return from && to ? to.at - from.at : NaN;
}

export function stepCosts(marks: Mark[], startedAt: number, endedAt: number, events: readonly TapEvent[]): StepCost[] {
  const parts: { step: string; from: number; to: number }[] = [];
  const sorted = [...marks].sort((a, b) => a.at - b.at);
  let from = startedAt;
  let name = 'start-up';
  for (const m of sorted) {
    parts.push({ step: name, from, to: m.at });
    name = m.step;
    from = m.at;
  }
  parts.push({ step: name, from, to: endedAt });
  return parts
    .filter((p) => p.to > p.from || p.step !== 'start-up')
    .map((p) => {
      const inside = events.filter((e) => e.at >= p.from && (e.at < p.to || (p.to === endedAt && e.at <= p.to)));
      const connects = inside.filter((e) => e.kind === 'connect').length;
      const bytes = (dir: 'up' | 'down') => inside.reduce((n, e) => n + (e[dir] ?? 0), 0);
      return { step: p.step, ms: p.to - p.from, handshakes: connects, round_trips: inside.filter(isRoundTrip).length, bytes_up: bytes('up'), bytes_down: bytes('down') };
    });
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : Math.round((s[mid - 1]! + s[mid]!) / 2);
}

const FIELDS = ['handshakes', 'round_trips', 'request_bursts', 'bytes_up', 'bytes_down', 'wall_ms', 'quit_ms', 'start_ms', 'overhead_ms', 'offline_ms'] as const;

export function summarize(runs: RunNumbers[]): Summary {
  const out = {} as Summary;
  for (const f of FIELDS) out[f] = median(runs.map((r) => r[f]));
  return out;
}

export function ratio(a: number, b: number): number {
  return b === 0 ? NaN : Math.round((a / b) * 1000) / 1000;
}

/** The medians side by side (agent-handoff alone without a baseline). */
export function table(ours: Summary, baseline: Summary | null, ratios: Record<string, number>): string {
  const rows: [string, string, string, string][] = [['', 'agent-handoff', baseline ? 'baseline' : '', baseline ? 'ours/baseline' : '']];
  const fmt = (n: number) => String(n);
  for (const f of FIELDS) rows.push([f, fmt(ours[f]), baseline ? fmt(baseline[f]) : '', f in ratios ? fmt(ratios[f]!) : '']);
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

/**
 * The calls a traced run waited for one after another (AH_BENCH_TRACE=1): from the call that
 * ended last, back through the call that ended last before each one began. Calls made beside
 * another (the placement while the agent quits, given as a call of its own) are off it. Its
 * remote calls are the dependent round trips the run paid for after the handshake; a remote
 * call is at least one round trip. A pause inside the tool is taken for waiting on the call
 * before it, so the count is an upper bound.
 */
export function criticalChain(trace: readonly TracedCall[]): TracedCall[] {
  const calls = [...trace].sort((a, b) => a.end_ms - b.end_ms || a.ms - b.ms);
  const chain: TracedCall[] = [];
  // Walking back through the sorted calls: each one taken is earlier in that order, so it ends.
  for (let i = calls.length - 1; i >= 0; ) {
    const cur = calls[i]!;
    chain.unshift(cur);
    const begun = cur.end_ms - cur.ms;
    let j = i - 1;
    while (j >= 0 && calls[j]!.end_ms > begun) j--;
    i = j;
  }
  return chain;
}

/** A critical chain's remote calls, as a line each: when it began and ended, and what it was. */
export function remoteLinks(chain: readonly TracedCall[]): string[] {
  return chain
    .filter((c) => c.host === 'ssh' || c.host === 'agent')
    .map((c) => `${String(c.end_ms - c.ms).padStart(6)} → ${String(c.end_ms).padStart(6)} ms  ${(c.op === 'run' ? 'program' : c.op).padEnd(14)} ${c.what.slice(0, 70)}`);
}
