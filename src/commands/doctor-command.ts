// `doctor [TARGET] [--from HOST]`: inspect this machine (or HOST) and the target, one ssh
// connection per host, and say what is missing for a handoff with the fix.
import { HandoffError } from '../errors.js';
import { connectHost } from '../host/connect.js';
import type { Host, HostInfo } from '../host/host.js';
import { SshHost } from '../host/ssh.js';
import type { DoctorResult, Problem, SideReport } from '../result.js';
import { configRootsOf } from '../agents.js';
import type { CommandContext, CommandOutput } from './index.js';
import { inspectSide } from './doctor.js';

async function sshFacts(spec: string, host: Host, connectMs: number): Promise<SideReport['ssh']> {
  if (!(host instanceof SshHost)) return null;
  const started = Date.now();
  await host.run(['true']);
  const roundTrip = Date.now() - started;
  const t = host.target;
  return {
    target: spec,
    host: t.hostName,
    user: t.user,
    port: t.port,
    auth: host.authMethod,
    host_key: 'verified',
    proxy_jump: t.proxyJump ?? null,
    connect_ms: connectMs,
    round_trip_ms: roundTrip,
    handshakes: host.counters.handshakes,
  };
}

function roots(info: HostInfo): Record<string, string> {
  return configRootsOf(info);
}

/** Connect, turning connection failures into a problem rather than a crash. */
async function open(spec: string, role: string, timeoutS: number): Promise<{ host: Host | null; connectMs: number; problem: Problem | null }> {
  const started = Date.now();
  try {
    const host = await connectHost(spec, { connectTimeoutMs: timeoutS * 1000, commandTimeoutMs: timeoutS * 1000 });
    const connectMs = host instanceof SshHost ? host.connectMs : Date.now() - started;
    return { host, connectMs, problem: null };
  } catch (err) {
    if (!(err instanceof HandoffError)) throw err;
    return { host: null, connectMs: Date.now() - started, problem: { where: `${role} (${spec})`, code: err.code, problem: err.message, fix: err.fix ?? 'See the error above.' } };
  }
}

export async function doctor(args: Record<string, unknown>, _ctx: CommandContext): Promise<CommandOutput> {
  const targetSpec = typeof args.target === 'string' && args.target ? args.target : null;
  const fromSpec = typeof args.from === 'string' && args.from ? args.from : 'local';
  const timeoutS = typeof args.timeout === 'number' && args.timeout > 0 ? args.timeout : 30;
  const problems: Problem[] = [];
  const warnings: string[] = [];
  const hosts: Host[] = [];
  try {
    const [here, there] = await Promise.all([open(fromSpec, fromSpec === 'local' ? 'here' : 'source', timeoutS), targetSpec ? open(targetSpec, 'target', timeoutS) : Promise.resolve(null)]);
    for (const side of [here, there]) {
      if (side?.host) hosts.push(side.host);
      if (side?.problem) problems.push(side.problem);
    }
    const inspect = async (side: typeof here | null, spec: string, role: string): Promise<SideReport | null> => {
      if (!side?.host) return null;
      const facts = await inspectSide(side.host, { role, configRoots: roots, ssh: await sshFacts(spec, side.host, side.connectMs) });
      problems.push(...facts.problems);
      warnings.push(...facts.warnings);
      if (side.host instanceof SshHost) warnings.push(...side.host.warnings.map((w) => `${role}: ${w}`));
      return facts.report;
    };
    const [local, target] = await Promise.all([inspect(here, fromSpec, fromSpec === 'local' ? 'here' : 'source'), there ? inspect(there, targetSpec!, 'target') : Promise.resolve(null)]);
    if (!local) throw new HandoffError(problems[0]?.code ?? 'connect_failed', problems[0]?.problem ?? `Could not reach ${fromSpec}.`, { fix: problems[0]?.fix ?? 'Check the host.' });
    const result: DoctorResult = { ok: true, command: 'doctor', ready: problems.length === 0, local, target, problems, warnings };
    return { result, exitCode: result.ready ? 0 : 1 };
  } finally {
    await Promise.all(hosts.map((h) => h.close()));
  }
}
