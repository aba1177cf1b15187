// Quit the agent cleanly so nothing else writes its transcript, then wait until its pane's shell
// owns the terminal again.
import type { HerdrClient } from '../herdr/client.js';
import type { AgentInfo } from '../herdr/schemas.js';
import { pollUntil, sleep } from '../sleep.js';
import { quitFailed, type ScreenClassifier } from './screens.js';
import { killInside } from './test-hooks.js';

export interface QuitPlan {
  /** Typed as text, then Enter after `pauseMs` (slash-command menus swallow an early Enter). */
  text: string;
  pauseMs: number;
  /** Key pairs to try when the text does not work (e.g. ctrl+c twice; grok: ctrl+q twice). */
  fallbackKeys: string[];
  /** Gap between the fallback keys (agents want the second press within ~0.5–1 s). */
  fallbackGapMs: number;
}

/** The pane's shell owns the terminal (no program in the foreground). */
export async function paneAtShell(herdr: HerdrClient, pane: string): Promise<boolean> {
  const info = await herdr.processInfo(pane);
  return info.shell_pid != null && info.foreground_process_group_id === info.shell_pid;
}

/**
 * An agent runs in `pane`: herdr lists one there and the pane's shell does not own the terminal.
 * herdr's list keeps an agent that quit until its next detection tick; the pane's foreground
 * tells at once. A pane that is gone runs nothing.
 */
export async function agentRunsIn(herdr: HerdrClient, pane: string): Promise<boolean> {
  if (!(await herdr.agentList()).some((a) => a.pane_id === pane)) return false;
  return !(await paneAtShell(herdr, pane).catch(() => true));
}

/** herdr notices an agent's exit on its next detection tick (0.3–0.5 s), with room for a busy machine. */
export const PANE_RELEASE_MS = 1500;

/**
 * herdr's agents once it no longer lists one in `pane` (an agent that quit keeps its entry, and
 * its name, until herdr's next detection tick), waiting up to `timeoutMs`; the last list seen.
 */
export async function agentsAfterPaneReleased(herdr: HerdrClient, pane: string, timeoutMs: number): Promise<AgentInfo[]> {
  let listed: AgentInfo[] = [];
  await pollUntil(
    async () => {
      listed = await herdr.agentList();
      return listed.some((a) => a.pane_id === pane) ? undefined : true;
    },
    { timeoutMs, everyMs: 50 },
  );
  return listed;
}

export interface QuitResult {
  method: 'quit_text' | 'fallback_keys';
  ms: number;
}

export async function quitAgent(
  herdr: HerdrClient,
  pane: string,
  kind: string,
  plan: QuitPlan,
  classify: ScreenClassifier,
  opts: { timeoutMs: number },
): Promise<QuitResult> {
  const started = Date.now();
  // A look across ssh may wait up to 100 ms for herdr's next read of its connection (see the
  // README's "herdr's first read"), so the looks follow one another closely: a long pause
  // between them would only add to the agent's time offline.
  const exited = (ms: number) => pollUntil(async () => ((await paneAtShell(herdr, pane)) ? true : undefined), { timeoutMs: ms, everyMs: 40 });
  await herdr.sendText(pane, plan.text);
  // Kill injection: the quit text sits in the agent's input, not yet entered.
  killInside('quit:typed');
  await sleep(plan.pauseMs);
  await herdr.sendKeys(pane, ['enter']);
  // Kill injection: the agent was told to quit; nobody has seen it go.
  killInside('quit:entered');
  if (await exited(Math.min(opts.timeoutMs, 15_000))) return { method: 'quit_text', ms: Date.now() - started };

  // The text did not do it (a menu, a prompt, a modal screen): try the agent's key fallback once.
  // What the agent answered to the text says why it stays; the keys' own prompts ("press again")
  // would hide it, so that screen is the one reported.
  const answered = await herdr.read(pane, { source: 'visible' });
  const keys = plan.fallbackKeys;
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) await sleep(plan.fallbackGapMs);
    await herdr.sendKeys(pane, [keys[i]!]);
  }
  if (await exited(Math.min(opts.timeoutMs, 8_000))) return { method: 'fallback_keys', ms: Date.now() - started };
  const screen = await herdr.read(pane, { source: 'visible' });
  throw quitFailed(kind, answered, classify(answered), screen);
}

/** A mark that opens an agent's input line (pi `>`, codex `›`, claude/grok `❯`, `»`). */
// Escaped: an all-ASCII bundle loads as a one-byte string (see scripts/bundle.mjs).
const PROMPT_MARK = /^[>\u203A\u276F\u00BB]/u;
/** Box edges around an input line: `│`, `┃`, `|`. */
const EDGE = /^[\s\u2502\u2503|]+|[\s\u2502\u2503|]+$/gu;

/**
 * The agent's input line: the bottom-most visible line that opens with a prompt mark (past
 * messages in the transcript above it may look alike; menus and footers below it do not), as its
 * index and the text after the mark.
 */
function inputLine(screen: string): { index: number; input: string } | null {
  const lines = screen.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.replace(EDGE, '');
    if (PROMPT_MARK.test(line)) return { index: i, input: line.replace(PROMPT_MARK, '').trim() };
  }
  return null;
}

export type ClearQuitOutcome = 'not_typed' | 'cleared' | 'still_typed';

/**
 * For `recover` after a controller died inside the quit, between typing the quit text and its
 * Enter: the text waits in the agent's input, and the person's next Enter would quit the agent.
 * Only when the input line ends with exactly that text is it ours; then one Backspace per
 * character erases it and nothing before it (a draft the person had typed stays). Any other input
 * (nothing typed, the person typed on after it, no input line found) is left alone: no key is
 * sent. Then the screen is read again until the text is gone.
 */
export async function clearTypedQuit(herdr: HerdrClient, pane: string, text: string): Promise<ClearQuitOutcome> {
  const typed = (screen: string) => inputLine(screen)?.input.endsWith(text) ?? false;
  if (!typed(await herdr.read(pane, { source: 'visible' }))) return 'not_typed';
  await herdr.sendKeys(pane, Array.from({ length: [...text].length }, () => 'backspace'));
  const gone = await pollUntil(async () => (typed(await herdr.read(pane, { source: 'visible' })) ? undefined : true), { timeoutMs: 3_000, everyMs: 150 });
  return gone ? 'cleared' : 'still_typed';
}
