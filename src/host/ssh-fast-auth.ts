// Two round trips ssh2 1.17 spends on authentication that the protocol does not need (issue #18),
// cut by reaching into its client internals. test/host/ssh-fast-auth.test.ts fails when those
// change; each shortcut leaves ssh2's own behaviour in place when they are not there.
//
// 1. Publickey: ssh2 first asks whether a key would do (a request without signature), waits for
//    PK_OK, then sends the signed request: two round trips per key. We send the signed request
//    at once (RFC 4252 §7 allows it): one. The signature covers this session's id, so it is
//    worth nothing elsewhere, and the host key has been verified before auth starts. Security
//    keys (sk-*) in the agent still get the query first: each of their signatures needs a
//    touch, which only the key the server accepts should ask for.
// 2. Service request: ssh2 waits for SERVICE_ACCEPT before its first auth request. The server
//    handles messages in order, so the auth request can follow the service request in the same
//    flight. We wait only for the server's EXT_INFO (it comes with the server's NEWKEYS, before
//    SERVICE_ACCEPT), because it names the RSA signature algorithms the server takes.
import type { Client } from 'ssh2';

type SignCallback = (signature: Buffer) => void;
type Signer = (data: Buffer, done: SignCallback) => void;

interface KeyLike {
  type: string;
  isPrivateKey(): boolean;
  sign(data: Buffer, hash?: string): Buffer | Error;
}

export interface AgentLike {
  sign(pubKey: unknown, data: Buffer, options: { hash?: string }, cb: (err: Error | null | undefined, signature?: Buffer) => void): void;
}

type Handler = (proto: unknown, ...args: unknown[]) => void;

interface ProtocolInternals {
  authPK(username: string, key: unknown, keyAlgo: string | undefined, cbSign?: Signer): void;
  service(name: string): void;
  _handlers?: Record<string, Handler | undefined>;
}

function protocolOf(client: Client): ProtocolInternals | undefined {
  return (client as unknown as { _protocol?: ProtocolInternals })._protocol;
}

/** What ssh2 hashes with for each RSA signature algorithm (other key types pick their own). */
const RSA_HASH: Record<string, string> = { 'rsa-sha2-256': 'sha256', 'rsa-sha2-512': 'sha512', 'ssh-rsa': 'sha1' };

function isKey(k: unknown): k is KeyLike {
  return typeof k === 'object' && k !== null && typeof (k as KeyLike).type === 'string' && typeof (k as KeyLike).isPrivateKey === 'function' && typeof (k as KeyLike).sign === 'function';
}

/**
 * Make `client` send signed publickey requests without the PK_OK query; `agent` signs the
 * agent's keys. Call right after `client.connect()` (ssh2 makes its protocol object there; auth
 * starts after the key exchange). False when ssh2's internals are not as expected.
 */
export function signWithoutQuery(client: Client, agent: AgentLike | undefined): boolean {
  const proto = protocolOf(client);
  if (!proto || typeof proto.authPK !== 'function' || proto.authPK.length !== 4) return false;
  const authPK = proto.authPK;
  proto.authPK = function (this: ProtocolInternals, username, key, keyAlgo, cbSign) {
    if (cbSign || !isKey(key)) return authPK.call(this, username, key, keyAlgo, cbSign);
    const hash = keyAlgo ? RSA_HASH[keyAlgo] : undefined;
    // What cannot be signed here goes out as ssh2's query instead; its own PK_OK path then
    // signs, or reports the error and moves on to the next key.
    const query = (): void => authPK.call(this, username, key, keyAlgo);
    if (key.isPrivateKey()) {
      return authPK.call(this, username, key, keyAlgo, (data, done) => {
        const sig = key.sign(data, hash);
        if (sig instanceof Error) query();
        else done(sig);
      });
    }
    if (!agent || key.type.startsWith('sk-')) return query();
    authPK.call(this, username, key, keyAlgo, (data, done) => {
      agent.sign(key, data, hash ? { hash } : {}, (err, sig) => (err || !sig ? query() : done(sig)));
    });
  };
  return true;
}

/**
 * Make `client` start authenticating right behind its service request instead of a round trip
 * later (see the top of this file). Call right after `client.connect()`. False when ssh2's
 * internals are not as expected; a server without EXT_INFO gets ssh2's own order.
 */
export function authBehindServiceRequest(client: Client): boolean {
  const proto = protocolOf(client);
  const handlers = proto?._handlers;
  const extInfo = handlers?.EXT_INFO;
  const serviceAccept = handlers?.SERVICE_ACCEPT;
  if (!proto || !handlers || typeof proto.service !== 'function' || typeof extInfo !== 'function' || typeof serviceAccept !== 'function') return false;
  let requested = false;
  let accepted = false;
  let started = false;
  const service = proto.service;
  proto.service = function (this: ProtocolInternals, name: string) {
    service.call(this, name);
    if (name === 'ssh-userauth') requested = true;
  };
  handlers.EXT_INFO = (p, ...args) => {
    extInfo(p, ...args);
    // Only the EXT_INFO of the first key exchange, between our service request and its answer.
    if (!requested || accepted || started) return;
    started = true;
    serviceAccept(p, 'ssh-userauth');
  };
  handlers.SERVICE_ACCEPT = (p, name, ...rest) => {
    if (name === 'ssh-userauth') {
      accepted = true;
      if (started) return;
    }
    serviceAccept(p, name, ...rest);
  };
  return true;
}
