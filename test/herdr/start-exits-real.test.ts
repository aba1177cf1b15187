// An agent that exits the moment it is typed, started the product's way (openPane, startAgent)
// against the real herdr 0.8.2, which may never see such a process and call it "launch pending"
// for the whole timeout: the start must fail as start_failed within seconds, with the agent's
// last output, also when the pane's shell draws its prompt late (a busy machine), and also when
// only the end of the wait tells.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { omp } from '../../adapters/index.js';
import { HerdrClient } from '../../src/herdr/client.js';
import { openPane, startAgent } from '../../src/handoff/start.js';
import { LocalHost } from '../../src/host/local.js';
import { LinkedHost } from '../helpers/linked-host.js';
import { startThrowaway, type Throwaway } from './throwaway.js';

// A start-up file that runs a program (herdr calls the pane busy until the shell has its
// foreground back), and one that only keeps the shell itself busy (herdr takes the pane at once,
// and the prompt comes after the screen read before the start).
const SLEEPS = 'sleep 0.6\n';
const COUNTS = 'i=0; while [ "$i" -lt 150000 ]; do i=$((i + 1)); done\n';

/** A throwaway real herdr whose `omp` fails at once, its shell's start-up file led by `rcHead`. */
function withGoneAgent(rcHead: string, Kind: typeof LocalHost): { herdr: () => HerdrClient; home: () => string } {
  let h: Throwaway;
  let herdr: HerdrClient;
  beforeAll(async () => {
    h = await startThrowaway('real');
    fs.writeFileSync(path.join(h.binDir, 'omp'), '#!/bin/sh\necho "omp: fatal: could not start"\nexit 3\n', { mode: 0o755 });
    fs.symlinkSync(h.bin, path.join(h.binDir, 'herdr'));
    const rc = path.join(h.home, '.bashrc');
    fs.writeFileSync(rc, rcHead + fs.readFileSync(rc, 'utf8'));
    herdr = new HerdrClient(new Kind({ env: { ...h.env } }));
    expect((await herdr.probe()).server).toBe('running');
  });
  afterAll(async () => {
    await h?.stop();
  });
  return { herdr: () => herdr, home: () => h.home };
}

/** startAgent of the failing omp in a new pane: what it threw (null: nothing) and how long it took. */
async function startGone(herdr: HerdrClient, home: string, screenBefore: (pane: string) => Promise<string | null>, timeoutMs: number): Promise<{ err: unknown; ms: number; screen: string }> {
  const pane = await openPane(herdr, { cwd: home, label: 'gone', focus: false, onWorkspace: () => undefined });
  const t0 = Date.now();
  const req = { pane, name: 'gone', screenBefore: screenBefore(pane.pane), kind: 'omp', args: ['--resume', 'abc'], trust: true, classify: omp.classifyScreen, timeoutMs };
  const err = await startAgent(herdr, req).then(
    () => null,
    (e: unknown) => e,
  );
  const ms = Date.now() - t0;
  return { err, ms, screen: await herdr.read(pane.pane, { source: 'visible' }) };
}

const FAILED = { code: 'start_failed', details: { last_output: expect.stringContaining('fatal: could not start') } };

describe.each<[string, string, typeof LocalHost]>([
  ['a prompt drawn at once, polled', '', LocalHost],
  ['a prompt after a program, polled', SLEEPS, LocalHost],
  ['a prompt after the shell is busy, polled', COUNTS, LocalHost],
  ['a prompt drawn at once, watched', '', LinkedHost],
  ['a prompt after a program, watched', SLEEPS, LinkedHost],
  ['a prompt after the shell is busy, watched', COUNTS, LinkedHost],
])('real herdr, an agent gone at once: %s', (_what, rcHead, Kind) => {
  const { herdr, home } = withGoneAgent(rcHead, Kind);

  it('fails the start as start_failed within seconds, with its last output', { timeout: 40_000 }, async () => {
    const { err, ms, screen } = await startGone(herdr(), home(), (pane) => herdr().read(pane, { source: 'visible' }).catch(() => null), 30_000);
    expect(err, `${ms} ms\n${screen}`).toMatchObject(FAILED);
    expect(ms, screen).toBeLessThan(8_000);
  });
});

describe('real herdr, an agent gone at once, told by none of the looks before the wait runs out', () => {
  const { herdr, home } = withGoneAgent('', LocalHost);

  // herdr lists it "launch pending" to the end of its own timeout, which is the wait's: the
  // start's last look may find that entry or none, and either way it is no agent.
  it('fails the start as start_failed once the wait runs out', { timeout: 20_000 }, async () => {
    // A screen "before" that was never the pane's: the screen rule cannot tell, only the wait's end.
    const { err, screen } = await startGone(herdr(), home(), () => Promise.resolve('a screen this pane never showed'), 3_500);
    expect(err, screen).toMatchObject(FAILED);
  });
});
