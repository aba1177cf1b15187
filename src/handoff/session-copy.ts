// The session step: which source paths become which target paths, then the unit's copy through
// the rewriter (src/transcript). The handoff knows every spelling of the source repo root
// (git's toplevel, its realpath, herdr's cwd and the process cwd minus the relative part).
import type { Placement, UnitEntry } from '../../adapters/adapter.js';
import { buildRewritePlan, type RewritePlan } from '../transcript/rewrite-plan.js';
import { copyUnit, type CopyRecord } from '../transcript/copy.js';
import type { DestinationLook } from '../transcript/destinations.js';
import type { LeftLook } from '../transcript/left-ledger.js';
import type { Snapshot } from '../git/snapshot.js';
import type { Plan } from './plan.js';
import type { Sides } from './sides.js';
import { stepBytes, type ByteMeter } from '../progress.js';

/** `cwd` minus the agent's path below the repo root → that spelling of the repo root. */
function rootOf(cwd: string | null | undefined, relativeCwd: string): string | null {
  if (!cwd) return null;
  if (!relativeCwd) return cwd;
  const suffix = `/${relativeCwd}`;
  return cwd.endsWith(suffix) ? cwd.slice(0, -suffix.length) : null;
}

export function sessionRewritePlan(plan: Plan, snap: Snapshot, targetWorktree: string, placement: Placement): RewritePlan {
  const rel = snap.relativeCwd;
  const repoSpellings = [snap.repoRoot, snap.realRoot, rootOf(plan.agent.cwd, rel), rootOf(plan.agent.foreground_cwd, rel), rootOf(plan.process.cwd, rel), rootOf(plan.cwd, rel)].filter(
    (p): p is string => typeof p === 'string' && p.startsWith('/'),
  );
  const src = plan.sourceCtx;
  const dst = plan.targetCtx;
  return buildRewritePlan({
    renames: placement.renames,
    repo: { source: [...new Set(repoSpellings)], target: targetWorktree },
    configRoot: { source: [plan.session.configRoot], target: placement.configRoot },
    home: { source: [...new Set([src.home, src.homeReal ?? src.home])], target: dst.home },
  });
}

export interface SessionCopyInput {
  plan: Plan;
  sides: Sides;
  unit: UnitEntry[];
  placement: Placement;
  snapshot: Snapshot;
  targetWorktree: string;
  /** The look at the destinations the session intent was made from. */
  looked?: Promise<DestinationLook>;
  /** The target's ledger of what earlier handoffs left there. */
  ledgerDir: string;
  /** What the plan read of that ledger and the files (Plan.targetLeft): they are not hashed again. */
  left?: LeftLook | null;
  /** The source's ledger of what handoffs wrote there. */
  arrivalsDir: string;
  /** Replace files that changed since they were left there (--overwrite). */
  overwrite: boolean;
  /** The unit's small files read early, beside its stat after the quit (read-ahead.ts). */
  readEarly?: Promise<ReadonlyMap<string, Buffer>>;
}

export async function copySessionUnit(input: SessionCopyInput): Promise<CopyRecord> {
  const rewrite = sessionRewritePlan(input.plan, input.snapshot, input.targetWorktree, input.placement);
  return copyUnit({
    source: input.sides.source.host,
    target: input.sides.target.host,
    entries: input.unit,
    targetRoot: input.placement.configRoot,
    plan: rewrite,
    tag: input.plan.id.slice(-8),
    ledgerDir: input.ledgerDir,
    arrivalsDir: input.arrivalsDir,
    overwrite: input.overwrite,
    ...(input.looked ? { looked: input.looked } : {}),
    ...(input.left ? { left: input.left } : {}),
    ...(input.readEarly ? { readEarly: input.readEarly } : {}),
    ...meter(input.unit.reduce((n, e) => n + (e.size ?? 0), 0)),
  });
}

/** The progress step's byte meter, told the unit's size (on a terminal a big transcript shows bytes, rate and time left). */
function meter(total: number): { onBytes?: ByteMeter } {
  const onBytes = stepBytes(total);
  return onBytes ? { onBytes } : {};
}
