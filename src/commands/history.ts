// `history` and `show <id>`: the handoffs this controller has run, from their journals.
import { HandoffError } from '../errors.js';
import { Journal, listJournals, stateDir, summarise } from '../handoff/journal.js';

export function historyResult(env: NodeJS.ProcessEnv) {
  return { ok: true as const, command: 'history' as const, state_dir: stateDir(env), handoffs: listJournals(stateDir(env)) };
}

export function showResult(env: NodeJS.ProcessEnv, id: string) {
  let journal: Journal;
  try {
    journal = Journal.open(stateDir(env), id);
  } catch {
    const known = listJournals(stateDir(env)).filter((h) => h.id.startsWith(id));
    if (known.length === 1) journal = Journal.open(stateDir(env), known[0]!.id);
    else {
      throw new HandoffError('handoff_not_found', `No handoff ${JSON.stringify(id)} in ${stateDir(env)}${known.length > 1 ? ' (the prefix matches several)' : ''}.`, {
        fix: 'Run `agent-handoff history` to see the ids.',
      });
    }
  }
  const events = journal.events();
  return { ok: true as const, command: 'show' as const, handoff: summarise(journal.id, events), events };
}
