// `recover [<id>] [--rollback]`: finish or roll back unfinished handoffs, reported in JSON.
import path from 'node:path';
import { HandoffError } from '../errors.js';
import { handoffsNamed, listJournals, listUnsettled, stateDir } from '../handoff/journal.js';
import { localMarkers, type IncomingMarker } from '../handoff/marker.js';
import { recoverOne, type RecoverReport } from '../handoff/recover.js';
import type { CommandContext, CommandOutput } from './index.js';

/** A handoff into this machine, as its marker tells it, with where to finish it when that is elsewhere. */
interface Incoming {
  file: string;
  id: string | null;
  journal_here: boolean;
  marker: IncomingMarker | null;
  fix: string | null;
}

function incomingHandoffs(dir: string, known: ReadonlySet<string>): Incoming[] {
  return localMarkers(dir).map(({ file, marker }) => ({
    file,
    id: marker?.id ?? null,
    journal_here: marker ? known.has(marker.id) : false,
    marker,
    fix: marker
      ? known.has(marker.id)
        ? null
        : `Run \`agent-handoff recover ${marker.id}\` on ${marker.controller}, the machine that started it.`
      : `The marker ${file} could not be read; run \`agent-handoff history\` on the machine that started the handoff to find it.`,
  }));
}

export async function recover(args: Record<string, unknown>, ctx: CommandContext): Promise<CommandOutput> {
  const dir = stateDir(ctx.env);
  const timeoutS = typeof args.timeout === 'number' && args.timeout > 0 ? args.timeout : 60;
  const summaries = listJournals(dir);
  const known = new Set(summaries.map((j) => j.id));
  let ids: string[];
  if (typeof args.id === 'string' && args.id) {
    const asked = args.id;
    // A batch id names every agent of the batch.
    const named = handoffsNamed(summaries, asked);
    const match = named.ids;
    if (match.length !== 1 && !named.batch) {
      // No journal here, but an incoming marker may name it: the handoff was started on another
      // machine (this is its target), and only that machine's journal can finish or undo it.
      const markerId = (m: Incoming) => m.id ?? path.basename(m.file, '.json');
      const incoming = match.length === 0 ? incomingHandoffs(dir, known).filter((m) => markerId(m) === asked || markerId(m).startsWith(asked)) : [];
      if (incoming.length === 1) return { result: { ok: true, command: 'recover', recovered: [], incoming }, exitCode: 0 };
      const several = match.length > 1 || incoming.length > 1;
      throw new HandoffError('handoff_not_found', `${several ? 'Several handoffs match' : 'No handoff matches'} ${JSON.stringify(asked)} in ${dir}${several ? '' : ' (journals and incoming markers)'}.`, {
        fix: several ? 'Give more of the id; run `agent-handoff history` to see the ids.' : 'Run `agent-handoff history` here, or on the machine that started the handoff, to see the ids.',
      });
    }
    ids = match;
  } else {
    ids = listUnsettled(dir);
  }
  const recovered: RecoverReport[] = [];
  for (const id of ids) recovered.push(await recoverOne(dir, id, { forceRollback: args.rollback === true, timeoutS }));
  const failed = recovered.some((r) => r.steps.some((s) => s.status === 'failed'));
  // Handoffs into this machine whose controller is elsewhere (its journal is not here) and never
  // finished: say where they came from, so the person can run `recover` there.
  return { result: { ok: true, command: 'recover', recovered, incoming: incomingHandoffs(dir, known) }, exitCode: failed ? 1 : 0 };
}
