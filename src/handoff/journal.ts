// The handoff journal: an append-only, fsynced record on the controller, written before each step
// acts and after it completes, holding what is needed to finish or undo the handoff. If the
// controller dies mid-handoff (lid closed, SIGKILL), `recover` reads it back.
//
// One file per handoff: <stateDir>/handoffs/<id>.jsonl, mode 0600, one JSON event per line.
// It holds paths, ids and commit hashes — never secrets (no keys, no environment dumps).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

export const JournalEvent = z.object({
  t: z.string(),
  /** header: the plan; begin/done/failed: a step; record: an undo/redo fact; undone; outcome. */
  type: z.enum(['header', 'begin', 'done', 'failed', 'record', 'undone', 'outcome']),
  step: z.string().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type JournalEvent = z.infer<typeof JournalEvent>;

/** rollback_incomplete: a rollback that could not undo everything (the target was unreachable); `recover` retries it. */
export type Outcome = 'succeeded' | 'rolled_back' | 'rollback_incomplete' | 'failed' | 'recovered' | 'dry_run';
export type Summarised = Outcome | 'unfinished';

/** `$XDG_STATE_HOME/agent-handoff`, default `~/.local/state/agent-handoff`. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_STATE_HOME || path.join(env.HOME || os.homedir(), '.local', 'state');
  return path.join(base, 'agent-handoff');
}

export class Journal {
  private constructor(
    readonly id: string,
    readonly file: string,
  ) {}

  static create(dir: string, id: string, header: Record<string, unknown>): Journal {
    const folder = path.join(dir, 'handoffs');
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    const file = path.join(folder, `${id}.jsonl`);
    // 'wx': two handoffs can never share a journal.
    fs.closeSync(fs.openSync(file, 'wx', 0o600));
    const j = new Journal(id, file);
    j.append({ type: 'header', data: header });
    return j;
  }

  static open(dir: string, id: string): Journal {
    const file = path.join(dir, 'handoffs', `${id}.jsonl`);
    if (!fs.existsSync(file)) throw new Error(`no journal for handoff ${id}`);
    return new Journal(id, file);
  }

  /** Append one event and fsync it before returning: the event survives a crash right after. */
  append(event: Omit<JournalEvent, 't'>): void {
    const line = JSON.stringify({ t: new Date().toISOString(), ...event }) + '\n';
    const fd = fs.openSync(this.file, 'a+', 0o600);
    try {
      // A crash mid-write leaves a torn last line; start on a fresh line so this event stays whole.
      const size = fs.fstatSync(fd).size;
      const last = Buffer.alloc(1);
      const torn = size > 0 && fs.readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
      fs.writeSync(fd, torn ? '\n' + line : line);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  begin(step: string, data?: Record<string, unknown>): void {
    this.append({ type: 'begin', step, ...(data ? { data } : {}) });
  }

  done(step: string, data?: Record<string, unknown>): void {
    this.append({ type: 'done', step, ...(data ? { data } : {}) });
  }

  failed(step: string, data?: Record<string, unknown>): void {
    this.append({ type: 'failed', step, ...(data ? { data } : {}) });
  }

  record(step: string, data: Record<string, unknown>): void {
    this.append({ type: 'record', step, data });
  }

  outcome(outcome: Outcome, data: Record<string, unknown> = {}): void {
    this.append({ type: 'outcome', data: { outcome, ...data } });
  }

  /** Every event; a torn last line (crash mid-write) is ignored. */
  events(): JournalEvent[] {
    return readEvents(this.file);
  }
}

function readEvents(file: string): JournalEvent[] {
  return eventsOf(fs.readFileSync(file, 'utf8'));
}

function eventsOf(text: string): JournalEvent[] {
  const out: JournalEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const parsed = JournalEvent.safeParse(JSON.parse(line));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // torn write
    }
  }
  return out;
}

export interface JournalSummary {
  id: string;
  /** The batch this handoff was one agent of (`send a b TARGET`, --all, --workspace), or null. */
  batch: string | null;
  time: string;
  agent: string | null;
  kind: string | null;
  from: string | null;
  to: string | null;
  outcome: Summarised;
  /** The last step that began. */
  step: string | null;
  /** The step that failed, when one did. */
  failed_step: string | null;
  error: string | null;
}

export function summarise(id: string, events: JournalEvent[]): JournalSummary {
  const header = events.find((e) => e.type === 'header')?.data ?? {};
  const reversed = [...events].reverse();
  const outcome = reversed.find((e) => e.type === 'outcome')?.data?.outcome as Outcome | undefined;
  const lastBegin = reversed.find((e) => e.type === 'begin');
  const failed = reversed.find((e) => e.type === 'failed');
  const lastUndone = reversed.find((e) => e.type === 'undone');
  const undoErrors = Array.isArray(lastUndone?.data?.errors) ? lastUndone.data.errors.length : 0;
  const s = (v: unknown) => (typeof v === 'string' ? v : null);
  // Journals written before the outcome said so recorded such a rollback as rolled_back or failed.
  const incomplete = undoErrors > 0 && outcome !== undefined && outcome !== 'recovered' && outcome !== 'succeeded';
  return {
    id,
    batch: s(header.batch),
    time: events[0]?.t ?? '',
    agent: s(header.agent),
    kind: s(header.kind),
    from: s(header.from),
    to: s(header.to),
    outcome: incomplete ? 'rollback_incomplete' : (outcome ?? 'unfinished'),
    step: lastBegin?.step ?? null,
    failed_step: failed?.step ?? null,
    error: s(failed?.data?.error),
  };
}

/** Outcomes that end a handoff whatever else its journal holds (no rollback left to finish). */
const SETTLED: ReadonlySet<string> = new Set<Outcome>(['succeeded', 'recovered', 'dry_run']);

/**
 * The ids of journals that may need `recover` (unfinished, or a rollback that could not finish),
 * newest first. A journal whose last outcome settles it is passed over on its last outcome line
 * alone: `send` asks this before every handoff, and the history only grows.
 */
export function listUnsettled(dir: string): string[] {
  return summariesIn(dir, settledByLastOutcome)
    .filter((s) => s.outcome === 'unfinished' || s.outcome === 'rollback_incomplete')
    .map((s) => s.id);
}

/** The journal's last outcome event is a settling one (see SETTLED). */
function settledByLastOutcome(text: string): boolean {
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.includes('"outcome"')) continue;
    try {
      const e = JSON.parse(line) as { type?: unknown; data?: { outcome?: unknown } };
      if (e.type === 'outcome') return typeof e.data?.outcome === 'string' && SETTLED.has(e.data.outcome);
    } catch {
      // torn write
    }
  }
  return false;
}

/** Every journal in the state dir, newest first. */
export function listJournals(dir: string): JournalSummary[] {
  return summariesIn(dir);
}

/** The summaries of the state dir's journals, newest first, but those `passOver` (given the text) skips. */
function summariesIn(dir: string, passOver: (text: string) => boolean = () => false): JournalSummary[] {
  const folder = path.join(dir, 'handoffs');
  if (!fs.existsSync(folder)) return [];
  const out: JournalSummary[] = [];
  for (const f of fs.readdirSync(folder)) {
    if (!f.endsWith('.jsonl')) continue;
    const text = fs.readFileSync(path.join(folder, f), 'utf8');
    if (!passOver(text)) out.push(summarise(f.slice(0, -'.jsonl'.length), eventsOf(text)));
  }
  return out.sort((a, b) => b.time.localeCompare(a.time));
}

/**
 * The handoffs an id names: the one journal of that id, else the one a prefix names, else every
 * agent of the batch a prefix names (its members' ids begin with the batch id).
 */
export function handoffsNamed(summaries: readonly JournalSummary[], asked: string): { ids: string[]; batch: string | null } {
  const exact = summaries.find((h) => h.id === asked);
  if (exact) return { ids: [exact.id], batch: null };
  const match = summaries.filter((h) => h.id.startsWith(asked));
  const batches = new Set(match.map((h) => h.batch));
  if (match.length > 1 && batches.size === 1) {
    const [batch] = batches;
    if (batch) return { ids: match.map((h) => h.id).sort(), batch };
  }
  return { ids: match.map((h) => h.id), batch: null };
}

/** The one handoff id generator (src/handoff-id.ts), re-exported where journals are made. */
export { newHandoffId } from '../handoff-id.js';
