// Authentication without prompts: ssh-agent first, then the identity files that exist and are
// not passphrase-protected. An encrypted key is never decrypted here (we never read a
// passphrase); if auth fails and such a key was skipped, the error says to `ssh-add` it.
import fs from 'node:fs';
import { utils, type AnyAuthMethod } from 'ssh2';

export interface AuthPlan {
  methods: AnyAuthMethod[];
  /** What will be offered, for the auth_failed message. */
  offered: string[];
  /** Identity files skipped because they need a passphrase. */
  encrypted: string[];
  /** Identity files that exist but could not be parsed (unsupported format). */
  unreadable: string[];
  agent: string | undefined;
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
}

export function planAuth(input: AuthInputs): AuthPlan {
  const plan: AuthPlan = { methods: [], offered: [], encrypted: [], unreadable: [], agent: undefined };
  if (input.agent && isSocket(input.agent)) {
    plan.agent = input.agent;
    plan.methods.push({ type: 'agent', username: input.username, agent: input.agent });
    plan.offered.push(`ssh-agent keys (${input.agent})`);
  }
  for (const file of input.identityFiles) {
    let data: Buffer;
    try {
      data = fs.readFileSync(file);
    } catch {
      continue; // OpenSSH's default list names keys that usually do not exist.
    }
    const parsed = utils.parseKey(data);
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
