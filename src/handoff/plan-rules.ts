// The plan's decisions, as pure functions of what was read: which agent may move, whether each
// herdr can take part, where the agent's folder is, which checkout on the target receives the
// work, and what is only worth a warning. No I/O here: plan.ts reads, these decide, and each has
// a table test (test/handoff/plan-rules.test.ts).
import type { SessionRef } from '../../adapters/adapter.js';
import { HandoffError } from '../errors.js';
import type { DiscoverResult } from '../git/discover.js';
import type { AgentInfo, ProcessInfo } from '../herdr/schemas.js';
import type { HerdrProbe } from '../herdr/probe.js';
import { SUPPORTED_KINDS, type SupportedKind } from '../result.js';
import { agentBusy, isBusy } from './idle-check.js';
import type { SendOptions } from './options.js';

/** What the agent rules need of the options. */
export type AgentRuleOptions = Pick<SendOptions, 'self' | 'wait' | 'dryRun'>;

/**
 * The agent's kind, when it may be moved: a kind agent-handoff supports, not the pane running this
 * command (unless --self), and not mid-turn (unless --wait, --self or a dry run).
 */
export function movableKind(agent: AgentInfo, opts: AgentRuleOptions, where: { label: string; isThisMachine: boolean; callerPane: string | undefined }): SupportedKind {
  const kind = agent.agent;
  if (!kind || !(SUPPORTED_KINDS as readonly string[]).includes(kind)) {
    throw new HandoffError('unsupported_kind', `The agent is ${kind ? `a ${kind} agent` : 'of a kind herdr could not tell'}, which agent-handoff cannot move.`, {
      fix: `Supported kinds: ${SUPPORTED_KINDS.join(', ')}.`,
    });
  }
  if (where.isThisMachine && where.callerPane === agent.pane_id && !opts.self) {
    throw new HandoffError('own_pane', 'That agent is the one running this command.', { fix: 'Pass --self to move yourself after this turn.' });
  }
  if (isBusy(agent.agent_status) && !opts.wait && !opts.dryRun && !opts.self) throw agentBusy(agent.name ?? agent.pane_id, String(agent.agent_status));
  return kind as SupportedKind;
}

/** The agent's program: the pane's first foreground process. */
export function agentProcess(info: { foreground_processes: ProcessInfo[] }, paneId: string, label: string): ProcessInfo {
  const proc = info.foreground_processes[0];
  if (!proc) throw new HandoffError('agent_not_found', `No program runs in pane ${paneId} on ${label}.`, { fix: 'Run `agent-handoff list` again.' });
  return proc;
}

/** The agent's folder as herdr tells it: its foreground cwd, else its program's, else the pane's. */
export function agentFolder(agent: AgentInfo, proc: ProcessInfo | null): string {
  const cwd = agent.foreground_cwd ?? proc?.cwd ?? agent.cwd;
  if (!cwd) throw new HandoffError('agent_cwd_unknown', `herdr does not know the working directory of ${agent.name ?? agent.pane_id}.`, { fix: 'Retry in a moment.' });
  return cwd;
}

/** Whether herdr on a side (`label`) can take part: installed, new enough, running, one protocol, one socket. */
export function requireHerdr(probe: HerdrProbe, label: string): void {
  if (probe.server === 'not_installed') {
    throw new HandoffError('herdr_not_installed', `herdr is not installed on ${label} (not on the login PATH).`, { fix: `Install herdr ≥ 0.8.0 on ${label}.` });
  }
  if (probe.version && !probe.version.ok) {
    throw new HandoffError('herdr_too_old', `herdr ${probe.version.version} on ${label} is older than 0.8.0.`, { fix: `Update herdr on ${label}.` });
  }
  if (probe.server !== 'running') {
    throw new HandoffError('server_not_running', `The herdr server is not running on ${label}.`, { fix: `Start herdr on ${label} (run \`herdr\`, or \`herdr server\`), then retry.` });
  }
  if (probe.serverStatus?.compatible === false) {
    throw new HandoffError('protocol_mismatch', `The herdr CLI on ${label} speaks another protocol than its server.`, { fix: `Restart the herdr server on ${label} after updating herdr.` });
  }
  if (probe.socketMismatch) {
    const { pinged, cli } = probe.socketMismatch;
    throw new HandoffError('herdr_socket_mismatch', `On ${label} herdr's CLI uses the server at ${cli}, but another server answers at ${pinged}.`, {
      fix: `Set HERDR_SOCKET_PATH (or HERDR_SESSION) in the login environment of ${label} to the server you use, then retry.`,
    });
  }
}

/** What the checkout rules need of the options. */
export type CheckoutRuleOptions = Pick<SendOptions, 'here' | 'dir' | 'newWorktree' | 'newBranch'>;

/** The agent's checkout at the source, as the checkout rules need it. */
export interface SourceCheckout {
  /** Its top folder as git names it. */
  repoRoot: string;
  /** The same, every link resolved. */
  realRoot: string;
}

/**
 * Whether the target is searched for a checkout of the repository before one is chosen:
 * `required` (what it finds or fails with is the answer), `optional` (--here: without an answer a
 * new worktree is made) or `none`. `dirReal` is --dir with its links resolved on the target.
 */
export function checkoutSearch(opts: CheckoutRuleOptions, source: SourceCheckout, remoteCount: number, dirReal: string | null): 'required' | 'optional' | 'none' {
  if (opts.here) {
    if (opts.dir && dirReal === source.realRoot) {
      throw new HandoffError('dir_is_source', `--dir names the agent's own checkout (${source.repoRoot}).`, { fix: 'Name another checkout of the repository, or drop --dir to get a new worktree.' });
    }
    if (opts.newWorktree || remoteCount === 0) return 'none';
    return opts.dir ? 'required' : 'optional';
  }
  if (remoteCount === 0) {
    throw new HandoffError('no_remote', `The repository ${source.repoRoot} has no remote, so its checkout on the target cannot be found.`, {
      fix: 'Add the remote the other machine cloned from (git remote add origin <url>), or use --here.',
    });
  }
  return 'required';
}

export interface CheckoutChoice {
  discovery: DiscoverResult | null;
  /** The checkout that receives the work. */
  targetRepo: string;
  /** Checkouts found on the target other than the chosen one. */
  otherCheckouts: string[];
  /** The work goes on a new branch (handoff/<session>), not the source's. */
  newBranch: boolean;
}

/**
 * The checkout that receives the work, from what the search found (null: no search, or an
 * optional one that found nothing). With --here, the agent's own checkout is never the answer: any
 * other checkout of the repository, else a new worktree of it on a new branch.
 */
export function chooseCheckout(opts: CheckoutRuleOptions, source: SourceCheckout, found: DiscoverResult | null): CheckoutChoice {
  if (!opts.here) {
    if (!found) throw new Error('chooseCheckout: a send to another machine chooses from a search');
    return { discovery: found, targetRepo: found.checkout.path, otherCheckouts: found.checkouts.slice(1).map((c) => c.path), newBranch: opts.newBranch };
  }
  const others = found?.checkouts.filter((c) => !c.worktrees.some((w) => w.path === source.repoRoot)) ?? [];
  // --dir inside the agent's own repository (a subfolder, a linked worktree): said, rather than
  // quietly making a new worktree instead of what was named.
  if (opts.dir && found && others.length === 0) {
    throw new HandoffError('dir_is_source', `--dir ${opts.dir} is part of the agent's own repository (${source.repoRoot}).`, { fix: 'Name another checkout of the repository, or drop --dir to get a new worktree.' });
  }
  if (found && others.length > 0) return { discovery: found, targetRepo: others[0]!.path, otherCheckouts: others.slice(1).map((c) => c.path), newBranch: opts.newBranch };
  return { discovery: null, targetRepo: source.repoRoot, otherCheckouts: [], newBranch: true };
}

/** What the plan says but does not refuse: an agent CLI missing on the target, herdr versions to update. */
export function planWarnings(kind: SupportedKind, targetLabel: string, targetAgentCli: string | null, probes: readonly HerdrProbe[]): string[] {
  const warnings: string[] = [];
  if (!targetAgentCli) warnings.push(`The ${kind} CLI is not on the login PATH of ${targetLabel}; the agent will not start there.`);
  for (const p of new Set(probes)) if (p.version?.warning) warnings.push(p.version.warning);
  return warnings;
}

/** herdr's handle of the session at the source, to resume it there after a failure: what herdr recorded, else the file (pi, omp) or id. */
export function sourceHandleOf(agent: AgentInfo, session: SessionRef): string {
  return agent.agent_session?.value ?? (session.kind === 'pi' || session.kind === 'omp' ? session.file : session.id);
}

/** The agent's cwd in a worktree: the worktree plus the cwd relative to the repo root. */
export function cwdIn(worktree: string, relativeCwd: string): string {
  return relativeCwd ? `${worktree}/${relativeCwd}` : worktree;
}
