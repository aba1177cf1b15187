// The wait after `agent.start` on herdr's socket, which answers at once (launch pending): ours,
// as herdr's CLI does it, with one more way to tell a failure. A program that exits before
// herdr saw its process stays "launch pending" to herdr for the whole timeout; here the shell is
// back in the foreground below the typed command, and the start fails within about a second.
import { HerdrError } from './herdr-error.js';
import type { HerdrClient } from './client.js';
import type { AgentInfo, PaneProcessInfo } from './schemas.js';
import type { StartWatch } from './start-watch.js';

// herdr's readiness is a fixed time from the launch: each poll's wait is added to the agent's
// time offline, so it is short (a poll is one request on herdr's socket).
const POLL_MS = 100;
/** herdr types the command at once; before this the shell owning the pane proves nothing. */
const LOOK_AFTER_MS = 1_000;

/** One look at a launched agent: herdr's answer about it, and whether the pane's shell owns its foreground again. */
export interface StartRound {
  got: { info: AgentInfo } | { err: unknown };
  shellOwns: boolean;
  /** A program of its own holds the pane's foreground (the agent, not its shell); null: not looked at this round. */
  running: boolean | null;
  /** The pane's visible screen when the look brought it (a watch does when herdr's answer changed), else null. */
  screen: string | null;
}

/** The agent interactive, and its pane's screen as the look that found it so brought it (null: not brought). */
export interface Interactive {
  info: AgentInfo;
  screen: string | null;
  /** Whether the agent's program held the pane's foreground in the look that found it ready (null: not looked at). */
  running: boolean | null;
}

/** Where the looks come from: polls from here, or a watch on the agent's host (start-watch.ts). */
export interface StartRounds {
  /** The next look; `looking`: whether the pane's processes count yet. */
  next(looking: boolean): Promise<StartRound>;
  stop(): void;
}

/** Looks polled from here, one request each on herdr's socket (or its CLI). */
export function polledRounds(herdr: HerdrClient, name: string, pane: string): StartRounds {
  let first = true;
  return {
    async next(looking) {
      if (!first) await new Promise((r) => setTimeout(r, POLL_MS));
      first = false;
      // The look at the pane rides beside the agent's state (one round trip, not two).
      const [got, processes] = await Promise.all([
        herdr.agentGet(name).then(
          (info) => ({ info }),
          (err: unknown) => ({ err }),
        ),
        looking ? herdr.processInfo(pane).catch(() => null) : Promise.resolve(null),
      ]);
      return { got, shellOwns: !!processes && shellOwnsForeground(processes), running: processes && programOwnsForeground(processes), screen: null };
    },
    stop: () => undefined,
  };
}

/**
 * Looks from a watch running on the agent's host (its rounds come as herdr answers there). A
 * watch that cannot do its job — it ends before its first round (a host without mktemp, say), or
 * its first answer is not herdr's own (the CLI would not run there) — gives way to `otherwise`.
 */
export function watchedRounds(watch: StartWatch, otherwise: () => StartRounds): StartRounds {
  let rounds = 0;
  let fallback: StartRounds | null = null;
  const giveWay = (looking: boolean): Promise<StartRound> => {
    watch.stop();
    fallback = otherwise();
    return fallback.next(looking);
  };
  return {
    async next(looking) {
      if (fallback) return fallback.next(looking);
      let round;
      try {
        round = await watch.next();
      } catch (err) {
        if (rounds > 0 || (err instanceof HerdrError && err.herdrCode === 'timeout')) throw err;
        return giveWay(looking);
      }
      if (rounds++ === 0 && 'err' in round.agent && !isHerdrsAnswer(round.agent.err)) return giveWay(looking);
      const { processes } = round;
      return { got: round.agent, shellOwns: looking && !!processes && shellOwnsForeground(processes), running: processes && programOwnsForeground(processes), screen: round.screen };
    },
    stop: () => {
      watch.stop();
      fallback?.stop();
    },
  };
}

/** Follow a launched agent until it is interactive (at a prompt, or at a screen that waits). */
export async function untilInteractive(herdr: HerdrClient, rounds: StartRounds, name: string, pane: string, typed: { before: string | null; argv: readonly string[] }, timeoutMs: number): Promise<Interactive> {
  try {
    return await follow(herdr, rounds, name, pane, typed, timeoutMs);
  } finally {
    rounds.stop();
  }
}

async function follow(herdr: HerdrClient, rounds: StartRounds, name: string, pane: string, typed: { before: string | null; argv: readonly string[] }, timeoutMs: number): Promise<Interactive> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  const exited = () => new HerdrError('agent_start_failed', 'agent process exited before becoming interactive', herdr.host.label);
  let backAtShell = 0;
  for (;;) {
    const looking = typed.before !== null && Date.now() - started > LOOK_AFTER_MS;
    const { got, shellOwns, running, screen } = await rounds.next(looking);
    if ('err' in got) {
      if (got.err instanceof HerdrError && got.err.herdrCode === 'agent_not_found') throw exited();
      throw got.err;
    }
    const info = got.info;
    if (info.interactive_ready === true && ['idle', 'blocked', 'done'].includes(String(info.agent_status))) return { info, screen, running };
    // Waiting at a screen during startup (folder trust): herdr's CLI calls that not ready; the
    // caller reads the screen and answers it.
    if (info.agent_status === 'blocked') return { info, screen, running };
    if (info.launch_pending !== true && info.interactive_ready !== true) throw exited();
    // Twice in a row, so a shell between two programs of a launcher is not taken for the end.
    if (looking) {
      const gone = shellOwns && typedThenMore(typed.before!, typed.argv, await herdr.read(pane, { source: 'visible' }).catch(() => ''));
      backAtShell = gone ? backAtShell + 1 : 0;
      if (backAtShell >= 2) throw exited();
    }
    if (Date.now() >= deadline) throw new HerdrError('timeout', 'timed out waiting for agent startup', herdr.host.label);
  }
}

/** An error herdr itself answered (its envelope), not a CLI that failed to run or spoke no JSON. */
function isHerdrsAnswer(err: unknown): boolean {
  return err instanceof HerdrError && !['herdr_failed', 'herdr_usage', 'herdr_bad_output', 'herdr_not_installed'].includes(err.herdrCode);
}

/** The pane's shell owns its foreground again (no program of its own running there). */
function shellOwnsForeground(info: PaneProcessInfo): boolean {
  return !!info.shell_pid && info.foreground_process_group_id === info.shell_pid;
}

/** A program other than the pane's shell owns its foreground. */
function programOwnsForeground(info: PaneProcessInfo): boolean {
  return !!info.shell_pid && !!info.foreground_process_group_id && info.foreground_process_group_id !== info.shell_pid;
}

/**
 * True when `now` is the screen `before`, then the command `argv` typed, then something more
 * (what the program printed, the shell's next prompt). Between the two there may be the prompt
 * itself: on a busy machine the screen read before the start can be blank, or half a prompt,
 * when herdr already takes the pane (its shell in the foreground, still starting up). The last
 * copy of the command counts: the terminal echoes what was typed before the prompt, and the
 * shell shows it again after it.
 * Whitespace, quotes and backslashes are ignored: the shell echoes the typed, quoted command and
 * the terminal wraps it.
 */
export function typedThenMore(before: string, argv: readonly string[], now: string): boolean {
  const bare = (text: string) => text.replace(/[\s'"\\]+/g, '');
  const seen = bare(before);
  const command = bare(argv.join(''));
  const shown = bare(now);
  if (command === '' || !shown.startsWith(seen)) return false;
  const at = shown.lastIndexOf(command);
  return at >= seen.length && shown.length > at + command.length;
}
