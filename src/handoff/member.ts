// One agent of a handoff (a batch moves several; a single send is a batch of one): its plan, its
// journal and the records of what changed for it, and its steps. Agents that share a checkout
// share the records of the work's move (snapshot, refs, placement, marker): each journal holds
// them, and only the last agent of the checkout to fail undoes them.
import type { Journal } from './journal.js';
import type { Plan } from './plan.js';
import type { Progress } from '../progress.js';
import { HandoffRecord } from './records.js';
import { StepRunner, type StepJournal } from './steps.js';

/** The records of the work's move, shared by every agent of the checkout. */
const SHARED_KINDS: ReadonlySet<HandoffRecord['kind']> = new Set(['controller', 'group', 'snapshot', 'refs', 'placement_intent', 'placement', 'marker', 'stash']);

export function isShared(rec: HandoffRecord): boolean {
  return SHARED_KINDS.has(rec.kind) || (rec.kind === 'undone' && rec.what === 'placement');
}

/** What undoes one agent's own part: its quit, session copy, hook trust, workspace. */
export function ownRecords(records: readonly HandoffRecord[]): HandoffRecord[] {
  return records.filter((r) => !isShared(r));
}

/** What undoes the work's move: the placement, the refs, the marker. */
export function sharedRecords(records: readonly HandoffRecord[]): HandoffRecord[] {
  return records.filter(isShared);
}

export class Member {
  readonly records: HandoffRecord[] = [];
  readonly steps: StepRunner;

  constructor(
    readonly plan: Plan,
    readonly journal: Journal,
    progress: Progress,
    signal: AbortSignal,
    /** One of several agents: its progress lines name it. */
    private readonly inBatch: boolean,
  ) {
    this.steps = new StepRunner(journal, progress, signal);
  }

  /** Journaled (fsynced) before the change it names is made. */
  record(rec: HandoffRecord): void {
    this.records.push(HandoffRecord.parse(rec));
    this.journal.record(rec.kind, rec as Record<string, unknown>);
  }

  /** The agent's herdr name, else its pane. */
  get label(): string {
    return this.plan.agent.name ?? this.plan.agent.pane_id;
  }

  /** A progress line of this agent: in a batch, with its name. */
  says(text: string): string {
    return this.inBatch ? `${text} (${this.label})` : text;
  }
}

/** Every member's journal at once: the shared steps begin and end in each. */
export function allJournals(members: readonly Member[]): StepJournal {
  return {
    begin: (step) => members.forEach((m) => m.journal.begin(step)),
    done: (step) => members.forEach((m) => m.journal.done(step)),
  };
}
