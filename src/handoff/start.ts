// Start the agent on the target: a new herdr workspace in the target cwd, `agent start` with the
// resume argv, the trust answer, and the screens that wait for the user.
import { HandoffError } from '../errors.js';
import { HerdrError } from '../herdr/herdr-error.js';
import type { HerdrClient } from '../herdr/client.js';
import type { AgentInfo } from '../herdr/schemas.js';
import { sleep } from '../sleep.js';
import { paneAtShell } from './quit.js';
import { failInjected } from './test-hooks.js';
import { answerTrust, screenTail, type ScreenClassifier, type ScreenReading, type TrustAnswer, type WaitingScreen } from './screens.js';

const NAME_RULE = /^[a-z][a-z0-9_-]{0,31}$/;

/** A herdr agent name from any text: lower-case, [a-z0-9_-], starting with a letter, ≤ 32. */
export function toAgentName(text: string): string {
  let name = text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '')
    .slice(0, 32);
  if (!NAME_RULE.test(name)) name = 'agent';
  return name;
}

/** `preferred`, else `preferred-2`, `-3`… — unique among live agent names, within 32 chars. */
export function uniqueAgentName(preferred: string, taken: ReadonlySet<string>): string {
  const base = toAgentName(preferred);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = base.slice(0, 32 - suffix.length).replace(/-+$/, '') + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

/** Where an agent is to start: a pane in the target cwd, in a workspace of its own or beside another's. */
export interface PaneRequest {
  cwd: string;
  label: string;
  focus: boolean;
  /** Called as soon as the workspace (or pane) exists, so a failure later can close it. */
  onWorkspace: (workspaceId: string, paneId: string) => void;
  /**
   * A pane of a workspace opened moments ago for another agent of the same source workspace (a
   * batch): the agent starts in a new pane beside it. Null, or a split that fails: a workspace of its own.
   */
  beside?: Promise<{ workspace: string; pane: string } | null>;
}

/** A pane on the target for an agent to start in (see PaneRequest). */
export interface AgentPane {
  workspace: string;
  pane: string;
}

export interface StartRequest {
  /** The pane made for it (see openPane). */
  pane: AgentPane;
  /** The agent's name, chosen while its pane was made (it needs a look at the target's agents). */
  name: string;
  /** The pane's screen, read once it was made (not asked again at the start). */
  screenBefore?: Promise<string | null>;
  kind: string;
  /** The resume argv without the program (herdr types the kind's executable). */
  args: string[];
  trust: boolean;
  classify: ScreenClassifier;
  timeoutMs: number;
}

/**
 * Make the agent's pane: split beside another agent's when asked and possible, else a new
 * workspace. Its folder must exist (herdr opens a missing one in the home).
 */
export async function openPane(herdr: HerdrClient, req: PaneRequest): Promise<AgentPane> {
  failInjected('start:workspace');
  const anchor = await req.beside?.catch(() => null);
  const split = anchor ? await herdr.paneSplit(anchor.pane, { cwd: req.cwd, focus: false }).catch(() => null) : null;
  const made = split ? { workspace: split.workspace_id, pane: split.pane_id } : await herdr.workspaceCreate({ cwd: req.cwd, label: req.label, focus: req.focus }).then((w) => ({ workspace: w.workspace.workspace_id, pane: w.paneId }));
  req.onWorkspace(made.workspace, made.pane);
  return made;
}

export interface StartResult {
  workspace: string;
  pane: string;
  name: string;
  agent: AgentInfo | null;
  trust: TrustAnswer['outcome'] | 'disabled';
  waitingForUser: WaitingScreen[];
}

/** `agent start` while the fresh pane's shell is not yet at its prompt (`agent_pane_busy`). */
async function startWithRetry(herdr: HerdrClient, req: StartRequest, name: string, pane: string): Promise<Awaited<ReturnType<HerdrClient['agentStart']>> | null> {
  const deadline = Date.now() + 10_000;
  // The screen read ahead is the pane's before the first try only.
  let screenBefore = req.screenBefore;
  for (;;) {
    try {
      return await herdr.agentStart(name, req.kind, pane, req.args, req.timeoutMs, screenBefore);
    } catch (err) {
      if (err instanceof HerdrError && err.herdrCode === 'agent_pane_busy' && /not an available shell/.test(err.message) && Date.now() < deadline) {
        screenBefore = undefined;
        await sleep(250);
        continue;
      }
      // Not ready in time, or (real herdr 0.8.2) ready but showing a screen that waits for an
      // answer, such as folder trust: both are judged by the screen below.
      if (err instanceof HerdrError && (err.herdrCode === 'timeout' || err.herdrCode === 'agent_not_ready')) return null;
      if (err instanceof HerdrError && err.herdrCode === 'agent_start_failed') {
        const screen = await herdr.read(pane, { source: 'recent', lines: 40 }).catch(() => '');
        throw new HandoffError('start_failed', `The ${req.kind} agent exited on the target right after starting:\n${screenTail(screen)}`, {
          fix: 'Read its last output above; fix what it complains about on the target, then run the handoff again.',
          details: { last_output: screenTail(screen, 30) },
        });
      }
      throw err;
    }
  }
}

/** How long an agent that herdr calls ready may take to draw its first screen. */
const FIRST_SCREEN_MS = 15_000;

/**
 * True while the pane shows nothing, or still ends with the command herdr typed: the agent has
 * not drawn yet. herdr calls an agent ready on time and state alone (3 s; its screen state of an
 * empty screen is idle), so on a busy machine a trust screen can come after that.
 * Quotes, backslashes and white space are ignored: the shell echoes the typed, quoted command
 * and the terminal wraps it.
 */
export function stillLaunching(screen: string, typed: readonly string[]): boolean {
  const bare = (text: string) => text.replace(/[\s'"\\]+/g, '');
  const shown = bare(screen);
  if (shown === '') return true;
  const command = bare(typed.join(''));
  return command !== '' && shown.endsWith(command);
}

/**
 * The pane's first screen drawn by the agent (or what it shows when the bound runs out). `known`:
 * the screen as herdr found the agent ready, when the start brought it; read only while that is
 * still the launch.
 */
async function firstScreen(herdr: HerdrClient, pane: string, typed: readonly string[], boundMs: number, known: string | null): Promise<string> {
  if (known !== null && !stillLaunching(known, typed)) return known;
  const deadline = Date.now() + boundMs;
  for (;;) {
    const screen = await herdr.read(pane, { source: 'visible' });
    if (!stillLaunching(screen, typed) || Date.now() >= deadline) return screen;
    await sleep(150);
  }
}

export async function startAgent(herdr: HerdrClient, req: StartRequest): Promise<StartResult> {
  const { workspace: workspaceId, pane: paneId } = req.pane;
  const name = req.name;
  const started = await startWithRetry(herdr, req, name, paneId);
  const typed = started?.argv.length ? started.argv : [req.kind, ...req.args];
  const waiting: WaitingScreen[] = [];
  let trust = (req.trust ? 'not_shown' : 'disabled') as StartResult['trust'];

  /** Answer (or leave) the screen read; true when it was one we know. */
  const onScreen = async (reading: ScreenReading): Promise<boolean> => {
    if (reading.screen === 'trust') {
      let next: string | undefined;
      if (req.trust) {
        const answer = await answerTrust(herdr, paneId, req.classify, { timeoutMs: 5_000, shown: reading });
        trust = answer.outcome;
        next = answer.after;
        if (answer.outcome !== 'answered') waiting.push('trust');
      } else {
        waiting.push('trust');
      }
      // After trust, the agent may show its next screen (first run, login, hook review): the one
      // that showed the answer taken, else read now.
      const after = req.classify(next ?? (await herdr.read(paneId, { source: 'visible' })));
      if (after.screen && after.screen !== 'trust') waiting.push(after.screen);
      return true;
    }
    if (reading.screen) waiting.push(reading.screen);
    return reading.screen !== null;
  };
  // Alive? An agent that exits right after starting drops out of herdr's list. One that herdr
  // found interactive (its rule: running ≥ 3 s, or it exits first) is past that moment: when the
  // look that found it ready saw its program in the pane's foreground, it did not exit first, and
  // that look's answer stands; else it is looked for while its first screen is read. One stopped
  // at a screen, answered just now or not ready in time gets a moment to exit first.
  const readyAtStart = started?.agent.interactive_ready === true && started.agent.agent_status !== 'blocked';
  const seenRunning = readyAtStart && started.running === true;
  const listedBeside = readyAtStart && !seenRunning ? herdr.agentList() : null;
  listedBeside?.catch(() => undefined);
  await onScreen(req.classify(await firstScreen(herdr, paneId, typed, Math.min(FIRST_SCREEN_MS, req.timeoutMs), started?.screen ?? null)));
  const pastStart = readyAtStart && trust !== 'answered';
  if (!pastStart) await sleep(300);
  let live = pastStart && seenRunning ? started.agent : (await (pastStart && listedBeside ? listedBeside : herdr.agentList())).find((a) => a.pane_id === paneId);
  // herdr keeps a program it never saw running "launch pending" past its own timeout: its entry
  // is no agent when the pane's shell has the terminal again.
  const neverSeen = !started && live?.launch_pending === true && (await paneAtShell(herdr, paneId).catch(() => false));
  if (!live || neverSeen) {
    const last = await herdr.read(paneId, { source: 'recent', lines: 40 }).catch(() => '');
    throw new HandoffError('start_failed', `The ${req.kind} agent exited on the target right after starting:\n${screenTail(last)}`, {
      fix: 'Read its last output above; fix what it complains about on the target, then run the handoff again.',
      details: { last_output: screenTail(last, 30) },
    });
  }
  // Blocked with nothing left for the user: a screen came after the first one drawn (a splash,
  // then trust), or one we do not know.
  if (live.agent_status === 'blocked' && waiting.length === 0) {
    const known = await onScreen(req.classify(await herdr.read(paneId, { source: 'visible' })));
    if (!known) waiting.push('unrecognized_prompt');
    else if (trust === 'answered') live = (await herdr.agentList()).find((a) => a.pane_id === paneId) ?? live;
  }
  return { workspace: workspaceId, pane: paneId, name, agent: live, trust, waitingForUser: waiting };
}
