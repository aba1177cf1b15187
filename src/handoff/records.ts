// What a handoff changed, as journal records: enough to undo it exactly (rollback) or to finish
// it (recover), even from another process after a crash. Parsed with zod when read back.
import { z } from 'zod';
import { PlacementRecordSchema } from '../git/place.js';
import { PlacementIntentSchema, SessionIntentSchema } from './intents.js';

/** src/transcript/copy.ts `CopyRecord`: what the session copy wrote (undoCopy reverses it). */
export const CopyRecordSchema = z.object({
  targetRoot: z.string(),
  files: z.array(
    z.object({
      path: z.string(),
      action: z.enum(['created', 'appended', 'unchanged', 'replaced', 'overwritten']),
      sha256: z.string(),
      size: z.number(),
      verbatim: z.boolean(),
      previous: z.object({ size: z.number(), mode: z.number(), mtimeMs: z.number() }).nullable(),
      backup: z.string().nullable(),
      replacements: z.number(),
      source: z.object({ path: z.string(), sha256: z.string(), size: z.number(), mtimeMs: z.number() }).optional(),
      content: z.object({ size: z.number(), sha256: z.string(), headLength: z.number(), restSha256: z.string(), endsWithNewline: z.boolean() }).optional(),
      sent: z.number().optional(),
    }),
  ),
  createdDirs: z.array(z.string()),
});

export const HandoffRecord = z.discriminatedUnion('kind', [
  /** Who runs the handoff: `recover` leaves a journal alone while that process lives. */
  z.object({ kind: z.literal('controller'), host: z.string(), pid: z.number().int() }),
  /** Agents of one checkout moved together (a batch): one snapshot, placement and stash, undone by the lead only when none of them stays moved. */
  z.object({ kind: z.literal('group'), lead: z.string(), members: z.array(z.string()) }),
  /** The agent was quit at the source; restart it there with this argv on failure. */
  z.object({ kind: z.literal('quit'), pane: z.string(), name: z.string().nullable(), agentKind: z.string(), restartArgs: z.array(z.string()) }),
  z.object({ kind: z.literal('snapshot'), head: z.string(), wip: z.string().nullable(), fingerprint: z.string(), repo: z.string() }),
  z.object({ kind: z.literal('refs'), targetRepo: z.string(), id: z.string() }),
  /** Journaled before `place` acts: what it will create (the record comes only at its end). */
  PlacementIntentSchema,
  z.object({ kind: z.literal('placement'), record: PlacementRecordSchema }),
  /** Journaled before the session copy: the files it will write and what was there. */
  SessionIntentSchema,
  z.object({ kind: z.literal('session_copy'), record: CopyRecordSchema }),
  /**
   * The newest placement, session copy or seat (the agent's pane: pane_intent and workspace)
   * before this was undone already (another replaces it).
   */
  z.object({ kind: z.literal('undone'), what: z.enum(['placement', 'session_copy', 'seat']) }),
  z.object({ kind: z.literal('integration'), target: z.string() }),
  /** Journaled before it is written: the trust of herdr's hook on the target (adapters/hook-trust.ts), undone line for line. */
  z.object({ kind: z.literal('hook_trust'), agentKind: z.string(), file: z.string(), lines: z.array(z.string()), tag: z.string() }),
  /**
   * Journaled before herdr is asked for the agent's pane: one made but not yet recorded (the
   * controller died meanwhile) is found by its folder and label, and closed.
   */
  z.object({ kind: z.literal('pane_intent'), cwd: z.string(), label: z.string(), split: z.boolean() }),
  z.object({ kind: z.literal('workspace'), workspace: z.string(), pane: z.string() }),
  z.object({ kind: z.literal('agent'), name: z.string(), pane: z.string() }),
  z.object({ kind: z.literal('marker'), path: z.string() }),
  /** Journaled before the target's record of the started agent (started-agents.ts) is written, as the agent starts. */
  z.object({ kind: z.literal('started_record'), path: z.string(), handoff: z.string() }),
  z.object({ kind: z.literal('stash'), stashed: z.boolean(), stash: z.string().nullable() }),
]);
export type HandoffRecord = z.infer<typeof HandoffRecord>;
