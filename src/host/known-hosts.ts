// known_hosts reading and host key verification, as OpenSSH does it (read-only: this tool never
// writes under ~/.ssh).
//
// Honoured: plain and hashed (`|1|salt|hmac`, HMAC-SHA1 over the lookup name) host fields,
// comma lists, `*`/`?` wildcards, `!` negation, `[host]:port` names for ports other than 22,
// HostKeyAlias (used as the lookup name verbatim), `@revoked` (refused even if also listed).
// Ignored: `@cert-authority` lines (host certificates are not verified; a host that only has a
// CA line counts as unknown), CheckHostIP, VerifyHostKeyDNS.
import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs';

export interface KnownHostEntry {
  file: string;
  /** 1-based line number, for messages like `~/.ssh/known_hosts:12`. */
  line: number;
  marker: 'revoked' | 'cert-authority' | undefined;
  hosts: string;
  keyType: string;
  key: Buffer;
}

/** Parse one known_hosts file's text; malformed lines are skipped, as OpenSSH does. */
export function parseKnownHosts(text: string, file: string): KnownHostEntry[] {
  const out: KnownHostEntry[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const fields = raw.trim().split(/\s+/);
    if (!fields[0] || fields[0].startsWith('#')) return;
    let marker: KnownHostEntry['marker'];
    if (fields[0].startsWith('@')) {
      const m = fields.shift();
      if (m === '@revoked') marker = 'revoked';
      else if (m === '@cert-authority') marker = 'cert-authority';
      else return;
    }
    const [hosts, keyType, b64] = fields;
    if (!hosts || !keyType || !b64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return;
    out.push({ file, line: i + 1, marker, hosts, keyType, key: Buffer.from(b64, 'base64') });
  });
  return out;
}

/** Read the files that exist (missing files are normal: OpenSSH lists known_hosts2 by default). */
export function readKnownHostsFiles(files: readonly string[]): KnownHostEntry[] {
  const out: KnownHostEntry[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    out.push(...parseKnownHosts(text, file));
  }
  return out;
}

/** The name OpenSSH looks up: HostKeyAlias verbatim, else `host` (port 22) or `[host]:port`. */
export function knownHostsName(host: string, port: number, hostKeyAlias?: string): string {
  if (hostKeyAlias) return hostKeyAlias.toLowerCase();
  const h = host.toLowerCase();
  return port === 22 ? h : `[${h}]:${port}`;
}

function globToRegExp(pattern: string): RegExp {
  const body = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'i');
}

/** OpenSSH-style pattern list match: any positive match and no negated match. */
export function matchPatternList(list: string, name: string): boolean {
  let matched = false;
  for (const raw of list.split(',')) {
    if (!raw) continue;
    const negated = raw.startsWith('!');
    const pattern = negated ? raw.slice(1) : raw;
    if (globToRegExp(pattern).test(name)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

/** Does the host field of a known_hosts line cover `name`? */
export function hostFieldMatches(hosts: string, name: string): boolean {
  if (hosts.startsWith('|1|')) {
    const [, , salt, hash] = hosts.split('|');
    if (!salt || !hash) return false;
    const mac = createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64');
    return mac === hash;
  }
  return matchPatternList(hosts, name);
}

/** Key type from an SSH wire-format public key blob (first length-prefixed string). */
export function keyTypeOfBlob(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + len).toString('latin1');
}

/** `SHA256:…` as `ssh-keygen -l` prints it. */
export function fingerprintSha256(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

export type HostKeyVerdict =
  | { ok: true; entry: KnownHostEntry }
  | { ok: false; reason: 'unknown' }
  | { ok: false; reason: 'revoked'; entry: KnownHostEntry }
  | { ok: false; reason: 'changed'; entries: KnownHostEntry[] };

/** Entries that apply to `name` (cert-authority lines dropped). */
export function entriesFor(entries: readonly KnownHostEntry[], name: string): KnownHostEntry[] {
  return entries.filter((e) => e.marker !== 'cert-authority' && hostFieldMatches(e.hosts, name));
}

export function verifyHostKey(entries: readonly KnownHostEntry[], name: string, blob: Buffer): HostKeyVerdict {
  const relevant = entriesFor(entries, name);
  // A revoked key is refused whatever other lines say (usually written `@revoked * type key`).
  const revoked = relevant.find((e) => e.marker === 'revoked' && e.key.equals(blob));
  if (revoked) return { ok: false, reason: 'revoked', entry: revoked };
  const plain = relevant.filter((e) => e.marker === undefined);
  const hit = plain.find((e) => e.key.equals(blob));
  if (hit) return { ok: true, entry: hit };
  if (plain.length === 0) return { ok: false, reason: 'unknown' };
  return { ok: false, reason: 'changed', entries: plain };
}

// Host key algorithms the server may use for a key type found in known_hosts.
const ALGORITHMS_FOR_TYPE: Record<string, string[]> = {
  'ssh-ed25519': ['ssh-ed25519'],
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
  'ecdsa-sha2-nistp256': ['ecdsa-sha2-nistp256'],
  'ecdsa-sha2-nistp384': ['ecdsa-sha2-nistp384'],
  'ecdsa-sha2-nistp521': ['ecdsa-sha2-nistp521'],
};

/**
 * `algorithms.serverHostKey` for a host: only the types we hold keys for, so a server with
 * several host keys presents one we can check. Undefined when nothing is known (do not pin).
 */
export function pinnedHostKeyAlgorithms(entries: readonly KnownHostEntry[], name: string): string[] | undefined {
  const types = new Set(entriesFor(entries, name).filter((e) => e.marker === undefined).map((e) => e.keyType));
  const algos = [...types].flatMap((t) => ALGORITHMS_FOR_TYPE[t] ?? []);
  return algos.length > 0 ? [...new Set(algos)] : undefined;
}
