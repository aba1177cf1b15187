// The simulator's terminals: a tmux server on a private socket that only the sim server owns.
import { execFile } from 'node:child_process';

export class Tmux {
  constructor(readonly socket: string) {}

  run(args: readonly string[]): Promise<string> {
    const env = { ...process.env };
    delete env.TMUX;
    delete env.TMUX_PANE;
    return new Promise((resolve, reject) => {
      execFile('tmux', ['-S', this.socket, '-f', '/dev/null', ...args], { env, maxBuffer: 32 * 1024 * 1024 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`tmux ${args[0] ?? ''}: ${String(stderr).trim() || err.message}`));
        else resolve(String(stdout));
      });
    });
  }

  /** Literal text; an argument ending in `;` would be eaten by tmux as a command separator. */
  sendLiteral(target: string, text: string): Promise<string> {
    if (text === '') return Promise.resolve('');
    const arg = text.endsWith(';') ? `${text.slice(0, -1)}\\;` : text;
    return this.run(['send-keys', '-t', target, '-l', '--', arg]);
  }

  sendKey(target: string, key: string): Promise<string> {
    return this.run(['send-keys', '-t', target, key.endsWith(';') ? `${key.slice(0, -1)}\\;` : key]);
  }

  sendHex(target: string, bytes: readonly number[]): Promise<string> {
    return this.run(['send-keys', '-t', target, '-H', ...bytes.map((b) => b.toString(16).padStart(2, '0'))]);
  }
}
