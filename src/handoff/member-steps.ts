// One agent's own steps: the wait for it to be idle; its quit, and the reads and the pane on the
// target made while it quits; the session copy, herdr's integration and hook trust, the start on
// the target, its verification and what follows it. Agents of a batch run these side by side.
import type { HookLook, HookTrustOutcome } from '../../adapters/hook-trust.js';
import type { Snapshot } from '../git/snapshot.js';
import { arrivalsDir, recordArrivals, worthAnArrival } from '../transcript/arrivals.js';
import { askStatus, isBusy, knownIdle } from './idle-check.js';
import type { CopyRecord } from '../transcript/copy-types.js';
import { discardBackups, undoCopy } from '../transcript/copy.js';
import { destinationUnder, isLookAt, lookAtDestinations, type DestinationLook } from '../transcript/destinations.js';
import { warmBundlePacker } from '../transcript/file-bundle.js';
import { readEarly } from '../transcript/read-ahead.js';
import { ledgerDir, recordLeft } from '../transcript/left-ledger.js';
import type { Placement } from '../../adapters/adapter.js';
import { hostStateDir } from './marker.js';
import { sessionIntent } from './intents.js';
import type { Member } from './member.js';
import { cwdIn } from './plan-rules.js';
import { copySessionUnit } from './session-copy.js';
import type { Sides } from './sides.js';
import { agentsAfterPaneReleased, PANE_RELEASE_MS, quitAgent, type QuitResult } from './quit.js';
import { openPane, startAgent, toAgentName, uniqueAgentName, type AgentPane, type StartResult } from './start.js';
import { checkTargetFiles, verify } from './verify.js';
import { HandoffError } from '../errors.js';
import { handleOf, recordStarted, startedDir, startedFile } from './started-agents.js';
import { gone } from './rollback.js';
import type { SideWork } from './side-work.js';

/** The temp-name tag copySessionUnit gives the session copy (src/handoff/session-copy.ts). */
export function sessionCopyTag(id: string): string {
  return id.slice(-8);
}

export interface SessionCopied {
  out: CopyRecord;
  sessionPlacement: Placement;
  /** The target's record of what arrived, being written (see copySession). */
  arrivalsRecorded: Promise<void>;
  /** The source's record of what left, being written (awaited before the handoff succeeds). */
  leftRecorded: Promise<void>;
}

/** What one agent's session copy and start read, asked while it quits (read-only; each user checks it is for what it then does). */
export interface StartReads {
  /** The session's destinations as planned. */
  look: Promise<DestinationLook | null>;
  /** What the source's agent trusts of herdr's hook. */
  sourceHooks: Promise<HookLook> | null;
  /** The target's, when herdr's integration there is current (not reinstalled). */
  targetHooks: Promise<HookLook | null> | null;
}

export function readsForStart(m: Member, sides: Sides, side: SideWork): StartReads {
  const { plan } = m;
  const { source, target } = sides;
  const root = plan.sessionPlacement.configRoot;
  const hookTrust = plan.adapter.hookTrust;
  // A unit of several files is likely bundled (file-bundle.ts): its packer made ready meanwhile.
  if (plan.unit.length >= 2) warmBundlePacker();
  return {
    look: side.add(lookAtDestinations(target.host, root, plan.unit.map((e) => destinationUnder(root, e.dest))).catch(() => null)),
    sourceHooks: hookTrust ? side.add(hookTrust.look(source.host, plan.sourceCtx, plan.cwd)) : null,
    // In its home: the target cwd may not exist yet, and only the user's own hooks count.
    targetHooks: hookTrust
      ? side.add(plan.targetIntegration?.status === 'current' ? hookTrust.look(target.host, plan.targetCtx, plan.targetCtx.home).catch(() => null) : Promise.resolve(null))
      : null,
  };
}

/**
 * Quit the agent at the source. Recorded before the keys go out: a controller killed mid-quit
 * leaves a journal from which `recover` restarts the agent (or clears the typed quit text) instead
 * of "nothing changed". `beside`: what goes beside the quit, begun once it is recorded.
 */
export function quitStep(m: Member, sides: Sides, beside: () => unknown): Promise<QuitResult> {
  const { plan } = m;
  return m.steps.run('quit', m.says(`quitting the ${plan.kind} agent`), async () => {
    const restartArgs = plan.adapter.resumeArgv(plan.sourceHandle, plan.opts.agentArgs).slice(1);
    m.record({ kind: 'quit', pane: plan.agent.pane_id, name: plan.agent.name ?? null, agentKind: plan.adapter.herdrKind, restartArgs });
    void beside();
    return quitAgent(sides.source.herdr, plan.agent.pane_id, plan.kind, plan.adapter.quit, plan.adapter.classifyScreen, { timeoutMs: plan.opts.timeoutS * 1000 });
  });
}

/**
 * Copy the agent's session to where its work lands on the target. Starts as soon as the agent is
 * gone (nothing writes its transcript any more); should the work land in another worktree than
 * planned, the caller undoes it and copies again.
 */
export function copySession(m: Member, sides: Sides, worktree: string, look: Promise<DestinationLook | null>, markerWritten: () => Promise<unknown>): Promise<SessionCopied> {
  const { plan } = m;
  const { source, target } = sides;
  return m.steps.run('session', m.says(`copying the ${plan.kind} session`), async () => {
    const sessionPlacement = plan.adapter.placement(plan.session, { ...plan.targetCtx, cwd: cwdIn(worktree, plan.snapshot.relativeCwd) });
    const root = sessionPlacement.configRoot;
    // The unit's small files as planned, read beside its stat (read-ahead.ts): only read, so before the marker.
    const early = readEarly(source.host, plan.unit, root, look);
    early.catch(() => undefined);
    // The marker goes first: from here on the target may hold something of this handoff.
    await markerWritten();
    // The unit as the quit left it (sizes and times are final now).
    const unit = await plan.adapter.unit(source.host, plan.session, sessionPlacement);
    // One look at the destinations serves the intent and the copy (the one asked during the quit when it is for these).
    const dests = unit.map((e) => destinationUnder(root, e.dest));
    const asked = await look;
    const looked = isLookAt(asked, root, dests) ? Promise.resolve(asked) : lookAtDestinations(target.host, root, dests);
    looked.catch(() => undefined);
    m.record(await sessionIntent(looked, unit, sessionCopyTag(plan.id)));
    const sourceState = hostStateDir(source.info);
    const targetState = hostStateDir(target.info);
    // The repository's spellings are the plan's (the snapshot taken later is of the same checkout and cwd).
    const out = await copySessionUnit({ plan, sides, unit, placement: sessionPlacement, snapshot: plan.snapshot, targetWorktree: worktree, looked, ledgerDir: ledgerDir(targetState), left: plan.targetLeft, arrivalsDir: arrivalsDir(sourceState), overwrite: plan.opts.overwrite, readEarly: early });
    m.record({ kind: 'session_copy', record: out });
    // Both ledgers are written while the agent starts, not before it: nothing of the start
    // depends on them. What arrived, recorded on the target: when it leaves again, what it
    // still holds of that need not cross (the target checks its file against the record before
    // trusting it). What left the source, recorded there: when the session comes back, a copy
    // still as it left is ours to replace (agents that rewrite files in place); the handoff
    // succeeds only once it is written.
    const arrivalsRecorded = recordArrivals(target.host, arrivalsDir(targetState), out.files.flatMap((f) => (f.content && worthAnArrival(f.content.size) ? [{ path: f.path, ...f.content, handoff: plan.id }] : [])));
    arrivalsRecorded.catch(() => undefined);
    const at = new Date().toISOString();
    const leftRecorded = recordLeft(source.host, ledgerDir(sourceState), out.files.flatMap((f) => (f.source ? [{ ...f.source, handoff: plan.id, to: target.host.address, at }] : [])));
    leftRecorded.catch(() => undefined);
    return { out, sessionPlacement, arrivalsRecorded, leftRecorded };
  });
}

/** The session copied for where the work landed: the copy made after the quit, or another when it landed elsewhere. */
export async function sessionFor(m: Member, sides: Sides, copying: Promise<SessionCopied>, worktree: string, markerWritten: () => Promise<unknown>): Promise<SessionCopied> {
  const copied = await copying;
  if (worktree === m.plan.placement.worktree) return copied;
  await undoCopy(sides.target.host, copied.out);
  m.record({ kind: 'undone', what: 'session_copy' });
  return copySession(m, sides, worktree, Promise.resolve(null), markerWritten);
}

/**
 * The target's herdr desk for a batch: agents that shared a workspace at the source share one on
 * the target (the first opens it, the others start in panes split beside it), and each agent's
 * name is unique among those started. One per batch, across its checkouts.
 */
export class TargetDesk {
  private readonly opened = new Map<string, Promise<{ workspace: string; pane: string } | null>>();
  /** Names given to agents of this batch (herdr's list may not show them yet). */
  readonly taken = new Set<string>();

  /** For an agent of source workspace `ws`: the pane to start beside (null: it opens the workspace), and what to call once it has. */
  seat(ws: string): { beside: Promise<{ workspace: string; pane: string } | null> | null; opened: (where: { workspace: string; pane: string } | null) => void } {
    const known = this.opened.get(ws);
    if (known) return { beside: known, opened: () => undefined };
    let opened!: (where: { workspace: string; pane: string } | null) => void;
    this.opened.set(ws, new Promise((resolve) => (opened = resolve)));
    return { beside: null, opened };
  }
}

/** Where an agent starts on the target: its pane and its name there, made while its session is copied. */
export interface Seat {
  pane: Promise<AgentPane>;
  name: Promise<string>;
  /** The pane's screen once made (what the start compares the agent's first screens with). */
  screenBefore: Promise<string | null>;
}

/**
 * Make the agent's pane in the worktree where its work landed (in a workspace of its own, or
 * beside the pane of an agent that shared its source workspace) and choose its name among the
 * target's agents (on the source's own herdr, once it has quit: `quitted`): both while it quits
 * and its session is copied, so the start begins the moment that is there.
 */
export function seatAgent(m: Member, sides: Sides, placed: { worktree: string; repo: string }, desk: TargetDesk, quitted: Promise<unknown>, chosenName?: Promise<string>): Seat {
  const { plan } = m;
  const { target } = sides;
  const { agent, opts } = plan;
  const repoName = placed.repo.split('/').pop() ?? 'repo';
  const preferred = opts.name ?? agent.name ?? `${repoName}-${plan.kind}`;
  // On the same herdr (--here) the source agent, which has quit, keeps its name until herdr's
  // next look at its pane: wait for that, briefly, rather than give the moved agent another
  // name. On another herdr the quit frees nothing there: the names are asked at once, beside the
  // pane (not on the path from the quit to the start). Another agent that holds it, or one of
  // the batch that took it a moment ago: pick another.
  const name = chosenName ?? (async () => {
    if (sides.sameHost) await quitted;
    const wanted = toAgentName(preferred);
    const listed = await agentsAfterPaneReleased(target.herdr, agent.pane_id, sides.sameHost ? PANE_RELEASE_MS : 0);
    const now = listed.map((a) => a.name).filter((n): n is string => !!n);
    const chosen = uniqueAgentName(wanted, new Set([...now, ...desk.taken]));
    desk.taken.add(chosen);
    return chosen;
  })();
  name.catch(() => undefined);
  const seat = desk.seat(agent.workspace_id);
  const worktreeName = placed.worktree.split('/').pop() ?? repoName;
  const cwd = cwdIn(placed.worktree, plan.snapshot.relativeCwd);
  const label = `${worktreeName} (${plan.kind})`;
  m.record({ kind: 'pane_intent', cwd, label, split: seat.beside !== null });
  const pane = openPane(target.herdr, {
    ...(seat.beside ? { beside: seat.beside } : {}),
    cwd,
    label,
    focus: opts.focus,
    onWorkspace: (workspace, pane) => {
      m.record({ kind: 'workspace', workspace, pane });
      seat.opened({ workspace, pane });
    },
  }).finally(() => seat.opened(null));
  pane.catch(() => undefined);
  const screenBefore = pane.then((p) => target.herdr.read(p.pane, { source: 'visible' })).catch(() => null);
  return { pane, name, screenBefore };
}

/**
 * Close a seat's pane: the work is placed anew, and the folder it opened in with it. Recorded as
 * undone (the rollback skips it); a pane herdr never reported stays to its intent.
 */
export async function unseat(m: Member, sides: Sides, seat: Seat): Promise<void> {
  const made = await seat.pane.catch(() => null);
  if (!made) return;
  await sides.target.herdr.paneClose(made.pane).catch(gone);
  m.record({ kind: 'undone', what: 'seat' });
}

export interface Started {
  integrationInstalled: boolean;
  hookTrust: HookTrustOutcome | null;
  start: StartResult;
  verified: string[];
  startedMs: number;
  /** The target's record of which session the agent resumed (see started-agents.ts), written while it started. */
  recorded: Promise<void>;
}

/**
 * herdr's integration (installed once per kind of a batch: `integration` is shared), the trust of
 * its hook, the agent's start in the target cwd and the checks of what the target holds.
 */
export async function startOnTarget(
  m: Member,
  sides: Sides,
  at: { snap: Snapshot; worktree: string; session: SessionCopied; reads: StartReads; integration: (m: Member) => Promise<boolean>; seat: Seat },
  side: SideWork,
): Promise<Started> {
  const { plan } = m;
  const { source, target } = sides;
  const { adapter, opts } = plan;
  const targetCwd = cwdIn(at.worktree, at.snap.relativeCwd);
  // The target's files are checked while the agent starts there (the check reads git and the
  // session files only); its answer is awaited by the verify step, after the start.
  const filesChecked = side.add(checkTargetFiles(plan, sides, at.snap, at.worktree, at.session.out));
  const integrationInstalled = await m.steps.run('integration', m.says('checking the herdr integration on the target'), () => at.integration(m));
  // After our install, herdr's new hook would wait for review in the agent: its trust is
  // carried when the source trusts the very same hook.
  const hookTrust = adapter.hookTrust;
  const hookTrusted =
    hookTrust && at.reads.sourceHooks
      ? await m.steps.run('hook_trust', m.says(`checking the trust of herdr's hook on ${target.host.label}`), async () =>
          hookTrust.carry({
            target: target.host,
            ctx: plan.targetCtx,
            cwd: targetCwd,
            source: await (at.reads.sourceHooks as Promise<HookLook>),
            early: integrationInstalled ? null : at.reads.targetHooks,
            sourceLabel: source.host.label,
            tag: sessionCopyTag(plan.id),
            allowed: opts.trust,
            journal: (w) => m.record({ kind: 'hook_trust', ...w }),
          }),
        )
      : null;
  const startedMs = Date.now();
  let recorded: Promise<void> = Promise.resolve();
  const start = await m.steps.run('start', m.says(`starting ${plan.kind} on ${target.host.label}`), async () => {
    const pane = await at.seat.pane;
    const name = await at.seat.name;
    // The target is told which session the agent resumes while it starts (journaled first: a
    // rollback from here on removes it).
    recorded = side.add(recordStartedAgent(m, sides, { ...pane, name }, { cwd: targetCwd, handle: at.session.sessionPlacement.handle, startedMs }));
    return startAgent(target.herdr, {
      pane,
      name,
      screenBefore: at.seat.screenBefore,
      kind: adapter.herdrKind,
      args: adapter.resumeArgv(at.session.sessionPlacement.handle, opts.agentArgs).slice(1),
      trust: opts.trust,
      classify: adapter.classifyScreen,
      timeoutMs: Math.max(30_000, opts.timeoutS * 1000),
    });
  });
  const verified = await m.steps.run('verify', m.says('verifying the target'), async () => verify(plan, sides, start, filesChecked));
  return { integrationInstalled, hookTrust: hookTrusted, start, verified, startedMs, recorded };
}

/**
 * The target's record of the agent started (see started-agents.ts), journaled at once, then
 * written; a record that cannot be written costs only the guess it spares.
 */
async function recordStartedAgent(m: Member, sides: Sides, seat: { pane: string; workspace: string; name: string }, agent: { cwd: string; handle: string; startedMs: number }): Promise<void> {
  const { plan } = m;
  const dir = startedDir(hostStateDir(sides.target.info));
  m.record({ kind: 'started_record', path: startedFile(dir, seat.pane), handoff: plan.id });
  await recordStarted(sides.target.host, dir, {
    pane: seat.pane,
    workspace: seat.workspace,
    name: seat.name,
    kind: plan.kind,
    handle: handleOf(plan.kind, agent.handle),
    cwd: agent.cwd,
    startedMs: agent.startedMs,
    handoff: plan.id,
  }).catch(() => undefined);
}

/** herdr's integration for a kind, asked in the plan's look; installed (once per kind of a batch) when it is not current. */
export function integrationInstaller(sides: Sides): (m: Member) => Promise<boolean> {
  const installs = new Map<string, Promise<boolean>>();
  return async (m) => {
    const { plan } = m;
    const target = plan.adapter.integration;
    let install = installs.get(target);
    if (!install) {
      install = plan.targetIntegration?.status === 'current' ? Promise.resolve(false) : sides.target.herdr.integrationInstall(target).then(() => true);
      installs.set(target, install);
    }
    const installed = await install;
    if (installed) m.record({ kind: 'integration', target });
    return installed;
  };
}

/** A busy agent is waited for (--wait) or refused; nothing has changed yet. */
export async function waitIdle(m: Member, sides: Sides): Promise<void> {
  const { plan } = m;
  const { agent, opts } = plan;
  if (!opts.wait && !plan.adapter.quit.mustBeIdle) return;
  // Asked as the plan's look went out, moments ago: herdr is not asked again while that stands.
  if (knownIdle(plan.statusBeforeQuit, Date.now())) return;
  await m.steps.run('wait', `waiting for ${m.label} to be idle`, async () => {
    const now = await askStatus(sides.source.herdr, agent.pane_id);
    if (isBusy(now.status)) {
      if (!opts.wait) throw new HandoffError('agent_busy', `The ${plan.kind} agent is ${now.status}; it must be idle before it can be quit.`, { fix: 'Pass --wait.' });
      await sides.source.herdr.agentWait(agent.pane_id, ['idle', 'done'], opts.waitTimeoutS * 1000);
    }
  });
}

/** After its verification: the backups dropped, and the target's record of the agent written. */
export async function finishing(m: Member, s: { started: Started; session: SessionCopied }, sides: Sides, backups: Map<Member, string[]>): Promise<void> {
  await Promise.all([
    // Verified: the backups of files replaced as they were left go; forced ones stay.
    discardBackups(sides.target.host, s.session.out).then((kept) => backups.set(m, kept)),
    // Written while the agent started; without it the session's way back sends whole files.
    s.session.arrivalsRecorded.catch(() => undefined),
    s.started.recorded,
  ]);
}
