// How a remote program on an ssh channel ends: stopped by us (a signal to its process group), or
// by a signal that the exit status has to express the way a local shell would (128 + n).
import os from 'node:os';
import type { ClientChannel } from 'ssh2';

const exits = new WeakMap<ClientChannel, number>();

/**
 * Keep the channel's exit status from its start: a program carried in the exec request may end
 * in the very read that brings the exec reply, and ssh2 emits 'exit' there, before the channel's
 * user has had a turn to listen.
 */
export function keepExitStatus(ch: ClientChannel): void {
  ch.once('exit', (code: number | null, signal?: string) => exits.set(ch, typeof code === 'number' ? code : signalExit(signal)));
}

/** The program's exit status as a shell gives it (128 + n for a signal); undefined while none came. */
export function exitStatusOf(ch: ClientChannel): number | undefined {
  return exits.get(ch);
}

export function signalExit(signal: string | undefined): number {
  if (!signal) return 255;
  const n = (os.constants.signals as Record<string, number | undefined>)[signal.startsWith('SIG') ? signal : `SIG${signal}`];
  return 128 + (n ?? 0);
}

/**
 * Ask sshd to signal the session's process group (OpenSSH ≥ 7.9), then close the channel.
 * ssh2's `channel.signal()` silently does nothing once our side has sent EOF (stdin ended),
 * which is the usual state of a running command, so the request goes to the protocol directly.
 */
export function killChannel(ch: ClientChannel, signal: 'KILL' | 'TERM' = 'KILL'): void {
  const c = ch as unknown as { outgoing?: { id: number; state: string }; _client?: { _protocol?: { signal(id: number, sig: string): void } } };
  try {
    // 'eof' = we sent EOF but the channel is still open: the usual state of a running command.
    if ((c.outgoing?.state === 'open' || c.outgoing?.state === 'eof') && c._client?._protocol) c._client._protocol.signal(c.outgoing.id, signal);
    else ch.signal(signal);
  } catch {
    // channel already gone
  }
  ch.close();
}
