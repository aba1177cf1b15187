// `recover [<id>] [--rollback]`: finish or roll back unfinished handoffs, reported in JSON.
import { HandoffError } from '../errors.js';
import { listJournals, stateDir } from '../handoff/journal.js';
import { localMarkers } from '../handoff/marker.js';
import { recoverOne, unfinished, type RecoverReport } from '../handoff/recover.js';
import type { CommandContext, CommandOutput } from './index.js';

export async function recover(args: Record<string, unknown>, ctx: CommandContext): Promise<CommandOutput> {
  const dir = stateDir(ctx.env);
  const timeoutS = typeof args.timeout === 'number' && args.timeout > 0 ? args.timeout : 60;
  let ids: string[];
  if (typeof args.id === 'string' && args.id) {
    const match = listJournals(dir).filter((j) => j.id === args.id || j.id.startsWith(String(args.id)));
    if (match.length !== 1) throw new HandoffError('handoff_not_found', `No single handoff matches ${JSON.stringify(args.id)} in ${dir}.`, { fix: 'Run `agent-handoff history` to see the ids.' });
    ids = [match[0]!.id];
  } else {
    ids = unfinished(dir);
  }
  const recovered: RecoverReport[] = [];
  for (const id of ids) recovered.push(await recoverOne(dir, id, { forceRollback: args.rollback === true, timeoutS }));
  const failed = recovered.some((r) => r.steps.some((s) => s.status === 'failed'));
  // Handoffs into this machine whose controller is elsewhere (its journal is not here) and never
  // finished: say where they came from, so the person can run `recover` there.
  const known = new Set(listJournals(dir).map((j) => j.id));
  const incoming = localMarkers(dir).map(({ file, marker }) => ({
    file,
    id: marker?.id ?? null,
    journal_here: marker ? known.has(marker.id) : false,
    marker,
    fix: marker && !known.has(marker.id) ? `Run \`agent-handoff recover ${marker.id}\` on ${marker.controller}, the machine that started it.` : null,
  }));
  return { result: { ok: true, command: 'recover', recovered, incoming }, exitCode: failed ? 1 : 0 };
}
