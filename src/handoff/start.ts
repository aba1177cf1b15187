// Start the agent on the target: a new herdr workspace in the target cwd, `agent start` with the
// resume argv, the trust answer, and the screens that wait for the user.
import { HandoffError } from '../errors.js';
import { HerdrError, type HerdrClient } from '../herdr/client.js';
import type { AgentInfo } from '../herdr/schemas.js';
import { sleep } from '../sleep.js';
import { answerTrust, screenTail, type ScreenClassifier, type TrustAnswer, type WaitingScreen } from './screens.js';

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

export interface StartRequest {
  cwd: string;
  label: string;
  focus: boolean;
  name: string;
  kind: string;
  /** The resume argv without the program (herdr types the kind's executable). */
  args: string[];
  trust: boolean;
  classify: ScreenClassifier;
  timeoutMs: number;
  /** Called as soon as the workspace exists, so a failure later can close it. */
  onWorkspace: (workspaceId: string, paneId: string) => void;
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
async function startWithRetry(herdr: HerdrClient, req: StartRequest, pane: string): Promise<AgentInfo | null> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return (await herdr.agentStart(req.name, req.kind, pane, req.args, req.timeoutMs)).agent;
    } catch (err) {
      if (err instanceof HerdrError && err.herdrCode === 'agent_pane_busy' && /not an available shell/.test(err.message) && Date.now() < deadline) {
        await sleep(250);
        continue;
      }
      if (err instanceof HerdrError && err.herdrCode === 'timeout') return null; // judged by its screen below
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

export async function startAgent(herdr: HerdrClient, req: StartRequest): Promise<StartResult> {
  const { workspace, paneId } = await herdr.workspaceCreate({ cwd: req.cwd, label: req.label, focus: req.focus });
  req.onWorkspace(workspace.workspace_id, paneId);
  const agent = await startWithRetry(herdr, req, paneId);
  const waiting: WaitingScreen[] = [];
  let trust: StartResult['trust'] = req.trust ? 'not_shown' : 'disabled';

  const screen = await herdr.read(paneId, { source: 'visible' });
  const reading = req.classify(screen);
  if (reading.screen === 'trust') {
    if (req.trust) {
      const answer = await answerTrust(herdr, paneId, req.classify, { timeoutMs: 5_000 });
      trust = answer.outcome;
      if (answer.outcome !== 'answered') waiting.push('trust');
    } else {
      waiting.push('trust');
    }
  }
  // After trust, the agent may show its next screen (first run, login, hook review).
  const after = reading.screen === 'trust' ? req.classify(await herdr.read(paneId, { source: 'visible' })) : reading;
  if (after.screen && after.screen !== 'trust') waiting.push(after.screen);

  // Alive? An agent that exits right after starting drops out of herdr's list.
  await sleep(300);
  const live = (await herdr.agentList()).find((a) => a.pane_id === paneId);
  if (!live) {
    const last = await herdr.read(paneId, { source: 'recent', lines: 40 }).catch(() => '');
    throw new HandoffError('start_failed', `The ${req.kind} agent exited on the target right after starting:\n${screenTail(last)}`, {
      fix: 'Read its last output above; fix what it complains about on the target, then run the handoff again.',
      details: { last_output: screenTail(last, 30) },
    });
  }
  if (live.agent_status === 'blocked' && waiting.length === 0) waiting.push('unrecognized_prompt');
  return { workspace: workspace.workspace_id, pane: paneId, name: req.name, agent: live ?? agent, trust, waitingForUser: waiting };
}
