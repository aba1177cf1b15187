// Is herdr installed on a host, which version, is its server up? The full probe asks the CLI
// (`status server`) and, from its answer, tells the socket transport where the server listens;
// the quick one (`reach`) pings the socket where the CLI would look, starting no herdr process —
// on this machine. Where a socket request costs a round trip and herdr's wait for its next read
// (ssh), `reach` is the full probe with the agent list in the same program: one round trip.
import type { Host, RunResult } from '../host/host.js';
import { AgentListResult, ServerStatus, type AgentInfo } from './schemas.js';
import { checkHerdrVersion, type VersionCheck } from './version.js';
import { expectedSocket } from './socket-path.js';
import type { HerdrCli } from './cli-runner.js';
import type { HerdrSocket } from './socket-transport.js';

export interface HerdrProbe {
  /** Absolute path of the herdr binary on the host, or null when it is not installed. */
  path: string | null;
  version: VersionCheck | null;
  server: 'running' | 'not_running' | 'not_installed';
  serverStatus: ServerStatus | null;
  /** The socket `reach()` pinged, when the CLI names another one (reads went to the wrong server). */
  socketMismatch?: { pinged: string; cli: string };
}

/**
 * Prints herdr's path ($1, else the login PATH's) and a NUL (a path may hold a newline), then
 * `status server --json`. With a mark ($2), then that mark on a line of its own and `agent list`
 * (its error, when the server is not there, is the CLI's to tell later: dropped here).
 */
export const PROBE_SCRIPT = [
  'p=$1; [ -n "$p" ] || p=$(command -v herdr) || exit 127; case $p in /*) ;; *) exit 127;; esac; [ -x "$p" ] || exit 127; printf "%s\\0" "$p"',
  '[ -n "$2" ] || exec "$p" status server --json',
  '"$p" status server --json; s=$?; printf "\\n%s\\n" "$2"; "$p" agent list 2>/dev/null; exit "$s"',
].join('\n');

/** The line between the status and the agent list in PROBE_SCRIPT's answer. */
const LIST_MARK = 'agent-handoff:agent-list';

/** PROBE_SCRIPT's answer split at its mark: the status part, and the agent list's (null: not asked). */
function splitAtList(stdout: string): { status: string; list: string | null } {
  const at = stdout.lastIndexOf(`\n${LIST_MARK}\n`);
  return at < 0 ? { status: stdout, list: null } : { status: stdout.slice(0, at + 1), list: stdout.slice(at + LIST_MARK.length + 2) };
}

/** The agents in PROBE_SCRIPT's list part; null when there is none or it is not herdr's list. */
function agentsOf(list: string | null): AgentInfo[] | null {
  if (!list?.trim()) return null;
  try {
    const parsed = AgentListResult.safeParse(JSON.parse(list.trim().split('\n').pop() ?? ''));
    return parsed.success ? parsed.data.result.agents : null;
  } catch {
    return null;
  }
}

function parseServerStatus(stdout: string): ServerStatus | null {
  try {
    return ServerStatus.parse(JSON.parse(stdout.trim().split('\n').pop() ?? ''));
  } catch {
    return null;
  }
}

export class HerdrProber {
  private probing: Promise<HerdrProbe> | undefined;
  private reaching: Promise<HerdrProbe> | undefined;
  /** The agents listed in the probe's own program (see reach), while that answer is news. */
  private listedWithProbe: Promise<AgentInfo[] | null> | undefined;

  constructor(
    private readonly host: Host,
    private readonly cli: HerdrCli,
    private readonly socket: HerdrSocket,
    /** A herdr binary to use instead of looking it up on the login PATH. */
    private readonly fixedBin: string | undefined,
  ) {}

  /** Installed? which version? server up? — asked once; never throws for "not installed" or "not running". */
  probe(): Promise<HerdrProbe> {
    this.probing ??= this.probeOnce();
    return this.probing;
  }

  /** The probe's program: find herdr on the login PATH and ask the server's status (and, `withList`, its agents). */
  probeArgv(withList = false): string[] {
    return ['/bin/sh', '-c', PROBE_SCRIPT, 'sh', this.fixedBin ?? '', withList ? LIST_MARK : ''];
  }

  /** The probe, from the answer to `probeArgv` asked elsewhere (unless this probed already). */
  probeAnswered(answer: Promise<RunResult>): Promise<HerdrProbe> {
    this.probing ??= answer.then((r) => this.probeOf(r));
    return this.probing;
  }

  private async probeOnce(): Promise<HerdrProbe> {
    return this.probeOf(await this.host.run(this.probeArgv(), { timeoutMs: this.cli.timeoutMs }));
  }

  private async probeOf(r: RunResult): Promise<HerdrProbe> {
    // A running, compatible server reports its version, which the CLI shares (the protocol
    // matches); `--version` is asked only when the status cannot tell.
    const end = r.stdout.indexOf('\0');
    const path = r.exitCode === 127 || end < 1 ? null : r.stdout.slice(0, end);
    this.cli.learnBin(path);
    if (!path) return { path: null, version: null, server: 'not_installed', serverStatus: null };
    const serverStatus = parseServerStatus(splitAtList(r.stdout.slice(end + 1)).status);
    const told = serverStatus?.running && serverStatus.compatible !== false ? serverStatus.version : null;
    this.socket.use(told && serverStatus?.socket ? serverStatus.socket : null);
    const version = checkHerdrVersion(told ?? (await this.host.run([path, '--version'], { timeoutMs: this.cli.timeoutMs })).stdout);
    const pinged = this.socket.pinged;
    const mismatch = pinged && serverStatus?.socket && serverStatus.socket !== pinged ? { pinged, cli: serverStatus.socket } : null;
    return { path, version, server: serverStatus?.running ? 'running' : 'not_running', serverStatus, ...(mismatch ? { socketMismatch: mismatch } : {}) };
  }

  /**
   * The quick probe (see HerdrClient.reach): a ping, else the full probe. Where a socket request
   * costs a round trip and herdr's wait for its next read, the full probe with the agent list:
   * one program answers both in a round trip, where the ping alone took about three.
   */
  reach(): Promise<HerdrProbe> {
    this.reaching ??= this.host.socketsCostARoundTrip ? this.probeWithList() : this.reachOnce();
    return this.reaching;
  }

  private probeWithList(): Promise<HerdrProbe> {
    if (this.probing) return this.probing;
    const answer = this.host.run(this.probeArgv(true), { timeoutMs: this.cli.timeoutMs });
    this.listedWithProbe = answer.then((r) => agentsOf(splitAtList(r.stdout).list)).catch(() => null);
    return this.probeAnswered(answer);
  }

  /**
   * The agents the probe's program listed, taken once: a later list is asked anew. Null when
   * the probe did not list them (or the list failed: the CLI, asked again, tells why).
   */
  takeListed(): Promise<AgentInfo[] | null> | null {
    const listed = this.listedWithProbe;
    this.listedWithProbe = undefined;
    return listed ?? null;
  }

  private async reachOnce(): Promise<HerdrProbe> {
    const [version, path] = await Promise.all([this.pingVersion(), this.cli.bin()]);
    if (!version || !path) return this.probe();
    return { path, version: checkHerdrVersion(version), server: 'running', serverStatus: null };
  }

  /** True when a socket is known or the expected one answers a ping (see HerdrClient.ping). */
  async ping(): Promise<boolean> {
    return this.socket.known || (await this.pingVersion()) !== null;
  }

  /** The server's version when the expected socket answers a ping (and reads then use it); else null. */
  private async pingVersion(): Promise<string | null> {
    const socket = await this.expectedSocket();
    if (!socket) return null;
    return this.socket.ping(socket);
  }

  /** Where herdr's CLI would find the server's socket on this host (null: not known). */
  async expectedSocket(): Promise<string | null> {
    const info = await this.host.info().catch(() => null);
    return info ? expectedSocket(info.loginEnv, info.home) : null;
  }
}
