// The steps of a handoff after its plan: each journaled as it begins and ends, shown as progress,
// with the test hooks at its boundaries. Steps may run side by side (the transfer and place beside
// the quit, the session copy beside the snapshot): the first one to fail is the one reported, and
// no further step begins after it.
import { HandoffError } from '../errors.js';
import type { Progress } from '../progress.js';
import { armTimedKill, failInjected, killPoint, pausePoint } from './test-hooks.js';

/** Where a step's beginning and end are journaled (one journal, or every agent's of a checkout). */
export interface StepJournal {
  begin(step: string): void;
  done(step: string): void;
}

export class StepRunner {
  /** The step begun last. */
  current = 'quit';
  /** The first step that failed, and how. */
  firstFailure: { step: string; err: unknown } | null = null;

  constructor(
    private readonly journal: StepJournal,
    private readonly progress: Progress,
    private readonly signal: AbortSignal,
  ) {}

  async run<T>(name: string, label: string, fn: () => Promise<T>): Promise<T> {
    if (this.firstFailure) throw this.firstFailure.err;
    if (this.signal.aborted) throw new HandoffError('interrupted', `The handoff was interrupted (${String(this.signal.reason ?? 'signal')}) before ${name}.`, { fix: 'Run it again when ready.' });
    this.current = name;
    killPoint(name, 'before');
    armTimedKill(name);
    this.journal.begin(name);
    await pausePoint(name);
    let out: T;
    try {
      out = await this.progress.step(label, async () => {
        failInjected(name);
        return fn();
      });
    } catch (err) {
      this.firstFailure ??= { step: name, err };
      throw err;
    }
    this.journal.done(name);
    killPoint(name, 'after');
    return out;
  }
}
