import { describe, expect, it } from 'vitest';
import type { AgentInfo, WorkspaceInfo } from '../../src/herdr/schemas.js';
import { selectAgents, workspacesNamed } from '../../src/handoff/select-agents.js';
import { HandoffError } from '../../src/errors.js';

function agent(pane: string, o: Partial<AgentInfo> = {}): AgentInfo {
  return { terminal_id: `t-${pane}`, pane_id: pane, workspace_id: pane.split(':')[0]!, tab_id: `${pane.split(':')[0]}:t1`, focused: false, agent_status: 'idle', revision: 1, agent: 'pi', name: null, ...o } as AgentInfo;
}

const list: AgentInfo[] = [
  agent('w1:p1', { name: 'api-claude', agent: 'claude' }),
  agent('w1:p2', { name: 'api-pi', agent: 'pi' }),
  agent('w2:p1', { name: 'web-codex', agent: 'codex' }),
  agent('w2:p2', { name: 'web-gemini', agent: 'gemini' }),
  // A plain shell: herdr sees no agent there.
  agent('w3:p1', { name: null, agent: null }),
  agent('w3:p2', { name: null, agent: 'omp' }),
];

const workspaces = [
  { workspace_id: 'w1', label: 'api' },
  { workspace_id: 'w2', label: 'web' },
  { workspace_id: 'w3', label: 'misc' },
  { workspace_id: 'w4', label: 'web' },
] as WorkspaceInfo[];

const panes = (s: { chosen: AgentInfo[] }) => s.chosen.map((a) => a.pane_id);
const refusals = (s: { refused: { agent: string; code: string }[] }) => s.refused.map((r) => `${r.agent}:${r.code}`);

describe('selectAgents', () => {
  const cases: [string, Parameters<typeof selectAgents>[1], string[], string[], string[]?][] = [
    ['names, in the order given', { agents: ['web-codex', 'api-pi'], all: false, workspace: null }, ['w2:p1', 'w1:p2'], []],
    ['a pane id and a name of the same agent count once', { agents: ['api-pi', 'w1:p2'], all: false, workspace: null }, ['w1:p2'], []],
    ['a kind agent-handoff cannot move is refused', { agents: ['web-gemini', 'api-claude'], all: false, workspace: null }, ['w1:p1'], ['web-gemini:unsupported_kind']],
    ['--all: every agent, shells left out, unsupported kinds refused', { agents: [], all: true, workspace: null }, ['w1:p1', 'w1:p2', 'w2:p1', 'w3:p2'], ['web-gemini:unsupported_kind']],
    ['--workspace: the agents of that workspace', { agents: [], all: false, workspace: 'api' }, ['w1:p1', 'w1:p2'], [], ['w1']],
    ['--workspace by a label two workspaces share: both', { agents: [], all: false, workspace: 'web' }, ['w2:p1'], ['web-gemini:unsupported_kind'], ['w2', 'w4']],
  ];
  for (const [what, ask, chosen, refused, ws] of cases) {
    it(what, () => {
      const s = selectAgents(list, ask, 'laptop', ws ?? []);
      expect(panes(s)).toEqual(chosen);
      expect(refusals(s)).toEqual(refused);
      for (const r of s.refused) expect(r.fix, r.agent).toBeTruthy();
    });
  }
  it('--all with no agent at all is an error, not an empty batch', () => {
    expect(() => selectAgents([agent('w3:p1', { agent: null })], { agents: [], all: true, workspace: null }, 'laptop')).toThrow(HandoffError);
    expect(() => selectAgents(list, { agents: [], all: false, workspace: 'misc' }, 'laptop', ['w9'])).toThrow(/No agents run in the herdr workspace misc/);
  });
  it('a name that finds no agent stops the whole batch (a typo must not move the rest without it)', () => {
    expect(() => selectAgents(list, { agents: ['api-pi', 'nope'], all: false, workspace: null }, 'laptop')).toThrow(expect.objectContaining({ code: 'agent_not_found' }));
    expect(() => selectAgents(list, { agents: ['nope', 'api-pi', 'nada'], all: false, workspace: null }, 'laptop')).toThrow(/2 of the agents named/);
  });
  it('hostile names are data, never patterns', () => {
    expect(() => selectAgents(list, { agents: ['.*', 'api-pi'], all: false, workspace: null }, 'laptop')).toThrow(/"\.\*"/);
    expect(() => selectAgents(list, { agents: ['$(rm -rf ~)', 'api-pi'], all: false, workspace: null }, 'laptop')).toThrow(expect.objectContaining({ code: 'agent_not_found' }));
  });
});

describe('workspacesNamed', () => {
  it('by id first, else by label; an unknown one says which exist', () => {
    expect(workspacesNamed(workspaces, 'w2', 'laptop')).toEqual(['w2']);
    expect(workspacesNamed(workspaces, 'web', 'laptop')).toEqual(['w2', 'w4']);
    expect(() => workspacesNamed(workspaces, 'nope', 'laptop')).toThrow(/w1 \(api\), w2 \(web\)/);
  });
});
