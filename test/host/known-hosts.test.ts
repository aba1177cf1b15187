// known_hosts parsing and verification, checked against what OpenSSH's own tools write.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  fingerprintSha256,
  hostFieldMatches,
  keyTypeOfBlob,
  knownHostsName,
  matchPatternList,
  parseKnownHosts,
  pinnedHostKeyAlgorithms,
  verifyHostKey,
} from '../../src/host/known-hosts.js';

const tmpDirs: string[] = [];
function tmpDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-kh-'));
  tmpDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

function newKey(type = 'ed25519'): { line: string; b64: string; blob: Buffer; file: string } {
  const dir = tmpDir();
  const file = path.join(dir, 'k');
  execFileSync('ssh-keygen', ['-q', '-t', type, '-N', '', '-f', file]);
  const line = fs.readFileSync(`${file}.pub`, 'utf8').trim();
  const b64 = line.split(' ')[1]!;
  return { line, b64, blob: Buffer.from(b64, 'base64'), file: `${file}.pub` };
}

const a = newKey();
const b = newKey();

describe('known_hosts', () => {
  it('parses lines with markers, skips comments and junk, keeps line numbers', () => {
    const text = `# comment\n\nhost1 ssh-ed25519 ${a.b64} c\n@revoked * ssh-ed25519 ${b.b64}\n@cert-authority *.x ssh-ed25519 ${a.b64}\n@bogus h ssh-ed25519 ${a.b64}\nbroken line\n`;
    const e = parseKnownHosts(text, 'F');
    expect(e.map((x) => [x.line, x.marker, x.hosts])).toEqual([
      [3, undefined, 'host1'],
      [4, 'revoked', '*'],
      [5, 'cert-authority', '*.x'],
    ]);
    expect(e[0]!.key.equals(a.blob)).toBe(true);
  });

  it('names hosts like OpenSSH: bare for port 22, [host]:port otherwise, HostKeyAlias verbatim', () => {
    expect(knownHostsName('Vega.Example', 22)).toBe('vega.example');
    expect(knownHostsName('127.0.0.1', 2222)).toBe('[127.0.0.1]:2222');
    expect(knownHostsName('127.0.0.1', 2222, 'myalias')).toBe('myalias');
  });

  it('matches hashed entries written by ssh-keygen -H, for both name forms', () => {
    const file = path.join(tmpDir(), 'known_hosts');
    fs.writeFileSync(file, `vega.example ssh-ed25519 ${a.b64}\n[127.0.0.1]:2222 ssh-ed25519 ${b.b64}\n`);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', file], { stdio: 'ignore' });
    const entries = parseKnownHosts(fs.readFileSync(file, 'utf8'), file);
    expect(entries.every((e) => e.hosts.startsWith('|1|'))).toBe(true);
    expect(verifyHostKey(entries, 'vega.example', a.blob).ok).toBe(true);
    expect(verifyHostKey(entries, '[127.0.0.1]:2222', b.blob).ok).toBe(true);
    expect(verifyHostKey(entries, '127.0.0.1', b.blob)).toEqual({ ok: false, reason: 'unknown' });
    expect(hostFieldMatches('|1|bad', 'x')).toBe(false);
  });

  it('matches pattern lists with wildcards and negation, case-insensitively', () => {
    expect(matchPatternList('*.example.com,!bad.example.com', 'good.example.com')).toBe(true);
    expect(matchPatternList('*.example.com,!bad.example.com', 'bad.example.com')).toBe(false);
    expect(matchPatternList('host?', 'HOST1')).toBe(true);
    expect(matchPatternList('[10.0.0.?]:2222', '[10.0.0.5]:2222')).toBe(true);
    expect(matchPatternList('a.b', 'aXb')).toBe(false);
  });

  it('tells ok, unknown, changed (with every old entry) and revoked apart; ignores cert-authority', () => {
    const text = `h ssh-ed25519 ${a.b64}\nh,other ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ\n@cert-authority h ssh-ed25519 ${b.b64}\n`;
    const entries = parseKnownHosts(text, 'F');
    expect(verifyHostKey(entries, 'h', a.blob)).toMatchObject({ ok: true, entry: { line: 1 } });
    const changed = verifyHostKey(entries, 'h', b.blob);
    expect(changed).toMatchObject({ ok: false, reason: 'changed' });
    expect(changed.ok === false && changed.reason === 'changed' && changed.entries.map((e) => e.line)).toEqual([1, 2]);
    expect(verifyHostKey(entries, 'nobody', a.blob)).toEqual({ ok: false, reason: 'unknown' });
    const revoked = parseKnownHosts(`h ssh-ed25519 ${a.b64}\n@revoked * ssh-ed25519 ${a.b64}\n`, 'F');
    expect(verifyHostKey(revoked, 'h', a.blob)).toMatchObject({ ok: false, reason: 'revoked', entry: { line: 2 } });
  });

  it('pins host key algorithms to the known types only', () => {
    const entries = parseKnownHosts(`h ssh-ed25519 ${a.b64}\nh ssh-rsa ${a.b64}\n@revoked h ecdsa-sha2-nistp256 ${a.b64}\n`, 'F');
    expect(pinnedHostKeyAlgorithms(entries, 'h')).toEqual(['ssh-ed25519', 'rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa']);
    expect(pinnedHostKeyAlgorithms(entries, 'nobody')).toBeUndefined();
  });

  it('prints fingerprints and key types as ssh-keygen does', () => {
    const out = execFileSync('ssh-keygen', ['-lf', a.file], { encoding: 'utf8' });
    expect(out.split(' ')[1]).toBe(fingerprintSha256(a.blob));
    expect(keyTypeOfBlob(a.blob)).toBe('ssh-ed25519');
    expect(keyTypeOfBlob(newKey('ecdsa').blob)).toBe('ecdsa-sha2-nistp256');
  });
});
