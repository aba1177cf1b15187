// Establishing the ssh session: resolve the ProxyJump chain like OpenSSH, open the TCP socket
// (TCP_NODELAY), and per hop verify the host key against known_hosts and authenticate without
// prompts; later hops ride on a forwarded channel (`forwardOut`) of the previous hop. `dialChain`
// does all of it within one deadline.
import net from 'node:net';
import type { Duplex, Readable } from 'node:stream';
import type { AnyAuthMethod, Client, ClientChannel } from 'ssh2';
import { HostError } from '../errors.js';
import { knownHostsName, pinnedHostKeyAlgorithms, readKnownHostsFiles, verifyHostKey } from './known-hosts.js';
import { planAuth } from './ssh-auth.js';
import { authBehindServiceRequest, signWithoutQuery } from './ssh-fast-auth.js';
import { takeLauncherSocket } from './launcher-socket.js';
import { authError, hopLabel, hostKeyError, namedTarget, socketError, type SshError } from './ssh-errors.js';
import { resolveSshTarget, usesDefaultResolution, type ResolvedTarget, type ResolveOptions } from './ssh-target.js';
import { ssh2 } from './ssh2-lib.js';

const DEFAULT_KEEPALIVE_MS = 15_000;
const DEFAULT_KEEPALIVE_COUNT = 3;
const MAX_JUMPS = 8;

/** What a handshake needs from the caller's options. */
export interface HandshakeOptions {
  identityFiles?: string[];
  knownHostsFiles?: string[];
  agent?: string | null;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  /** ssh2's protocol trace, one line per call (troubleshooting; tests check the message order). */
  debug?: (line: string) => void;
}

/** Resolve a target and the ProxyJump hops before it, first hop first (as OpenSSH chains them). */
export async function resolveChain(target: string, opts: ResolveOptions, depth = 0): Promise<ResolvedTarget[]> {
  const last = await resolveSshTarget(target, opts);
  if (!last.proxyJump) {
    if (last.proxyCommand) {
      throw new HostError('ssh_config_unsupported', `${target} uses ProxyCommand, which agent-handoff does not run.`, { fix: 'Use ProxyJump instead (it is supported), or an alias without ProxyCommand.' });
    }
    return [last];
  }
  if (depth >= MAX_JUMPS) throw new HostError('ssh_config', `ProxyJump chain for ${target} is longer than ${MAX_JUMPS} hops (a loop?).`);
  const hops = last.proxyJump.split(',').map((h) => h.trim()).filter(Boolean);
  // Like `ssh -J a,b`: a uses its own config (incl. its ProxyJump), b is reached through a.
  const chain = await resolveChain(hops[0]!, opts, depth + 1);
  for (const h of hops.slice(1)) chain.push({ ...(await resolveSshTarget(h, opts)), proxyJump: undefined });
  chain.push(last);
  return chain;
}

export interface Hop {
  client: Client;
  resolved: ResolvedTarget;
}

export function tcpConnect(hop: ResolvedTarget): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host: hop.hostName, port: hop.port });
    // Nagle off before the first byte: every SSH round trip would otherwise wait ~40 ms.
    sock.setNoDelay(true);
    sock.once('connect', () => {
      sock.removeAllListeners('error');
      resolve(sock);
    });
    sock.once('error', (err) => {
      sock.destroy();
      reject(socketError(hop, err));
    });
  });
}

export function forwardOut(client: Client, to: ResolvedTarget, via: ResolvedTarget): Promise<ClientChannel> {
  return new Promise((resolve, reject) => {
    client.forwardOut('127.0.0.1', 0, to.hostName, to.port, (err, stream) => {
      if (err) reject(new HostError('proxy_jump_failed', `The jump host ${hopLabel(via)} could not open a connection to ${to.hostName}:${to.port}: ${err.message}`, { fix: 'Check the target address as the jump host sees it, and that the jump host allows TCP forwarding.', cause: err }));
      else resolve(stream);
    });
  });
}

/** Which auth method got each connection in ('ssh-agent' or the identity file), for doctor. */
const authUsed = new WeakMap<Client, string>();

export function authMethodOf(client: Client): string | undefined {
  return authUsed.get(client);
}

export function handshake(hop: ResolvedTarget, sock: Duplex, opts: HandshakeOptions, direct: boolean, readyTimeoutMs: number): Promise<Client> {
  const userFiles = opts.knownHostsFiles ?? hop.userKnownHostsFiles;
  const entries = readKnownHostsFiles(opts.knownHostsFiles ?? [...hop.userKnownHostsFiles, ...hop.globalKnownHostsFiles]);
  const name = knownHostsName(hop.hostName, hop.port, hop.hostKeyAlias);
  const pinned = pinnedHostKeyAlgorithms(entries, name);
  const agent = opts.agent === null ? undefined : (opts.agent ?? (hop.identityAgent === 'none' ? undefined : (hop.identityAgent ?? process.env.SSH_AUTH_SOCK)));
  const plan = planAuth({ username: hop.user, identityFiles: opts.identityFiles ?? hop.identityFiles, agent, identitiesOnly: hop.identitiesOnly });
  const pending = [...plan.methods];
  let lastTried: string | undefined;
  return new Promise((resolve, reject) => {
    const client = new (ssh2().Client)();
    let refusal: HostError | undefined;
    let settled = false;
    const fail = (err: HostError): void => {
      if (settled) return;
      settled = true;
      client.removeAllListeners('ready');
      client.end();
      reject(err);
    };
    client.on('ready', () => {
      if (settled) return;
      settled = true;
      if (lastTried) authUsed.set(client, lastTried);
      resolve(client);
    });
    client.on('error', (err: SshError) => {
      // An unusable agent socket: ssh2 reports it and goes on with the next method.
      if (err.level === 'agent') return;
      if (refusal) return fail(refusal);
      if (err.level === 'client-authentication') return fail(authError(hop, plan));
      if (err.level === 'client-timeout') return fail(new HostError('connect_timeout', `${hopLabel(hop)} did not complete the ssh handshake in time.`));
      if (err.level === 'client-socket') return fail(socketError(hop, err));
      fail(new HostError('connect_failed', `ssh handshake with ${hopLabel(hop)} failed: ${err.message}`, { cause: err }));
    });
    client.on('close', () => fail(refusal ?? new HostError('connect_failed', `${hopLabel(hop)} closed the connection during the ssh handshake.`)));
    client.connect({
      sock: sock as unknown as Readable,
      username: hop.user,
      // Hand the methods out one by one, so the one that succeeded is known.
      authHandler: (_methodsLeft, _partial, next) => {
        const method = pending.shift();
        lastTried = method ? (method.type === 'agent' ? 'ssh-agent' : `publickey ${plan.offered[plan.methods.indexOf(method)] ?? ''}`.trim()) : undefined;
        // ssh2 ends authentication when handed `false` (its types omit it).
        next(method ?? (false as unknown as AnyAuthMethod));
      },
      hostVerifier: (key: Buffer) => {
        const v = verifyHostKey(entries, name, key);
        if (v.ok) return true;
        refusal = hostKeyError(v, hop, name, key, userFiles, direct);
        return false;
      },
      ...(pinned ? { algorithms: { serverHostKey: pinned as never } } : {}),
      readyTimeout: readyTimeoutMs,
      ...(opts.debug ? { debug: opts.debug } : {}),
      keepaliveInterval: opts.keepaliveIntervalMs ?? hop.serverAliveIntervalMs ?? DEFAULT_KEEPALIVE_MS,
      keepaliveCountMax: opts.keepaliveCountMax ?? hop.serverAliveCountMax ?? DEFAULT_KEEPALIVE_COUNT,
    });
    // Auth in the service request's flight, one round trip per key instead of two.
    signWithoutQuery(client, plan.agentClient);
    authBehindServiceRequest(client);
  });
}

const DEFAULT_CONNECT_TIMEOUT_MS = 15_000;

export interface DialOptions extends ResolveOptions, HandshakeOptions {
  /** Bound on TCP connect + handshake + auth for the whole jump chain (default ConnectTimeout, else 15 s). */
  connectTimeoutMs?: number;
  /** Called when the ssh handshake with the first hop has begun (resolved, TCP connected, first bytes sent). */
  onDial?: () => void;
}

export interface Dialed {
  /** Every hop, first jump first; the target last. */
  chain: ResolvedTarget[];
  hops: Hop[];
  /** The TCP socket to the first hop. */
  socket: net.Socket;
  /** Wall time of TCP connect + handshakes + auth. */
  connectMs: number;
}

/**
 * Settles when something is first written to `socket` (a one-time wrapper of its `write`, taken
 * off again at that first call).
 */
export function firstWrite(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    const own = Object.hasOwn(socket, 'write');
    const write = socket.write;
    socket.write = function (...args: Parameters<net.Socket['write']>) {
      if (own) socket.write = write;
      else delete (socket as Partial<net.Socket>).write;
      resolve();
      return write.apply(socket, args);
    } as net.Socket['write'];
  });
}

/** Resolve `target` like OpenSSH, connect (through any ProxyJump hops), verify and authenticate. */
export async function dialChain(target: string, opts: DialOptions): Promise<Dialed> {
  const chain = await resolveChain(target, opts);
  const last = chain[chain.length - 1]!;
  const timeoutMs = opts.connectTimeoutMs ?? last.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const started = Date.now();
  const hops: Hop[] = [];
  let socket: net.Socket | undefined;
  let timedOut = false;
  const first = chain[0]!;
  const attempt = (async () => {
    // The launcher's connect to this same address, when it dialed one (else, or failed: our own).
    const early = takeLauncherSocket(target, first.hostName, first.port);
    const dialing = early ? early.then((s) => s ?? tcpConnect(first)) : tcpConnect(first);
    // ssh2 loads while the TCP handshake is under way (only the ssh handshake needs it), once
    // node has issued the connect: net.connect leaves that to a tick of its own.
    await new Promise<void>((resolve) => process.nextTick(resolve));
    try {
      ssh2();
    } catch {
      // the handshake reports it
    }
    socket = await dialing;
    let sock: Duplex = socket;
    for (let i = 0; i < chain.length; i++) {
      const hop = chain[i]!;
      if (timedOut) throw new Error('timed out');
      // The first hop's handshake has begun once ssh2 has written to the socket: it does so
      // after its own crypto set-up settles, which needs the event loop free for a moment.
      if (i === 0 && opts.onDial) void firstWrite(socket).then(opts.onDial);
      const shaking = handshake(hop, sock, opts, i === 0, timeoutMs + 1000);
      const client = await shaking;
      hops.push({ client, resolved: hop });
      const next = chain[i + 1];
      if (next) sock = await forwardOut(client, next, hop);
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new HostError('connect_timeout', `No ssh session with ${namedTarget(target, hopLabel(last))} within ${Math.round(timeoutMs / 100) / 10} s${chain.length > 1 ? ` (via ${chain.slice(0, -1).map(hopLabel).join(' → ')})` : ''}.`, {
        fix: 'Check that the host is up and reachable and that the port runs sshd (a firewall that drops packets looks like this too).',
      }));
    }, timeoutMs);
  });
  try {
    await Promise.race([attempt, deadline]);
  } catch (err) {
    attempt.catch(() => undefined);
    for (const h of hops.reverse()) h.client.end();
    (socket as net.Socket | undefined)?.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  // For the launcher of the next send to this target (its ssh -G runs with the defaults only).
  if (usesDefaultResolution(opts)) await import('./dial-memory.js').then((m) => m.rememberDial(target, { host: first.hostName, port: first.port }), () => undefined);
  return { chain, hops, socket: socket!, connectMs: Date.now() - started };
}
