// Whether the agent is known idle just before its quit: a status read trusted only while fresh.
import { describe, expect, it } from 'vitest';
import type { AgentInfo } from '../../src/herdr/schemas.js';
import { askStatus, isBusy, knownIdle, STATUS_FRESH_MS, type AgentStatusRead } from '../../src/handoff/idle-check.js';

describe('knownIdle', () => {
  const at = 10_000;
  it.each<[string, AgentStatusRead | null, number, boolean]>([
    ['idle, just asked', { status: 'idle', askedAtMs: at }, at + 120, true],
    ['done, just asked', { status: 'done', askedAtMs: at }, at + 120, true],
    ['unknown, just asked (herdr could not tell; not busy)', { status: 'unknown', askedAtMs: at }, at + 1, true],
    ['idle, but asked as long ago as herdr takes to notice a change', { status: 'idle', askedAtMs: at }, at + STATUS_FRESH_MS, false],
    ['idle, asked long ago', { status: 'idle', askedAtMs: at }, at + 5_000, false],
    ['working', { status: 'working', askedAtMs: at }, at + 1, false],
    ['blocked', { status: 'blocked', askedAtMs: at }, at + 1, false],
    ['no agent in the pane any more', { status: null, askedAtMs: at }, at + 1, false],
    ['not asked (the kind need not be idle, or a dry run)', null, at, false],
  ])('%s → %s', (_what, read, now, known) => {
    expect(knownIdle(read, now)).toBe(known);
  });

  it('busy means working or blocked', () => {
    expect(['working', 'blocked', 'idle', 'done', 'unknown', null].map(isBusy)).toEqual([true, true, false, false, false, false]);
  });
});

describe('askStatus', () => {
  const agent = (pane: string, status: string) => ({ pane_id: pane, agent_status: status }) as unknown as AgentInfo;

  it('gives the pane’s status with the time the question was sent, not answered', async () => {
    let clock = 500;
    const herdr = {
      agentList: async () => {
        clock += 100;
        return [agent('w1:p1', 'working'), agent('w1:p2', 'idle')];
      },
    };
    expect(await askStatus(herdr, 'w1:p2', () => clock)).toEqual({ status: 'idle', askedAtMs: 500 });
    expect(await askStatus(herdr, 'w1:p1', () => clock)).toEqual({ status: 'working', askedAtMs: 600 });
    expect(await askStatus(herdr, 'w9:p9', () => clock)).toEqual({ status: null, askedAtMs: 700 });
  });
});
