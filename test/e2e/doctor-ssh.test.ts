// e2e, asserted on doctor's JSON: a changed host key, an ssh-config alias with ProxyJump, and a
// key that only ssh-agent holds — run as the laptop user with its own ~/.ssh.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { handoff, runAs } from '../helpers/e2e.js';
import { sshConfigFragment, startSshd, type World, type WorldUser } from '../world/machines.js';

let world: World;
let laptop: WorldUser;
let dir: string;
let inner: Awaited<ReturnType<typeof startSshd>> | undefined;

function own(file: string, text: string, mode = 0o600): string {
  fs.writeFileSync(file, text, { mode });
  fs.chownSync(file, laptop.uid, laptop.gid);
  return file;
}

/** Add `Host` blocks for this test as an ssh config fragment, removed again afterwards. */
async function withConfig<T>(name: string, text: string, fn: () => Promise<T>): Promise<T> {
  const remove = sshConfigFragment(laptop, `doctor-ssh-${name}`, text);
  try {
    return await fn();
  } finally {
    remove();
  }
}

beforeAll(async () => {
  world = await useWorld();
  laptop = world.users.laptop!;
  dir = path.join(laptop.home, `.ah-doctor-ssh-${process.pid}`);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chownSync(dir, laptop.uid, laptop.gid);
});

afterAll(() => {
  if (inner) process.kill(inner.pid, 'SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});

type Problem = { code: string; problem: string; fix: string };

describe('doctor over ssh, asserted on its JSON', () => {
  it('refuses a changed host key loudly, naming the known_hosts line', async () => {
    const other = path.join(dir, 'other_host_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
    const otherPub = fs.readFileSync(`${other}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
    const kh = own(path.join(dir, 'kh-changed'), `[127.0.0.1]:${world.sshd.port} ${otherPub}\n`, 0o644);
    const r = await withConfig('changed', `Host vega-changed\n  HostName 127.0.0.1\n  Port ${world.sshd.port}\n  User vega\n  UserKnownHostsFile ${kh}\n`, () => handoff(world, laptop, ['doctor', 'vega-changed']));
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ ok: true, ready: false, target: null });
    const p = (r.json.problems as Problem[]).find((x) => x.code === 'host_key_changed');
    expect(p?.problem).toMatch(/HAS CHANGED/);
    expect(p?.problem).toContain(`${kh}:1`);
  });

  it('reaches a host behind a ProxyJump alias, verifying both host keys, over one connection chain', async () => {
    inner = await startSshd(path.join(world.dir, `sshd-inner-${process.pid}`), { host: '127.0.0.2', users: ['vega'] });
    const kh = own(path.join(dir, 'kh-jump'), `${world.sshd.hostKeyLine}\n${inner.hostKeyLine}\n`, 0o644);
    const cfg = [`Host vega-inner`, `  HostName 127.0.0.2`, `  Port ${inner.port}`, `  User vega`, `  ProxyJump vega`, `  UserKnownHostsFile ${kh}`, ''].join('\n');
    const r = await withConfig('jump', cfg, () => handoff(world, laptop, ['doctor', 'vega-inner']));
    expect(r.json.problems).toEqual([]);
    expect((r.json.target as { ssh: unknown }).ssh).toMatchObject({ host: '127.0.0.2', port: inner.port, user: 'vega', proxy_jump: 'vega', handshakes: 2 });
    expect(r.code).toBe(0);
    expect(fs.readFileSync(inner.log, 'utf8')).toContain('Accepted publickey for vega');
  });

  describe('a passphrase-protected key', () => {
    const vegaKeys = () => path.join(world.users.vega!.home, '.ssh', 'authorized_keys');
    let encKey: string;
    let pubLine: string;
    let agent: ChildProcess | undefined;
    const sock = () => path.join(dir, 'agent.sock');

    beforeAll(async () => {
      encKey = path.join(dir, 'id_enc');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'correct horse', '-C', `ah-doctor-${process.pid}`, '-f', encKey]);
      for (const f of [encKey, `${encKey}.pub`]) fs.chownSync(f, laptop.uid, laptop.gid);
      pubLine = fs.readFileSync(`${encKey}.pub`, 'utf8').trim();
      fs.appendFileSync(vegaKeys(), `${pubLine}\n`);
      agent = spawn('ssh-agent', ['-D', '-a', sock()], { uid: laptop.uid, gid: laptop.gid, stdio: 'ignore', env: { HOME: laptop.home, PATH: '/usr/bin:/bin' } });
      const deadline = Date.now() + 5000;
      while (!fs.existsSync(sock()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const askpass = own(path.join(dir, 'askpass'), "#!/bin/sh\necho 'correct horse'\n", 0o700);
      const add = await runAs(laptop, ['ssh-add', encKey], { env: { SSH_AUTH_SOCK: sock(), SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0' } });
      expect(add.code, add.stderr).toBe(0);
    });

    afterAll(() => {
      agent?.kill('SIGTERM');
      const kept = fs.readFileSync(vegaKeys(), 'utf8').split('\n').filter((l) => l.trim() !== pubLine);
      fs.writeFileSync(vegaKeys(), kept.join('\n'));
    });

    const cfg = () => `Host vega-enc\n  HostName 127.0.0.1\n  Port ${world.sshd.port}\n  User vega\n  IdentityFile ${encKey}\n  IdentitiesOnly yes\n`;

    it('is used through ssh-agent when the agent holds it', async () => {
      const r = await withConfig('agent', cfg(), () => handoff(world, laptop, ['doctor', 'vega-enc'], { env: { SSH_AUTH_SOCK: sock() } }));
      expect(r.json.problems).toEqual([]);
      expect((r.json.target as { ssh: unknown }).ssh).toMatchObject({ auth: 'ssh-agent', user: 'vega' });
    });

    it('is named, with the ssh-add fix, when no agent holds it — never a prompt', async () => {
      const r = await withConfig('noagent', cfg(), () => handoff(world, laptop, ['doctor', 'vega-enc'], { env: { SSH_AUTH_SOCK: '' } }));
      expect(r.code).toBe(1);
      const p = (r.json.problems as Problem[]).find((x) => x.code === 'auth_key_encrypted');
      expect(p?.fix).toContain(`ssh-add ${encKey}`);
    });
  });
});
