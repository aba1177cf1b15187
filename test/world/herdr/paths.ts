// Where herdr keeps things: config dir and API socket, resolved exactly in herdr's order.
import * as os from 'node:os';
import * as path from 'node:path';

export type Env = Record<string, string | undefined>;

function home(env: Env): string {
  return env.HOME || os.homedir();
}

/** `$XDG_CONFIG_HOME/herdr`, else `$HOME/.config/herdr`. */
export function configDir(env: Env = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  return xdg && path.isAbsolute(xdg) ? path.join(xdg, 'herdr') : path.join(home(env), '.config', 'herdr');
}

export function homeDir(env: Env = process.env): string {
  return home(env);
}

const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export interface SocketTarget {
  socket: string;
  /** Named session, or null for the default session / an explicit socket path. */
  session: string | null;
}

/** Resolution order: `--session`, `HERDR_SOCKET_PATH`, `HERDR_SESSION`, default. Throws on a bad name. */
export function resolveSocket(sessionFlag: string | undefined, env: Env = process.env): SocketTarget {
  const dir = configDir(env);
  const named = (name: string): SocketTarget => {
    if (name === 'default') return { socket: path.join(dir, 'herdr.sock'), session: null };
    if (!SESSION_NAME.test(name)) throw new Error(`invalid session name: ${name}`);
    return { socket: path.join(dir, 'sessions', name, 'herdr.sock'), session: name };
  };
  if (sessionFlag !== undefined) return named(sessionFlag);
  if (env.HERDR_SOCKET_PATH) return { socket: env.HERDR_SOCKET_PATH, session: null };
  if (env.HERDR_SESSION) return named(env.HERDR_SESSION);
  return { socket: path.join(dir, 'herdr.sock'), session: null };
}

/** The private tmux socket of the server that owns `apiSocket` (beside it, so sessions never share one). */
export function tmuxSocketFor(apiSocket: string): string {
  return path.join(path.dirname(apiSocket), 'herdr-sim-tmux.sock');
}

export function callLogPath(env: Env = process.env): string {
  return env.HERDR_SIM_CALL_LOG || path.join(configDir(env), 'herdr-sim-calls.jsonl');
}

export function faultsPath(dir: string): string {
  return path.join(dir, 'herdr-sim-faults.json');
}
