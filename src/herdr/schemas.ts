// zod shapes of the herdr 0.8 CLI JSON we read (herdr-cli.md; herdr-api.schema.json).
// Objects are loose: newer herdr versions add fields, and we must not break on them.
import { z } from 'zod';

export const AgentStatus = z.enum(['idle', 'working', 'blocked', 'done', 'unknown']);
export type AgentStatus = z.infer<typeof AgentStatus>;

export const AgentSessionInfo = z.looseObject({
  source: z.string(),
  agent: z.string(),
  kind: z.enum(['id', 'path']),
  value: z.string(),
});
export type AgentSessionInfo = z.infer<typeof AgentSessionInfo>;

const optString = z.string().nullish();

export const AgentInfo = z.looseObject({
  terminal_id: z.string(),
  name: optString,
  agent: optString,
  agent_status: AgentStatus,
  agent_session: AgentSessionInfo.nullish(),
  workspace_id: z.string(),
  tab_id: z.string(),
  pane_id: z.string(),
  focused: z.boolean(),
  launch_pending: z.boolean().optional(),
  interactive_ready: z.boolean().optional(),
  state_change_seq: z.number().int().nonnegative().optional(),
  cwd: optString,
  foreground_cwd: optString,
  revision: z.number().int().nonnegative(),
});
export type AgentInfo = z.infer<typeof AgentInfo>;

export const ProcessInfo = z.looseObject({
  pid: z.number().int(),
  name: z.string(),
  argv: z.array(z.string()).nullish(),
  argv0: optString,
  cmdline: optString,
  cwd: optString,
});
export type ProcessInfo = z.infer<typeof ProcessInfo>;

export const PaneProcessInfo = z.looseObject({
  pane_id: z.string(),
  shell_pid: z.number().int().nullish(),
  foreground_process_group_id: z.number().int().nullish(),
  foreground_processes: z.array(ProcessInfo).default([]),
});
export type PaneProcessInfo = z.infer<typeof PaneProcessInfo>;

export const WorkspaceInfo = z.looseObject({
  workspace_id: z.string(),
  number: z.number().int(),
  label: z.string(),
  focused: z.boolean(),
  pane_count: z.number().int(),
  tab_count: z.number().int(),
  active_tab_id: z.string(),
  agent_status: AgentStatus,
});
export type WorkspaceInfo = z.infer<typeof WorkspaceInfo>;

export const PaneInfo = z.looseObject({
  pane_id: z.string(),
  terminal_id: z.string(),
  workspace_id: z.string(),
  tab_id: z.string(),
  focused: z.boolean(),
  cwd: optString,
  agent: optString,
  agent_status: AgentStatus,
  agent_session: AgentSessionInfo.nullish(),
  revision: z.number().int().nonnegative(),
});
export type PaneInfo = z.infer<typeof PaneInfo>;

/** `herdr status server --json` (not an envelope). */
export const ServerStatus = z.looseObject({
  status: z.enum(['running', 'not_running']),
  running: z.boolean(),
  version: z.string().nullish(),
  protocol: z.number().int().nullish(),
  compatible: z.boolean().nullish(),
  socket: z.string().nullish(),
  restart_needed: z.boolean().nullish(),
});
export type ServerStatus = z.infer<typeof ServerStatus>;

/** Success envelope with a typed result. */
export function envelope<S extends z.ZodRawShape>(type: string, fields: S) {
  return z.object({
    id: z.string(),
    result: z.looseObject({ type: z.literal(type) }).extend(fields),
  });
}

export const ErrorEnvelope = z.object({
  id: z.string(),
  error: z.object({ code: z.string(), message: z.string() }),
});

/** The answer of an ok-only request on the socket (`pane.send_text`, `pane.send_keys`). */
export const OkResult = envelope('ok', {});

/** `pane.read` on the socket (the CLI prints `read.text`). */
export const PaneReadResult = envelope('pane_read', { read: z.looseObject({ text: z.string() }) });

/** `ping`'s answer on the socket: the server's version and protocol. */
export const PongResult = envelope('pong', { version: z.string(), protocol: z.number().int() });

export const AgentListResult = envelope('agent_list', { agents: z.array(AgentInfo) });
export const AgentInfoResult = envelope('agent_info', { agent: AgentInfo });
export const AgentStartedResult = envelope('agent_started', { agent: AgentInfo, argv: z.array(z.string()).optional() });
export const ProcessInfoResult = envelope('pane_process_info', { process_info: PaneProcessInfo });
export const WorkspaceCreatedResult = envelope('workspace_created', {
  workspace: WorkspaceInfo,
  root_pane: z.looseObject({ pane_id: z.string() }),
});
export const WorkspaceListResult = envelope('workspace_list', { workspaces: z.array(WorkspaceInfo) });
export const PaneInfoResult = envelope('pane_info', { pane: PaneInfo });
export const PaneListResult = envelope('pane_list', { panes: z.array(PaneInfo) });
