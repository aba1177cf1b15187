// The connection's long-lived command shells (ssh-shell.ts): a few, each keeping one channel
// slot, handed to one command at a time.
import { randomBytes } from 'node:crypto';
import { killChannel } from './ssh-channel-end.js';
import type { SshLink } from './ssh-link.js';
import { CommandShell, shellLoop } from './ssh-shell.js';

/**
 * Each shell keeps one channel slot for the life of the connection; the rest stay for SFTP (one
 * for good) and for streams and parallel commands (at least one), so fewer where sshd allows few.
 */
const MAX_SHELLS = 3;

export class ShellPool {
  private readonly shells: CommandShell[] = [];
  private opening = 0;
  private readonly mark = `AHSH${randomBytes(8).toString('hex')}`;

  constructor(private readonly link: SshLink) {}

  /** An idle command shell, now taken; null when none is open and idle. */
  take(): CommandShell | null {
    const idle = this.shells.find((s) => !s.busy && !s.dead);
    if (idle) idle.busy = true;
    return idle ?? null;
  }

  /**
   * Open one more shell when there is room, for the commands to come: a command does not wait
   * for it (on its own exec channel, which carries its header, it is answered a round trip sooner
   * than on a shell still opening). Failures surface as the shell's absence.
   */
  openBeside(): void {
    const most = Math.max(1, Math.min(MAX_SHELLS, this.link.channelLimit - 2));
    if (this.shells.length + this.opening >= most || this.link.lost) return;
    this.opening++;
    this.link
      .openExec(shellLoop(this.mark))
      .then((ch) => {
        this.link.counts.commands--; // the shell itself is not a command; its commands are counted
        // TERM, not KILL: sshd signals the whole group (the loop and its command), and the loop
        // then removes its private folder on its way out (a KILL left it there, with the last output).
        const shell = new CommandShell(ch, this.mark, this.link.label, (c) => killChannel(c, 'TERM'));
        this.shells.push(shell);
        this.link.onLost.add((e) => shell.fail(e));
      })
      .catch(() => undefined)
      .finally(() => this.opening--);
  }

  release(shell: CommandShell): void {
    shell.busy = false;
    if (shell.dead) this.shells.splice(this.shells.indexOf(shell) >>> 0, 1);
  }

  closeAll(): void {
    for (const shell of this.shells) shell.close();
  }
}
