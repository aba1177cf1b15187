// startAgent after a wait that ran out (herdr's `timeout`): the pane's entry in herdr's list is an
// agent only while something runs there. herdr keeps a program it never saw "launch pending" past
// the wait; with the pane's shell owning the terminal again, that entry is no agent.
import { describe, expect, it } from 'vitest';
import { omp } from '../../adapters/index.js';
import { startAgent } from '../../src/handoff/start.js';
import type { HerdrClient } from '../../src/herdr/client.js';
import { HerdrError } from '../../src/herdr/herdr-error.js';
import type { AgentInfo } from '../../src/herdr/schemas.js';

const PANE = 'w1:p1';
const pending: AgentInfo = { terminal_id: 't1', name: 'gone', agent: 'omp', agent_status: 'unknown', workspace_id: 'w1', tab_id: 'w1:t1', pane_id: PANE, focused: false, launch_pending: true, revision: 0 } as AgentInfo;
const running: AgentInfo = { ...pending, agent_status: 'idle', launch_pending: false, interactive_ready: true } as AgentInfo;

/** herdr whose `agent start` wait runs out; its list, the pane's foreground and its screen as given. */
function herdrAfterTimeout(listed: AgentInfo[], shellOwns: boolean, screen: string): HerdrClient {
  const stub = {
    host: { label: 'vega' },
    agentStart: () => Promise.reject(new HerdrError('timeout', 'timed out waiting for agent startup', 'vega')),
    agentList: () => Promise.resolve(listed),
    processInfo: () => Promise.resolve({ pane_id: PANE, shell_pid: 10, foreground_process_group_id: shellOwns ? 10 : 20, foreground_processes: [] }),
    read: () => Promise.resolve(screen),
  };
  return stub as unknown as HerdrClient;
}

const start = (herdr: HerdrClient) =>
  startAgent(herdr, { pane: { workspace: 'w1', pane: PANE }, name: 'gone', kind: 'omp', args: ['--resume', 'abc'], trust: false, classify: omp.classifyScreen, timeoutMs: 30_000 });

describe('startAgent after herdr’s wait ran out', () => {
  it('fails as start_failed when herdr still calls the program launching and the shell has the pane', async () => {
    const screen = '$ omp --resume abc\nomp: fatal: could not start\n$ ';
    await expect(start(herdrAfterTimeout([pending], true, screen))).rejects.toMatchObject({ code: 'start_failed', details: { last_output: expect.stringContaining('fatal: could not start') } });
  });

  it('fails as start_failed when herdr lists nothing in the pane', async () => {
    await expect(start(herdrAfterTimeout([], true, '$ omp --resume abc\n$ '))).rejects.toMatchObject({ code: 'start_failed' });
  });

  it('keeps an entry still launching while a program owns the pane (herdr has not placed it yet)', async () => {
    const out = await start(herdrAfterTimeout([pending], false, ' omp v14\n > '));
    expect(out.agent).toMatchObject({ pane_id: PANE, launch_pending: true });
  });

  it('keeps an agent herdr knows, whatever the pane', async () => {
    const out = await start(herdrAfterTimeout([running], true, ' omp v14\n > '));
    expect(out.agent).toMatchObject({ pane_id: PANE, agent_status: 'idle' });
  });
});
