// The result of `send`: its schema (`agent-handoff schema`), the plan as JSON, and the result of
// an agent that moved (with the notes and courtesies that follow a success).
import { z } from 'zod';
import type { ExecuteResult } from '../handoff/execute.js';
import type { Plan } from '../handoff/plan.js';
import type { Sides } from '../handoff/sides.js';
import type { createProgress } from '../progress.js';
import { buildBrief, deliverBrief, wantsBrief, type BriefOutcome } from '../handoff/brief.js';
import { recordMoved } from '../handoff/moved.js';
import { registerResultSchema } from '../result.js';

const PlanJson = z.object({
  id: z.string(),
  agent: z.object({ target: z.string(), name: z.string().nullable(), pane: z.string(), status: z.string(), argv: z.array(z.string()), pid: z.number() }),
  kind: z.string(),
  session: z.object({ id: z.string(), via: z.enum(['herdr', 'option', 'handoff', 'guess']), files: z.number(), bytes: z.number() }),
  transcript: z.string(),
  source: z.object({ host: z.string().describe('the machine as the user named it (`local`, an ssh alias, user@host)'), address: z.string().describe('where it is: `local` or the resolved user@host[:port]'), repo: z.string(), cwd: z.string(), relative_cwd: z.string(), branch: z.string().nullable(), head: z.string(), dirty: z.boolean(), changed_files: z.array(z.string()), remotes: z.array(z.string()) }),
  target: z.object({
    host: z.string().describe('the machine as the user named it (`local`, an ssh alias, user@host)'),
    address: z.string().describe('where it is: `local` or the resolved user@host[:port]'),
    repo: z.string(),
    other_checkouts: z.array(z.string()),
    integration: z.string(),
    agent_cli: z.string().nullable(),
    config_root: z.string(),
    herdr_version: z.string().nullable(),
  }),
  will_create: z.object({
    branch: z.string(),
    worktree: z.string(),
    new_worktree: z.boolean(),
    fast_forward: z.boolean(),
    cwd: z.string(),
    session_file: z.string(),
    resume_argv: z.array(z.string()),
  }),
  warnings: z.array(z.string()),
});
export type PlanJson = z.infer<typeof PlanJson>;

export const SendResult = z.object({
  ok: z.literal(true),
  command: z.literal('send'),
  dry_run: z.boolean(),
  deferred: z.boolean(),
  plan: PlanJson.optional().describe('Absent only when `resumed` finished an earlier handoff of this agent instead'),
  resumed: z
    .array(z.object({ id: z.string(), action: z.string() }).loose())
    .optional()
    .describe('Unfinished earlier handoffs of this agent that this run finished or rolled back first'),
  target_worktree: z.string().optional(),
  branch: z.string().optional(),
  cwd: z.string().optional(),
  worktree_created: z.boolean().optional(),
  changes_applied: z.boolean().optional(),
  target_agent: z.object({ name: z.string(), pane: z.string(), workspace: z.string() }).optional(),
  integration_installed: z.boolean().optional(),
  trust: z.string().optional(),
  hook_trust: z
    .object({ status: z.enum(['carried', 'already_trusted', 'no_hook', 'left_for_user']), detail: z.string() })
    .optional()
    .describe("codex: herdr's hook trusted on the target as at the source (carried), or left for the user to review, and why"),
  waiting_for_user: z.array(z.string()).optional(),
  next_steps: z.array(z.string()).optional().describe('What the person does on the target for the screens in waiting_for_user that agent-handoff can describe (which keys answer them)'),
  source_stash: z.object({ stashed: z.boolean(), stash: z.string().nullable(), reason: z.string(), note: z.string(), changed_after_snapshot: z.array(z.string()) }).optional(),
  source_pane_at_shell: z.boolean().optional(),
  attach: z.string().nullable().optional(),
  verified: z.array(z.string()).optional(),
  bytes_sent: z.number().optional(),
  session_backups: z.array(z.string()).optional().describe('--overwrite: the session files on the target that it replaced, kept there under these names'),
  steps: z.array(z.object({ step: z.string(), ms: z.number(), ok: z.boolean() })).optional(),
  brief: z.object({ status: z.enum(['delivered', 'not_delivered', 'skipped_waiting_for_user']), text: z.string() }).optional().describe('--brief/--focus/--done-when: the first message sent to the resumed agent'),
  helper: z.object({ workspace: z.string(), pane: z.string(), job: z.string() }).optional().describe('--self: the helper that will run the handoff after this turn'),
  running_handoff: z
    .object({ id: z.string(), controller: z.string(), pid: z.number(), started: z.string() })
    .optional()
    .describe('--dry-run: a handoff of this agent is running right now (a real send would be refused until it ends)'),
});
registerResultSchema('send', SendResult);

export function planJson(plan: Plan, sides: Sides): PlanJson {
  const p = plan.placement;
  const resume = plan.adapter.resumeArgv(plan.sessionPlacement.handle, plan.opts.agentArgs);
  return {
    id: plan.id,
    agent: { target: plan.agent.name ?? plan.agent.pane_id, name: plan.agent.name ?? null, pane: plan.agent.pane_id, status: plan.agent.agent_status, argv: plan.process.argv ?? [plan.process.name], pid: plan.process.pid },
    kind: plan.kind,
    session: { id: plan.session.id, via: plan.sessionVia, files: plan.unit.length, bytes: plan.unit.reduce((n, e) => n + e.size, 0) },
    transcript: plan.session.file,
    source: {
      host: sides.source.host.label,
      address: sides.source.host.address,
      repo: plan.snapshot.repoRoot,
      cwd: plan.cwd,
      relative_cwd: plan.snapshot.relativeCwd,
      branch: plan.snapshot.branch,
      head: plan.snapshot.head,
      dirty: plan.snapshot.snapshot !== null,
      changed_files: plan.snapshot.changedFiles.map((f) => f.path),
      remotes: plan.remotes.map((r) => r.url),
    },
    target: {
      host: sides.target.host.label,
      address: sides.target.host.address,
      repo: p.repo,
      other_checkouts: plan.otherCheckouts,
      integration: plan.targetIntegration?.status ?? 'unknown',
      agent_cli: plan.targetAgentCli,
      config_root: plan.sessionPlacement.configRoot,
      herdr_version: plan.targetHerdr.version?.version ?? null,
    },
    will_create: {
      branch: p.branch,
      worktree: p.worktree,
      new_worktree: p.mode === 'new-worktree',
      fast_forward: p.fastForward,
      cwd: plan.targetCwd,
      session_file: plan.sessionPlacement.file,
      resume_argv: resume,
    },
    warnings: plan.warnings,
  };
}

export function resultOf(plan: Plan, sides: Sides, done: ExecuteResult, timings: { step: string; ms: number; ok: boolean }[], sourceAtShell: boolean): z.infer<typeof SendResult> {
  const target = sides.target;
  return {
    ok: true,
    command: 'send',
    dry_run: false,
    deferred: false,
    plan: planJson(plan, sides),
    target_worktree: done.placementWorktree,
    branch: done.branch,
    cwd: done.snapshot.relativeCwd ? `${done.placementWorktree}/${done.snapshot.relativeCwd}` : done.placementWorktree,
    worktree_created: done.createdWorktree,
    changes_applied: done.snapshot.snapshot !== null,
    target_agent: { name: done.start.name, pane: done.start.pane, workspace: done.start.workspace },
    integration_installed: done.integrationInstalled,
    trust: done.start.trust,
    ...(done.hookTrust ? { hook_trust: { status: done.hookTrust.status, detail: done.hookTrust.detail } } : {}),
    waiting_for_user: done.start.waitingForUser,
    ...nextSteps(done),
    source_stash: { stashed: done.stash.stashed, stash: done.stash.stash, reason: done.stash.reason, note: done.stash.note, changed_after_snapshot: done.stash.changedAfterSnapshot },
    source_pane_at_shell: sourceAtShell,
    attach: sides.sameHost || target.host.isThisMachine ? null : `herdr --remote ${target.spec}`,
    verified: done.verified,
    bytes_sent: done.transfer.bytesSent,
    ...(done.sessionBackups.length > 0 ? { session_backups: done.sessionBackups } : {}),
    steps: timings,
  };
}

/** The keys that answer a waiting screen, where we know them (codex's hook review). */
function nextSteps(done: ExecuteResult): { next_steps?: string[] } {
  const steps: string[] = [];
  if (done.start.waitingForUser.includes('hook_review') && done.hookTrust?.help) steps.push(done.hookTrust.help);
  return steps.length > 0 ? { next_steps: steps } : {};
}

/**
 * The result of an agent that moved. After success nothing here may fail the handoff: these are
 * notes (the source's record that the session moved) and courtesies (the brief).
 */
export async function movedResult(plan: Plan, sides: Sides, done: ExecuteResult, progress: ReturnType<typeof createProgress>, stateOnSource: string): Promise<z.infer<typeof SendResult>> {
  const moved = await recordMoved(sides.source.host, stateOnSource, {
    kind: plan.kind,
    session: plan.session.id,
    // A note kept on the source machine, read by whoever lists it: the address, not an alias.
    to: sides.target.host.address,
    target_path: plan.sessionPlacement.file,
    at: new Date().toISOString(),
    handoff: plan.id,
  }).then(
    () => null,
    (err: unknown) => `Could not note at the source that the session moved: ${err instanceof Error ? err.message : String(err)}`,
  );
  const brief = await sendBrief(plan, sides, done, progress);
  const result = resultOf(plan, sides, done, progress.timings, done.sourceAtShell);
  if (moved) result.plan?.warnings.push(moved);
  return { ...result, ...(brief ? { brief } : {}) };
}

/** The hand-off brief, when asked for: delivered once the agent is idle on the target. */
export async function sendBrief(plan: Plan, sides: Sides, done: ExecuteResult, progress: ReturnType<typeof createProgress>): Promise<{ status: BriefOutcome; text: string } | null> {
  const opts = plan.opts;
  const asked = { brief: opts.brief, focus: opts.briefFocus, doneWhen: opts.doneWhen };
  if (!wantsBrief(asked)) return null;
  const text = buildBrief({
    sourceHost: sides.source.host.label,
    sourcePath: plan.cwd,
    targetHost: sides.target.host.label,
    targetPath: done.snapshot.relativeCwd ? `${done.placementWorktree}/${done.snapshot.relativeCwd}` : done.placementWorktree,
    head: done.snapshot.head,
    branch: done.branch,
    restoredFiles: done.snapshot.changedFiles.map((f) => f.path),
    ...asked,
  });
  if (done.start.waitingForUser.length > 0) return { status: 'skipped_waiting_for_user', text };
  const status = await progress
    .step('sending the hand-off brief', () => deliverBrief(sides.target.herdr, done.start.pane, text, { timeoutMs: opts.timeoutS * 1000 }))
    .catch((): BriefOutcome => 'not_delivered');
  return { status, text };
}
