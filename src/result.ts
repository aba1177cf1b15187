// The JSON contract: every command prints exactly one of these objects on stdout.
// The schemas live here and only here; `agent-handoff schema` prints them as JSON Schema.
import { z } from 'zod';
import { HandoffError, UsageError } from './errors.js';

export const SUPPORTED_KINDS = ['claude', 'codex', 'pi', 'omp', 'grok'] as const;
export const SupportedKind = z.enum(SUPPORTED_KINDS);
export type SupportedKind = z.infer<typeof SupportedKind>;

/** Stable error codes (herdr's own codes pass through too, e.g. `agent_pane_busy`). */
export const ERROR_CODES = {
  usage: 'Bad command-line input (exit 2).',
  internal: 'A bug: please report it with the command you ran.',
  interrupted: 'Ctrl-C / SIGTERM during a handoff: what was done was undone.',
  injected_failure: 'A failure injected by the test hook AGENT_HANDOFF_TEST_FAIL_AT (never set in normal use).',
  bad_target: 'The ssh destination is not user@host, host, ssh://user@host:port or an alias.',
  ssh_config: 'The ssh target could not be resolved from the ssh config.',
  ssh_config_unsupported: 'The ssh config uses something we do not run (ProxyCommand).',
  connect_failed: 'The TCP connection or the ssh handshake failed.',
  connect_timeout: 'The target did not answer in time.',
  proxy_jump_failed: 'A ProxyJump hop could not be reached.',
  host_key_unknown: 'The target’s host key is not in known_hosts (the fix gives the command to add it).',
  host_key_changed: 'The target’s host key differs from known_hosts: refused.',
  host_key_revoked: 'The target’s host key is marked @revoked.',
  auth_failed: 'No key was accepted by the target.',
  auth_key_encrypted: 'The key is encrypted and no ssh-agent holds it.',
  connection_lost: 'The ssh connection dropped.',
  connection_closed: 'The ssh connection was already closed.',
  channel_failed: 'The target refused a new ssh channel.',
  command_timeout: 'A step did not finish within --timeout.',
  host_probe_failed: 'The target’s login environment could not be read.',
  not_found: 'A file or folder is missing.',
  io_failed: 'Reading or writing a file failed.',
  bad_command: 'An empty command line (a bug).',
  herdr_not_installed: 'herdr is not on the login PATH of that machine.',
  server_not_running: 'The herdr server is not running on that machine.',
  herdr_too_old: 'herdr is older than 0.8.0 on that machine.',
  herdr_socket_mismatch: 'herdr’s CLI uses another server than the one whose socket answered (HERDR_SOCKET_PATH or HERDR_SESSION differ).',
  herdr_bad_output: 'herdr printed something we could not read.',
  integration_install_failed: 'herdr could not install its integration for the agent on the target.',
  agent_not_found: 'No live herdr agent matches the name, pane or session given.',
  agent_ambiguous: 'Several agents match; name one exactly.',
  agent_cwd_unknown: 'herdr does not know the agent’s working directory.',
  agent_changed: '--self: the agent in the pane is no longer the one that asked.',
  no_agents: '--all or --workspace found no agent in herdr to move.',
  workspace_not_found: '--workspace names no herdr workspace (by id or label) on the source.',
  batch_incomplete: 'A batch (several agents) where some agents did not move or cannot go: each entry of `agents` says why.',
  self_not_in_batch: '--self in a batch that does not include the agent running the command.',
  unsupported_kind: 'The agent is not one of claude, codex, pi, omp, grok.',
  unsupported_agent: 'The agent is not one of claude, codex, pi, omp, grok.',
  own_pane: 'The agent is the caller itself; pass --self.',
  agent_busy: 'The agent is working or blocked; pass --wait.',
  session_not_found: 'The agent’s session could not be found.',
  session_ambiguous: 'Several sessions could be the agent’s; pass --session.',
  session_conflict: 'The target already holds a different copy of the session.',
  unsafe_destination: 'A session file would be written outside the target’s config folder.',
  unsupported_path: 'A path the agent cannot use (e.g. grok past 255 encoded bytes).',
  copy_failed: 'Copying a session file failed.',
  marker_failed: 'The incoming marker could not be written on the target (before anything else changed there).',
  hash_failed: 'A session file could not be hashed on the target.',
  missing_tool: 'A POSIX tool the target needs is missing (sha256sum/shasum).',
  quit_failed: 'The agent did not quit; the error shows its screen.',
  start_failed: 'The agent did not start, or exited at once, on the target.',
  self_unsupported_path: '--self cannot start its helper from this install path.',
  git_missing: 'git is not installed on that machine.',
  git_failed: 'A git command failed (the error quotes it).',
  not_a_repo: 'The agent is not working inside a git checkout.',
  unborn_head: 'The repository has no commit yet.',
  no_remote: 'The repository has no remote to match the target checkout by.',
  repo_not_found: 'No checkout of the repository was found on the target.',
  discover_failed: 'Searching the target for checkouts failed.',
  dir_mismatch: '--dir names a checkout of another repository.',
  dir_is_source: '--dir names the agent’s own checkout.',
  target_dirty: 'The target checkout of the branch has uncommitted changes.',
  target_diverged: 'The target branch has commits the source lacks.',
  target_unborn: 'The target repository has no commit yet.',
  target_worktree_missing: 'A worktree git lists on the target is gone.',
  target_check_failed: 'The read-only placement check could not run on the target.',
  target_disk_full: 'Not enough free space on the target for the session.',
  apply_conflict: 'The uncommitted changes would overwrite untracked files on the target.',
  worktree_nested: 'The new worktree would be inside another worktree.',
  bad_branch_name: 'The branch name is not valid on the target.',
  bad_handoff_id: 'Not a handoff id (a bug).',
  verify_failed: 'The target did not match what left the source; everything was undone.',
  handoff_in_progress: 'Another handoff of this agent is running.',
  handoff_not_found: 'No such handoff in the journals.',
  recover_failed: 'recover could not reach a machine.',
} as const;

const Problem = z.object({
  where: z.string(),
  code: z.string(),
  problem: z.string(),
  fix: z.string(),
});
export type Problem = z.infer<typeof Problem>;

export const ErrorResult = z.object({
  ok: z.literal(false),
  command: z.string(),
  code: z.string().describe('Stable error code; see ERROR_CODES or herdr’s own codes.'),
  error: z.string().describe('A sentence that says what went wrong.'),
  fix: z.string().optional().describe('What to do about it.'),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ErrorResult = z.infer<typeof ErrorResult>;

export const AgentSession = z.object({ kind: z.enum(['id', 'path']), value: z.string(), source: z.string() });

export const ListedAgent = z.object({
  target: z.string().describe('What to pass to `send`: the agent name, else its pane id.'),
  name: z.string().nullable(),
  pane: z.string(),
  workspace: z.string(),
  kind: z.string().nullable(),
  status: z.string(),
  cwd: z.string().nullable(),
  session: AgentSession.nullable(),
  supported: z.boolean(),
  this_pane: z.boolean().describe('True for the pane this command runs in (HERDR_PANE_ID).'),
  moved: z
    .object({ to: z.string(), path: z.string(), at: z.string(), handoff: z.string() })
    .nullable()
    .describe('This session was handed off from here before: this copy may be stale.'),
});
export type ListedAgent = z.infer<typeof ListedAgent>;

export const ListResult = z.object({
  ok: z.literal(true),
  command: z.literal('list'),
  host: z.string().describe('The machine as the user named it: `local`, or the ssh target as typed.'),
  address: z.string().describe('Where it is: `local`, or the resolved user@host[:port].'),
  agents: z.array(ListedAgent),
});
export type ListResult = z.infer<typeof ListResult>;

const ToolCheck = z.object({
  name: z.string(),
  path: z.string().nullable(),
  version: z.string().nullable(),
  ok: z.boolean(),
  required: z.boolean(),
});

export const SideReport = z.object({
  host: z.string(),
  user: z.string().nullable(),
  hostname: z.string().nullable(),
  platform: z.string().nullable(),
  tools: z.array(ToolCheck),
  herdr: z.object({
    installed: z.boolean(),
    version: z.string().nullable(),
    server: z.enum(['running', 'not_running', 'not_installed']),
  }),
  integrations: z.array(z.object({ kind: z.string(), status: z.string(), version: z.number().nullable(), path: z.string().nullable() })),
  config_roots: z.record(z.string(), z.string()),
  ssh: z
    .object({
      target: z.string(),
      host: z.string(),
      user: z.string(),
      port: z.number(),
      auth: z.string().nullable(),
      host_key: z.string(),
      proxy_jump: z.string().nullable(),
      connect_ms: z.number(),
      round_trip_ms: z.number(),
      handshakes: z.number(),
    })
    .nullable(),
});
export type SideReport = z.infer<typeof SideReport>;

export const DoctorResult = z.object({
  ok: z.literal(true),
  command: z.literal('doctor'),
  ready: z.boolean().describe('Everything a handoff needs is in place (the exit code is 0 only then).'),
  local: SideReport,
  target: SideReport.nullable(),
  problems: z.array(Problem),
  warnings: z.array(z.string()),
});
export type DoctorResult = z.infer<typeof DoctorResult>;

export const VersionResult = z.object({ ok: z.literal(true), command: z.literal('version'), version: z.string() });

/** Every schema by command, for `agent-handoff schema`. */
export const RESULT_SCHEMAS: Record<string, z.ZodType> = {
  error: ErrorResult,
  list: ListResult,
  doctor: DoctorResult,
  version: VersionResult,
};

export function registerResultSchema(command: string, schema: z.ZodType): void {
  RESULT_SCHEMAS[command] = schema;
}

/** JSON Schema of every result, keyed by command. */
export function resultJsonSchemas(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(RESULT_SCHEMAS)) out[name] = z.toJSONSchema(schema, { unrepresentable: 'any' });
  return out;
}

/** The one place an error becomes JSON. */
export function errorResult(command: string, err: unknown): { result: ErrorResult; exitCode: number } {
  const e = err instanceof HandoffError ? err : new HandoffError('internal', err instanceof Error ? err.message : String(err));
  const result: ErrorResult = { ok: false, command, code: e.code, error: e.message };
  if (e.fix) result.fix = e.fix;
  if (e.details) result.details = e.details;
  return { result, exitCode: e instanceof UsageError ? 2 : 1 };
}
