// What the plan reads of the source once it knows the agent, all at once: the agent's program,
// its checkout (folder, remotes, layout) with its snapshot, and its session. Each is a promise
// the plan awaits where it needs it: the target's look goes out as soon as the checkout and the
// session are known.
import type { Adapter, SessionRef, SideCtx } from '../../adapters/adapter.js';
import type { RemoteOfRepo } from '../git/discover.js';
import { integrationFor, type IntegrationState } from '../herdr/integration.js';
import type { AgentInfo, ProcessInfo } from '../herdr/schemas.js';
import type { HeadLayout, Snapshot } from '../git/snapshot.js';
import { readSourceCheckout } from '../git/source-checkout.js';
import type { Host } from '../host/host.js';
import { readsOnce } from '../host/reads-once.js';
import { quiet } from '../quiet.js';
import { findSession } from './find-session.js';
import type { SendOptions } from './options.js';
import type { Plan } from './plan-data.js';
import { agentFolder, agentProcess } from './plan-rules.js';
import { agentStartedAt } from './process-age.js';
import type { Side } from './sides.js';

export interface SourceReads {
  /** The source's paths and folders (home, the agent's config root). */
  ctx: Promise<SideCtx>;
  /** The agent's program (argv, pid, cwd). */
  process: Promise<ProcessInfo>;
  /** The agent's checkout, and its snapshot being made. */
  checkout: Promise<{ cwd: string; layout: HeadLayout; remotes: RemoteOfRepo[]; snapshot: Promise<Snapshot> }>;
  /** The agent's session as found, and how. */
  session: Promise<{ cwd: string; ref: SessionRef; via: Plan['sessionVia'] }>;
  /** The source as the session was read there: each file stat'ed and each folder walked once (its unit's reads made already, as soon as it was found). */
  sessionHost: Host;
  /** Whether the session's unit has been read by now (through sessionHost, so the plan's unit asks nothing more). */
  unitRead: () => boolean;
}

/** Start every read of the source about `agent` (`ctx`: the source's paths, asked already); none is awaited here. */
export function readSource(source: Side, ctx: Promise<SideCtx>, agent: AgentInfo, adapter: Adapter, opts: SendOptions): SourceReads {
  const process = quiet(source.herdr.processInfo(agent.pane_id).then((info) => agentProcess(info, agent.pane_id, source.host.label)));
  let started: Promise<number> | undefined;
  const agentStarted = (): Promise<number> => (started ??= process.then((p) => agentStartedAt(source.host, p.pid)));
  // herdr's foreground cwd when known: the checkout, session and look then skip a herdr read.
  const folder = quiet(agent.foreground_cwd ? Promise.resolve(agentFolder(agent, null)) : process.then((p) => agentFolder(agent, p)));
  // The checkout (its folder with links resolved, remotes, layout) and its snapshot in one
  // program. The session does not wait for a local-path remote's realpath: it needs the folder alone.
  const read = quiet(folder.then((f) => readSourceCheckout(source.host, f)));
  const checkout = quiet(read.then(async ({ cwd, layout, remotes, snapshot }) => ({ cwd, layout, remotes: await remotes, snapshot })));
  // Only when the session cannot be found: the source's integration explains why.
  const sourceIntegration = async (): Promise<IntegrationState | null> => integrationFor(await source.herdr.integrationStatus().catch(() => []), adapter.integration);
  // Located beside the checkout's read when herdr knows the session (its folder is only for a guess).
  const cwd = quiet(read.then((c) => c.cwd));
  // Locating the session and walking its unit ask the same files: over ssh a stat is a round trip.
  const sessionHost = readsOnce(source.host);
  const session = quiet(ctx.then(async (c) => ({ ...(await findSession({ ...source, host: sessionHost }, adapter, agent, opts, c, cwd, agentStarted, sourceIntegration)), cwd: await cwd })));
  // The unit's reads (its walks and stats) depend on the session alone, not on where it lands:
  // made as soon as it is found, the plan's unit for the placement chosen later reads nothing.
  let unitRead = false;
  void session
    .then(async (found) => adapter.unit(sessionHost, found.ref, adapter.placement(found.ref, { ...(await ctx), cwd: found.cwd })))
    .then(() => (unitRead = true))
    .catch(() => undefined);
  return { ctx, process, checkout, session, sessionHost, unitRead: () => unitRead };
}
