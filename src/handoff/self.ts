// --self: an agent moves itself. It cannot quit itself mid-turn, so the plan is checked now and a
// helper is started in a new, unfocused herdr workspace on the source; the helper waits for the
// agent's turn to end, checks it is still the same agent (kind, pid, session), then runs the
// handoff. The helper closes its workspace on success and stays open showing the error otherwise.
import fs from 'node:fs';
import path from 'node:path';
import { LAUNCHER } from '../version.js';
import { z } from 'zod';
import { HandoffError, UsageError } from '../errors.js';
import { stateDir } from './journal.js';
import type { RawSendArgs, SendOptions } from './options.js';
import type { Plan } from './plan.js';
import type { Sides } from './sides.js';
import type { CommandContext } from '../commands/index.js';

export const DeferredJob = z.object({
  opts: z.record(z.string(), z.unknown()),
  expect: z.object({ pane: z.string(), pid: z.number(), kind: z.string(), session: z.string() }),
});
export type DeferredJob = z.infer<typeof DeferredJob>;

/** Characters that mean the same in every shell when single-quoted (sh, bash, zsh, fish). */
function quoteForAnyShell(s: string): string {
  if (/['\\\n]/.test(s)) throw new HandoffError('self_unsupported_path', `Cannot start the --self helper: the path ${JSON.stringify(s)} contains a quote, backslash or newline.`, { fix: 'Install agent-handoff under a plainer path, or run the handoff from another pane without --self.' });
  return `'${s}'`;
}

/** --self moves the agent that runs this command, which is on this machine. */
export function selfWithFrom(): UsageError {
  return new UsageError('--self moves the agent running this command, which runs here: it cannot be combined with --from.', 'Drop --from.');
}

/**
 * The options as the helper parses them again (`parseSendOptions` reads the flags' own names:
 * `timeout`, `waitTimeout`, `--`), so nothing of the command line is lost on the way.
 */
export function jobArgs(opts: SendOptions): RawSendArgs & Record<string, unknown> {
  const { timeoutS, waitTimeoutS, agentArgs, agents, target, ...rest } = opts;
  // The words as typed: the agents, then the target (none with --here).
  const words = [...agents, ...(opts.here || !target ? [] : [target])];
  return { ...rest, agent: words, timeout: timeoutS, waitTimeout: waitTimeoutS, '--': agentArgs };
}

/** The job the helper runs: these agents (by pane), once the agent that asked has ended its turn. */
async function startHelper(self: Plan, panes: string[], sides: Sides, opts: SendOptions, ctx: CommandContext): Promise<{ workspace: string; pane: string; job: string }> {
  if (!sides.source.host.isThisMachine) {
    throw selfWithFrom();
  }
  const dir = path.join(stateDir(ctx.env), 'deferred');
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const jobFile = path.join(dir, `${self.id}.json`);
  const job: DeferredJob = {
    opts: jobArgs({ ...opts, self: false, wait: true, dryRun: false, agent: panes[0]!, agents: panes, all: false, workspace: null }),
    expect: { pane: self.agent.pane_id, pid: self.process.pid, kind: self.kind, session: self.session.id },
  };
  fs.writeFileSync(jobFile, JSON.stringify(job), { mode: 0o600 });
  // The same launcher the user ran.
  const cli = LAUNCHER;
  const { workspace, paneId } = await sides.source.herdr.workspaceCreate({ cwd: self.cwd, label: `handoff ${self.agent.name ?? self.kind} (helper)`, focus: false });
  const command = [process.execPath, cli, '__run-deferred', jobFile].map(quoteForAnyShell).join(' ');
  await sides.source.herdr.run(paneId, command);
  return { workspace: workspace.workspace_id, pane: paneId, job: jobFile };
}

export async function deferSelf(plan: Plan, sides: Sides, opts: SendOptions, ctx: CommandContext, planJson: unknown) {
  const helper = await startHelper(plan, [plan.agent.pane_id], sides, opts, ctx);
  return { ok: true as const, command: 'send' as const, dry_run: false, deferred: true, plan: planJson, helper };
}

/** --self in a batch: the whole batch runs in the helper, after the turn of the agent that asked. */
export function deferBatch(self: Plan, plans: Plan[], sides: Sides, opts: SendOptions, ctx: CommandContext): Promise<{ workspace: string; pane: string; job: string }> {
  return startHelper(self, plans.map((p) => p.agent.pane_id), sides, opts, ctx);
}
