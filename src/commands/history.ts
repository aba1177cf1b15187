// `history` and `show <id>`: the handoffs this controller has run, from their journals.
import { HandoffError } from '../errors.js';
import { handoffsNamed, Journal, listJournals, stateDir, summarise } from '../handoff/journal.js';

export function historyResult(env: NodeJS.ProcessEnv) {
  return { ok: true as const, command: 'history' as const, state_dir: stateDir(env), handoffs: listJournals(stateDir(env)) };
}

export function showResult(env: NodeJS.ProcessEnv, id: string) {
  const dir = stateDir(env);
  const named = handoffsNamed(listJournals(dir), id);
  if (named.batch) {
    // A batch: every agent of it, each with its events.
    const handoffs = named.ids.map((one) => {
      const events = Journal.open(dir, one).events();
      return { handoff: summarise(one, events), events };
    });
    return { ok: true as const, command: 'show' as const, batch: named.batch, handoffs };
  }
  if (named.ids.length !== 1) {
    throw new HandoffError('handoff_not_found', `No handoff ${JSON.stringify(id)} in ${dir}${named.ids.length > 1 ? ' (the prefix matches several)' : ''}.`, {
      fix: 'Run `agent-handoff history` to see the ids.',
    });
  }
  const journal = Journal.open(dir, named.ids[0]!);
  const events = journal.events();
  return { ok: true as const, command: 'show' as const, handoff: summarise(journal.id, events), events };
}
