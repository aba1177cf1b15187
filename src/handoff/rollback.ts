// Undo what a handoff changed on the target (newest first) and restart the agent at the source.
// Used by a failing `send` and by `recover --rollback`. Each undo is attempted even when an
// earlier one failed; failures are reported, never hidden.
import { HandoffError } from '../errors.js';
import { HerdrError } from '../herdr/herdr-error.js';
import type { HerdrClient } from '../herdr/client.js';
import type { Host } from '../host/host.js';
import { cleanupRefs } from '../git/transfer.js';
import { undoPlacement } from '../git/place.js';
import { pollUntil } from '../sleep.js';
import type { HandoffRecord } from './records.js';
import { undoCopy } from '../transcript/copy.js';
import { agentsAfterPaneReleased, PANE_RELEASE_MS, paneAtShell } from './quit.js';
import { uniqueAgentName } from './start.js';
import { undoPlacementIntent, undoSessionIntent } from './intents.js';
import { adapterFor } from '../../adapters/index.js';
import { forgetStarted } from './started-agents.js';

export interface RollbackSides {
  source: { host: Host; herdr: HerdrClient };
  target: { host: Host; herdr: HerdrClient };
}

export interface RestartOutcome {
  restarted: boolean;
  name: string | null;
  pane: string;
  /** The command a person can run in that pane when the restart failed. */
  command: string | null;
  error: string | null;
}

export interface RollbackReport {
  undone: string[];
  errors: { what: string; error: string }[];
  restart: RestartOutcome | null;
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Start the agent again in its source pane with its resume argv (it was quit by us). */
export async function restartAtSource(herdr: HerdrClient, rec: Extract<HandoffRecord, { kind: 'quit' }>, exe: string): Promise<RestartOutcome> {
  const command = [exe, ...rec.restartArgs].map(shellQuote).join(' ');
  try {
    // The pane must be back at its shell (it is, after a quit; wait briefly if not).
    await pollUntil(async () => ((await paneAtShell(herdr, rec.pane)) ? true : undefined), { timeoutMs: 5_000 });
    // The pane's own entry is the agent that quit: its name is ours once herdr lets it go (herdr
    // refuses a name a listed agent holds).
    const listed = await agentsAfterPaneReleased(herdr, rec.pane, PANE_RELEASE_MS);
    const taken = new Set(listed.filter((a) => a.pane_id !== rec.pane).map((a) => a.name).filter((n): n is string => !!n));
    const name = rec.name && !taken.has(rec.name) ? rec.name : uniqueAgentName(rec.name ?? `${rec.agentKind}`, taken);
    await herdr.agentStart(name, rec.agentKind, rec.pane, rec.restartArgs, 30_000).catch((err: unknown) => {
      // A start that times out on a screen still leaves the agent running in the pane.
      if (err instanceof HerdrError && err.herdrCode === 'timeout') return null;
      throw err;
    });
    return { restarted: true, name, pane: rec.pane, command: null, error: null };
  } catch (err) {
    return { restarted: false, name: rec.name, pane: rec.pane, command, error: err instanceof Error ? err.message : String(err) };
  }
}

export interface RollbackOptions {
  restart: boolean;
  /** Undos an earlier rollback already did (recover after a rollback that could not finish). */
  alreadyUndone?: ReadonlySet<string>;
}

/**
 * The records a rollback undoes, newest first. A placement, session copy or seat may be made
 * twice (the first one undone when another replaced it, then an `undone` record): the one undone
 * already is skipped with its intent. An intent stands in for its record only when the step died
 * before writing that record.
 */
export function toUndo(records: readonly HandoffRecord[]): HandoffRecord[] {
  const out: HandoffRecord[] = [];
  const state = {
    placement: { recorded: false, undone: false },
    session_copy: { recorded: false, undone: false },
  };
  // A pane intent stands in for its workspace record only when that record was never written;
  // a seat undone already (its pane closed) is skipped with its intent.
  let paneRecorded = false;
  let seatUndone = false;
  for (const rec of [...records].reverse()) {
    if (rec.kind === 'workspace' || rec.kind === 'pane_intent') {
      if (!seatUndone && (rec.kind === 'workspace' || !paneRecorded)) out.push(rec);
      paneRecorded = rec.kind === 'workspace';
      if (rec.kind === 'pane_intent') seatUndone = false;
      continue;
    }
    const what = rec.kind === 'placement' || rec.kind === 'placement_intent' ? 'placement' : rec.kind === 'session_copy' || rec.kind === 'session_intent' ? 'session_copy' : null;
    if (rec.kind === 'undone') {
      if (rec.what === 'seat') seatUndone = true;
      else state[rec.what].undone = true;
      continue;
    }
    if (!what) {
      out.push(rec);
      continue;
    }
    const s = state[what];
    if (rec.kind === 'placement' || rec.kind === 'session_copy') {
      if (!s.undone) out.push(rec);
      s.recorded = true;
    } else {
      // The intent opens its step: what is newer than it belongs to a later attempt.
      if (!s.recorded && !s.undone) out.push(rec);
      s.recorded = false;
      s.undone = false;
    }
  }
  return out;
}

/** A close that found nothing to close (the pane or workspace is gone already) did its job. */
export function gone(err: unknown): void {
  if (err instanceof HerdrError && (err.herdrCode === 'workspace_not_found' || err.herdrCode === 'pane_not_found')) return;
  throw err;
}

/** The panes a pane intent may have left (see the pane_intent record), each with how to close it. */
async function unrecordedPanes(herdr: HerdrClient, intent: Extract<HandoffRecord, { kind: 'pane_intent' }>): Promise<{ what: string; run: () => Promise<void> }[]> {
  const [panes, workspaces] = await Promise.all([herdr.paneList(), herdr.workspaceList()]);
  return panes
    .filter((p) => !p.agent && (p.cwd === intent.cwd || p.foreground_cwd === intent.cwd))
    .flatMap((p) => {
      const ws = workspaces.find((w) => w.workspace_id === p.workspace_id);
      if (ws && ws.label === intent.label && ws.pane_count === 1) return [{ what: `workspace ${ws.workspace_id}`, run: () => herdr.workspaceClose(ws.workspace_id).catch(gone) }];
      return intent.split ? [{ what: `pane ${p.pane_id} of workspace ${p.workspace_id}`, run: () => herdr.paneClose(p.pane_id).catch(gone) }] : [];
    });
}

export async function rollback(sides: RollbackSides, records: HandoffRecord[], opts: RollbackOptions): Promise<RollbackReport> {
  const report: RollbackReport = { undone: [], errors: [], restart: null };
  const attempt = async (what: string, fn: () => Promise<void>) => {
    if (opts.alreadyUndone?.has(what)) return;
    try {
      await fn();
      report.undone.push(what);
    } catch (err) {
      report.errors.push({ what, error: err instanceof Error ? err.message : String(err) });
    }
  };
  for (const rec of toUndo(records)) {
    switch (rec.kind) {
      case 'workspace': {
        // Closing the workspace ends the agent started in it; one it shares with other agents of
        // its batch (they stay) loses only this agent's pane.
        const others = await sides.target.herdr
          .agentList()
          .then((list) => list.some((a) => a.workspace_id === rec.workspace && a.pane_id !== rec.pane))
          .catch(() => false);
        if (others) await attempt(`closed pane ${rec.pane} of workspace ${rec.workspace} on ${sides.target.host.label}`, () => sides.target.herdr.paneClose(rec.pane).catch(gone));
        else await attempt(`closed workspace ${rec.workspace} on ${sides.target.host.label}`, () => sides.target.herdr.workspaceClose(rec.workspace).catch(gone));
        break;
      }
      case 'pane_intent': {
        // The pane was asked for and never recorded: the one herdr made is in that folder,
        // labelled so, with no agent in it yet.
        const panes = await unrecordedPanes(sides.target.herdr, rec).catch((err: unknown) => {
          report.errors.push({ what: `closed the pane asked for in ${rec.cwd} on ${sides.target.host.label}`, error: err instanceof Error ? err.message : String(err) });
          return [];
        });
        for (const close of panes) await attempt(`closed ${close.what} on ${sides.target.host.label}`, close.run);
        break;
      }
      case 'session_copy':
        await attempt(`removed the session files written on ${sides.target.host.label}`, () => undoCopy(sides.target.host, rec.record));
        break;
      case 'placement':
        await attempt(`undid the placement in ${rec.record.worktree}`, async () => {
          const undo = await undoPlacement(sides.target.host, rec.record);
          if (undo.errors.length > 0) throw new Error(undo.errors.map((e) => e.message).join('; '));
        });
        break;
      case 'placement_intent':
        await attempt(`undid the unrecorded placement in ${rec.worktree} (branch ${rec.branch})`, async () => {
          await undoPlacementIntent(sides.target.host, rec);
        });
        break;
      case 'session_intent':
        await attempt(`removed the unrecorded session files on ${sides.target.host.label}`, () => undoSessionIntent(sides.target.host, rec));
        break;
      case 'hook_trust':
        await attempt(`removed the trust of herdr's ${rec.agentKind} hook from ${rec.file} on ${sides.target.host.label}`, async () => {
          await adapterFor(rec.agentKind).hookTrust?.undo(sides.target.host, rec);
        });
        break;
      case 'refs':
        await attempt(`removed refs/handoff/${rec.id}/* on ${sides.target.host.label}`, () => cleanupRefs(sides.target.host, rec.targetRepo, rec.id));
        break;
      case 'marker':
        await attempt('removed the handoff marker on the target', () => sides.target.host.remove(rec.path));
        break;
      case 'started_record':
        await attempt(`removed the record of the agent started on ${sides.target.host.label}`, () => forgetStarted(sides.target.host, rec.path, rec.handoff));
        break;
      default:
        break;
    }
  }
  const quit = records.find((r): r is Extract<HandoffRecord, { kind: 'quit' }> => r.kind === 'quit');
  if (quit && opts.restart) report.restart = await restartAtSource(sides.source.herdr, quit, quit.agentKind);
  return report;
}

/** Thrown when a step fails after the agent was quit: carries what rollback did. */
export class HandoffFailed extends HandoffError {
  constructor(
    cause: HandoffError,
    readonly failedStep: string,
    readonly rollbackReport: RollbackReport,
  ) {
    super(cause.code, cause.message, {
      ...(cause.fix ? { fix: cause.fix } : {}),
      details: {
        ...cause.details,
        failed_step: failedStep,
        undone: rollbackReport.undone,
        undo_errors: rollbackReport.errors,
        source_restart: rollbackReport.restart,
      },
      cause,
    });
    this.name = 'HandoffFailed';
  }
}
