// Recover an unfinished handoff from its journal (the controller died: SIGKILL, lid closed,
// network gone). Whichever is safe: finish it when the agent already runs on the target (only
// verification and the source stash remain), else roll the target back and restart the agent at
// the source. Each step first checks whether its effect is already there and then reports
// `recovered` instead of redoing it.
import { adapterFor } from '../../adapters/index.js';
import { HandoffError } from '../errors.js';
import { connectHost } from '../host/connect.js';
import type { Host } from '../host/host.js';
import { HerdrClient } from '../herdr/client.js';
import { stashSourceChanges } from '../git/stash.js';
import { discardBackups } from '../transcript/copy.js';
import { repoLayout, type Snapshot } from '../git/snapshot.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { Journal, listUnsettled, type JournalEvent } from './journal.js';
import { localLiveness, lockName, LockOwner, paneLockKey, sessionLockKey } from './lock.js';
import { processStartId } from './process-age.js';
import { hostStateDir } from './marker.js';
import { HandoffRecord } from './records.js';
import { rollback, type RollbackReport } from './rollback.js';
import { isShared, ownRecords } from './member.js';
import { agentRunsIn, clearTypedQuit, paneAtShell } from './quit.js';
import { pollUntil } from '../sleep.js';

export interface RecoverStep {
  step: string;
  status: 'done' | 'recovered' | 'skipped' | 'failed';
  detail: string;
}

export interface RecoverReport {
  id: string;
  action: 'completed' | 'rolled_back' | 'nothing_to_do' | 'still_running';
  steps: RecoverStep[];
  rollback: RollbackReport | null;
}

export function recordsOf(events: JournalEvent[]): HandoffRecord[] {
  const out: HandoffRecord[] = [];
  for (const e of events) {
    if (e.type !== 'record' || !e.data) continue;
    const parsed = HandoffRecord.safeParse(e.data);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

export function stepsDone(events: JournalEvent[]): Set<string> {
  return new Set(events.filter((e) => e.type === 'done' && e.step).map((e) => e.step!));
}

/**
 * Unfinished handoffs of one agent (same source, and the same pane, session or agent name), for
 * `send` to recover before it plans a second handoff of an agent whose last one ended uncertainly.
 */
export function unfinishedFor(dir: string, who: { sourceSpec: string; herdrServer?: string | null | undefined; agent?: string; pane?: string; session?: string }): string[] {
  return listUnsettled(dir).filter((id) => {
    const header = Journal.open(dir, id).events().find((e) => e.type === 'header')?.data ?? {};
    const source = typeof header.source_spec === 'string' ? header.source_spec : 'local';
    if (source !== who.sourceSpec) return false;
    // Another herdr server's pane may have the same id and the agent the same name.
    if (typeof header.herdr_server === 'string' && who.herdrServer && header.herdr_server !== who.herdrServer) return false;
    return (who.pane !== undefined && header.pane === who.pane) || (who.session !== undefined && header.session === who.session) || (who.agent !== undefined && (header.agent === who.agent || header.pane === who.agent));
  });
}

/** The controller as the journal header names it (send.ts); absent in older journals. */
export const JournalController = z.object({ host: z.string(), pid: z.number().int(), pid_start: z.string().nullable().optional() });
export type JournalController = z.infer<typeof JournalController>;

/**
 * Who ran this handoff, with its start time when known: the `controller` record (execute.ts), or
 * the header's controller when the record was never written (killed right after the journal began).
 * The header's start time identifies the process: a later process that got its pid is not it.
 */
export function controllerOf(events: JournalEvent[]): JournalController | null {
  const header = JournalController.safeParse(events.find((e) => e.type === 'header')?.data?.controller);
  const fromHeader = header.success ? header.data : null;
  const rec = recordsOf(events).find((r): r is Extract<HandoffRecord, { kind: 'controller' }> => r.kind === 'controller');
  if (!rec) return fromHeader;
  const same = fromHeader && fromHeader.host === rec.host && fromHeader.pid === rec.pid;
  return { host: rec.host, pid: rec.pid, ...(same && fromHeader.pid_start ? { pid_start: fromHeader.pid_start } : {}) };
}

/** Is the controller of a journal without an outcome still at work (here, by pid and start time)? */
export function stillRunning(events: JournalEvent[]): JournalController | null {
  if (events.some((e) => e.type === 'outcome')) return null;
  const c = controllerOf(events);
  return c && localLiveness(os.hostname())({ controller: c.host, pid: c.pid, pid_start: c.pid_start ?? null }) === true ? c : null;
}

/**
 * One recovery of a journal at a time on this controller (two re-run sends, or `recover` beside a
 * send, must not both roll back and restart the agent twice): a claim file created exclusively
 * beside the journal, naming this process. A claim whose process is gone is taken over.
 */
const Claim = z.object({ pid: z.number().int(), pid_start: z.string().nullable().optional() });
function claimRecovery(dir: string, id: string): (() => void) | null {
  const file = path.join(dir, 'handoffs', `${id}.recovering`);
  const me = JSON.stringify({ pid: process.pid, pid_start: processStartId(process.pid) });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, me, { flag: 'wx', mode: 0o600 });
      return () => fs.rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let text = '';
    let holder: z.infer<typeof Claim> | null = null;
    try {
      text = fs.readFileSync(file, 'utf8');
      const parsed = Claim.safeParse(JSON.parse(text));
      holder = parsed.success ? parsed.data : null;
    } catch {
      // Half written or just removed: look again.
    }
    if (holder && localLiveness(os.hostname())({ controller: os.hostname(), pid: holder.pid, pid_start: holder.pid_start ?? null })) return null;
    if (!holder && fs.existsSync(file) && Date.now() - fs.statSync(file).mtimeMs < 2000) return null;
    // Stale: move it aside (of several takers one rename finds it), check it was the stale one, retry.
    const aside = `${file}.stale-${process.pid}`;
    try {
      fs.renameSync(file, aside);
      if (fs.readFileSync(aside, 'utf8') !== text) fs.renameSync(aside, file);
      else fs.rmSync(aside, { force: true });
    } catch {
      // Someone else took it over first.
    }
  }
  return null;
}

/** Undo descriptions that earlier rollbacks of this journal completed. */
function undoneBefore(events: JournalEvent[]): Set<string> {
  const out = new Set<string>();
  for (const e of events) {
    if (e.type !== 'undone' || !Array.isArray(e.data?.undone)) continue;
    for (const u of e.data.undone) if (typeof u === 'string') out.add(u);
  }
  return out;
}

/** The dead controller's locks on the source (its pane's and its session's): remove those that are this handoff's. */
async function releaseLock(source: Host, header: Record<string, unknown>, id: string): Promise<string | null> {
  const keys: string[] = [];
  if (typeof header.pane === 'string') keys.push(paneLockKey(header.pane, typeof header.herdr_server === 'string' ? header.herdr_server : null));
  if (typeof header.kind === 'string' && typeof header.session === 'string') keys.push(sessionLockKey(header.kind, header.session));
  if (keys.length === 0) return null;
  const info = await source.info();
  const released: string[] = [];
  for (const key of keys) {
    const dir = `${hostStateDir(info)}/locks/${lockName(key)}`;
    try {
      const owner = LockOwner.safeParse(JSON.parse((await source.readFile(`${dir}/owner.json`)).toString('utf8')));
      if (!owner.success || owner.data.handoff !== id) continue;
    } catch {
      continue;
    }
    await source.remove(dir, { recursive: true });
    released.push(dir);
  }
  return released.length > 0 ? released.join(', ') : null;
}

/** How long an agent told to quit (Enter sent just before the controller died) gets to go. */
const QUIT_GRACE_MS = 3_000;

/**
 * The controller died between journaling the quit and seeing the agent go: the keys may not have
 * gone out, the quit text may wait in the input, or the Enter went out and the agent is gone or
 * going. Give a departing agent its moment (then it is restarted like any quit agent); an agent
 * that stays has the quit text erased from its input, or its next Enter would quit it.
 */
async function settleInterruptedQuit(herdr: HerdrClient, quit: Extract<HandoffRecord, { kind: 'quit' }>): Promise<{ alive: boolean; step: RecoverStep }> {
  const text = adapterFor(quit.agentKind).quit.text;
  let gone: boolean;
  try {
    gone = (await pollUntil(async () => ((await paneAtShell(herdr, quit.pane)) ? true : undefined), { timeoutMs: QUIT_GRACE_MS, everyMs: 150 })) === true;
  } catch (err) {
    // The pane itself is gone (or unreadable): the restart reports what it finds.
    return { alive: false, step: { step: 'quit', status: 'recovered', detail: `Could not look at pane ${quit.pane} (${err instanceof Error ? err.message : String(err)}); the agent is restarted there.` } };
  }
  if (gone) return { alive: false, step: { step: 'quit', status: 'recovered', detail: `The agent had quit (the controller died after the quit was entered); it is restarted in pane ${quit.pane}.` } };
  const cleared = await clearTypedQuit(herdr, quit.pane, text);
  if (cleared === 'cleared') return { alive: true, step: { step: 'quit', status: 'recovered', detail: `The controller died before the quit was entered: erased ${JSON.stringify(text)} from the agent's input in pane ${quit.pane}; the agent keeps running there.` } };
  if (cleared === 'not_typed') return { alive: true, step: { step: 'quit', status: 'recovered', detail: `The controller died before the quit was entered; the agent still runs in pane ${quit.pane} and its input does not end with ${JSON.stringify(text)}.` } };
  return { alive: true, step: { step: 'quit', status: 'failed', detail: `${JSON.stringify(text)} still waits in the agent's input in pane ${quit.pane}: erase it there before pressing Enter, or the agent quits.` } };
}

/** Where the other agents of a batch's checkout stand (see the `group` record): moved, or still unfinished. */
export interface Siblings {
  /** How many other agents the checkout moved with. */
  others: number;
  moved: string[];
  unfinished: string[];
}

export function siblingsOf(dir: string, id: string, records: readonly HandoffRecord[]): Siblings | null {
  const group = records.find((r): r is Extract<HandoffRecord, { kind: 'group' }> => r.kind === 'group');
  if (!group || group.members.length < 2) return null;
  const out: Siblings = { others: group.members.length - 1, moved: [], unfinished: [] };
  for (const other of group.members.filter((m) => m !== id)) {
    let events: JournalEvent[];
    try {
      events = Journal.open(dir, other).events();
    } catch {
      continue;
    }
    const last = [...events].reverse().find((e) => e.type === 'outcome')?.data;
    const outcome = last?.outcome;
    if (outcome === 'succeeded' || (outcome === 'recovered' && last?.action === 'completed')) out.moved.push(other);
    else if (outcome === undefined || outcome === 'rollback_incomplete') out.unfinished.push(other);
  }
  return out;
}

/**
 * What a rollback of one agent of a checkout undoes: its own part, and the work's move (placement,
 * refs, marker) only when it is the last of them to settle and none stays moved. While another
 * stays moved, the placement it works in stays; the refs and the marker go.
 */
export function recordsToUndo(records: HandoffRecord[], siblings: Siblings | null): HandoffRecord[] {
  if (!siblings) return records;
  if (siblings.moved.length > 0) return records.filter((r) => !isShared(r) || r.kind === 'refs' || r.kind === 'marker');
  if (siblings.unfinished.length > 0) return ownRecords(records);
  return records;
}

export async function recoverOne(dir: string, id: string, opts: { forceRollback: boolean; timeoutS: number }): Promise<RecoverReport> {
  const release = claimRecovery(dir, id);
  if (!release) {
    return { id, action: 'still_running', steps: [{ step: 'inspect', status: 'skipped', detail: 'Another agent-handoff process on this machine is recovering this handoff right now.' }], rollback: null };
  }
  try {
    return await recoverClaimed(dir, id, opts);
  } finally {
    release();
  }
}

async function recoverClaimed(dir: string, id: string, opts: { forceRollback: boolean; timeoutS: number }): Promise<RecoverReport> {
  const journal = Journal.open(dir, id);
  const events = journal.events();
  const header = events.find((e) => e.type === 'header')?.data ?? {};
  const sourceSpec = typeof header.source_spec === 'string' ? header.source_spec : 'local';
  const targetSpec = typeof header.target_spec === 'string' ? header.target_spec : 'local';
  const records = recordsOf(events);
  const done = stepsDone(events);
  const steps: RecoverStep[] = [];
  // One of several agents of a checkout (a batch): the work's move is theirs together.
  const siblings = siblingsOf(dir, id, records);
  const quit = records.find((r): r is Extract<HandoffRecord, { kind: 'quit' }> => r.kind === 'quit');
  // Its controller is alive when that pid still runs here and (when recorded) started when it did.
  const controller = stillRunning(events);
  if (controller) {
    // Its controller is still at work (another terminal): recovering now would fight it.
    return { id, action: 'still_running', steps: [{ step: 'inspect', status: 'skipped', detail: `The handoff is still running (pid ${controller.pid} on ${controller.host}).` }], rollback: null };
  }
  const timeouts = { connectTimeoutMs: opts.timeoutS * 1000, commandTimeoutMs: opts.timeoutS * 1000 };
  if (!quit && records.every((r) => r.kind === 'controller')) {
    steps.push({ step: 'inspect', status: 'skipped', detail: 'The handoff stopped before the agent was quit; nothing changed.' });
    // Only the dead controller's lock may be left.
    const source = await connectHost(sourceSpec, timeouts).catch(() => null);
    if (source) {
      try {
        const lock = await releaseLock(source, header, id);
        if (lock) steps.push({ step: 'lock', status: 'done', detail: `Released the lock ${lock}.` });
      } finally {
        await source.close();
      }
    }
    journal.outcome('recovered', { action: 'nothing_to_do' });
    return { id, action: 'nothing_to_do', steps, rollback: null };
  }
  const hosts: Host[] = [];
  try {
    const source = await connectHost(sourceSpec, timeouts);
    hosts.push(source);
    const target = targetSpec === sourceSpec ? source : await connectHost(targetSpec, timeouts);
    if (target !== source) hosts.push(target);
    const sides = { source: { host: source, herdr: new HerdrClient(source) }, target: { host: target, herdr: new HerdrClient(target) } };

    const agentRec = records.filter((r): r is Extract<HandoffRecord, { kind: 'workspace' }> => r.kind === 'workspace').pop();
    const targetAlive = agentRec ? await agentRunsIn(sides.target.herdr, agentRec.pane) : false;
    const canComplete = !opts.forceRollback && done.has('start') && targetAlive;
    if (canComplete) {
      steps.push({ step: 'start', status: 'recovered', detail: `The agent already runs on ${target.label} (pane ${agentRec!.pane}).` });
      const snapRec = records.find((r): r is Extract<HandoffRecord, { kind: 'snapshot' }> => r.kind === 'snapshot');
      const stashRec = records.find((r) => r.kind === 'stash');
      if (stashRec || done.has('stash')) {
        steps.push({ step: 'stash', status: 'recovered', detail: 'The source changes were already stashed.' });
      } else if (siblings && siblings.moved.length < siblings.others) {
        // Another agent of this checkout is back at the source (or not yet recovered): it works on those changes.
        steps.push({ step: 'stash', status: 'skipped', detail: 'The source changes stay: not every agent of this checkout moved.' });
      } else if (snapRec) {
        const layout = await repoLayout(source, snapRec.repo);
        const snap: Snapshot = { ...layout, snapshot: snapRec.wip, tree: snapRec.fingerprint.split(':')[1] ?? '', changedFiles: [], fingerprint: snapRec.fingerprint, head: snapRec.head };
        const s = await stashSourceChanges({ host: source, snapshot: snap, id, targetLabel: target.label });
        steps.push({ step: 'stash', status: 'done', detail: s.note });
      }
      const marker = records.find((r): r is Extract<HandoffRecord, { kind: 'marker' }> => r.kind === 'marker');
      if (marker) {
        await target.remove(marker.path).catch((err: unknown) => {
          // Another agent of the checkout removed it already.
          if (!siblings) throw err;
        });
        steps.push({ step: 'marker', status: 'done', detail: `Removed the handoff marker ${marker.path} on ${target.label}.` });
      }
      // The session copy in use on the target is the verified one: the backups of what it replaced go.
      const copy = records.filter((r): r is Extract<HandoffRecord, { kind: 'session_copy' }> => r.kind === 'session_copy').pop();
      if (copy && copy.record.files.some((f) => f.action === 'replaced')) {
        await discardBackups(target, copy.record);
        steps.push({ step: 'session', status: 'done', detail: `Removed the backups of the session files replaced on ${target.label}.` });
      }
      const lock = await releaseLock(source, header, id);
      if (lock) steps.push({ step: 'lock', status: 'done', detail: `Released the lock ${lock}.` });
      journal.outcome('recovered', { action: 'completed' });
      return { id, action: 'completed', steps, rollback: null };
    }
    // Roll back: only the records matter; the source agent restarts unless it already runs.
    let sourceAlive: boolean;
    if (quit && !done.has('quit')) {
      // Died inside the quit: the agent may be gone, on its way out, or waiting with the quit text typed.
      const settled = await settleInterruptedQuit(sides.source.herdr, quit);
      sourceAlive = settled.alive;
      steps.push(settled.step);
    } else {
      sourceAlive = quit ? await agentRunsIn(sides.source.herdr, quit.pane) : true;
    }
    const report = await rollback(sides, recordsToUndo(records, siblings), { restart: !sourceAlive, alreadyUndone: undoneBefore(events) });
    if (sourceAlive && quit) steps.push({ step: 'restart', status: 'recovered', detail: `The agent already runs at the source (pane ${quit.pane}).` });
    for (const u of report.undone) steps.push({ step: 'undo', status: 'done', detail: u });
    for (const e of report.errors) steps.push({ step: 'undo', status: 'failed', detail: `${e.what}: ${e.error}` });
    if (report.restart) steps.push({ step: 'restart', status: report.restart.restarted ? 'done' : 'failed', detail: report.restart.restarted ? `Restarted in ${report.restart.pane}.` : `Could not restart: ${report.restart.error}; run: ${report.restart.command}` });
    const lock = await releaseLock(source, header, id);
    if (lock) steps.push({ step: 'lock', status: 'done', detail: `Released the lock ${lock}.` });
    journal.append({ type: 'undone', data: { ...report } });
    journal.outcome(report.errors.length === 0 ? 'rolled_back' : 'rollback_incomplete', { action: 'rolled_back' });
    return { id, action: 'rolled_back', steps, rollback: report };
  } catch (err) {
    if (err instanceof HandoffError) throw err;
    throw new HandoffError('recover_failed', `Could not recover handoff ${id}: ${err instanceof Error ? err.message : String(err)}`, { fix: 'Check that both machines are reachable, then run `agent-handoff recover` again.' });
  } finally {
    await Promise.all(hosts.map((h) => h.close()));
  }
}
