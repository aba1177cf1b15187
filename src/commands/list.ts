// `list`: the herdr agents on one machine (this one, or --from HOST over its SSH Host).
import { HerdrClient } from '../herdr/client.js';
import type { AgentInfo } from '../herdr/schemas.js';
import type { Host } from '../host/host.js';
import { SUPPORTED_KINDS, type ListResult, type ListedAgent } from '../result.js';

export function describeAgent(a: AgentInfo, thisPane: string | undefined): ListedAgent {
  const kind = a.agent ?? null;
  return {
    target: a.name ?? a.pane_id,
    name: a.name ?? null,
    pane: a.pane_id,
    workspace: a.workspace_id,
    kind,
    status: a.agent_status,
    cwd: a.foreground_cwd ?? a.cwd ?? null,
    session: a.agent_session ? { kind: a.agent_session.kind, value: a.agent_session.value, source: a.agent_session.source } : null,
    supported: kind !== null && (SUPPORTED_KINDS as readonly string[]).includes(kind),
    this_pane: thisPane !== undefined && thisPane === a.pane_id,
  };
}

export async function listAgents(host: Host, opts: { thisPane?: string } = {}): Promise<ListResult> {
  const herdr = new HerdrClient(host);
  const agents = await herdr.agentList();
  // HERDR_PANE_ID names a pane of *this* machine's herdr; it says nothing about another host's panes.
  const thisPane = host.kind === 'local' ? opts.thisPane : undefined;
  return { ok: true, command: 'list', host: host.label, agents: agents.map((a) => describeAgent(a, thisPane)) };
}
