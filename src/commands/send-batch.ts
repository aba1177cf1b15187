// `send AGENT AGENT… TARGET`, `send --workspace W TARGET`, `send --all TARGET` (and each with
// --from): several agents in one handoff. One connection per host; the agents are chosen, locked
// and planned side by side, and any that cannot go are listed with their reason. Agents of one
// checkout move together (one snapshot, transfer, placement and stash, a session copy each);
// the checkouts move side by side. Each agent succeeds or rolls back on its own.
import os from 'node:os';
import { z } from 'zod';
import { HandoffError } from '../errors.js';
import { batchTarget, executeCheckout, type MemberOutcome } from '../handoff/execute.js';
import { newHandoffId, stateDir } from '../handoff/journal.js';
import { unfinishedFor } from '../handoff/recover.js';
import { acquireLock, localLiveness, lockHolder, paneLockKey, sessionLockKey, type HeldLock, type LockOwner } from '../handoff/lock.js';
import { hostStateDir } from '../handoff/marker.js';
import { herdrServerOf } from '../herdr/socket-path.js';
import { processStartId } from '../handoff/process-age.js';
import type { SendOptions } from '../handoff/options.js';
import { buildPlan, sourceHerdrProbe, type Plan } from '../handoff/plan.js';
import { agentBusy, isBusy } from '../handoff/idle-check.js';
import { SharedScans } from '../git/discover.js';
import { refusalOf, selectAgents, workspacesNamed, type Refusal } from '../handoff/select-agents.js';
import { openSides } from '../handoff/sides.js';
import { deferBatch, type DeferredJob } from '../handoff/self.js';
import { createProgress } from '../progress.js';
import { registerResultSchema, SUPPORTED_KINDS } from '../result.js';
import { failedOutcome, releaseLocks } from './send.js';
import { agentChanged, openJournal, runningWarning, withAbortOnSignals } from './send-common.js';
import { movedResult, planJson, SendResult } from './send-result.js';
import type { CommandContext, CommandOutput } from './index.js';

const Problem = z.object({ code: z.string(), error: z.string(), fix: z.string().optional(), details: z.record(z.string(), z.unknown()).optional() });

const BatchAgent = z.object({
  agent: z.string().describe('The agent as named (or its name, else pane, when chosen by --all/--workspace)'),
  pane: z.string().nullable(),
  kind: z.string().nullable(),
  outcome: z.enum(['planned', 'moved', 'failed', 'refused']).describe('planned: --dry-run; failed: rolled back and back at the source (or never quit); refused: never planned (see error)'),
  handoff: z.string().nullable().describe('Its handoff id (the batch id plus its number): its journal'),
  result: SendResult.nullable().describe('What a single `send` of this agent reports (moved or planned)'),
  error: Problem.nullable(),
});

export const SendBatchResult = z.object({
  ok: z.boolean().describe('true when every agent chosen moved (or, with --dry-run, could be planned)'),
  command: z.literal('send'),
  batch: z.string().describe('The batch id: `show`, `history` and `recover` take it'),
  dry_run: z.boolean(),
  deferred: z.boolean(),
  code: z.string().optional().describe('With ok false: batch_incomplete'),
  error: z.string().optional(),
  fix: z.string().optional(),
  source: z.object({ host: z.string(), address: z.string() }),
  target: z.object({ host: z.string(), address: z.string() }),
  summary: z.object({ chosen: z.number(), moved: z.number(), planned: z.number(), failed: z.number(), refused: z.number() }),
  checkouts: z.array(z.object({ repo: z.string(), agents: z.array(z.string()), target_worktree: z.string().nullable(), stashed: z.boolean().nullable() })).describe('Agents that share a checkout move together: one snapshot, one placement, one stash'),
  agents: z.array(BatchAgent),
  helper: z.object({ workspace: z.string(), pane: z.string(), job: z.string() }).optional().describe('--self: the helper that runs the batch after this turn'),
  ms: z.number().describe('Wall time of the batch'),
});
export type SendBatchResult = z.infer<typeof SendBatchResult>;
registerResultSchema('send_batch', SendBatchResult);

type BatchAgent = z.infer<typeof BatchAgent>;

/** The options of one agent of the batch. */
function oneAgent(opts: SendOptions, pane: string): SendOptions {
  return { ...opts, agent: pane, agents: [pane], all: false, workspace: null };
}

function problemOf(err: unknown): z.infer<typeof Problem> {
  const e = err instanceof HandoffError ? err : new HandoffError('internal', err instanceof Error ? err.message : String(err));
  return { code: e.code, error: e.message, ...(e.fix ? { fix: e.fix } : {}), ...(e.details ? { details: e.details } : {}) };
}

function refusedEntry(r: Refusal): BatchAgent {
  return { agent: r.agent, pane: r.pane, kind: r.kind, outcome: 'refused', handoff: null, result: null, error: { code: r.code, error: r.error, ...(r.fix ? { fix: r.fix } : {}) } };
}

/** Plans that share a checkout (and so its snapshot and placement), in the order given. */
export function byCheckout<T extends { plan: Plan }>(items: T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const it of items) {
    const p = it.plan;
    const key = [p.snapshot.repoRoot, p.placement.repo, p.placement.worktree, p.placement.branch].join('\0');
    groups.set(key, [...(groups.get(key) ?? []), it]);
  }
  return [...groups.values()];
}

export async function sendBatch(args: Record<string, unknown>, ctx: CommandContext): Promise<CommandOutput> {
  const opts = args.send as SendOptions;
  const expect = args.expect as DeferredJob['expect'] | undefined;
  const began = Date.now();
  const progress = createProgress(ctx.stderr, { quiet: ctx.quiet });
  const batch = newHandoffId();
  const opening = openSides(opts);
  const connecting = progress.step('connecting', () => opening.sides);
  connecting.catch(() => undefined);
  const locks: HeldLock[] = [];
  try {
    const source = await opening.source;
    const probing = sourceHerdrProbe(source, opening.sameHost);
    // The agents are listed beside the probe, except by the --self helper: after the turn.
    const listing = expect ? null : source.herdr.agentListBeside(probing);
    listing?.catch(() => undefined);
    await probing;
    if (expect) {
      // --self helper: the agent that asked ends its turn before anything is planned.
      await progress.step('waiting for the agent to finish its turn', () => source.herdr.agentWait(expect.pane, ['idle', 'done'], opts.waitTimeoutS * 1000));
    }
    const [list, workspaces] = await Promise.all([listing ?? source.herdr.agentList(), opts.workspace ? source.herdr.workspaceList() : Promise.resolve([])]);
    const workspaceIds = opts.workspace ? workspacesNamed(workspaces, opts.workspace, source.host.label) : [];
    // The plans find their agents in this same list.
    const listed = Promise.resolve(list);
    const selection = selectAgents(list, { agents: opts.agents, all: opts.all, workspace: opts.workspace }, source.host.label, workspaceIds);
    const refused: BatchAgent[] = selection.refused.map((r) => refusedEntry(r));
    const controller = os.hostname();
    const owner: LockOwner = { handoff: batch, controller, pid: process.pid, pid_start: processStartId(process.pid), started: new Date().toISOString() };
    const isAlive = localLiveness(controller);
    const stateOnSource = hostStateDir(source.info);
    const herdrServer = herdrServerOf(source.info);
    const dir = stateDir(ctx.env);
    const take = !opts.dryRun && !opts.self;
    // Each agent: its pane locked (a dry run only looks) and its plan, side by side; an agent
    // that cannot go is refused with its reason, the others go on.
    const callerPane = expect ? undefined : ctx.env.HERDR_PANE_ID;
    // One search for checkouts on the target serves every agent.
    const scans = new SharedScans();
    const planned = await Promise.all(
      selection.chosen.map(async (agent, i) => {
        const id = `${batch}-${i + 1}`;
        const as = agent.name ?? agent.pane_id;
        const lockOwner = { ...owner, handoff: id, agent: agent.name ?? null, pane: agent.pane_id, herdr_server: herdrServer };
        const key = paneLockKey(agent.pane_id, herdrServer);
        try {
          // An earlier handoff of this agent that ended uncertainly is finished first, by `recover`.
          const pending = unfinishedFor(dir, { sourceSpec: opts.from ?? 'local', herdrServer, pane: agent.pane_id, ...(agent.name ? { agent: agent.name } : {}) });
          if (pending.length > 0) {
            throw new HandoffError('handoff_in_progress', `An unfinished handoff of ${as} (${pending[0]}) exists.`, { fix: `Finish or undo it with \`agent-handoff recover ${pending[0]}\` (add --rollback to undo), then send it again.`, details: { unfinished: pending[0] } });
          }
          const [, plan] = await Promise.all([
            take ? acquireLock(source.host, { stateDir: stateOnSource, key, owner: lockOwner, isAlive }).then((l) => locks.push(l)) : null,
            progress.step(`planning ${as}`, () => buildPlan({ id, opts: oneAgent(opts, agent.pane_id), source, sameHost: opening.sameHost, sides: connecting, earlyTarget: opening.earlyTarget, callerPane, scans, agents: listed })),
          ]);
          // --self helper: the agent that asked must still be the one that asked.
          const changed = expect && plan.agent.pane_id === expect.pane ? agentChanged(plan, expect) : null;
          if (changed) throw changed;
          // A dry run refuses what the send would (a single dry run plans a busy agent and says so).
          if (opts.dryRun && !opts.wait && isBusy(plan.agent.agent_status)) throw agentBusy(as, String(plan.agent.agent_status));
          if (take) locks.push(await acquireLock(source.host, { stateDir: stateOnSource, key: sessionLockKey(plan.kind, plan.session.id), owner: { ...lockOwner, session: plan.session.id }, isAlive }));
          const running = take ? null : await lockHolder(source.host, { stateDir: stateOnSource, key, isAlive }).catch(() => null);
          return { agent, plan, running, refusal: null };
        } catch (err) {
          return { agent, plan: null, running: null, refusal: refusalOf(as, agent, err) };
        }
      }),
    );
    const sides = await connecting;
    const plans = planned.flatMap((p) => (p.plan ? [{ plan: p.plan, running: p.running }] : []));
    for (const p of planned) if (p.refusal) refused.push(refusedEntry(p.refusal));
    const base = { command: 'send' as const, batch, source: { host: sides.source.host.label, address: sides.source.host.address }, target: { host: sides.target.host.label, address: sides.target.host.address } };

    if (opts.dryRun || plans.length === 0) {
      const agents: BatchAgent[] = [
        ...plans.map(({ plan, running }): BatchAgent => {
          const out = planJson(plan, sides);
          if (running) out.warnings.push(runningWarning(running.holder));
          return { agent: plan.agent.name ?? plan.agent.pane_id, pane: plan.agent.pane_id, kind: plan.kind, outcome: 'planned', handoff: plan.id, result: { ok: true, command: 'send', dry_run: opts.dryRun, deferred: false, plan: out }, error: null };
        }),
        ...refused,
      ];
      return finish({ ...base, dry_run: opts.dryRun, deferred: false, agents, checkouts: byCheckout(plans).map((g) => checkoutOf(g.map((x) => x.plan), null, null)) }, began);
    }
    if (opts.self) {
      const self = plans.find((p) => p.plan.agent.pane_id === ctx.env.HERDR_PANE_ID);
      if (!self) throw new HandoffError('self_not_in_batch', 'With --self the agent running this command moves with the others, but it is not among them.', { fix: 'Drop --self, or include this agent (by name) in the batch.' });
      const helper = await deferBatch(self.plan, plans.map((p) => p.plan), sides, opts, ctx);
      const agents = plans.map(({ plan }): BatchAgent => ({ agent: plan.agent.name ?? plan.agent.pane_id, pane: plan.agent.pane_id, kind: plan.kind, outcome: 'planned', handoff: null, result: { ok: true, command: 'send', dry_run: false, deferred: true, plan: planJson(plan, sides) }, error: null }));
      return finish({ ...base, dry_run: false, deferred: true, helper, agents: [...agents, ...refused], checkouts: [] }, began);
    }

    const members = plans.map(({ plan }) => ({ plan, journal: openJournal(dir, plan, sides, owner, { batch, batch_size: plans.length }) }));
    return await withAbortOnSignals(async (signal) => {
      const groups = byCheckout(members);
      const target = batchTarget(sides);
      const ran = await Promise.all(groups.map(async (g) => ({ group: g, outcomes: await executeCheckout(g, sides, progress, signal, target).catch((err: unknown) => g.map((): MemberOutcome => ({ ok: false, error: asError(err) }))) })));
      // Each agent's result, side by side (a brief waits for its agent to be idle), with the steps that were its own.
      const labels = members.map((m) => m.plan.agent.name ?? m.plan.agent.pane_id);
      const agents = await Promise.all(
        ran.flatMap(({ group, outcomes }) =>
          group.map(async ({ plan, journal }, i): Promise<BatchAgent> => {
            const out = outcomes[i]!;
            const who = { agent: plan.agent.name ?? plan.agent.pane_id, pane: plan.agent.pane_id, kind: plan.kind, handoff: plan.id };
            if (!out.ok) {
              journal.outcome(failedOutcome(out.error), { error: out.error.message });
              return { ...who, outcome: 'failed', result: null, error: problemOf(out.error) };
            }
            journal.outcome('succeeded');
            const result = await movedResult(plan, sides, out.done, progress, stateOnSource);
            const others = labels.filter((l) => l !== who.agent);
            result.steps = result.steps?.filter((t) => !others.some((o) => t.step === `planning ${o}` || t.step.endsWith(`(${o})`)));
            return { ...who, outcome: 'moved', result, error: null };
          }),
        ),
      );
      const checkouts = ran.map(({ group, outcomes }) => {
        const moved = outcomes.find((o) => o.ok);
        return checkoutOf(
          group.map((m) => m.plan),
          moved?.ok ? moved.done.placementWorktree : null,
          moved?.ok ? moved.done.stash.stashed : null,
        );
      });
      return finish({ ...base, dry_run: false, deferred: false, agents: [...agents, ...refused], checkouts }, began);
    });
  } finally {
    await releaseLocks(locks);
    await opening.close();
  }
}

function asError(err: unknown): HandoffError {
  return err instanceof HandoffError ? err : new HandoffError('internal', err instanceof Error ? err.message : String(err));
}

function checkoutOf(plans: Plan[], worktree: string | null, stashed: boolean | null): SendBatchResult['checkouts'][number] {
  return { repo: plans[0]!.snapshot.repoRoot, agents: plans.map((p) => p.agent.name ?? p.agent.pane_id), target_worktree: worktree ?? plans[0]!.placement.worktree, stashed };
}

/** The batch's result: ok when every agent chosen moved (or was planned); exit 1 otherwise. */
function finish(r: Omit<SendBatchResult, 'ok' | 'summary' | 'ms'>, began: number): CommandOutput {
  const count = (o: BatchAgent['outcome']) => r.agents.filter((a) => a.outcome === o).length;
  const summary = { chosen: r.agents.length, moved: count('moved'), planned: count('planned'), failed: count('failed'), refused: count('refused') };
  const ok = summary.failed === 0 && summary.refused === 0;
  const notMoved = r.agents.filter((a) => a.outcome === 'failed' || a.outcome === 'refused');
  const result: SendBatchResult = {
    ok,
    ...r,
    ...(ok
      ? {}
      : {
          code: 'batch_incomplete',
          error: `${notMoved.length} of ${summary.chosen} agents ${r.dry_run ? 'cannot go' : 'did not move'}: ${notMoved.map((a) => `${a.agent} (${a.error?.code ?? 'failed'})`).join(', ')}.`,
          fix: `Each entry of \`agents\` with an error says why and what to do; the others ${r.dry_run ? 'can go' : 'moved'}. Supported kinds: ${SUPPORTED_KINDS.join(', ')}.`,
        }),
    summary,
    ms: Date.now() - began,
  };
  return { result: SendBatchResult.parse(result), exitCode: ok ? 0 : 1 };
}
