// Test hooks for kill injection at a step's boundary and *inside* a step, a pause as a step begins, and
// for an injected failure as a step begins. They read only AGENT_HANDOFF_TEST_KILL_AT and
// AGENT_HANDOFF_TEST_FAIL_AT and do nothing unless those name them:
//   inside:<point>       die at a named point inside a step (e.g. inside:quit:typed, see quit.ts);
//   during:<step>:<ms>   die <ms> after <step> begins, wherever it is then (for steps whose code
//                        has no hook of its own, e.g. the object transfer). If the step ends
//                        first, the kill is called off: a later step is never hit by mistake.

import { HandoffError } from '../errors.js';

let timed: { step: string; timer: NodeJS.Timeout } | null = null;

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL is not delivered synchronously in every case; never run on past the kill point.
  throw new Error('killed by AGENT_HANDOFF_TEST_KILL_AT');
}

/** Die here when AGENT_HANDOFF_TEST_KILL_AT is `inside:<point>`. */
export function killInside(point: string): void {
  if (process.env.AGENT_HANDOFF_TEST_KILL_AT === `inside:${point}`) die();
}

/** Called as each step begins: arms the `during:<step>:<ms>` timer, calls off one for an earlier step. */
export function armTimedKill(step: string): void {
  if (timed && timed.step !== step) {
    clearTimeout(timed.timer);
    timed = null;
  }
  const m = /^during:([a-z_-]+):(\d+)$/.exec(process.env.AGENT_HANDOFF_TEST_KILL_AT ?? '');
  if (!m || m[1] !== step) return;
  timed = { step, timer: setTimeout(die, Number(m[2])) };
}

/**
 * AGENT_HANDOFF_TEST_FAIL_AT=<step>: the step fails as it begins, as if its work had failed —
 * for the steps whose real failures the test world cannot provoke cleanly (integration, verify,
 * stash); `start:workspace`: herdr is not given the workspace (or pane) for the agent to start
 * in (real herdr makes one for any folder). Everything done before must then be undone and the
 * agent restarted at the source.
 */
export function failInjected(step: string): void {
  if (process.env.AGENT_HANDOFF_TEST_FAIL_AT === step) {
    throw new HandoffError('injected_failure', `Injected failure at ${step} (AGENT_HANDOFF_TEST_FAIL_AT).`, { fix: 'Unset AGENT_HANDOFF_TEST_FAIL_AT.' });
  }
}

/** Test hook: die at a named step boundary, as a closed laptop lid would (issue: kill injection). */
export function killPoint(step: string, when: 'before' | 'after'): void {
  if (process.env.AGENT_HANDOFF_TEST_KILL_AT === `${when}:${step}`) process.kill(process.pid, 'SIGKILL');
}

/**
 * Test hook: sleep at the start of a step (after its `begin` is journaled), so a test can cut the
 * network or start a second controller exactly there. AGENT_HANDOFF_TEST_PAUSE_AT=<step>,
 * AGENT_HANDOFF_TEST_PAUSE_MS (default 3000).
 */
export async function pausePoint(step: string): Promise<void> {
  if (process.env.AGENT_HANDOFF_TEST_PAUSE_AT !== step) return;
  const ms = Number(process.env.AGENT_HANDOFF_TEST_PAUSE_MS ?? '3000');
  await new Promise((r) => setTimeout(r, Number.isFinite(ms) ? ms : 3000));
}
