// The plan: what a handoff learned and decided before anything changes, as plain data (no
// promises, no I/O). plan.ts reads and decides; execute.ts runs it.
import type { Adapter, Placement, SessionRef, SideCtx, UnitEntry } from '../../adapters/adapter.js';
import type { AgentInfo, ProcessInfo } from '../herdr/schemas.js';
import type { IntegrationState } from '../herdr/integration.js';
import type { HerdrProbe } from '../herdr/probe.js';
import type { SupportedKind } from '../result.js';
import type { DiscoverResult, RemoteOfRepo } from '../git/discover.js';
import type { PlacementPlan } from '../git/placement-decide.js';
import type { PlacementReads } from '../git/placement-read.js';
import type { Snapshot } from '../git/snapshot.js';
import type { LeftLook } from '../transcript/left-ledger.js';
import type { AgentStatusRead } from './idle-check.js';
import type { SendOptions } from './options.js';

export interface Plan {
  id: string;
  opts: SendOptions;
  agent: AgentInfo;
  kind: SupportedKind;
  adapter: Adapter;
  /** The agent's foreground process at the source (argv, pid, cwd). */
  process: ProcessInfo;
  /** The agent's working directory at the source (realpath). */
  cwd: string;
  session: SessionRef;
  /** How the session was found. */
  sessionVia: 'herdr' | 'option' | 'handoff' | 'guess';
  /** herdr's handle at the source (to resume there after a failure). */
  sourceHandle: string;
  snapshot: Snapshot;
  remotes: RemoteOfRepo[];
  sourceCtx: SideCtx;
  targetCtx: SideCtx;
  discovery: DiscoverResult | null;
  /** Checkouts found on the target other than the chosen one. */
  otherCheckouts: string[];
  placement: PlacementPlan;
  /**
   * What the placement check read of the target checkout, moments before the quit. Execute places
   * from it (every change place makes is conditional on what was read, so a target changed since
   * fails safely) and sends only the objects its refs lack.
   */
  placementRead: PlacementReads;
  /** The agent's cwd on the target (placement worktree + the relative cwd). */
  targetCwd: string;
  sessionPlacement: Placement;
  unit: UnitEntry[];
  /** What the target's ledger said of the unit's destinations, and their hashes (null with --overwrite: not read). */
  targetLeft: LeftLook | null;
  targetHerdr: HerdrProbe;
  sourceHerdr: HerdrProbe;
  /** The target's herdr integration for this kind (null: herdr could not say). */
  targetIntegration: IntegrationState | null;
  targetAgentCli: string | null;
  /** The agent's status asked again as the target's look went out (kinds that quit only when idle, and --wait). */
  statusBeforeQuit: AgentStatusRead | null;
  warnings: string[];
}
