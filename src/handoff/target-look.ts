// The plan's look at the target: ONE program, sent as soon as the target is connected and the
// source has said what to look for, asks everything the plan needs there side by side — herdr
// (installed, version, server, integrations), the home's real path, free space and the agent's
// CLI, the checkouts this machine remembers (or the target's cache and config), and what placing
// the work in the likely checkout would read. Each answer is parsed by the module that asked it.
import { sideCtxOf, type Adapter, type SideCtx } from '../../adapters/adapter.js';
import { discoveryLook, likelyCheckouts, type DiscoveryLook, type RemoteOfRepo } from '../git/discover.js';
import { placementReadProgram, placementReadsOf, readPlacementState, type PlacementReads } from '../git/placement-read.js';
import type { HerdrProbe } from '../herdr/probe.js';
import type { IntegrationState } from '../herdr/integration.js';
import { QuestionBatch } from '../host/run-side-by-side.js';
import { firstWorktreePath } from '../git/worktrees.js';
import { ledgerDir, leftStatesOf, readLeftArgv, type LeftLook } from '../transcript/left-ledger.js';
import { hostStateDir } from './marker.js';
import { freeSpaceProgram, spaceAndProgramOf, type SpaceAndProgram } from './disk.js';
import type { Side } from './sides.js';

export interface TargetLookRequest {
  adapter: Adapter;
  /** The source repository's remotes and branch; null when the source could not tell (no discovery then). */
  repo: { remotes: RemoteOfRepo[]; branch: string | null } | null;
  /** Whether the checkout is searched for (not with --dir, nor --here --new-worktree). */
  searching: boolean;
  /** The checkouts this machine remembers on the target for the source's primary remote. */
  remembered: readonly string[];
  /** The branch whose placement the likely checkout is read for (null: a new branch will be named). */
  likelyBranch: string | null;
  /**
   * The session files' likely destinations (for the placements the work most likely gets): what
   * the target's ledger says of them is read in the look, for the plan's refusal of changed files.
   */
  sessionDests: ((ctx: SideCtx, worktrees: string[]) => Promise<string[]>) | null;
  timeoutMs: number;
}

export interface TargetLook {
  probe: Promise<HerdrProbe>;
  integrations: Promise<IntegrationState[]>;
  ctx: Promise<SideCtx>;
  /** Free space under the agent's config root there, and its CLI on the login PATH. */
  space: Promise<SpaceAndProgram & { root: string }>;
  discovery: DiscoveryLook | null;
  /** What placing in the likely checkout reads (the first remembered one), asked in the look; null without one. */
  guess: { repo: string; read: Promise<PlacementReads> } | null;
  /** What the target's ledger says of the session's likely destinations (null: not asked). */
  left: Promise<LeftLook> | null;
}

/** Ask the target everything the plan needs of it, in one program (the answers settle apart). */
export async function lookAtTarget(side: Side, req: TargetLookRequest): Promise<TargetLook> {
  const { host, herdr, info } = side;
  const batch = new QuestionBatch();
  // First and alone: its request to herdr's server is answered a tick late when the look's other programs busy the host.
  const probe = herdr.probeAnswered(batch.ask({ program: { argv: herdr.probeArgv(), alone: true }, answer: (r) => r }));
  const integrations = batch.ask({ program: { argv: herdr.integrationStatusArgv() }, answer: (r) => herdr.integrationsOf(r) });
  // The host's facts tell it, as a rule (the login probe's); else it is asked here.
  const homeReal =
    info.homeReal !== undefined
      ? Promise.resolve(info.homeReal)
      : batch.ask({
          program: { argv: ['/bin/sh', '-c', 'cd -P -- "$1" && pwd -P', 'sh', info.home] },
          answer: (r) => (r.exitCode === 0 && r.stdout.trim() ? r.stdout.replace(/\n$/, '') : info.home),
        });
  const root = req.adapter.configRoot(info.loginEnv, info.home);
  const space = batch.ask({ program: freeSpaceProgram(root, req.adapter.herdrKind), answer: (r) => ({ ...spaceAndProgramOf(r, root, req.adapter.herdrKind), root }) });
  const discovery = req.searching && req.repo ? discoveryLook(batch, host, info, req.repo.remotes, req.repo.branch, req.remembered) : null;
  const likely = req.remembered[0];
  const guess = likely && req.repo ? { repo: likely, read: batch.ask({ program: placementReadProgram(likely, req.likelyBranch), answer: (r) => placementReadsOf(host, likely, req.likelyBranch, r) }) } : null;
  // The session lands in the likely checkout where its branch is checked out there, else in a
  // new worktree beside it; its files' destinations there are what the ledger is asked about.
  const ledger = ledgerDir(hostStateDir(info));
  // Without the home's real path in the facts (it is asked in this very look), the plain one stands in for it here.
  const dests = likely && req.sessionDests ? await req.sessionDests(sideCtxOf(info, info.homeReal ?? info.home), likelyWorktrees(likely, req.likelyBranch)).catch(() => []) : [];
  const left = dests.length > 0 ? batch.ask({ program: { argv: readLeftArgv(ledger, dests) }, answer: (r) => ({ dir: ledger, states: new Map(leftStatesOf(host, ledger, dests, r).map((s, i) => [dests[i]!, s])) }) }) : null;
  // On the side's facts, which may be remembered ones the probe has not confirmed yet.
  batch.send(host, { timeoutMs: req.timeoutMs, loginEnv: info.loginEnv });
  const ctx = homeReal.then((real) => sideCtxOf(info, real));
  return { probe, integrations, ctx, space, discovery, guess, left };
}

/** A look whose answers are not wanted (asked on facts the probe did not confirm): its failures are nobody's. */
export function ignoreLook(look: TargetLook): void {
  const ignore = (): undefined => undefined;
  for (const p of [look.probe, look.integrations, look.ctx, look.space, look.guess?.read, look.left]) p?.catch(ignore);
  if (look.discovery) for (const p of [look.discovery.remembered?.checkouts, look.discovery.cache, look.discovery.config]) p?.catch(ignore);
}

/** Where the work most likely lands in `checkout`: the checkout itself, or a new worktree of the branch beside it. */
function likelyWorktrees(checkout: string, branch: string | null): string[] {
  return branch === null ? [checkout] : [checkout, firstWorktreePath(checkout, branch)];
}

/**
 * Without a remembered checkout, the look read the target's cache: the checkout it names first
 * is the likely answer, and what placing there reads is asked now (beside the cache's check).
 */
export async function guessFromCache(side: Side, look: TargetLook, remotes: RemoteOfRepo[], likelyBranch: string | null): Promise<{ repo: string; read: Promise<PlacementReads> } | null> {
  if (look.guess || !look.discovery) return look.guess;
  // (The ledger is then read once the placement is known: see refuseChangedSessionFiles.)
  const [first] = await likelyCheckouts(look.discovery, remotes);
  if (!first) return null;
  const read = readPlacementState(side.host, first, likelyBranch);
  read.catch(() => undefined);
  return { repo: first, read };
}
