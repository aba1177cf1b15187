// Before the agent is quit: refuse a handoff whose session would meet, on the target, a file that
// an earlier handoff left there and that changed since (someone resumed the old session there).
// A file as it was left is replaced by the copy; a file no handoff recorded is judged by the copy
// itself (it may be continued by the session being sent). What was read is kept for the copy,
// which then does not hash the same files again.
import type { UnitEntry } from '../../adapters/adapter.js';
import { sessionConflict } from '../transcript/copy.js';
import { destinationUnder } from '../transcript/destinations.js';
import { ledgerDir, lookLeft, type LeftLook } from '../transcript/left-ledger.js';
import { hostStateDir } from './marker.js';
import type { Side } from './sides.js';

/** One program on the target (the ledger and the files' hashes); a stat more only to name a conflict. */
export async function refuseChangedSessionFiles(target: Pick<Side, 'host' | 'info'>, configRoot: string, unit: readonly UnitEntry[], looked: Promise<LeftLook | null> | null = null): Promise<LeftLook> {
  const dests = unit.map((e) => destinationUnder(configRoot, e.dest));
  const dir = ledgerDir(hostStateDir(target.info));
  // The plan's look read the ledger for where the session most likely lands: enough when it covers every file.
  const early = await looked?.catch(() => null);
  const look = early && early.dir === dir && dests.every((d) => early.states.has(d)) ? early : await lookLeft(target.host, dir, dests);
  for (const [i, file] of dests.entries()) {
    const state = look.states.get(file)!;
    if (!state.left || state.sha256Now === null || state.sha256Now === state.left.sha256) continue;
    const e = unit[i]!;
    const now = await target.host.stat(file);
    throw sessionConflict(target.host, { file, there: { size: now?.size ?? 0, mtimeMs: now?.mtimeMs ?? 0 }, sending: { size: e.size, mtimeMs: e.mtimeMs }, left: state.left }, 'it changed since it was left there');
  }
  return look;
}
