// A private tmux server owned by one world user, for driving a real agent CLI in a real terminal.
// The server is started as that user with the clean login-like environment of `userEnv`, so no
// variable of the test process (API keys, proxies) reaches the agent. Arguments go to tmux as an
// argv (and `new-window` gets the program as several words, which tmux execs without a shell).
import { runAsSync, type WorldUser } from '../world/machines.js';

export class UserTmux {
  private serverPid: number | null = null;

  constructor(
    readonly user: WorldUser,
    /** Socket path (in a folder the user owns). */
    readonly socket: string,
    readonly session = 'ah',
  ) {}

  tmux(args: string[]): string {
    const r = runAsSync(this.user, ['tmux', '-S', this.socket, ...args], { env: { TERM: 'xterm-256color' } });
    if (r.status !== 0) throw new Error(`tmux ${args.join(' ')} as ${this.user.name} failed (${r.status}): ${r.stderr || r.error?.message}`);
    return r.stdout;
  }

  /** Start the server with an idle window; keep dead panes so an exit status can be read. */
  start(): void {
    this.tmux(['new-session', '-d', '-s', this.session, '-n', 'idle', '-x', '160', '-y', '45']);
    this.serverPid = Number(this.tmux(['display-message', '-p', '-t', this.session, '#{pid}']).trim()) || null;
    this.tmux(['set-option', '-g', 'remain-on-exit', 'on']);
    // pi warns without extended keys; focus events are harmless for the rest.
    this.tmux(['set-option', '-g', 'extended-keys', 'on']);
    this.tmux(['set-option', '-g', 'focus-events', 'on']);
  }

  /**
   * A window running `argv` in `cwd` with extra environment variables. A small `sh` (arguments
   * positional, never parsed) waits for the program and writes its exit status to `statusFile`:
   * tmux here sometimes misses the SIGCHLD of a pane's process, leaving it a zombie and the pane's
   * status unknown, whereas the wrapper's blocking wait always sees it.
   */
  run(name: string, cwd: string, env: Record<string, string>, argv: string[], statusFile: string): void {
    const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const wrapped = ['/bin/sh', '-c', 'f=$1; shift; "$@"; echo $? > "$f"', 'sh', statusFile, ...argv];
    this.tmux(['new-window', '-d', '-t', this.session, '-n', name, '-c', cwd, ...envArgs, '--', ...wrapped]);
  }

  /** The pane's text, scrollback included, wrapped lines joined. */
  capture(name: string): string {
    return this.tmux(['capture-pane', '-p', '-J', '-S', '-', '-t', `${this.session}:${name}`]);
  }

  /** Type text literally, pause (pi's editor and slash menu settle), then press Enter. */
  async type(name: string, text: string, pauseMs = 500): Promise<void> {
    this.tmux(['send-keys', '-t', `${this.session}:${name}`, '-l', '--', text]);
    await new Promise((r) => setTimeout(r, pauseMs));
    this.tmux(['send-keys', '-t', `${this.session}:${name}`, 'Enter']);
  }

  /** End the server we started: by its socket, then by its pid if it is still there. */
  stop(): void {
    runAsSync(this.user, ['tmux', '-S', this.socket, 'kill-server']);
    if (this.serverPid) {
      try {
        process.kill(this.serverPid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}
