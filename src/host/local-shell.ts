// Command shells on this machine: the same sh loop the ssh side keeps open (ssh-shell.ts), run by
// a local /bin/sh. Node forks its whole (large) process for every program it starts — about
// 12 ms of its main thread here, while a handoff's handshake and plan wait on that thread — and a
// handoff starts a few dozen small programs locally. A loop that is already running forks only
// itself, a small sh. Up to MAX_SHELLS at once; the caller runs a command itself when all are busy.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { HostError } from '../errors.js';
import { CommandShell, shellLoop, type ShellChannel, type ShellOutcome } from './ssh-shell.js';

const MAX_SHELLS = 3;
/** A loop idle this long ends (a host nobody closes leaves no shells behind for long). */
const IDLE_MS = 5_000;

interface LocalShell {
  shell: CommandShell;
  child: ChildProcessWithoutNullStreams;
  idle?: NodeJS.Timeout;
}

/** The child's stdio as the loop's channel. */
function channelOf(child: ChildProcessWithoutNullStreams): ShellChannel {
  return {
    on(event: 'data' | 'error' | 'close', listener: (chunk: Buffer) => void) {
      if (event === 'data') child.stdout.on('data', listener);
      else if (event === 'close') child.once('close', () => (listener as () => void)());
      else child.once('error', () => (listener as () => void)());
      return this;
    },
    write: (text: string) => child.stdin.write(text),
    end: () => child.stdin.end(),
    stderr: child.stderr,
  };
}

/** A pipe's hold on the event loop (node's stdio sockets have ref/unref; the stream types omit them). */
function hold(stream: unknown, on: boolean): void {
  const h = stream as { ref?: () => void; unref?: () => void };
  if (on) h.ref?.();
  else h.unref?.();
}

/** A process group's end (the loop and whatever it runs). */
function killGroup(child: ChildProcessWithoutNullStreams): void {
  try {
    if (child.pid) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export class LocalShells {
  private readonly shells: LocalShell[] = [];
  private closed = false;
  private readonly mark = `AHSH${randomBytes(8).toString('hex')}`;

  /** `env`: the environment every command starts from (each header adds its own). */
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  /**
   * Run one command header on an idle shell; null when every shell is busy (or none can start):
   * the caller then starts the program itself.
   */
  async run(header: string, stdin: Buffer | undefined, timeoutMs: number, what: string): Promise<ShellOutcome | null> {
    const taken = this.take();
    if (!taken) return null;
    // Only a command in flight keeps this process alive (an idle loop never does).
    hold(taken.child.stdout, true);
    try {
      return await taken.shell.run(header, stdin, timeoutMs, what);
    } finally {
      hold(taken.child.stdout, false);
      taken.shell.busy = false;
      if (taken.shell.dead) this.retire(taken);
      else this.endWhenIdle(taken);
    }
  }

  private endWhenIdle(entry: LocalShell): void {
    clearTimeout(entry.idle);
    entry.idle = setTimeout(() => {
      if (entry.shell.busy) return;
      const i = this.shells.indexOf(entry);
      if (i >= 0) this.shells.splice(i, 1);
      entry.shell.close();
    }, IDLE_MS);
    entry.idle.unref();
  }

  private take(): LocalShell | null {
    if (this.closed) return null;
    const idle = this.shells.find((s) => !s.shell.busy && !s.shell.dead);
    const got = idle ?? (this.shells.length < MAX_SHELLS ? this.open() : null);
    if (got) {
      got.shell.busy = true;
      clearTimeout(got.idle);
    }
    return got;
  }

  private open(): LocalShell | null {
    let child: ChildProcessWithoutNullStreams;
    try {
      // A process group of its own, so a command that times out ends with everything it started.
      child = spawn('/bin/sh', ['-c', shellLoop(this.mark)], { env: this.env, stdio: 'pipe', detached: true });
    } catch {
      return null;
    }
    const entry: LocalShell = { child, shell: new CommandShell(channelOf(child), this.mark, 'local', () => killGroup(child)) };
    child.on('error', () => entry.shell.fail(new HostError('channel_failed', 'A local command shell could not start.')));
    child.stdin.on('error', () => undefined);
    child.unref();
    hold(child.stdout, false);
    hold(child.stderr, false);
    this.shells.push(entry);
    return entry;
  }

  private retire(entry: LocalShell): void {
    const i = this.shells.indexOf(entry);
    if (i >= 0) this.shells.splice(i, 1);
    killGroup(entry.child);
  }

  /** End every loop (its input closes; the loop removes its private folder and exits). */
  close(): void {
    this.closed = true;
    for (const s of this.shells) {
      clearTimeout(s.idle);
      s.shell.close();
    }
    this.shells.length = 0;
  }
}
