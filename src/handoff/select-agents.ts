// Which agents a batch moves: the ones named, those of a herdr workspace, or all of them. Pure:
// what herdr listed in, the chosen agents and the refused ones (each with its reason) out. A name
// that finds no agent fails the whole batch: a typo must not move the rest without it.
import { HandoffError } from '../errors.js';
import type { AgentInfo, WorkspaceInfo } from '../herdr/schemas.js';
import { SUPPORTED_KINDS } from '../result.js';
import { findAgent } from './find-agent.js';

export interface Refusal {
  /** What the user named, or the agent's name (else pane) when chosen by --all/--workspace. */
  agent: string;
  pane: string | null;
  kind: string | null;
  code: string;
  error: string;
  fix?: string;
}

export interface Selection {
  chosen: AgentInfo[];
  refused: Refusal[];
}

export interface SelectRequest {
  agents: string[];
  all: boolean;
  /** A workspace id or label. */
  workspace: string | null;
}

export function refusalOf(agent: string, info: Pick<AgentInfo, 'pane_id' | 'agent'> | null, err: unknown): Refusal {
  const e = err instanceof HandoffError ? err : new HandoffError('internal', err instanceof Error ? err.message : String(err));
  return { agent, pane: info?.pane_id ?? null, kind: info?.agent ?? null, code: e.code, error: e.message, ...(e.fix ? { fix: e.fix } : {}) };
}

/** The workspaces `--workspace W` names: by id, else by label (several may share a label). */
export function workspacesNamed(workspaces: readonly WorkspaceInfo[], ref: string, hostLabel: string): string[] {
  const byId = workspaces.filter((w) => w.workspace_id === ref);
  const named = byId.length > 0 ? byId : workspaces.filter((w) => w.label === ref);
  if (named.length === 0) {
    const known = workspaces.map((w) => (w.label ? `${w.workspace_id} (${w.label})` : w.workspace_id)).join(', ') || 'none';
    throw new HandoffError('workspace_not_found', `No herdr workspace on ${hostLabel} has the id or label ${JSON.stringify(ref)}; its workspaces: ${known}.`, {
      fix: 'Run `agent-handoff list` to see each agent with its workspace, then pass --workspace with one of them.',
    });
  }
  return named.map((w) => w.workspace_id);
}

export function selectAgents(list: readonly AgentInfo[], ask: SelectRequest, hostLabel: string, workspaceIds: readonly string[] = []): Selection {
  const chosen: AgentInfo[] = [];
  const refused: Refusal[] = [];
  const take = (a: AgentInfo, as: string) => {
    if (chosen.some((c) => c.pane_id === a.pane_id)) return;
    if (!a.agent || !(SUPPORTED_KINDS as readonly string[]).includes(a.agent)) {
      refused.push(
        refusalOf(as, a, new HandoffError('unsupported_kind', `${as} is ${a.agent ? `a ${a.agent} agent` : 'an agent of a kind herdr could not tell'}, which agent-handoff cannot move.`, { fix: `Supported kinds: ${SUPPORTED_KINDS.join(', ')}.` })),
      );
      return;
    }
    chosen.push(a);
  };
  if (ask.all || ask.workspace !== null) {
    // Panes herdr sees an agent in; plain shells are no agents.
    const agents = list.filter((a) => a.agent && (ask.all || workspaceIds.includes(a.workspace_id)));
    for (const a of agents) take(a, a.name ?? a.pane_id);
    if (chosen.length === 0 && refused.length === 0) {
      throw new HandoffError('no_agents', ask.all ? `No agents run in herdr on ${hostLabel}.` : `No agents run in the herdr workspace ${ask.workspace} on ${hostLabel}.`, {
        fix: 'Run `agent-handoff list` to see the agents.',
      });
    }
    return { chosen, refused };
  }
  // A name that names no agent (or several) is a mistake in what was typed: nothing moves.
  const unknown: HandoffError[] = [];
  for (const ref of ask.agents) {
    try {
      take(findAgent([...list], ref, hostLabel), ref);
    } catch (err) {
      if (!(err instanceof HandoffError)) throw err;
      unknown.push(err);
    }
  }
  if (unknown.length === 1) throw unknown[0]!;
  if (unknown.length > 1) {
    throw new HandoffError(unknown.every((e) => e.code === 'agent_ambiguous') ? 'agent_ambiguous' : 'agent_not_found', `${unknown.length} of the agents named cannot be told apart or found; nothing was moved: ${unknown.map((e) => e.message).join(' ')}`, {
      fix: 'Run `agent-handoff list` and pass its `target` values.',
    });
  }
  return { chosen, refused };
}
