// Which herdr agent does the user mean? A name, a pane id, or (only when neither matches) a
// unique prefix of a session id.
import { HandoffError } from '../errors.js';
import type { AgentInfo } from '../herdr/schemas.js';

const UUID_IN_PATH = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\.jsonl)?$/i;

/** The session id herdr knows for an agent (a path-kind ref carries the id in its file name). */
export function sessionIdOf(agent: AgentInfo): string | null {
  const s = agent.agent_session;
  if (!s) return null;
  if (s.kind === 'id') return s.value;
  return UUID_IN_PATH.exec(s.value)?.[1] ?? null;
}

function roster(agents: AgentInfo[]): string {
  if (agents.length === 0) return 'no agents are running in herdr';
  return agents.map((a) => `${a.name ?? a.pane_id} (${a.agent ?? 'unknown'})`).join(', ');
}

export function findAgent(agents: AgentInfo[], ref: string, hostLabel: string): AgentInfo {
  const byName = agents.filter((a) => a.name === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) {
    throw new HandoffError('agent_ambiguous', `Several agents on ${hostLabel} are named ${ref}.`, { fix: `Name one by its pane id: ${byName.map((a) => a.pane_id).join(', ')}.` });
  }
  const byPane = agents.find((a) => a.pane_id === ref);
  if (byPane) return byPane;
  const bySession = ref.length >= 4 ? agents.filter((a) => sessionIdOf(a)?.toLowerCase().startsWith(ref.toLowerCase())) : [];
  if (bySession.length === 1) return bySession[0]!;
  if (bySession.length > 1) {
    throw new HandoffError('agent_ambiguous', `The session prefix ${ref} matches several agents on ${hostLabel}: ${roster(bySession)}.`, { fix: 'Give a longer prefix, the agent name or its pane id.' });
  }
  throw new HandoffError('agent_not_found', `No agent on ${hostLabel} is named ${JSON.stringify(ref)}, runs in that pane, or has a session starting with it; live agents: ${roster(agents)}.`, {
    fix: 'Run `agent-handoff list` and pass one of its `target` values.',
  });
}
