// The world's smoke test: laptop, over ssh2 with host-key verification, runs `herdr agent list`
// on vega and sees a fake claude that was started in a vega pane with the herdr integration
// installed — including the session it reported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HerdrClient } from '../../src/herdr/client.js';
import { SshHost } from '../../src/host/ssh.js';
import { useWorld } from '../helpers/world.js';
import { herdr, herdrOk, makeProject, screen, startFakeAgent, waitFor, type StartedAgent } from '../helpers/e2e.js';
import { herdrVersionOf, type World } from '../world/machines.js';

let world: World;
let agent: StartedAgent | undefined;

beforeAll(async () => {
  world = await useWorld();
});

afterAll(async () => {
  if (agent) await herdr(world, world.users.vega!, ['workspace', 'close', agent.workspace]);
});

describe('world smoke', () => {
  it('laptop sees, over ssh2, a fake claude in a vega pane with its session', async () => {
    const vega = world.users.vega!;
    const laptop = world.users.laptop!;
    const p = makeProject(world, 'smoke');
    const name = `smoke-${Math.random().toString(36).slice(2, 6)}`;
    agent = await startFakeAgent(world, vega, 'claude', p.vega, { name, waitSession: false });
    // A folder claude has not seen asks for trust first; the session starts after it.
    await waitFor('claude at its prompt', async () => {
      const text = await screen(world, vega, agent!.pane);
      if (/Quick safety check/.test(text)) await herdrOk(world, vega, ['pane', 'send-keys', agent!.pane, 'enter']);
      return /❯/.test(text) && !/Quick safety check/.test(text);
    });

    // laptop's key and known_hosts (the host key is verified), no ssh config, no agent.
    const host = await SshHost.connect(`ssh://vega@${world.sshd.host}:${world.sshd.port}`, {
      configFile: '/dev/null',
      identityFiles: [laptop.key],
      knownHostsFiles: [laptop.knownHosts],
      agent: null,
      home: laptop.home,
      localUser: 'laptop',
    });
    try {
      const listed = await waitFor('the session in herdr on vega', async () => {
        const r = await host.run(['herdr', 'agent', 'list']);
        expect(r.exitCode, r.stderr).toBe(0);
        const agents = (JSON.parse(r.stdout) as { result: { agents: { name?: string; agent?: string; agent_session?: { kind: string; value: string; source: string } }[] } }).result.agents;
        const a = agents.find((x) => x.name === name);
        return a?.agent_session ? a : undefined;
      });
      expect(listed).toMatchObject({ agent: 'claude', agent_session: { kind: 'id', source: 'herdr:claude' } });
      expect(listed.agent_session!.value).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(host.counters.handshakes).toBe(1);

      // The typed client: after the probe, reads go to vega's API socket over a streamlocal
      // channel of the same connection — no remote program runs for them.
      const client = new HerdrClient(host);
      expect((await client.probe()).server).toBe('running');
      const commands = host.counters.commands;
      const channels = host.counters.channels;
      const viaSocket = await client.agentList();
      expect(viaSocket.find((a) => a.name === name)).toMatchObject({ agent: 'claude', agent_session: listed.agent_session });
      expect((await client.processInfo(agent!.pane)).pane_id).toBe(agent!.pane);
      expect(host.counters.commands).toBe(commands);
      // Each read takes the spare connection and opens the next one.
      expect(host.counters.channels - channels).toBeGreaterThanOrEqual(2);
      expect(host.counters.channels - channels).toBeLessThanOrEqual(3);
      // Without any probe: a ping where herdr's CLI would look (vega's login environment says
      // where) is enough for reads, and starts no herdr process.
      const quick = new HerdrClient(host);
      expect(await quick.ping()).toBe(true);
      expect((await quick.agentList()).find((a) => a.name === name)?.agent_session).toEqual(listed.agent_session);
      expect(host.counters.commands).toBe(commands);
      // The quick probe over ssh: the full probe with the agents, in one program (a ping alone
      // costs about three round trips there) and no socket request.
      const reaching = new HerdrClient(host);
      const reachedProbe = reaching.reach();
      const listedWithIt = await reaching.agentListBeside(reachedProbe);
      const reached = await reachedProbe;
      expect(reached).toMatchObject({ server: 'running', version: { version: herdrVersionOf(world.herdrKind), ok: true }, serverStatus: { running: true, socket: expect.stringMatching(/herdr\.sock$/) } });
      expect(reached.path).toMatch(/\/herdr$/);
      expect(listedWithIt.find((a) => a.name === name)?.agent_session).toEqual(listed.agent_session);
      expect(host.counters.commands).toBe(commands + 1);
      // Screen reads take the socket too, and say what the CLI says.
      const cliRead = await host.run(['herdr', 'pane', 'read', agent!.pane, '--source', 'visible']);
      expect(cliRead.exitCode).toBe(0);
      expect(cliRead.stdout.trim().length).toBeGreaterThan(0);
      expect(await quick.read(agent!.pane)).toBe(cliRead.stdout);
      expect(host.counters.commands).toBe(commands + 2);
      // A socket that cannot be reached: the CLI answers instead, the same way.
      host.connectSocket = () => Promise.reject(new Error('streamlocal forwarding refused'));
      const fallback = new HerdrClient(host);
      expect(await fallback.ping()).toBe(false);
      expect((await fallback.probe()).server).toBe('running');
      expect((await fallback.agentList()).find((a) => a.name === name)?.agent_session).toEqual(listed.agent_session);
      expect(host.counters.commands).toBe(commands + 4);
      expect(host.counters.handshakes).toBe(1);
    } finally {
      await host.close();
    }
  });
});
