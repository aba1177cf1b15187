import { describe, expect, it } from 'vitest';
import { toAgentName, uniqueAgentName } from '../../src/handoff/start.js';
import { findAgent, sessionIdOf } from '../../src/handoff/find-agent.js';
import type { AgentInfo } from '../../src/herdr/schemas.js';

const NAME_RULE = /^[a-z][a-z0-9_-]{0,31}$/;

describe('agent names on the target', () => {
  it('derives valid herdr names from anything', () => {
    for (const s of ['hark-claude', 'Hark Claude', '2fast', '$(rm -rf)', 'ünïcødé-repo', '', '-x-', 'a'.repeat(80)]) {
      expect(toAgentName(s)).toMatch(NAME_RULE);
    }
    expect(toAgentName('Hark Claude')).toBe('hark-claude');
  });
  it('suffixes -2, -3… when taken, within 32 characters', () => {
    expect(uniqueAgentName('rev', new Set())).toBe('rev');
    expect(uniqueAgentName('rev', new Set(['rev']))).toBe('rev-2');
    expect(uniqueAgentName('rev', new Set(['rev', 'rev-2']))).toBe('rev-3');
    const long = 'a'.repeat(32);
    const n = uniqueAgentName(long, new Set([long]));
    expect(n).toMatch(NAME_RULE);
    expect(n.endsWith('-2')).toBe(true);
  });
});

function agent(over: Partial<AgentInfo>): AgentInfo {
  return { terminal_id: 't', agent_status: 'idle', workspace_id: 'w1', tab_id: 'w1:t1', pane_id: 'w1:p1', focused: false, revision: 0, ...over } as AgentInfo;
}

describe('finding the agent', () => {
  const agents = [
    agent({ name: 'rev', agent: 'claude', pane_id: 'w1:p1', agent_session: { source: 'herdr:claude', agent: 'claude', kind: 'id', value: '7529c0d9-ed0d-4e45-a4e1-413fe4ba5257' } }),
    agent({ agent: 'pi', pane_id: 'w1:p2', agent_session: { source: 'herdr:pi', agent: 'pi', kind: 'path', value: '/h/.pi/agent/sessions/--x--/2026-11-30T15-58-15-202Z_01a22d2d-a2a2-772f-b24e-f647591d4c9e.jsonl' } }),
    agent({ name: 'dup', agent: 'codex', pane_id: 'w2:p1' }),
    agent({ name: 'dup', agent: 'codex', pane_id: 'w2:p2' }),
  ];
  it('by name, by pane, by session prefix (ids inside pi/omp paths too)', () => {
    expect(findAgent(agents, 'rev', 'local').pane_id).toBe('w1:p1');
    expect(findAgent(agents, 'w1:p2', 'local').agent).toBe('pi');
    expect(findAgent(agents, '7529c0', 'local').name).toBe('rev');
    expect(findAgent(agents, '01a22d2d', 'local').pane_id).toBe('w1:p2');
    expect(sessionIdOf(agents[1]!)).toBe('01a22d2d-a2a2-772f-b24e-f647591d4c9e');
  });
  it('refuses unknown and ambiguous references, listing the live agents', () => {
    expect(() => findAgent(agents, 'nope', 'local')).toThrow(/rev \(claude\), w1:p2 \(pi\)/);
    expect(() => findAgent(agents, 'dup', 'local')).toThrow(expect.objectContaining({ code: 'agent_ambiguous' }));
  });
});
