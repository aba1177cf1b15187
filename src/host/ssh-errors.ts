// The ssh failures a user can act on, each with a stable code, a sentence naming the host, and
// the fix: unknown / changed / revoked host keys, refused or passphrase-locked keys, sockets.
import { HostError } from '../errors.js';
import { fingerprintSha256, keyTypeOfBlob, type HostKeyVerdict } from './known-hosts.js';
import type { AuthPlan } from './ssh-auth.js';
import type { ResolvedTarget } from './ssh-target.js';

export type SshError = Error & { level?: string; code?: string | number };

export function hopLabel(hop: ResolvedTarget): string {
  return `${hop.user}@${hop.hostName}${hop.port === 22 ? '' : `:${hop.port}`}`;
}

/** What the user typed, with the address when that was an alias: `vega-slow (vega@127.0.0.1:2300)`. */
export function namedTarget(typed: string, address: string): string {
  const label = typed.trim();
  return !label || label === address ? address : `${label} (${address})`;
}

function keyscanType(keyType: string): string {
  if (keyType === 'ssh-ed25519') return 'ed25519';
  if (keyType === 'ssh-rsa') return 'rsa';
  if (keyType.startsWith('ecdsa-')) return 'ecdsa';
  return keyType;
}

export function hostKeyError(v: Exclude<HostKeyVerdict, { ok: true }>, hop: ResolvedTarget, name: string, blob: Buffer, userFiles: string[], direct: boolean): HostError {
  const type = keyTypeOfBlob(blob);
  const fp = fingerprintSha256(blob);
  const label = hopLabel(hop);
  const file = userFiles[0] ?? '~/.ssh/known_hosts';
  const line = `${name} ${type} ${blob.toString('base64')}`;
  const details = { host: hop.hostName, port: hop.port, knownHostsName: name, keyType: type, fingerprint: fp };
  if (v.reason === 'unknown') {
    // `ssh -G` prints "false" for no/off.
    const lax = /^(no|off|false|accept-new)$/i.test(hop.strictHostKeyChecking)
      ? ` Your ssh config relaxes StrictHostKeyChecking (${hop.strictHostKeyChecking}); agent-handoff still never accepts an unknown key.`
      : '';
    const add = direct && !hop.hostKeyAlias
      ? `ssh-keyscan ${hop.port === 22 ? '' : `-p ${hop.port} `}-t ${keyscanType(type)} ${hop.hostName} >> ${file}`
      : `printf '%s\\n' '${line}' >> ${file}`;
    return new HostError('host_key_unknown', `${label} is not a known host: its ${type} key (${fp}) is in none of ${userFiles.join(', ') || 'your known_hosts files'}. Refusing an unverified host.${lax}`, {
      fix: `Check that ${fp} is the machine's key (on it: ssh-keygen -lf /etc/ssh/ssh_host_${keyscanType(type)}_key.pub), then run: ${add}  (or connect once with ssh and answer yes).`,
      details: { ...details, knownHostsLine: line },
    });
  }
  if (v.reason === 'revoked') {
    return new HostError('host_key_revoked', `${label} presented a REVOKED host key ${fp} (@revoked at ${v.entry.file}:${v.entry.line}). Refusing to connect.`, {
      fix: 'Do not connect; ask the machine\'s owner for its new host key.',
      details: { ...details, revokedAt: `${v.entry.file}:${v.entry.line}` },
    });
  }
  const old = v.entries[0]!;
  const where = v.entries.map((e) => `${e.file}:${e.line}`).join(', ');
  return new HostError('host_key_changed', `WARNING: the host key of ${label} HAS CHANGED. known_hosts (${where}) holds ${old.keyType} ${fingerprintSha256(old.key)}, the server presented ${type} ${fp}. Someone could be intercepting the connection, or the machine was reinstalled. Refusing to connect.`, {
    fix: `Only if you know the key changed legitimately: check ${fp} on the machine, remove the old entry (ssh-keygen -R '${name}' -f ${old.file}) and add the new key.`,
    details: { ...details, oldEntries: v.entries.map((e) => `${e.file}:${e.line}`) },
  });
}

export function authError(hop: ResolvedTarget, plan: AuthPlan): HostError {
  const label = hopLabel(hop);
  if (plan.encrypted.length > 0) {
    const keys = plan.encrypted.join(', ');
    const agentHint = plan.agent ? '' : 'eval "$(ssh-agent -s)" && ';
    return new HostError('auth_key_encrypted', `${label} did not accept any usable key, and ${keys} needs a passphrase that no ssh-agent holds. agent-handoff never asks for passphrases.`, {
      fix: `Load the key into your agent: ${agentHint}ssh-add ${plan.encrypted[0]}`,
      details: { encryptedKeys: plan.encrypted, tried: plan.offered },
    });
  }
  return new HostError('auth_failed', `${label} refused authentication; tried ${plan.offered.length ? plan.offered.join(', ') : 'no keys (no ssh-agent and no identity file found)'}.`, {
    fix: `Check that \`ssh ${hop.user}@${hop.hostName}${hop.port === 22 ? '' : ` -p ${hop.port}`}\` logs in without a password prompt (key in the remote ~/.ssh/authorized_keys, or loaded with ssh-add).`,
    details: { tried: plan.offered, unreadableKeys: plan.unreadable },
  });
}

export function socketError(hop: ResolvedTarget, err: SshError): HostError {
  const label = `${hop.hostName}:${hop.port}`;
  if (err.code === 'ECONNREFUSED') return new HostError('connect_failed', `Nothing accepts ssh connections at ${label} (connection refused).`, { fix: 'Check the host name and port, and that sshd runs there.', cause: err });
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return new HostError('connect_failed', `Cannot resolve the host name ${hop.hostName}.`, { fix: 'Check the name (or its HostName in ~/.ssh/config).', cause: err });
  return new HostError('connect_failed', `Could not connect to ${label}: ${err.message}`, { cause: err });
}
