// One entry point for "a machine the user named": `local` (this machine) or an ssh target.
import type { Host } from './host.js';
import type { LocalHostOptions } from './local.js';
import { SshHost, type SshHostOptions } from './ssh.js';

export type ConnectOptions = SshHostOptions & LocalHostOptions;

/**
 * `local` → LocalHost; anything else is an ssh destination (alias, user@host,
 * ssh://user@host:port) resolved like OpenSSH and connected once (see SshHost).
 */
export async function connectHost(target: string, opts: ConnectOptions = {}): Promise<Host> {
  // Loaded on demand (execa is heavy): an ssh connection should start without waiting for it.
  if (target === 'local') return new (await import('./local.js')).LocalHost(opts);
  const started = early.get(target);
  if (started) {
    early.delete(target);
    return started;
  }
  return SshHost.connect(target, opts);
}

/**
 * Connections begun before the command's own modules load (the handshake's round trips then
 * overlap that work); the next `connectHost` of the same target takes it over.
 */
const early = new Map<string, Promise<Host>>();
const dials: Promise<void>[] = [];

export function connectEarly(target: string, opts: ConnectOptions = {}): void {
  if (target === 'local' || early.has(target)) return;
  let dialed!: () => void;
  const dial = new Promise<void>((resolve) => (dialed = resolve));
  const p = SshHost.connect(target, { ...opts, onDial: dialed });
  p.catch(() => undefined).finally(dialed); // whoever takes it over sees the error
  early.set(target, p);
  dials.push(dial);
}

/**
 * Settles once every early connection has its ssh handshake under way (or has failed before):
 * work that blocks the event loop, like loading the handoff's modules, waits for this, so the
 * answer of `ssh -G`, the TCP connect and the first handshake bytes are not held up behind it;
 * that work then runs while the server answers.
 */
export async function dialed(): Promise<void> {
  await Promise.all(dials.splice(0));
}

/** Close early connections nobody took over (the command ended before it needed them). */
export async function closeUnclaimed(): Promise<void> {
  const left = [...early.values()];
  early.clear();
  await Promise.all(left.map((p) => p.then((h) => h.close()).catch(() => undefined)));
}
