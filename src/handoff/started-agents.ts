// The agents this tool started on a host, recorded there: pane, kind, cwd and the session it
// resumed. Bringing such an agent back (from any machine) then knows its session without herdr's
// hook (which may never have run: codex holds a new hook for review) and without a guess (which
// finds nothing when the agent has written nothing since it started).
//
// Layout: <state>/started/<sha256 of the pane id, 32 hex>.json, one JSON line, 0600. A newer start
// in the same pane replaces the entry.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { SessionHandle } from '../../adapters/adapter.js';
import type { Host } from '../host/host.js';
import { writePrivate } from './private-write.js';

export const StartedAgent = z.object({
  pane: z.string(),
  workspace: z.string(),
  name: z.string(),
  kind: z.string(),
  handle: z.object({ kind: z.enum(['id', 'path']), value: z.string() }),
  cwd: z.string(),
  /** When the agent was started (ms since the epoch), and by which handoff. */
  startedMs: z.number(),
  handoff: z.string(),
});
export type StartedAgent = z.infer<typeof StartedAgent>;

export function startedDir(stateDir: string): string {
  return `${stateDir}/started`;
}

/** Where the entry for `pane` is kept under `dir`. */
export function startedFile(dir: string, pane: string): string {
  return `${dir}/${createHash('sha256').update(pane).digest('hex').slice(0, 32)}.json`;
}

export async function recordStarted(host: Host, dir: string, agent: StartedAgent): Promise<void> {
  await writePrivate(host, startedFile(dir, agent.pane), JSON.stringify(StartedAgent.parse(agent)) + '\n', 'the started agent');
}

/** The entry at `file` removed, when it is still the one handoff `handoff` wrote (a later start in the pane replaced it otherwise). */
export async function forgetStarted(host: Host, file: string, handoff: string): Promise<void> {
  if ((await entryAt(host, file))?.handoff === handoff) await host.remove(file);
}

/** The entry for `pane`, if any parses. */
export async function readStarted(host: Host, dir: string, pane: string): Promise<StartedAgent | null> {
  const entry = await entryAt(host, startedFile(dir, pane));
  return entry?.pane === pane ? entry : null;
}

async function entryAt(host: Host, file: string): Promise<StartedAgent | null> {
  const text = await host.readFile(file).catch(() => null);
  if (text === null) return null;
  try {
    const parsed = StartedAgent.safeParse(JSON.parse(text.toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The handle an adapter resumes with (a path for pi and omp, an id for the others). */
export function handleOf(kind: string, resumeHandle: string): SessionHandle {
  return { kind: kind === 'pi' || kind === 'omp' ? 'path' : 'id', value: resumeHandle };
}

/** How long after our start the agent's process may have started (the start, its screens). */
const START_SLACK_MS = 5 * 60_000;

/**
 * Is the agent now in the pane the one we started? Same kind and cwd, and its process started
 * around our start (an agent started later in that pane, by hand, is another session).
 */
export function isOurAgent(entry: StartedAgent, now: { kind: string; cwd: string; processStartedMs: number }): boolean {
  if (entry.kind !== now.kind || entry.cwd !== now.cwd) return false;
  return now.processStartedMs >= entry.startedMs - 60_000 && now.processStartedMs <= entry.startedMs + START_SLACK_MS;
}
