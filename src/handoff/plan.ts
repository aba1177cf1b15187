// Plan: everything that can be learned and checked before anything changes (= `--dry-run`), in
// six steps: the agent; the source's reads about it, all at once (plan-source.ts); the target's
// look, one program (target-look.ts); the checkout that receives the work and its placement; the
// session where it lands; the plan. Each step starts as soon as what it needs is known, so later
// ones overlap earlier ones. What is decided, is decided by pure rules (plan-rules.ts,
// placement-decide.ts). Read-only on both machines: no refs, no files, no index, no cache. (A
// snapshot writes git objects that nothing references; git's gc removes them in time.)
import { adapterFor } from '../../adapters/index.js';
import { sideCtx, type Adapter, type SessionRef, type SideCtx } from '../../adapters/adapter.js';
import type { SupportedKind } from '../result.js';
import type { AgentInfo } from '../herdr/schemas.js';
import { integrationFor } from '../herdr/integration.js';
import type { HerdrProbe } from '../herdr/probe.js';
import { recallCheckouts, rememberCheckouts } from '../git/checkout-memory.js';
import { discoverCheckout, type DiscoverResult, type DiscoveryLook, type RemoteOfRepo, type SharedScans } from '../git/discover.js';
import { checkDisk, requireSpace } from './disk.js';
import { guessFromCache, ignoreLook, lookAtTarget, type TargetLook } from './target-look.js';
import { checkPlacement } from '../git/place.js';
import { readPlacementState } from '../git/placement-read.js';
import type { HeadLayout } from '../git/snapshot.js';
import { quiet } from '../quiet.js';
import { findAgent } from './find-agent.js';
import type { SendOptions } from './options.js';
import { refuseChangedSessionFiles } from './session-conflicts.js';
import { destinationUnder } from '../transcript/destinations.js';
import type { Side, Sides } from './sides.js';
import { unitsOnce } from './find-session.js';
import { readSource, type SourceReads } from './plan-source.js';
import { askStatus, type AgentStatusRead } from './idle-check.js';
import { checkoutSearch, chooseCheckout, cwdIn, movableKind, planWarnings, requireHerdr, sourceHandleOf, type CheckoutChoice } from './plan-rules.js';
import type { Plan } from './plan-data.js';

export type { Plan };

export interface PlanInput {
  id: string;
  opts: SendOptions;
  /** The source's side, ready; the target may still be connecting. */
  source: Side;
  /** Same machine on both sides. */
  sameHost: boolean;
  /** Both sides once the target is connected: the plan's work there waits for it, the source's does not. */
  sides: Promise<Sides>;
  /** The target on the facts remembered of it, before its probe answers (see OpeningSides.earlyTarget). */
  earlyTarget?: Promise<Side | null>;
  /** HERDR_PANE_ID of the caller (refuse moving oneself without --self). */
  callerPane: string | undefined;
  /** A batch's searches for checkouts on the target, shared by its agents. */
  scans?: SharedScans;
  /** The source's agents as the caller just listed them (else the plan lists them). */
  agents?: Promise<AgentInfo[]>;
  /** Told the agent's session as soon as it is found, before the plan is made (a send locks it then). */
  sessionFound?: (agent: AgentInfo, kind: SupportedKind, session: SessionRef) => void;
}

/**
 * The source's herdr probe: quick (HerdrClient.reach) unless the source is also the target, whose
 * CLI is needed after the agent has quit and so gets the full probe. Asked once per client.
 */
export function sourceHerdrProbe(source: Side, sameHost: boolean): Promise<HerdrProbe> {
  return sameHost ? source.herdr.probe() : source.herdr.reach();
}

export async function buildPlan(input: PlanInput): Promise<Plan> {
  const { source, sameHost } = input;
  // The target's herdr CLI is needed after the agent has quit (workspace, agent start), so its
  // full probe (installed, version, protocol, socket) is asked in the plan's look and checked
  // before the plan is returned. The source's is quick, and the reads go ahead on it (see
  // HerdrClient.reach). herdr's findings explain any failure better than
  // what followed from them; a target that cannot be reached says so before anything else.
  const sourceProbe = sourceHerdrProbe(source, sameHost);
  // The source's paths (its home's real path) do not depend on the agent: asked beside the probe.
  const sourceCtx = quiet(sideCtx(source.host));
  const herdrChecked = (targetProbe: (target: Side) => Promise<HerdrProbe>) =>
    Promise.all([input.sides, sourceProbe]).then(async ([sides, s]) => {
      const t = sameHost ? s : await targetProbe(sides.target);
      requireHerdr(s, source.host.label);
      requireHerdr(t, sides.target.host.label);
      return [s, t] as const;
    });
  try {
    return await planAfterProbes(input, sourceProbe, sourceCtx, herdrChecked);
  } catch (err) {
    // The look's probe when it was asked, else one of its own (HerdrClient asks it once).
    await herdrChecked((target) => target.herdr.probe());
    throw err;
  }
}

type HerdrChecked = (targetProbe: (target: Side) => Promise<HerdrProbe>) => Promise<readonly [HerdrProbe, HerdrProbe]>;

async function planAfterProbes(input: PlanInput, sourceProbe: Promise<HerdrProbe>, sourcePaths: Promise<SideCtx>, herdrChecked: HerdrChecked): Promise<Plan> {
  const { opts, id, source } = input;
  const target = quiet(input.sides.then((sides) => sides.target));

  // 1. The agent: which one, and whether it may move.
  const agents = await (input.agents ?? source.herdr.agentListBeside(sourceProbe));
  const agent = findAgent(agents, opts.agent, source.host.label);
  const kind = movableKind(agent, opts, { label: source.host.label, isThisMachine: source.host.isThisMachine, callerPane: input.callerPane });
  const adapter = adapterFor(kind);

  // 2. The source, all at once: the agent's program, its checkout (and snapshot), its session.
  const src = readSource(source, sourcePaths, agent, adapter, opts);
  const { sessionFound } = input;
  if (sessionFound) src.session.then((found) => sessionFound(agent, kind, found.ref), () => undefined);
  const unitOf = unitsOnce(adapter, src.sessionHost);
  // Quitting only when idle (codex, --wait): the status asked again as the look goes out.
  let statusAsked: Promise<AgentStatusRead | null> | null = null;
  const askStatusOnce = (): void => {
    if (!opts.dryRun && (adapter.quit.mustBeIdle || opts.wait)) statusAsked ??= askStatus(source.herdr, agent.pane_id).catch(() => null);
  };

  // 3. The target's look, once it is connected and the checkout and session are known.
  const look = quiet(lookOnceKnown(input, src, adapter, unitOf, askStatusOnce));

  // 4. The checkout that receives the work, and the placement there (decided from what was read).
  const work = quiet(placeWork(input, src, look));

  // 5. The session on the target: where it lands, room for it there, files changed there since.
  const [sourceCtx, targetCtx, space, proc, { cwd, ref: session, via: sessionVia }, placed, targetSide] = await Promise.all([src.ctx, look.then((l) => l.ctx), look.then((l) => l.space), src.process, src.session, work, target]);
  const looked = await look;
  const { snap, remotes, discovery, otherCheckouts, placement, placementRead } = placed;
  const targetCwd = cwdIn(placement.worktree, snap.relativeCwd);
  const sessionPlacement = adapter.placement(session, { ...targetCtx, cwd: targetCwd });
  const unit = await unitOf(session, sessionPlacement);
  if (space.root === sessionPlacement.configRoot) requireSpace(targetSide, space.free, unit);
  else await checkDisk(targetSide, sessionPlacement.configRoot, unit);
  // A session file on the target changed since an earlier handoff left it: refused now, not after the quit.
  const [[sourceHerdr, targetHerdr], targetLeft] = await Promise.all([herdrChecked(() => looked.probe), opts.overwrite ? null : refuseChangedSessionFiles(targetSide, sessionPlacement.configRoot, unit, Promise.resolve(looked.left))]);
  const targetIntegration = integrationFor(await looked.integrations.catch(() => []), adapter.integration);

  // 6. The plan.
  return {
    id,
    opts,
    agent,
    kind,
    adapter,
    process: proc,
    cwd,
    session,
    sessionVia,
    sourceHandle: sourceHandleOf(agent, session),
    snapshot: snap,
    remotes,
    sourceCtx,
    targetCtx,
    discovery,
    otherCheckouts,
    placement,
    placementRead,
    targetCwd,
    sessionPlacement,
    unit,
    targetLeft,
    targetHerdr,
    sourceHerdr,
    targetIntegration,
    targetAgentCli: space.program,
    statusBeforeQuit: await statusAsked,
    warnings: planWarnings(kind, targetSide.host.label, space.program, [sourceHerdr, targetHerdr]),
  };
}

/**
 * The target's look, as soon as it is connected and the source's checkout and session are known.
 * It goes out on the facts remembered of the target when there are some, beside its login probe;
 * it stands when the probe agrees (the early side is then the target), else it is asked again.
 */
async function lookOnceKnown(input: PlanInput, src: SourceReads, adapter: Adapter, unitOf: UnitsOf, askStatusOnce: () => void): Promise<TargetLook> {
  const { opts } = input;
  const searching = !opts.dir && !(opts.here && opts.newWorktree);
  const lookAt = async (t: Side): Promise<TargetLook> => {
    const [repo, found] = await Promise.all([src.checkout.catch(() => null), src.session.catch(() => null)]);
    const remotes = repo?.remotes ?? [];
    // The checkouts this machine found there last time are checked in the look; without them the
    // target's cache and config are read there instead.
    const remembered = searching && remotes[0] && !opts.here && !opts.dir ? recallCheckouts(t.host.address, remotes[0].key) : [];
    askStatusOnce();
    return lookAtTarget(t, {
      adapter,
      repo: repo && { remotes, branch: repo.layout.branch },
      searching,
      remembered,
      likelyBranch: opts.newBranch || !repo ? null : repo.layout.branch,
      // The session's files where it would land in each likely worktree (their ledger entries are
      // read in the look), when its unit is read already: across a link (--from) the look does not
      // wait for that, and the ledger is read once the placement is known (refuseChangedSessionFiles).
      sessionDests:
        repo && found && src.unitRead()
          ? async (ctx, worktrees) => {
              const each = await Promise.all(
                worktrees.map(async (w) => {
                  const placed = adapter.placement(found.ref, { ...ctx, cwd: cwdIn(w, repo.layout.relativeCwd) });
                  return (await unitOf(found.ref, placed)).map((e) => destinationUnder(placed.configRoot, e.dest));
                }),
              );
              return [...new Set(each.flat())];
            }
          : null,
      timeoutMs: opts.timeoutS * 1000,
    });
  };
  const early = await (input.earlyTarget ?? Promise.resolve(null)).catch(() => null);
  const earlyLook = early ? lookAt(early) : null;
  const { target } = await input.sides;
  if (earlyLook && target === early) return earlyLook;
  earlyLook?.then(ignoreLook, () => undefined);
  return lookAt(target);
}

/**
 * The checkout that receives the work and its placement there, checked (nothing changes). What
 * placing reads of the checkout was read in the look when it guessed the checkout (remembered),
 * else it is read now.
 */
async function placeWork(input: PlanInput, src: SourceReads, look: Promise<TargetLook>) {
  const { opts, id, source } = input;
  const { layout, snapshot, remotes } = await src.checkout;
  const [sides, looked] = await Promise.all([input.sides, look]);
  const guessed = quiet(opts.here || opts.dir ? Promise.resolve(null) : guessFromCache(sides.target, looked, remotes, opts.newBranch ? null : layout.branch));
  // The target checkout: the same repository found by its remote, or (--here) another worktree.
  const chosen = await chooseTargetRepo(sides, opts, layout, remotes, looked.discovery, input.scans);
  const snap = await snapshot;
  const guess = await guessed.catch(() => null);
  const placementRead = quiet(guess && guess.repo === chosen.targetRepo && snap.branch === layout.branch ? guess.read : readPlacementState(sides.target.host, chosen.targetRepo, chosen.newBranch ? null : snap.branch));
  const placement = await checkPlacement({
    target: sides.target.host,
    targetRepo: chosen.targetRepo,
    id,
    head: snap.head,
    wip: snap.snapshot,
    sourceBranch: snap.branch,
    newBranch: chosen.newBranch,
    // A new branch is named after the session.
    ...(chosen.newBranch || snap.branch === null ? { sessionId: (await src.session).ref.id } : {}),
    source: source.host,
    sourceRepo: snap.repoRoot,
    changedFiles: snap.changedFiles,
    read: placementRead,
  });
  // (Read by now: the placement was decided from it.)
  return { snap, remotes, ...chosen, placement, placementRead: await placementRead };
}

type UnitsOf = ReturnType<typeof unitsOnce>;

/**
 * The discovery's cache update (none in a dry run), and (unless a named --dir) this machine's
 * memory of the answer, both off the critical path. A dry run remembers too: the memory is a hint
 * on this machine (as hosts.json is), no part of either side of a handoff, and the send that
 * follows a dry run then looks where it found the checkout at once.
 */
function keepDiscovery(sides: Sides, found: DiscoverResult, remotes: readonly RemoteOfRepo[]): void {
  sides.background(found.saved);
  const key = remotes[0]?.key;
  if (found.via === 'dir' || !key) return;
  sides.background(rememberCheckouts(sides.target.host.address, key, found.checkouts.map((c) => c.path)));
}

async function chooseTargetRepo(sides: Sides, opts: SendOptions, snap: HeadLayout, remotes: RemoteOfRepo[], looked: DiscoveryLook | null, shared?: SharedScans): Promise<CheckoutChoice> {
  const { target } = sides;
  const dirReal = opts.here && opts.dir ? await target.host.realpath(opts.dir).catch(() => opts.dir ?? null) : null;
  const search = checkoutSearch(opts, snap, remotes.length, dirReal);
  if (search === 'none') return chooseCheckout(opts, snap, null);
  const discovering = discoverCheckout({ target: target.host, remotes, branch: snap.branch, ...(opts.dir ? { dir: opts.dir } : {}), dryRun: opts.dryRun, ...(looked ? { looked } : {}), ...(shared ? { shared } : {}) });
  const found = search === 'required' ? await discovering : await discovering.catch(() => null);
  if (found) keepDiscovery(sides, found, remotes);
  return chooseCheckout(opts, snap, found);
}
