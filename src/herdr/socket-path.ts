// Where herdr's CLI would find the server's API socket, in herdr's own order (herdr-cli.md §1):
// HERDR_SOCKET_PATH, then HERDR_SESSION (a named session; `default` is the default one), then
// `<config dir>/herdr.sock`, the config dir being `$XDG_CONFIG_HOME/herdr` or `~/.config/herdr`.
// Knowing it lets the client ping the server without starting a herdr process.

const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/**
 * Which herdr server a host's CLI talks to: its socket. Pane ids are unique only within one
 * server, so a pane is named by both wherever two servers (herdr sessions) may meet.
 */
export function herdrServerOf(info: { loginEnv: Readonly<Record<string, string | undefined>>; home: string }): string | null {
  return expectedSocket(info.loginEnv, info.home);
}

/** The socket path, or null when the environment names an invalid session (the CLI will say why). */
export function expectedSocket(env: Readonly<Record<string, string | undefined>>, home: string): string | null {
  if (env.HERDR_SOCKET_PATH) return env.HERDR_SOCKET_PATH;
  const xdg = env.XDG_CONFIG_HOME;
  const dir = xdg && xdg.startsWith('/') ? `${xdg}/herdr` : `${home}/.config/herdr`;
  const session = env.HERDR_SESSION;
  if (!session || session === 'default') return `${dir}/herdr.sock`;
  return SESSION_NAME.test(session) ? `${dir}/sessions/${session}/herdr.sock` : null;
}
