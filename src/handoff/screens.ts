// Screens that stop an agent and wait for its user, and how we answer the one we may answer
// (folder trust) — by reading the screen and moving the cursor to the "yes" option, never by
// blind keystrokes.
import { HandoffError } from '../errors.js';
import type { HerdrClient } from '../herdr/client.js';
import { sleep } from '../sleep.js';

export type WaitingScreen = 'trust' | 'first_run_setup' | 'login' | 'hook_review' | 'unrecognized_prompt';

export interface ScreenReading {
  screen: Exclude<WaitingScreen, 'unrecognized_prompt'> | null;
  /** The menu options in screen order (trust screens), e.g. ['Yes, I trust this folder', 'No, exit']. */
  options: string[];
  /** Index of the highlighted option, or -1 when none is visible. */
  selectedIndex: number;
  /** Index of the option that accepts (trust), or -1. */
  acceptIndex: number;
}

export type ScreenClassifier = (text: string) => ScreenReading;

export interface TrustAnswer {
  outcome: 'answered' | 'not_shown' | 'left_for_user' | 'failed';
  detail?: string;
  /** Answered: the screen that showed the trust screen gone (the agent's next one). */
  after?: string;
}

/**
 * Move the highlight to the accept option and confirm; verify the trust screen went away.
 * `shown`: the screen as the caller just read it. A trust screen whose options it shows whole is
 * answered from it (over ssh each read of herdr's socket costs a round trip and a wait for
 * herdr's next read of it); anything else is read again first.
 */
export async function answerTrust(herdr: HerdrClient, pane: string, classify: ScreenClassifier, opts: { timeoutMs: number; shown?: ScreenReading }): Promise<TrustAnswer> {
  const { shown } = opts;
  let reading = shown?.screen === 'trust' && shown.acceptIndex >= 0 && shown.selectedIndex >= 0 ? shown : classify(await herdr.read(pane, { source: 'visible' }));
  if (reading.screen !== 'trust') return { outcome: 'not_shown' };
  if (reading.acceptIndex < 0 || reading.selectedIndex < 0) {
    return { outcome: 'failed', detail: 'The trust screen shows no option we recognise as "yes"; left for the user.' };
  }
  const delta = reading.acceptIndex - reading.selectedIndex;
  if (delta !== 0) {
    await herdr.sendKeys(pane, Array.from({ length: Math.abs(delta) }, () => (delta > 0 ? 'down' : 'up')));
    await sleep(150);
    reading = classify(await herdr.read(pane, { source: 'visible' }));
    if (reading.screen === 'trust' && reading.selectedIndex !== reading.acceptIndex) {
      return { outcome: 'failed', detail: `Could not move the cursor to "${reading.options[reading.acceptIndex] ?? 'yes'}".` };
    }
  }
  await herdr.sendKeys(pane, ['enter']);
  const deadline = Date.now() + opts.timeoutMs;
  while (Date.now() < deadline) {
    await sleep(200);
    const after = await herdr.read(pane, { source: 'visible' });
    if (classify(after).screen !== 'trust') return { outcome: 'answered', after };
  }
  return { outcome: 'failed', detail: 'The trust screen was still shown after confirming.' };
}

/** The last lines of a screen, for error messages. */
export function screenTail(text: string, lines = 8): string {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.length > 0)
    .slice(-lines)
    .join('\n');
}

/** `screen`: what the agent showed after it was asked to quit; `last`: after the fallback keys too. */
export function quitFailed(kind: string, screen: string, reading: ScreenReading | null, last: string = screen): HandoffError {
  const what = reading?.screen ? `its ${reading.screen.replace(/_/g, ' ')} screen` : 'this screen';
  return new HandoffError('quit_failed', `The ${kind} agent did not quit; it shows ${what}:\n${screenTail(screen)}`, {
    fix: 'Finish or dismiss what the agent is showing, then run the handoff again.',
    details: { screen: screenTail(screen, 20), ...(last !== screen ? { last_screen: screenTail(last, 20) } : {}) },
  });
}
