// Smoke run of `npm run bench` with tiny sizes (one run each, a short delay): the report has its
// shape, both variants reach the same end state (checked inside the benchmark), and agent-handoff
// makes exactly one SSH handshake to the one remote host while the baseline makes one per step.
import { describe, expect, it } from 'vitest';
import { humanTable, runBench } from '../bench/handoff.js';

describe('npm run bench (smoke)', () => {
  it('reports handshakes, round trips, bytes, wall and overhead for both variants, with ratios', async () => {
    const lines: string[] = [];
    const report = await runBench({ runs: 1, oneWayDelayMs: 2, name: 'bench-smoke', log: (l) => lines.push(l) });
    expect(report).toMatchObject({ bench: 'handoff', agent: 'pi', one_way_delay_ms: 2, rtt_ms: 4, runs: 1 });
    const baseline = report.variants.baseline!;
    for (const variant of [report.variants.ours, baseline]) {
      expect(variant.runs).toHaveLength(1);
      const run = variant.runs[0]!;
      for (const key of ['handshakes', 'round_trips', 'request_bursts', 'bytes_up', 'bytes_down', 'wall_ms', 'quit_ms', 'start_ms', 'overhead_ms', 'offline_ms'] as const) {
        expect(Number.isFinite(run[key]), `${key} = ${run[key]}`).toBe(true);
        expect(variant.median[key]).toBe(run[key]);
      }
      expect(run.round_trips).toBeGreaterThan(run.handshakes);
      expect(run.bytes_up).toBeGreaterThan(0);
      expect(run.bytes_down).toBeGreaterThan(0);
      expect(run.overhead_ms).toBe(run.wall_ms - run.quit_ms - run.start_ms);
      // Offline: at least the agent's own quit and start, within the run.
      expect(run.offline_ms).toBeGreaterThanOrEqual(run.quit_ms + run.start_ms - 50);
      expect(run.offline_ms).toBeLessThanOrEqual(run.wall_ms);
      // The per-step costs add up to the run's.
      expect(run.steps.reduce((n, s) => n + s.handshakes, 0)).toBe(run.handshakes);
      expect(run.steps.reduce((n, s) => n + s.ms, 0)).toBe(run.wall_ms);
    }
    // One handshake per host: the source is this machine, so vega only.
    expect(report.variants.ours.median.handshakes).toBe(1);
    expect(report.goal).toMatchObject({ handshakes_per_host: 1, handshakes_met: true, overhead_ratio_max: 0.25 });
    // The baseline opens a connection per remote step (check, find the clone, push, worktree,
    // apply, mkdir, scp, workspace, start, verify), and names its steps.
    expect(baseline.median.handshakes).toBeGreaterThanOrEqual(10);
    expect(baseline.runs[0]!.steps.map((s) => s.step)).toEqual(expect.arrayContaining(['check-target', 'find-checkout', 'verify']));
    expect(report.ratios!.handshakes).toBeCloseTo(1 / baseline.median.handshakes, 3);
    for (const k of ['round_trips', 'overhead_ms', 'wall_ms'] as const) expect(Number.isFinite(report.ratios![k])).toBe(true);
    // The dry run before the send: one handshake, and its figures against the limit model.
    const dry = report.variants.ours.runs[0]!.dry_run!;
    expect(dry.handshakes).toBe(1);
    expect(dry.round_trips).toBeGreaterThan(dry.handshakes);
    expect(dry.steps.reduce((n, s) => n + s.ms, 0)).toBe(dry.wall_ms);
    expect(report.dry_run.wall_ms).toBe(dry.wall_ms);
    const { limit } = report;
    expect(limit.process_start_ms).toBeGreaterThan(0);
    expect(limit.dry_run_ms).toBe(limit.process_start_ms + (limit.handshake_rtts + limit.phases.dry_run) * report.rtt_ms);
    expect(limit.send_overhead_ms).toBe(limit.process_start_ms + (limit.handshake_rtts + limit.phases.send) * report.rtt_ms);
    expect(limit.dry_run.measured_ms).toBe(dry.wall_ms);
    expect(limit.send_overhead.measured_ms).toBe(report.variants.ours.median.overhead_ms);
    expect(limit.dry_run.times_limit).toBeCloseTo(dry.wall_ms / limit.dry_run_ms, 2);
    expect(humanTable(report)).toMatch(/handshakes\s+1\s+\d+/);
    expect(humanTable(report)).toMatch(/--dry-run: \d+ ms, 1 handshakes/);
    expect(lines).toHaveLength(2);
  }, 180_000);

  it('moves another kind alone (grok, a session of many files): the same figures, no baseline', async () => {
    const lines: string[] = [];
    const report = await runBench({ runs: 1, oneWayDelayMs: 2, name: 'bench-grok', agent: 'grok', log: (l) => lines.push(l) });
    expect(report).toMatchObject({ bench: 'handoff', agent: 'grok', variants: { baseline: null }, ratios: null, goal: { handshakes_met: true, overhead_met: null } });
    const run = report.variants.ours.runs[0]!;
    expect(run.handshakes).toBe(1);
    expect(run.overhead_ms).toBe(run.wall_ms - run.quit_ms - run.start_ms);
    expect(run.steps.map((s) => s.step)).toEqual(expect.arrayContaining(['copying the grok session', 'starting grok on ah-bench-grok-vega']));
    expect(humanTable(report)).toMatch(/^handoff benchmark: grok laptop → vega/);
    expect(lines).toHaveLength(1);
  }, 180_000);
});
