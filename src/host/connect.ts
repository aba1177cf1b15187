// One entry point for "a machine the user named": `local` (this machine) or an ssh target.
import type { Host } from './host.js';
import { LocalHost, type LocalHostOptions } from './local.js';
import { SshHost, type SshHostOptions } from './ssh.js';

export type ConnectOptions = SshHostOptions & LocalHostOptions;

/**
 * `local` → LocalHost; anything else is an ssh destination (alias, user@host,
 * ssh://user@host:port) resolved like OpenSSH and connected once (see SshHost).
 */
export async function connectHost(target: string, opts: ConnectOptions = {}): Promise<Host> {
  if (target === 'local') return new LocalHost(opts);
  return SshHost.connect(target, opts);
}
