// startAgent once herdr calls the agent ready: the look that found it ready also saw the pane's
// foreground. A program there (the agent) means it did not exit first (herdr's readiness is also
// given to a program that exits before its 3 s): that look stands and herdr's list is not asked.
// The shell there, or a look that did not see the pane, leaves it to the list.
import { describe, expect, it } from 'vitest';
import { pi } from '../../adapters/index.js';
import { startAgent } from '../../src/handoff/start.js';
import type { HerdrClient } from '../../src/herdr/client.js';
import type { AgentInfo } from '../../src/herdr/schemas.js';

const PANE = 'w1:p1';
const ready: AgentInfo = { terminal_id: 't1', name: 'pi', agent: 'pi', agent_status: 'idle', workspace_id: 'w1', tab_id: 'w1:t1', pane_id: PANE, focused: false, launch_pending: false, interactive_ready: true, revision: 3 } as AgentInfo;
const SCREEN = ' pi v0.9\n > ';

/** herdr whose start found the agent ready, `running` as that look saw the pane; its list as given, the asks counted. */
function herdrReady(running: boolean | null, listed: AgentInfo[]) {
  const asked = { list: 0, read: 0 };
  const stub = {
    host: { label: 'vega' },
    agentStart: () => Promise.resolve({ agent: ready, argv: ['pi', '--session', 'abc'], screen: SCREEN, running }),
    agentList: () => (asked.list++, Promise.resolve(listed)),
    processInfo: () => Promise.resolve({ pane_id: PANE, shell_pid: 10, foreground_process_group_id: 10, foreground_processes: [] }),
    read: () => (asked.read++, Promise.resolve(SCREEN)),
  };
  return { herdr: stub as unknown as HerdrClient, asked };
}

const start = (herdr: HerdrClient) => startAgent(herdr, { pane: { workspace: 'w1', pane: PANE }, name: 'pi', kind: 'pi', args: ['--session', 'abc'], trust: true, classify: pi.classifyScreen, timeoutMs: 30_000 });

describe('startAgent when herdr calls the agent ready', () => {
  it('takes the ready look as it is when it saw the agent in the foreground: no list, no screen asked', async () => {
    const { herdr, asked } = herdrReady(true, []);
    const out = await start(herdr);
    expect(out).toMatchObject({ pane: PANE, agent: ready, trust: 'not_shown', waitingForUser: [] });
    expect(asked).toEqual({ list: 0, read: 0 });
  });

  it('asks the list when the look saw the shell in the foreground: an agent that exited first fails the start', async () => {
    const { herdr, asked } = herdrReady(false, []);
    await expect(start(herdr)).rejects.toMatchObject({ code: 'start_failed' });
    expect(asked.list).toBe(1);
  });

  it('asks the list when the look did not see the pane, and keeps what it lists', async () => {
    const later = { ...ready, revision: 4 };
    const { herdr, asked } = herdrReady(null, [later]);
    expect((await start(herdr)).agent).toEqual(later);
    expect(asked.list).toBe(1);
  });
});
