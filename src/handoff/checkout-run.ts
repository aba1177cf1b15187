// The agents of one checkout as a handoff moves them: their journals and records, the steps of the
// work's move they share, the work started beside the steps, and how each one ended. Each agent
// fails alone: its own part is undone and it is restarted at the source; the work's move is
// undone only when no agent of the checkout stays moved.
import os from 'node:os';
import { HandoffError } from '../errors.js';
import type { Progress } from '../progress.js';
import type { ExecuteResult } from './execute.js';
import type { Journal } from './journal.js';
import { allJournals, Member, ownRecords, sharedRecords } from './member.js';
import type { Plan } from './plan.js';
import type { HandoffRecord } from './records.js';
import { HandoffFailed, rollback, type RollbackReport } from './rollback.js';
import type { Sides } from './sides.js';
import { SideWork } from './side-work.js';
import { StepRunner } from './steps.js';

/** One agent's end: moved, or not (rolled back and restarted at the source, or never quit). */
export type MemberOutcome = { ok: true; done: ExecuteResult } | { ok: false; error: HandoffError };

export class CheckoutRun {
  readonly members: Member[];
  /** The first agent's plan: its snapshot, placement and id name the work's move. */
  readonly lead: Plan;
  /** The work's move: its steps begin and end in every journal, its records are in each. */
  readonly shared: StepRunner;
  readonly side = new SideWork();
  private readonly ended = new Map<Member, MemberOutcome>();

  constructor(
    plans: readonly { plan: Plan; journal: Journal }[],
    private readonly sides: Sides,
    private readonly progress: Progress,
    signal: AbortSignal,
  ) {
    this.members = plans.map((p) => new Member(p.plan, p.journal, progress, signal, plans.length > 1));
    this.lead = this.members[0]!.plan;
    this.shared = new StepRunner(allJournals(this.members), progress, signal);
    this.recordShared({ kind: 'controller', host: os.hostname(), pid: process.pid });
    if (!this.alone) this.recordShared({ kind: 'group', lead: this.lead.id, members: this.members.map((m) => m.plan.id) });
  }

  get alone(): boolean {
    return this.members.length === 1;
  }

  /** A record of the work's move, in every agent's journal. */
  readonly recordShared = (rec: HandoffRecord): void => this.members.forEach((m) => m.record(rec));

  moved(m: Member, done: ExecuteResult): void {
    this.ended.set(m, { ok: true, done });
  }

  /** The agent did not move and nothing of its own changed (it never quit, or the undo is in `error`). */
  notMoved(m: Member, error: unknown): void {
    this.ended.set(m, { ok: false, error: asHandoffError(error) });
  }

  outcomes(): MemberOutcome[] {
    return this.members.map((m) => this.ended.get(m)!);
  }

  /** The agent's failure after its quit: its own part undone (all of it when alone), restarted at the source. */
  async failMember(m: Member, thrown: unknown): Promise<void> {
    const err = m.steps.firstFailure?.err ?? this.shared.firstFailure?.err ?? thrown;
    const step = m.steps.firstFailure?.step ?? this.shared.firstFailure?.step ?? m.steps.current;
    const cause = asHandoffError(err);
    m.journal.failed(step, { code: cause.code, error: cause.message });
    this.ended.set(m, { ok: false, error: new HandoffFailed(cause, step, await this.undo(m, this.alone ? m.records : ownRecords(m.records), true)) });
  }

  /** The work's move failed (snapshot, transfer, place, stash): every agent that quit goes back, and the move is undone. */
  async failAll(quitted: readonly Member[], thrown: unknown): Promise<void> {
    await Promise.all(quitted.map((m) => this.failMember(m, thrown)));
    if (!this.alone) await this.undoWorkMove();
  }

  /** The work's move undone (placement, refs, marker): no agent of the checkout stays moved. Nothing restarts. */
  undoWorkMove(): Promise<RollbackReport> {
    const first = this.members[0]!;
    return this.undo(first, sharedRecords(first.records), false);
  }

  /** Undo what the records name, journaled, once the work started beside the steps has settled. */
  private async undo(m: Member, records: HandoffRecord[], restart: boolean): Promise<RollbackReport> {
    await this.side.settled(this.lead.opts.timeoutS * 1000);
    const report = await this.progress.step(m.says('rolling back'), () => rollback(this.sides, records, { restart }));
    m.journal.append({ type: 'undone', data: { ...report } });
    return report;
  }
}

function asHandoffError(err: unknown): HandoffError {
  return err instanceof HandoffError ? err : new HandoffError('internal', err instanceof Error ? err.message : String(err));
}
