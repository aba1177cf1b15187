// Work a handoff starts beside its steps (reads, checks, panes, the stash commit), kept until it
// settles: a rollback waits for it first, since a check still running git in a worktree being
// removed makes the removal fail.
import { quiet } from '../quiet.js';

export class SideWork {
  private readonly running: Promise<unknown>[] = [];

  /** `p`, kept until it settles. Its failure is for whoever awaits it: none goes unhandled here. */
  readonly add = <T>(p: Promise<T>): Promise<T> => {
    this.running.push(p);
    return quiet(p);
  };

  /**
   * Until all of it has settled, and the work it started as it settled (the panes opened once the
   * work is placed): each round bounded by `ms`, since a read on a connection that hangs must not
   * hold a rollback for ever.
   */
  async settled(ms: number): Promise<void> {
    for (let seen = -1; seen !== this.running.length; ) {
      seen = this.running.length;
      await settledWithin([...this.running], ms);
    }
  }
}

/** Waits for every promise to settle, or for `ms`, whichever comes first (the timer never holds the process). */
async function settledWithin(promises: Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  await Promise.race([Promise.allSettled(promises), timeUp]);
  clearTimeout(timer);
}
