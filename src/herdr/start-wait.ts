// The wait after `agent.start` on herdr's socket, which answers at once (launch pending): ours,
// as herdr's CLI does it, with one more way to tell a failure. A program that exits before
// herdr saw its process stays "launch pending" to herdr for the whole timeout; here the shell is
// back in the foreground below the typed command, and the start fails within about a second.
import { HerdrError } from './herdr-error.js';
import type { HerdrClient } from './client.js';
import type { AgentInfo } from './schemas.js';

// herdr's readiness is a fixed time from the launch: each poll's wait is added to the agent's
// time offline, so it is short (a poll is one request on herdr's socket).
const POLL_MS = 100;
/** herdr types the command at once; before this the shell owning the pane proves nothing. */
const LOOK_AFTER_MS = 1_000;

/** Poll a launched agent until it is interactive (at a prompt, or at a screen that waits). */
export async function untilInteractive(herdr: HerdrClient, name: string, pane: string, typed: { before: string | null; argv: readonly string[] }, timeoutMs: number): Promise<AgentInfo> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  const exited = () => new HerdrError('agent_start_failed', 'agent process exited before becoming interactive', herdr.host.label);
  let backAtShell = 0;
  for (;;) {
    // The look at the pane rides beside the agent's state (one round trip, not two).
    const looking = typed.before !== null && Date.now() - started > LOOK_AFTER_MS;
    const [got, shellOwns] = await Promise.all([
      herdr.agentGet(name).then(
        (info) => ({ info }),
        (err: unknown) => ({ err }),
      ),
      looking ? shellInForeground(herdr, pane) : Promise.resolve(false),
    ]);
    if ('err' in got) {
      if (got.err instanceof HerdrError && got.err.herdrCode === 'agent_not_found') throw exited();
      throw got.err;
    }
    const info = got.info;
    if (info.interactive_ready === true && ['idle', 'blocked', 'done'].includes(String(info.agent_status))) return info;
    // Waiting at a screen during startup (folder trust): herdr's CLI calls that not ready; the
    // caller reads the screen and answers it.
    if (info.agent_status === 'blocked') return info;
    if (info.launch_pending !== true && info.interactive_ready !== true) throw exited();
    // Twice in a row, so a shell between two programs of a launcher is not taken for the end.
    if (looking) {
      const gone = shellOwns && typedThenMore(typed.before!, typed.argv, await herdr.read(pane, { source: 'visible' }).catch(() => ''));
      backAtShell = gone ? backAtShell + 1 : 0;
      if (backAtShell >= 2) throw exited();
    }
    if (Date.now() >= deadline) throw new HerdrError('timeout', 'timed out waiting for agent startup', herdr.host.label);
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(0, deadline - Date.now()))));
  }
}

/** The pane's shell owns its foreground again (no program of its own running there). */
async function shellInForeground(herdr: HerdrClient, pane: string): Promise<boolean> {
  const info = await herdr.processInfo(pane).catch(() => null);
  return !!info?.shell_pid && info.foreground_process_group_id === info.shell_pid;
}

/**
 * True when `now` is the screen `before` with the command `argv` typed after it and something
 * more below (what the program printed, the shell's next prompt). Whitespace, quotes and
 * backslashes are ignored: the shell echoes the typed, quoted command and the terminal wraps it.
 */
export function typedThenMore(before: string, argv: readonly string[], now: string): boolean {
  const bare = (text: string) => text.replace(/[\s'"\\]+/g, '');
  const head = bare(before) + bare(argv.join(''));
  const shown = bare(now);
  return head !== '' && shown.startsWith(head) && shown.length > head.length;
}
