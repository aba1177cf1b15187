// `list`: the herdr agents on one machine (this one, or --from HOST over its SSH Host).
import { HerdrClient } from '../herdr/client.js';
import type { AgentInfo } from '../herdr/schemas.js';
import type { Host } from '../host/host.js';
import { SUPPORTED_KINDS, type ListResult, type ListedAgent } from '../result.js';
import { sessionIdOf } from '../handoff/find-agent.js';
import { stateDir } from '../handoff/journal.js';
import { movedNotes, type MovedNote } from '../handoff/moved.js';

export function describeAgent(a: AgentInfo, thisPane: string | undefined, moved: Map<string, MovedNote> = new Map()): ListedAgent {
  const kind = a.agent ?? null;
  const sid = sessionIdOf(a);
  const note = sid ? moved.get(sid) : undefined;
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
    moved: note ? { to: note.to, path: note.target_path, at: note.at, handoff: note.handoff } : null,
  };
}

export async function listAgents(host: Host, opts: { thisPane?: string } = {}): Promise<ListResult> {
  const herdr = new HerdrClient(host);
  const info = await host.info();
  // Straight to the server's socket when it answers a ping; else herdr's CLI (which says what is wrong).
  const listing = herdr.ping().then(() => herdr.agentList());
  const [agents, moved] = await Promise.all([listing, movedNotes(host, stateDir({ HOME: info.home, ...(info.loginEnv.XDG_STATE_HOME ? { XDG_STATE_HOME: info.loginEnv.XDG_STATE_HOME } : {}) }))]);
  // HERDR_PANE_ID names a pane of *this* machine's herdr; it says nothing about another host's panes.
  const thisPane = host.isThisMachine ? opts.thisPane : undefined;
  return { ok: true, command: 'list', host: host.label, address: host.address, agents: agents.map((a) => describeAgent(a, thisPane, moved)) };
}
