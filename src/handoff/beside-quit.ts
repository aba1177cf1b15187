// What a handoff does beside its agents' quit, as one step: the work as planned sent and placed on
// the target (a quitting agent seldom changes its files), each agent's pane opened where it was
// placed, and the read-only asks the session copies and starts will need. Begun by the first
// agent's quit, once that is journaled. The snapshot taken after the quits decides whether it
// stands: the same work keeps it; other work has it undone and is sent and placed instead.
import os from 'node:os';
import { sameWork, type Snapshot } from '../git/snapshot.js';
import { presentObjects } from '../git/transfer.js';
import type { CheckoutRun } from './checkout-run.js';
import { placementIntent } from './intents.js';
import { hostStateDir, markerPath, markerWrite } from './marker.js';
import type { Member } from './member.js';
import { readsForStart, seatAgent, unseat, type Seat, type StartReads, type TargetDesk } from './member-steps.js';
import { placeWork, sendAndPlace, sendWork, type Moved, type WorkMove } from './send-and-place.js';
import type { Sides } from './sides.js';

export class BesideTheQuit {
  /** The work's move as every step of it needs it (after the quits too, should other work go). */
  readonly move: WorkMove;
  /** The incoming marker on the target: it goes first (the transfer's own program writes it). */
  readonly markerFile: string;
  private readonly reads: Map<Member, StartReads>;
  private placing: Promise<Moved> | null = null;
  private seating: Promise<Map<Member, Seat>> | null = null;
  private markerWriting: Promise<unknown> | null = null;
  private dropped = false;

  constructor(
    private readonly run: CheckoutRun,
    private readonly sides: Sides,
    private readonly quitters: readonly Member[],
    private readonly desk: TargetDesk,
    /** An agent's quit, settled (on the same herdr its name is freed by it). */
    private readonly quitted: (m: Member) => Promise<unknown>,
  ) {
    const { lead, side } = run;
    const { source, target } = sides;
    this.markerFile = markerPath(hostStateDir(target.info), lead.id);
    // Read-only, independent of the snapshot: asked as the quits begin. What the plan read of the
    // target checkout moments ago places the work, and its refs' commits that the source has too
    // are what the pack need not carry.
    this.move = {
      plan: lead,
      sides,
      steps: run.shared,
      record: run.recordShared,
      markerWritten: () => this.markerWriting ?? Promise.resolve(),
      commonTips: side.add(presentObjects(source.host, lead.snapshot.repoRoot, lead.placementRead.refs.all)),
      plannedIntent: side.add(placementIntent(target.host, lead.placement, lead.placementRead)),
    };
    this.reads = new Map(quitters.map((m) => [m, readsForStart(m, sides, side)]));
  }

  /** What the agent's session copy and start read, asked beside the quit. */
  readsOf(m: Member): StartReads {
    return this.reads.get(m)!;
  }

  /** The work as planned, sent and placed, and the panes opened there once it is (at most once). */
  begin(): Promise<Moved> {
    if (!this.placing) {
      this.placing = this.sendAndPlacePlanned();
      this.seating = this.run.side.add(this.placing.then((w) => (this.dropped ? new Map<Member, Seat>() : this.seat(this.quitters, w.placement))));
    }
    return this.placing;
  }

  /** Nothing more is opened for what went beside the quit (no agent quit, or the work's move failed). */
  drop(): void {
    this.dropped = true;
  }

  /**
   * The work on the target for the snapshot taken after the quits, and the panes there: those made
   * beside the quit when it is the same work; else that placement undone, folder and all (its
   * panes closed first), this work sent and placed, and the panes opened again under the names
   * chosen.
   */
  async workFor(snap: Snapshot, movers: readonly Member[]): Promise<{ work: Moved; seats: Map<Member, Seat> }> {
    const planned = await this.begin();
    const seats = await this.seating!;
    if (sameWork(snap, this.run.lead.snapshot)) return { work: planned, seats };
    await Promise.all(movers.map((m) => unseat(m, this.sides, seats.get(m)!)));
    const work = await sendAndPlace(this.move, snap, { replacing: planned.placement });
    return { work, seats: this.seat(movers, work.placement, seats) };
  }

  /**
   * Close the panes opened for these agents (best effort: they did not quit, nothing else of
   * theirs changed). With none, nothing waits for the placement.
   */
  async closeSeats(who: readonly Member[]): Promise<void> {
    if (who.length === 0) return;
    const seats = await this.seating?.catch(() => null);
    await Promise.all(
      who.map(async (m) => {
        const seat = seats?.get(m);
        if (seat) await unseat(m, this.sides, seat).catch(() => undefined);
      }),
    );
  }

  /** Each agent's pane and name on the target, where the work was placed; a rollback waits for them (the pane is then recorded, and closed). */
  private seat(who: readonly Member[], placed: Moved['placement'], names?: Map<Member, Seat>): Map<Member, Seat> {
    const { side } = this.run;
    return new Map(
      who.map((m) => {
        const seat = seatAgent(m, this.sides, placed, this.desk, this.quitted(m), names?.get(m)?.name);
        return [m, { pane: side.add(seat.pane), name: side.add(seat.name), screenBefore: side.add(seat.screenBefore) }] as const;
      }),
    );
  }

  /** The marker, the lead's snapshot sent, and placed from what the plan read of the target (for the branch it planned with). */
  private sendAndPlacePlanned(): Promise<Moved> {
    const { lead, side, members } = this.run;
    const { source, target } = this.sides;
    // The target may hold something of this handoff from the transfer on: the marker is recorded
    // first and written by the transfer's own program, before its pack and refs.
    this.run.recordShared({ kind: 'marker', path: this.markerFile });
    const marker = markerWrite(hostStateDir(target.info), {
      id: lead.id,
      controller: os.hostname(),
      pid: process.pid,
      // Read on the target, where the controller's ssh aliases mean nothing: the addresses.
      from: source.host.address,
      to: target.host.address,
      agent: members.map((m) => m.label).join(', '),
      kind: lead.kind,
      started: new Date().toISOString(),
      repo: lead.placement.repo,
      branch: lead.placement.branch,
      worktree: lead.placement.worktree,
    });
    const sending = side.add(sendWork(this.move, lead.snapshot, marker));
    this.markerWriting = sending;
    return side.add(placeWork(this.move, lead.snapshot, sending, { read: lead.placementRead }));
  }
}
