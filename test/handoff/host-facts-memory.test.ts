// The memory of targets' facts: what is read back is what was written, only when it parses, the
// file is private, a host is written again only when its facts changed, and old hosts drop out.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HostInfo } from '../../src/host/host.js';
import { recallHostFacts, rememberHostFacts, sameHostFacts } from '../../src/handoff/host-facts-memory.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tempDir = tempDirs('ah-host-facts-');

const facts = (home: string, extra: Record<string, string> = {}): HostInfo => ({
  home,
  user: 'vega',
  hostname: 'vega',
  platform: 'linux',
  shell: '/bin/bash',
  tmpdir: '/tmp',
  loginEnv: { HOME: home, PATH: `${home}/.local/bin:/usr/bin:/bin`, ...extra },
});

describe('host facts memory', () => {
  it('reads back what it remembered, per address, in a private file', async () => {
    const file = path.join(tempDir(), 'state', 'hosts.json');
    expect(recallHostFacts('vega@vega:22', file)).toBeNull();
    await rememberHostFacts('vega@vega:22', facts('/home/vega'), file);
    await rememberHostFacts('me@box:2222', facts('/home/me', { CODEX_HOME: '/srv/codex' }), file);
    expect(recallHostFacts('vega@vega:22', file)).toEqual(facts('/home/vega'));
    expect(recallHostFacts('me@box:2222', file)).toEqual(facts('/home/me', { CODEX_HOME: '/srv/codex' }));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
  });

  it('writes only when the facts changed', async () => {
    const file = path.join(tempDir(), 'hosts.json');
    await rememberHostFacts('vega@vega:22', facts('/home/vega'), file);
    const before = fs.statSync(file).ino;
    await rememberHostFacts('vega@vega:22', facts('/home/vega'), file);
    expect(fs.statSync(file).ino).toBe(before);
    await rememberHostFacts('vega@vega:22', facts('/home/vega', { HERDR_SOCKET_PATH: '/run/h.sock' }), file);
    expect(fs.statSync(file).ino).not.toBe(before);
    expect(recallHostFacts('vega@vega:22', file)?.loginEnv.HERDR_SOCKET_PATH).toBe('/run/h.sock');
  });

  it('forgets nothing it cannot read, and trusts nothing that does not parse', async () => {
    const dir = tempDir();
    for (const [name, text] of [
      ['not-json', '{'],
      ['wrong-version', JSON.stringify({ version: 2, hosts: { a: facts('/h') } })],
      ['wrong-shape', JSON.stringify({ version: 1, hosts: { a: { ...facts('/h'), loginEnv: { PATH: 5 } } } })],
    ] as const) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, text);
      expect(recallHostFacts('a', file), name).toBeNull();
      await rememberHostFacts('a', facts('/h'), file);
      expect(recallHostFacts('a', file), name).toEqual(facts('/h'));
    }
  });

  it('keeps the 32 most recently changed hosts', async () => {
    const file = path.join(tempDir(), 'hosts.json');
    for (let i = 0; i < 34; i++) await rememberHostFacts(`h${i}`, facts(`/home/${i}`), file);
    expect(recallHostFacts('h0', file)).toBeNull();
    expect(recallHostFacts('h1', file)).toBeNull();
    expect(recallHostFacts('h2', file)).toEqual(facts('/home/2'));
    expect(recallHostFacts('h33', file)).toEqual(facts('/home/33'));
  });

  it('calls facts the same only when every field and variable is', () => {
    expect(sameHostFacts(facts('/home/vega'), facts('/home/vega'))).toBe(true);
    expect(sameHostFacts(facts('/home/vega'), { ...facts('/home/vega'), tmpdir: '/var/tmp' })).toBe(false);
    expect(sameHostFacts(facts('/home/vega'), facts('/home/vega', { XDG_RUNTIME_DIR: '/run/user/1000' }))).toBe(false);
  });
});
