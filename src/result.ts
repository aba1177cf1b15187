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
  herdr_not_installed: 'herdr is not on the login PATH of that machine.',
  server_not_running: 'The herdr server is not running on that machine.',
  herdr_too_old: 'herdr is older than 0.8.0 on that machine.',
  agent_not_found: 'No live herdr agent matches the name, pane or session given.',
  agent_ambiguous: 'Several agents match; name one exactly.',
  unsupported_kind: 'The agent is not one of claude, codex, pi, omp, grok.',
  own_pane: 'The agent is the caller itself; pass --self.',
  agent_busy: 'The agent is working or blocked; pass --wait.',
  session_not_found: 'The agent’s session could not be found.',
  ssh_config: 'The ssh target could not be resolved.',
  host_key_unknown: 'The target’s host key is not in known_hosts.',
  host_key_changed: 'The target’s host key differs from known_hosts.',
  auth_failed: 'No key was accepted by the target.',
  auth_key_encrypted: 'The key is encrypted and no ssh-agent holds it.',
  connect_timeout: 'The target did not answer in time.',
  command_timeout: 'A step did not finish in time.',
  no_remote: 'The repository has no remote to match the target checkout by.',
  target_dirty: 'The target checkout of the branch has uncommitted changes.',
  target_diverged: 'The target branch has commits the source lacks.',
  snapshot_conflict: 'The uncommitted changes do not apply on the target base.',
  session_conflict: 'The target already holds a different copy of the session.',
  quit_failed: 'The agent did not quit.',
  start_failed: 'The agent did not start on the target.',
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
});
export type ListedAgent = z.infer<typeof ListedAgent>;

export const ListResult = z.object({
  ok: z.literal(true),
  command: z.literal('list'),
  host: z.string(),
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
