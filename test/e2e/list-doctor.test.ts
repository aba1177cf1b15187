// e2e: `list`, `list --from vega`, `doctor vega`, `doctor` without herdr — as the laptop user,
// over real ssh to the vega user, against the herdr simulators and a fake claude.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { handoff, herdrOk, resetClone, runAs, startFakeAgent, type StartedAgent } from '../helpers/e2e.js';
import { herdrVersionOf, laptopAlias, sshConfigFragment, type World } from '../world/machines.js';
import { startDelayProxy, type DelayProxy } from '../../bench/delay-proxy.js';

let world: World;
let onVega: StartedAgent;
let onLaptop: StartedAgent;

beforeAll(async () => {
  world = await useWorld();
  const vega = world.users.vega!;
  const laptop = world.users.laptop!;
  resetClone(world, vega, world.repos.vega);
  resetClone(world, laptop, world.repos.laptop);
  onVega = await startFakeAgent(world, vega, 'pi', world.repos.vega, { name: 'ld-vega-pi' });
  onLaptop = await startFakeAgent(world, laptop, 'pi', world.repos.laptop, { name: 'ld-laptop-pi' });
});

afterAll(async () => {
  if (!world) return;
  await herdrOk(world, world.users.vega!, ['workspace', 'close', onVega.workspace]).catch(() => undefined);
  await herdrOk(world, world.users.laptop!, ['workspace', 'close', onLaptop.workspace]).catch(() => undefined);
});

/**
 * An ssh alias for vega that goes through a counting TCP proxy: every connection through it is
 * one SSH handshake of ours (sshd's own log would also count other tests' logins).
 */
async function countedAlias(name: string): Promise<{ proxy: DelayProxy; restore: () => Promise<void> }> {
  const proxy = await startDelayProxy({ host: world.sshd.host, port: world.sshd.port }, 0);
  const remove = laptopAlias(world, name, proxy.port);
  return {
    proxy,
    restore: async () => {
      remove();
      await proxy.close();
    },
  };
}

describe('list', () => {
  it('lists the agents on this machine with their session and this_pane', async () => {
    const r = await handoff(world, world.users.laptop!, ['list'], { env: { HERDR_PANE_ID: onLaptop.pane } });
    expect(r.code).toBe(0);
    const agent = (r.json.agents as Record<string, unknown>[]).find((a) => a.name === 'ld-laptop-pi');
    expect(agent).toMatchObject({ target: 'ld-laptop-pi', kind: 'pi', supported: true, this_pane: true, pane: onLaptop.pane, cwd: world.repos.laptop });
    expect((agent!.session as { kind: string; value: string }).kind).toBe('path');
  });

  it('lists the agents of another machine over ssh, with nothing installed there but herdr', async () => {
    const counted = await countedAlias('vega-list');
    const r = await handoff(world, world.users.laptop!, ['list', '--from', 'vega-list'], { env: { HERDR_PANE_ID: onLaptop.pane } }).finally(counted.restore);
    expect(r.code).toBe(0);
    expect(counted.proxy.connections).toBe(1);
    // Named as typed; where it really is comes with it.
    expect(r.json.host).toBe('vega-list');
    expect(r.json.address).toMatch(/^vega@127\.0\.0\.1:\d+$/);
    const agent = (r.json.agents as Record<string, unknown>[]).find((a) => a.name === 'ld-vega-pi');
    // HERDR_PANE_ID names a laptop pane: never "this pane" on vega.
    expect(agent).toMatchObject({ kind: 'pi', supported: true, this_pane: false, cwd: world.repos.vega });
  });
});

describe('doctor', () => {
  it('checks here and vega with exactly one ssh handshake, and says ready', async () => {
    const counted = await countedAlias('vega-doctor');
    const r = await handoff(world, world.users.laptop!, ['doctor', 'vega-doctor']).finally(counted.restore);
    expect(counted.proxy.connections).toBe(1);
    expect(r.json).toMatchObject({ ok: true, command: 'doctor' });
    const target = r.json.target as Record<string, unknown>;
    expect(target.ssh).toMatchObject({ host: '127.0.0.1', user: 'vega', handshakes: 1, host_key: 'verified', auth: `publickey ${world.users.laptop!.key}` });
    expect((target.ssh as { connect_ms: number }).connect_ms).toBeGreaterThan(0);
    expect(target.herdr).toMatchObject({ installed: true, version: herdrVersionOf(world.herdrKind), server: 'running' });
    expect((target.config_roots as Record<string, string>).claude).toBe('/home/vega/.claude');
    expect(r.json.problems).toEqual([]);
    expect(r.json.ready).toBe(true);
    expect(r.code).toBe(0);
  });

  it('works on a machine without herdr and names the fix', async () => {
    const laptop = world.users.laptop!;
    // A login PATH without the world's bin folder: herdr is not installed here.
    const r = await runAs(laptop, [process.execPath, world.app, 'doctor'], { env: { PATH: '/usr/bin:/bin' } });
    const json = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(r.code).toBe(1);
    expect(json).toMatchObject({ ok: true, ready: false });
    expect((json.local as { herdr: unknown }).herdr).toMatchObject({ installed: false, server: 'not_installed' });
    const problem = (json.problems as { code: string; fix: string }[]).find((p) => p.code === 'herdr_not_installed');
    expect(problem?.fix).toMatch(/Install herdr/);
  });

  it('refuses an unknown host key with the command to add it', async () => {
    const laptop = world.users.laptop!;
    const kh = `${laptop.home}/.ssh/known_hosts_empty`;
    fs.writeFileSync(kh, '');
    fs.chownSync(kh, laptop.uid, laptop.gid);
    const remove = sshConfigFragment(laptop, 'vega-unknown', `Host vega-unknown\n  HostName 127.0.0.1\n  Port ${world.sshd.port}\n  User vega\n  UserKnownHostsFile ${kh}\n`);
    try {
      const r = await handoff(world, laptop, ['doctor', 'vega-unknown']);
      expect(r.code).toBe(1);
      const problem = (r.json.problems as { code: string; fix: string }[]).find((p) => p.code === 'host_key_unknown');
      expect(problem?.fix).toMatch(/ssh-keyscan/);
    } finally {
      remove();
    }
  });
});
