// Authentication without prompts: ssh-agent first, then the identity files that exist and are
// not passphrase-protected. An encrypted key is never decrypted here (we never read a
// passphrase); if auth fails and such a key was skipped, the error says to `ssh-add` it.
import fs from 'node:fs';
import type { AnyAuthMethod, BaseAgent, IdentityCallback, ParsedKey } from 'ssh2';
import { ssh2 } from './ssh2-lib.js';

/**
 * IdentitiesOnly: offer only the agent keys that match an identity file, as OpenSSH does, so a
 * full agent cannot exhaust the server's MaxAuthTries before the right key is tried. (A class
 * made on first use: it extends ssh2's, which is loaded only then.)
 */
function matchingAgent(socketPath: string, allowed: Set<string>): BaseAgent {
  class MatchingAgent extends ssh2().OpenSSHAgent {
    override getIdentities(cb: IdentityCallback<ParsedKey>): void {
      super.getIdentities((err, keys) => {
        // OpenSSHAgent hands out ParsedKey objects.
        const parsed = (keys ?? []) as ParsedKey[];
        cb(err, parsed.filter((k) => allowed.has(k.getPublicSSH().toString('base64'))));
      });
    }
  }
  return new MatchingAgent(socketPath);
}

/** Public key blob (base64) of an identity file: from `file.pub`, else from the unencrypted key. */
function publicBlob(file: string): string | undefined {
  try {
    const b64 = fs.readFileSync(`${file}.pub`, 'utf8').trim().split(/\s+/)[1];
    if (b64) return b64;
  } catch {
    // no .pub beside it
  }
  try {
    const k = ssh2().utils.parseKey(fs.readFileSync(file));
    if (!(k instanceof Error)) return (Array.isArray(k) ? k[0] : k)?.getPublicSSH().toString('base64');
  } catch {
    // unreadable
  }
  return undefined;
}

export interface AuthPlan {
  methods: AnyAuthMethod[];
  /** What will be offered, for the auth_failed message. */
  offered: string[];
  /** Identity files skipped because they need a passphrase. */
  encrypted: string[];
  /** Identity files that exist but could not be parsed (unsupported format). */
  unreadable: string[];
  agent: string | undefined;
  /** The agent client auth uses (it also signs without the PK_OK query, ssh-pipeline.ts). */
  agentClient: BaseAgent | undefined;
}

function isSocket(p: string): boolean {
  try {
    return fs.statSync(p).isSocket();
  } catch {
    return false;
  }
}

export interface AuthInputs {
  username: string;
  identityFiles: readonly string[];
  /** Agent socket path, or undefined for none. */
  agent: string | undefined;
  /** OpenSSH IdentitiesOnly: agent keys only when they match an identity file. */
  identitiesOnly?: boolean;
}

export function planAuth(input: AuthInputs): AuthPlan {
  const plan: AuthPlan = { methods: [], offered: [], encrypted: [], unreadable: [], agent: undefined, agentClient: undefined };
  if (input.agent && isSocket(input.agent)) {
    plan.agent = input.agent;
    const agent = input.identitiesOnly
      ? matchingAgent(input.agent, new Set(input.identityFiles.map(publicBlob).filter((b): b is string => b !== undefined)))
      : new (ssh2().OpenSSHAgent)(input.agent);
    plan.agentClient = agent;
    plan.methods.push({ type: 'agent', username: input.username, agent });
    plan.offered.push(`ssh-agent keys (${input.agent})`);
  }
  for (const file of input.identityFiles) {
    let data: Buffer;
    try {
      data = fs.readFileSync(file);
    } catch {
      continue; // OpenSSH's default list names keys that usually do not exist.
    }
    const parsed = ssh2().utils.parseKey(data);
    if (parsed instanceof Error) {
      if (/passphrase|encrypted/i.test(parsed.message)) plan.encrypted.push(file);
      else plan.unreadable.push(file);
      continue;
    }
    plan.methods.push({ type: 'publickey', username: input.username, key: data });
    plan.offered.push(file);
  }
  return plan;
}
