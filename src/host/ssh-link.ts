// The established ssh connection as the Host's operations use it: channels opened on the target
// hop within the slots sshd allows, what they cost, and the loss of the connection, which every
// waiting operation hears of (`onLost`) so none waits for a peer that is gone.
import type net from 'node:net';
import type { Client, ClientChannel } from 'ssh2';
import { HostError } from '../errors.js';
import { buildHeader, EXEC_COMMAND, execCommandCarrying, type HeaderSpec } from './remote-command.js';
import { keepExitStatus } from './ssh-channel-end.js';
import type { Hop } from './ssh-connect.js';
import type { SshError } from './ssh-errors.js';
import { Slots } from './slots.js';

/**
 * Forwarded connections (herdr's socket) are not sessions: sshd's MaxSessions does not count
 * them, so they do not wait for a session slot. Their own bound only keeps a runaway in check.
 */
const MAX_FORWARDS = 32;

export class SshLink {
  /** Session channels (exec, SFTP): below sshd's MaxSessions. */
  readonly slots: Slots;
  /** The channels open at once (sshd's MaxSessions as configured here). */
  readonly channelLimit: number;
  private readonly forwards = new Slots(MAX_FORWARDS);
  readonly counts = { handshakes: 0, channels: 0, commands: 0, sftpRequests: 0 };
  /** Told once when the connection goes; each listener removes itself when its operation ends. */
  readonly onLost = new Set<(err: HostError) => void>();
  lost: HostError | undefined;
  private closing: Promise<void> | undefined;

  /**
   * `label` names the target in messages; `named` adds the address when the label is an alias.
   * At least 2 slots: the SFTP channel keeps one for the life of the connection.
   */
  constructor(
    readonly label: string,
    private readonly named: string,
    readonly hops: readonly Hop[],
    readonly socket: net.Socket,
    maxChannels: number,
  ) {
    this.counts.handshakes = hops.length;
    this.channelLimit = Math.max(2, maxChannels);
    this.slots = new Slots(this.channelLimit);
    for (const hop of hops) {
      hop.client.on('error', (err: SshError) => this.connectionLost(err));
      hop.client.on('close', () => this.connectionLost(undefined));
    }
  }

  /** The target's client (the last hop). */
  get client(): Client {
    return this.hops[this.hops.length - 1]!.client;
  }

  private connectionLost(err: SshError | undefined): void {
    if (this.lost) return;
    this.lost = this.closing
      ? new HostError('connection_closed', `The connection to ${this.named} was closed.`)
      : new HostError('connection_lost', `Lost the ssh connection to ${this.named}${err ? `: ${err.message}` : ''}.`, { fix: 'Check the network and retry.', ...(err ? { cause: err } : {}) });
    for (const fn of this.onLost) fn(this.lost);
    this.onLost.clear();
    this.socket.destroy();
  }

  /**
   * Open an exec channel running `program`: a header, or the spec one is built from (slot held
   * until the channel closes). The header rides in the exec request, so the program starts a
   * round trip sooner (see execCommandCarrying), unless it is `private` or too long: then it goes
   * first on stdin, as one line.
   */
  async openExec(program: string | HeaderSpec, opts: { private?: boolean } = {}): Promise<ClientChannel> {
    if (this.lost) throw this.lost;
    const release = await this.slots.acquire();
    try {
      if (this.lost) throw this.lost;
      const carrying = opts.private ? null : execCommandCarrying(typeof program === 'string' ? program : buildHeader(program, { oneLine: false }));
      const ch = await new Promise<ClientChannel>((resolve, reject) => {
        this.client.exec(carrying ?? EXEC_COMMAND, (err, channel) => {
          if (err) return reject(err);
          keepExitStatus(channel);
          resolve(channel);
        });
      });
      if (!carrying) ch.write(`${typeof program === 'string' ? program : buildHeader(program)}\n`);
      this.counts.channels++;
      this.counts.commands++;
      ch.once('close', release);
      return ch;
    } catch (err) {
      release();
      if (err instanceof HostError) throw err;
      throw this.lost ?? new HostError('channel_failed', `${this.label} refused a new channel: ${(err as Error).message}`, { fix: 'The server may limit sessions per connection (MaxSessions).', cause: err });
    }
  }

  /** A channel to a Unix socket on the remote (streamlocal forwarding; a forward's slot held until it closes). */
  async openStreamLocal(p: string): Promise<ClientChannel> {
    if (this.lost) throw this.lost;
    const release = await this.forwards.acquire();
    try {
      const ch = await new Promise<ClientChannel>((resolve, reject) => this.client.openssh_forwardOutStreamLocal(p, (err, c) => (err ? reject(err) : resolve(c))));
      this.counts.channels++;
      ch.once('close', release);
      return ch;
    } catch (err) {
      release();
      throw this.lost ?? new HostError('channel_failed', `${this.label} refused a connection to ${p}: ${(err as Error).message}`, { cause: err });
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const hop of [...this.hops].reverse()) hop.client.end();
      // A clean goodbye: the DISCONNECT and our end of the stream handed to the system, which
      // sends them. sshd's own close is not waited for (a round trip at the very end of every
      // command); then nothing may keep the process alive.
      if (!this.socket.destroyed && !this.socket.writableFinished) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(t);
            resolve();
          };
          const t = setTimeout(done, 1000);
          t.unref();
          this.socket.once('finish', done);
          this.socket.once('close', done);
        });
      }
      const closed = this.socket.closed ? null : new Promise((resolve) => this.socket.once('close', resolve));
      this.socket.destroy();
      for (const hop of this.hops) hop.client.destroy();
      // The handle itself is closed by then (a local matter, no round trip).
      await closed;
    })();
    return this.closing;
  }
}
