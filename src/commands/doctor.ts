// `doctor [TARGET] [--from HOST]`: is everything a handoff needs in place, here and there?
// Works on a machine without herdr (it says so, with the fix). Exit 0 only when ready.
import { HerdrClient } from '../herdr/client.js';
import type { HerdrProbe } from '../herdr/probe.js';
import type { IntegrationState } from '../herdr/integration.js';
import type { Host, HostInfo } from '../host/host.js';
import { SUPPORTED_KINDS, type Problem, type SideReport } from '../result.js';

export const MIN_GIT = [2, 31, 0] as const;

export function gitVersionOk(output: string): { version: string | null; ok: boolean } {
  const m = /git version (\d+)\.(\d+)(?:\.(\d+))?/.exec(output);
  if (!m) return { version: null, ok: false };
  const v = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  let cmp = 0;
  for (let i = 0; i < 3 && cmp === 0; i++) cmp = Math.sign((v[i] ?? 0) - (MIN_GIT[i] ?? 0));
  return { version: `${v[0]}.${v[1]}.${v[2]}`, ok: cmp >= 0 };
}

export interface SideFacts {
  report: SideReport;
  problems: Problem[];
  warnings: string[];
}

export interface SideOptions {
  /** 'here' or 'target' or 'source', used in problem reports. */
  role: string;
  /** Config root per agent kind on this host (from the adapters). */
  configRoots: (info: HostInfo) => Record<string, string>;
  /** ssh facts when the host is remote. */
  ssh: SideReport['ssh'];
}

/** Everything doctor learns about one host, in parallel where the host allows. */
export async function inspectSide(host: Host, opts: SideOptions): Promise<SideFacts> {
  const problems: Problem[] = [];
  const warnings: string[] = [];
  const where = `${opts.role} (${host.label})`;
  const herdr = new HerdrClient(host);
  const [info, gitPath, agentPaths, probe] = await Promise.all([
    host.info(),
    host.which('git'),
    Promise.all(SUPPORTED_KINDS.map(async (k) => [k, await host.which(k)] as const)),
    herdr.probe(),
  ]);
  const gitRun = gitPath ? await host.run([gitPath, '--version']) : null;
  const git = gitRun && gitRun.exitCode === 0 ? gitVersionOk(gitRun.stdout) : { version: null, ok: false };
  const integrations: IntegrationState[] = probe.path ? await herdr.integrationStatus().catch(() => []) : [];

  const tools: SideReport['tools'] = [
    { name: 'git', path: gitPath, version: git.version, ok: git.ok, required: true },
    { name: 'herdr', path: probe.path, version: probe.version?.version ?? null, ok: probe.path !== null && probe.version?.ok !== false, required: true },
    ...agentPaths.map(([k, p]) => ({ name: k, path: p, version: null, ok: p !== null, required: false })),
  ];
  if (!gitPath) problems.push({ where, code: 'git_missing', problem: 'git is not installed (not on the login PATH).', fix: `Install git ≥ ${MIN_GIT.join('.')} on ${host.label}.` });
  else if (!git.ok) problems.push({ where, code: 'git_too_old', problem: `git ${git.version ?? '(unknown)'} is older than ${MIN_GIT.join('.')}.`, fix: `Update git on ${host.label}.` });
  herdrProblems(probe, where, host.label, problems, warnings);
  if (agentPaths.every(([, p]) => p === null)) {
    warnings.push(`${where}: none of the agent CLIs (${SUPPORTED_KINDS.join(', ')}) is on the login PATH.`);
  }
  const report: SideReport = {
    host: host.label,
    user: info.user,
    hostname: info.hostname,
    platform: info.platform,
    tools,
    herdr: { installed: probe.path !== null, version: probe.version?.version ?? null, server: probe.server },
    integrations: integrations
      .filter((s) => (SUPPORTED_KINDS as readonly string[]).includes(s.target))
      .map((s) => ({ kind: s.target, status: s.status, version: s.version, path: s.path })),
    config_roots: opts.configRoots(info),
    ssh: opts.ssh,
  };
  return { report, problems, warnings };
}

function herdrProblems(probe: HerdrProbe, where: string, label: string, problems: Problem[], warnings: string[]): void {
  if (!probe.path) {
    problems.push({ where, code: 'herdr_not_installed', problem: 'herdr is not installed (not on the login PATH).', fix: `Install herdr ≥ 0.8.0 on ${label} (e.g. into ~/.local/bin).` });
    return;
  }
  if (probe.version && !probe.version.ok) {
    problems.push({ where, code: 'herdr_too_old', problem: `herdr ${probe.version.version} is older than 0.8.0.`, fix: `Update herdr on ${label} to 0.8.0 or later.` });
  }
  if (probe.version?.warning) warnings.push(`${where}: ${probe.version.warning}`);
  if (probe.server !== 'running') {
    problems.push({ where, code: 'server_not_running', problem: 'The herdr server is not running.', fix: `Start herdr on ${label} (run \`herdr\` once, or \`herdr server\`).` });
  } else if (probe.serverStatus?.compatible === false || probe.serverStatus?.restart_needed) {
    problems.push({ where, code: 'protocol_mismatch', problem: 'The herdr server runs a different version than the herdr CLI.', fix: `Restart the herdr server on ${label}.` });
  }
}
