// Facts about the agent kinds that commands outside a handoff need (doctor, list).
import { ADAPTERS } from '../adapters/index.js';
import type { HostInfo } from './host/host.js';

/** Config root of every supported kind on a host, from its login environment. */
export function configRootsOf(info: HostInfo): Record<string, string> {
  const roots: Record<string, string> = {};
  for (const [kind, adapter] of Object.entries(ADAPTERS)) roots[kind] = adapter.configRoot(info.loginEnv, info.home);
  return roots;
}
