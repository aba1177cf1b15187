// Target resolution: the destination forms, `ssh -G`, and the built-in fallback reader —
// which must agree with `ssh -G` on the settings it claims to honour.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildResolved,
  evaluateSshConfig,
  expandPath,
  hostPatternsMatch,
  parseSshConfigText,
  parseSshGOutput,
  parseTargetSpec,
  resolveSshTarget,
} from '../../src/host/ssh-target.js';

const env = { home: '/home/me', localUser: 'me' };

describe('destination forms', () => {
  it('splits user@host, host and ssh:// URLs', () => {
    expect(parseTargetSpec('vega')).toEqual({ alias: 'vega' });
    expect(parseTargetSpec('bob@vega.example')).toEqual({ alias: 'vega.example', user: 'bob' });
    expect(parseTargetSpec('ssh://bob@10.0.0.5:2222')).toEqual({ alias: '10.0.0.5', user: 'bob', port: 2222 });
    expect(parseTargetSpec('ssh://host/')).toEqual({ alias: 'host' });
    expect(parseTargetSpec('ssh://[::1]:22')).toEqual({ alias: '::1', port: 22 });
  });

  it('refuses anything that could become an option or shell text', () => {
    for (const bad of ['-oProxyCommand=x', 'a b', "a'b", 'a;b', '$(x)', 'bob@', '@host', '-l@host', 'ssh://h:0', 'ssh://h:70000', 'ssh://h/path', '']) {
      expect(() => parseTargetSpec(bad), bad).toThrow(/Not an ssh destination/);
    }
  });
});

describe('paths and ssh -G output', () => {
  it('expands ~ and % tokens', () => {
    const ctx = { ...env, remoteUser: 'bob', hostName: 'h.example', alias: 'h', port: 2200 };
    expect(expandPath('~/.ssh/id_%r@%h:%p', ctx)).toBe('/home/me/.ssh/id_bob@h.example:2200');
    expect(expandPath('%d/k_%u_%n_%%', ctx)).toBe('/home/me/k_me_h_%');
    expect(expandPath('~', ctx)).toBe('/home/me');
  });

  it('builds a resolved target with OpenSSH defaults', () => {
    const r = buildResolved(parseSshGOutput('hostname 10.1.2.3\nport 22\nidentityfile ~/.ssh/a\nidentityfile %d/b\nuserknownhostsfile ~/.ssh/kh /x/kh2\nproxyjump none\nstricthostkeychecking false\n'), { alias: 'v' }, env, 'ssh -G');
    expect(r).toMatchObject({ hostName: '10.1.2.3', user: 'me', port: 22, identityFiles: ['/home/me/.ssh/a', '/home/me/b'], userKnownHostsFiles: ['/home/me/.ssh/kh', '/x/kh2'], proxyJump: undefined, strictHostKeyChecking: 'false' });
    expect(r.globalKnownHostsFiles).toEqual(['/etc/ssh/ssh_known_hosts', '/etc/ssh/ssh_known_hosts2']);
    const d = buildResolved(new Map(), { alias: 'v', user: 'u', port: 99 }, env, 'config files');
    expect(d).toMatchObject({ hostName: 'v', user: 'u', port: 99, identityAgent: undefined });
    expect(d.identityFiles).toContain('/home/me/.ssh/id_ed25519');
  });
});

describe('fallback config reader', () => {
  it('matches Host patterns with negation', () => {
    expect(hostPatternsMatch(['*.corp', '!build.corp'], 'web.corp')).toBe(true);
    expect(hostPatternsMatch(['*.corp', '!build.corp'], 'build.corp')).toBe(false);
    expect(hostPatternsMatch(['vega'], 'vega2')).toBe(false);
  });

  it('takes the first value, accumulates IdentityFile, skips Match blocks, follows Include', () => {
    const inc = parseSshConfigText('Host vega\n  Port 2200\n  IdentityFile ~/inc_key\n', 'inc');
    const lines = parseSshConfigText(
      [
        'Host vega',
        '  HostName=10.0.0.9',
        '  User "bob"',
        '  IdentityFile ~/k1',
        'Match exec "touch /tmp/never"',
        '  User mallory',
        'Host *',
        '  Include inc',
        '  User other',
        '  IdentityFile ~/k2',
      ].join('\n'),
      'main',
    );
    const map = evaluateSshConfig(lines, 'vega', (arg) => (arg === 'inc' ? inc : []));
    expect(map.get('hostname')).toEqual(['10.0.0.9']);
    expect(map.get('user')).toEqual(['bob']);
    expect(map.get('port')).toEqual(['2200']);
    expect(map.get('identityfile')).toEqual(['~/k1', '~/inc_key', '~/k2']);
  });

  it('agrees with ssh -G on the settings it honours', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-sshcfg-'));
    const home = os.homedir();
    fs.writeFileSync(path.join(dir, 'extra.conf'), 'Host *.lab\n  Port 2201\n  ProxyJump bastion\n');
    const cfg = path.join(dir, 'config');
    fs.writeFileSync(
      cfg,
      [
        `Include ${dir}/extra*.conf`,
        'Host web web.lab',
        '  HostName %h.lab',
        '  User deploy',
        '  IdentityFile ~/.ssh/deploy_%r',
        `  UserKnownHostsFile ${dir}/kh %d/kh2`,
        '  HostKeyAlias webkey',
        'Host !bastion *',
        '  IdentityFile /keys/common',
        '',
      ].join('\n'),
    );
    for (const target of ['web', 'deploy2@web.lab', 'ssh://ops@web:2300', 'plainhost']) {
      const viaSsh = await resolveSshTarget(target, { configFile: cfg });
      const viaFiles = await resolveSshTarget(target, { configFile: cfg, sshBinary: null });
      expect(viaSsh.source).toBe('ssh -G');
      expect(viaFiles.source).toBe('config files');
      const pick = (r: typeof viaSsh) => ({ hostName: r.hostName, user: r.user, port: r.port, identityFiles: r.identityFiles, proxyJump: r.proxyJump, userKnownHostsFiles: r.userKnownHostsFiles, hostKeyAlias: r.hostKeyAlias });
      expect(pick(viaFiles), target).toEqual(pick(viaSsh));
    }
    // Host patterns match what was typed, not the HostName: `Host *.lab` does not apply to `web`.
    const web = await resolveSshTarget('web', { configFile: cfg });
    expect(web).toMatchObject({ hostName: 'web.lab', user: 'deploy', port: 22, proxyJump: undefined, hostKeyAlias: 'webkey' });
    expect(await resolveSshTarget('deploy2@web.lab', { configFile: cfg })).toMatchObject({ hostName: 'web.lab.lab', user: 'deploy2', port: 2201, proxyJump: 'bastion' });
    expect(web.identityFiles).toEqual([`${home}/.ssh/deploy_deploy`, '/keys/common']);
    expect(web.userKnownHostsFiles).toEqual([`${dir}/kh`, `${home}/kh2`]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('falls back to the config files when ssh is not installed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-sshcfg-'));
    const cfg = path.join(dir, 'config');
    fs.writeFileSync(cfg, 'Host v\n  HostName 127.0.0.9\n  Port 2222\n');
    const r = await resolveSshTarget('v', { configFile: cfg, sshBinary: path.join(dir, 'no-ssh-here') });
    expect(r).toMatchObject({ source: 'config files', hostName: '127.0.0.9', port: 2222 });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reports a config that ssh rejects', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-sshcfg-'));
    const cfg = path.join(dir, 'config');
    fs.writeFileSync(cfg, 'Host v\n  NoSuchOption yes\n');
    await expect(resolveSshTarget('v', { configFile: cfg })).rejects.toMatchObject({ code: 'ssh_config' });
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
