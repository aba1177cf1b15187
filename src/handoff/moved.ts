// At the source, a note that a session moved away (where, when, which handoff): `list` shows it,
// and handing off the stale copy left behind warns. One small JSON file per session under the
// source host's state folder, written through the Host (the source may be remote).
import { z } from 'zod';
import type { Host } from '../host/host.js';
import { lockName } from './lock.js';
import { writePrivate } from './private-write.js';

export const MovedNote = z.object({
  kind: z.string(),
  session: z.string(),
  to: z.string(),
  target_path: z.string(),
  at: z.string(),
  handoff: z.string(),
});
export type MovedNote = z.infer<typeof MovedNote>;

const folder = (stateDir: string) => `${stateDir}/moved`;

export async function recordMoved(host: Host, stateDir: string, note: MovedNote): Promise<void> {
  await writePrivate(host, `${folder(stateDir)}/${lockName(`${note.kind}-${note.session}`)}.json`, JSON.stringify(MovedNote.parse(note)) + '\n', 'the moved note');
}

/** Every moved note on the host, by session id (unreadable notes are skipped). */
export async function movedNotes(host: Host, stateDir: string): Promise<Map<string, MovedNote>> {
  const notes = new Map<string, MovedNote>();
  const entries = await host.list(folder(stateDir)).catch(() => []);
  await Promise.all(
    entries
      .filter((e) => e.type === 'file' && e.name.endsWith('.json'))
      .map(async (e) => {
        try {
          const parsed = MovedNote.safeParse(JSON.parse((await host.readFile(`${folder(stateDir)}/${e.name}`)).toString('utf8')));
          if (parsed.success) notes.set(parsed.data.session, parsed.data);
        } catch {
          // a note being written right now
        }
      }),
  );
  return notes;
}
