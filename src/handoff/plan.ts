// Plan: everything that can be learned and checked before anything changes (= `--dry-run`).
// Read-only on both machines: no refs, no files, no index, no cache. (A snapshot writes git
// objects that nothing references; git's gc removes them in time.)
import { adapterFor } from '../../adapters/index.js';
import { sideCtx } from '../../adapters/adapter.js';
import type { AgentInfo } from '../herdr/schemas.js';
import type { IntegrationState } from '../herdr/integration.js';
import type { HerdrProbe } from '../herdr/probe.js';
import { recallCheckouts, rememberCheckouts } from '../git/checkout-memory.js';
import { discoverCheckout, type DiscoverResult, type DiscoveryLook, type RemoteOfRepo, type SharedScans } from '../git/discover.js';
import { checkDisk, requireSpace } from './disk.js';
import { guessFromCache, ignoreLook, lookAtTarget, type TargetLook } from './target-look.js';
import { checkPlacement } from '../git/place.js';
import { readPlacementState } from '../git/placement-read.js';
import { snapshotOf, type HeadLayout } from '../git/snapshot.js';
import { readSourceCheckout } from '../git/source-checkout.js';
import { findAgent } from './find-agent.js';
import type { SendOptions } from './options.js';
import { refuseChangedSessionFiles } from './session-conflicts.js';
import { destinationUnder } from '../transcript/destinations.js';
import type { Side, Sides } from './sides.js';
import { agentStartedAt } from './process-age.js';
import { findSession, unitsOnce } from './find-session.js';
import { askStatus, type AgentStatusRead } from './idle-check.js';
import { agentFolder, agentProcess, checkoutSearch, chooseCheckout, cwdIn, movableKind, planWarnings, requireHerdr, sourceHandleOf, type CheckoutChoice } from './plan-rules.js';
import type { Plan } from './plan-data.js';

export type { Plan };
export { cwdIn };

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
  // before the plan is returned. The source's is quick: a ping of its socket, after which the
  // reads go ahead (see HerdrClient.reach). herdr's findings explain any failure better than
  // what followed from them; a target that cannot be reached says so before anything else.
  const sourceProbe = sourceHerdrProbe(source, sameHost);
  const herdrChecked = (targetProbe: (target: Side) => Promise<HerdrProbe>) =>
    Promise.all([input.sides, sourceProbe]).then(async ([sides, s]) => {
      const t = sameHost ? s : await targetProbe(sides.target);
      requireHerdr(s, source.host.label);
      requireHerdr(t, sides.target.host.label);
      return [s, t] as const;
    });
  try {
    return await planAfterProbes(input, sourceProbe, herdrChecked);
  } catch (err) {
    // The look's probe when it was asked, else one of its own (HerdrClient asks it once).
    await herdrChecked((target) => target.herdr.probe());
    throw err;
  }
}

type HerdrChecked = (targetProbe: (target: Side) => Promise<HerdrProbe>) => Promise<readonly [HerdrProbe, HerdrProbe]>;

async function planAfterProbes(input: PlanInput, sourceProbe: Promise<HerdrProbe>, herdrChecked: HerdrChecked): Promise<Plan> {
  const { opts, id, source } = input;
  // The source's work starts now; the target's as soon as it is connected (in the meantime the
  // source is looked at: the agent, its session, the repository and the snapshot).
  const target = input.sides.then((sides) => sides.target);
  target.catch(() => undefined);
  const sourceCtxAsked = sideCtx(source.host);
  sourceCtxAsked.catch(() => undefined);
  const searching = !opts.dir && !(opts.here && opts.newWorktree);
  const agents = await (input.agents ?? source.herdr.agentListBeside(sourceProbe));

  const agent = findAgent(agents, opts.agent, source.host.label);
  const kind = movableKind(agent, opts, { label: source.host.label, isThisMachine: source.host.isThisMachine, callerPane: input.callerPane });
  const adapter = adapterFor(kind);

  // Quitting only when idle (codex, --wait): the status asked again as the look goes out.
  const status: { asked: Promise<AgentStatusRead | null> | null } = { asked: null };
  const askStatusOnce = (): void => {
    if (!opts.dryRun && (adapter.quit.mustBeIdle || opts.wait)) status.asked ??= askStatus(source.herdr, agent.pane_id).catch(() => null);
  };

  // Everything below depends only on the agent. Three chains at once: the session, the source's
  // repository (layout, snapshot, remotes), and the target's look (once connected and those are known).
  const processChain = (async () => {
    const proc = agentProcess(await source.herdr.processInfo(agent.pane_id), agent.pane_id, source.host.label);
    let asked: Promise<number> | undefined;
    const agentStarted = () => (asked ??= agentStartedAt(source.host, proc.pid));
    return { proc, agentStarted };
  })();
  processChain.catch(() => undefined);
  // herdr's foreground cwd when known: the repository, session and look then skip a herdr read.
  const folder = (async () => agentFolder(agent, agent.foreground_cwd ? null : (await processChain).proc))();
  folder.catch(() => undefined);
  // The checkout (its folder with links resolved, remotes, layout) in one program; the snapshot
  // (a few git programs) is made while the target is looked at, the session searched from the folder.
  const sourceRepo = folder.then(async (f) => {
    const { cwd, layout, remotes } = await readSourceCheckout(source.host, f);
    const snapping = snapshotOf(source.host, layout);
    snapping.catch(() => undefined);
    return { cwd, layout, snapping, remotes };
  });
  sourceRepo.catch(() => undefined);
  const cwdChain = sourceRepo.then((r) => r.cwd);
  cwdChain.catch(() => undefined);
  const integrationOf = (states: IntegrationState[]) => states.find((s) => s.target === adapter.integration) ?? null;
  const unitOf = unitsOnce(adapter, source.host);
  // Only when the session cannot be found: the source's integration explains why.
  const sourceIntegration = async (): Promise<IntegrationState | null> => integrationOf(await source.herdr.integrationStatus().catch(() => [] as IntegrationState[]));
  // The session as found (what the look needs), then with the agent's process.
  const foundChain = (async () => {
    const [cwd, sourceCtx] = await Promise.all([cwdChain, sourceCtxAsked]);
    const agentStarted = () => processChain.then((p) => p.agentStarted());
    return { cwd, ...(await findSession(source, adapter, agent, opts, sourceCtx, cwd, agentStarted, sourceIntegration)) };
  })();
  foundChain.catch(() => undefined);
  const sessionChain = Promise.all([processChain, foundChain]).then(([{ proc }, found]) => ({ proc, ...found }));
  sessionChain.catch(() => undefined);
  const lookAt = (t: Side): Promise<TargetLook> => Promise.all([sourceRepo.catch(() => null), foundChain.catch(() => null)]).then(([repo, found]) => {
    const remotes = repo?.remotes ?? [];
    // The checkouts this machine found there last time are checked in the look; without them the
    // target's cache and config are read there instead.
    const remembered = searching && remotes[0] ? recallCheckouts(t.host.address, remotes[0].key) : [];
    const likelyBranch = opts.newBranch || !repo ? null : repo.layout.branch;
    askStatusOnce();
    return lookAtTarget(t, {
      adapter,
      repo: repo && { remotes, branch: repo.layout.branch },
      searching,
      remembered: opts.here || opts.dir ? [] : remembered,
      likelyBranch,
      // The session's files where it would land in each likely worktree (their ledger entries are read in the look).
      sessionDests:
        repo && found
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
  });
  // The look goes out on the facts remembered of the target when there are some, beside its
  // login probe; it stands when the probe agrees (the early side is then the target), else it
  // is asked again.
  const look = (async () => {
    const early = await (input.earlyTarget ?? Promise.resolve(null)).catch(() => null);
    const earlyLook = early ? lookAt(early) : null;
    const t = await target;
    if (earlyLook && t === early) return earlyLook;
    earlyLook?.then(ignoreLook, () => undefined);
    return lookAt(t);
  })();
  look.catch(() => undefined);
  const integrations = (): Promise<IntegrationState[]> => look.then((l) => l.integrations).catch(() => [] as IntegrationState[]);
  const contexts = Promise.all([sourceCtxAsked, look.then((l) => l.ctx)]);
  contexts.catch(() => undefined);
  const repoChain = (async () => {
    const { cwd, layout, snapping, remotes } = await sourceRepo;
    const [sides, looked] = await Promise.all([input.sides, look]);
    // The checkout the look found likely is most likely the answer: what placing there needs was
    // read in the look (remembered), or is read now beside the cache's check.
    const guessed = opts.here || opts.dir ? Promise.resolve(null) : guessFromCache(sides.target, looked, remotes, opts.newBranch ? null : layout.branch);
    guessed.catch(() => undefined);
    // The target checkout: the same repository found by its remote, or (--here) another worktree.
    const chosen = await chooseTargetRepo(sides, opts, layout, remotes, looked.discovery, input.scans);
    const snap = await snapping;
    const guess = await guessed.catch(() => null);
    // What placing reads of the target checkout: the guess's read when it guessed right.
    const placementRead = guess && guess.repo === chosen.targetRepo && snap.branch === layout.branch ? guess.read : readPlacementState(sides.target.host, chosen.targetRepo, chosen.newBranch ? null : snap.branch);
    placementRead.catch(() => undefined);
    const placement = await checkPlacement({
      target: sides.target.host,
      targetRepo: chosen.targetRepo,
      id,
      head: snap.head,
      wip: snap.snapshot,
      sourceBranch: snap.branch,
      newBranch: chosen.newBranch,
      // A new branch is named after the session (found meanwhile by the other chain).
      ...(chosen.newBranch || snap.branch === null ? { sessionId: (await sessionChain).ref.id } : {}),
      source: source.host,
      sourceRepo: snap.repoRoot,
      changedFiles: snap.changedFiles,
      read: placementRead,
    });
    // (Read by now: the placement was decided from it.)
    return { cwd, snap, remotes, ...chosen, placement, placementRead: await placementRead };
  })();
  const spaceRead = look.then(async (l) => {
    const { root, free, program } = await l.space;
    return { root, free, agentCli: program };
  });
  const [[sourceCtx, targetCtx], space, { proc, cwd, ref: session, via: sessionVia }, repo, targetSide] = await Promise.all([
    contexts,
    spaceRead,
    sessionChain,
    repoChain,
    target,
  ]);
  const { snap, remotes, discovery, otherCheckouts, placement, placementRead } = repo;
  const targetCwd = cwdIn(placement.worktree, snap.relativeCwd);
  const sessionPlacement = adapter.placement(session, { ...targetCtx, cwd: targetCwd });
  const unit = await unitOf(session, sessionPlacement);
  if (space.root === sessionPlacement.configRoot) requireSpace(targetSide, space.free, unit);
  else await checkDisk(targetSide, sessionPlacement.configRoot, unit);
  // A session file on the target changed since an earlier handoff left it: refused now, not after the quit.
  const [[sourceHerdr, targetHerdr], targetLeft] = await Promise.all([herdrChecked(() => look.then((l) => l.probe)), opts.overwrite ? null : refuseChangedSessionFiles(targetSide, sessionPlacement.configRoot, unit, look.then((l) => l.left))]);
  // Asked in the look, beside the rest.
  const targetIntegration = await integrations().then(integrationOf);

  const statusBeforeQuit = await status.asked;
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
    targetAgentCli: space.agentCli,
    statusBeforeQuit,
    warnings: planWarnings(kind, targetSide.host.label, space.agentCli, [sourceHerdr, targetHerdr]),
  };
}

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
