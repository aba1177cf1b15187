// The hand-off brief: one first message to the resumed agent saying what it cannot know — that
// it moved, from where to where, at which commit, which uncommitted files came along — plus the
// user's focus and definition of done. Off unless asked for (--brief, --focus, --done-when).
import type { HerdrClient } from '../herdr/client.js';
import { pollUntil, sleep } from '../sleep.js';

export interface BriefFacts {
  sourceHost: string;
  sourcePath: string;
  targetHost: string;
  targetPath: string;
  head: string;
  branch: string | null;
  restoredFiles: string[];
  /** The user's own words (--brief), used instead of focus/done-when when given. */
  brief?: string | null;
  focus?: string | null;
  doneWhen?: string | null;
}

const MAX_FILES_NAMED = 12;

/**
 * One line: a newline would submit the message early in every agent's input box, so the brief
 * is sentences separated by spaces. Control characters from the user's text are dropped.
 */
export function buildBrief(f: BriefFacts): string {
  const clean = (s: string) => s.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
  const files = f.restoredFiles.length === 0 ? 'There were no uncommitted changes.' : `Uncommitted changes restored here: ${f.restoredFiles.slice(0, MAX_FILES_NAMED).join(', ')}${f.restoredFiles.length > MAX_FILES_NAMED ? ` and ${f.restoredFiles.length - MAX_FILES_NAMED} more` : ''}.`;
  const parts = [
    `[agent-handoff] This session was moved from ${f.sourceHost}:${f.sourcePath} to ${f.targetHost}:${f.targetPath}; paths in the history were rewritten to the new location.`,
    `HEAD is ${f.head.slice(0, 12)}${f.branch ? ` on branch ${f.branch}` : ' (detached)'}.`,
    files,
  ];
  if (f.brief) parts.push(`From the user: ${clean(f.brief)}`);
  else {
    if (f.focus) parts.push(`Focus: ${clean(f.focus)}`);
    if (f.doneWhen) parts.push(`Done when: ${clean(f.doneWhen)}`);
  }
  parts.push('Acknowledge briefly, then carry on.');
  return parts.map(clean).join(' ');
}

export function wantsBrief(f: Pick<BriefFacts, 'brief' | 'focus' | 'doneWhen'>): boolean {
  return Boolean(f.brief || f.focus || f.doneWhen);
}

export type BriefOutcome = 'delivered' | 'not_delivered' | 'skipped_waiting_for_user';

/**
 * Wait for the agent to be idle, type the brief, confirm with Enter after a pause (menus and
 * paste detection swallow an early Enter), and verify it arrived: the agent starts working or
 * the text shows on its screen.
 */
export async function deliverBrief(herdr: HerdrClient, pane: string, text: string, opts: { timeoutMs: number; pauseMs?: number }): Promise<BriefOutcome> {
  await herdr.agentWait(pane, ['idle', 'done'], opts.timeoutMs);
  const before = await herdr.agentList().then((l) => l.find((a) => a.pane_id === pane));
  await herdr.sendText(pane, text);
  await sleep(opts.pauseMs ?? 500);
  await herdr.sendKeys(pane, ['enter']);
  const probe = text.slice(0, 40);
  const arrived = await pollUntil(
    async () => {
      const now = (await herdr.agentList()).find((a) => a.pane_id === pane);
      if (now && (now.agent_status === 'working' || (now.state_change_seq ?? 0) > (before?.state_change_seq ?? 0))) return true;
      const screen = await herdr.read(pane, { source: 'recent', lines: 60 });
      return screen.replace(/\s+/g, ' ').includes(probe) ? true : undefined;
    },
    { timeoutMs: Math.min(opts.timeoutMs, 10_000), everyMs: 200 },
  );
  return arrived ? 'delivered' : 'not_delivered';
}
