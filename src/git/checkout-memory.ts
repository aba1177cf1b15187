// What this machine remembers of where a target keeps its checkouts of a repository: a hint that
// lets the check of the likely answer start the moment the target is connected, instead of after
// the target's own cache (repos.json) has been read over the connection. Never trusted as it is:
// the target checks the folders exactly as it checks its cache's entries.
import path from 'node:path';
import { z } from 'zod';
import { stateDir } from '../handoff/journal.js';
import { newestLast, readPrivateJson, replacePrivateFile } from '../private-file.js';

const Memory = z.object({
  version: z.literal(1),
  /** Host address (user@host:port, or local; not the alias typed) → remote key → the checkouts found there, best first. */
  hosts: z.record(z.string(), z.record(z.string(), z.array(z.string()))),
});
type Memory = z.infer<typeof Memory>;

/** Hosts and repositories kept (oldest dropped first): a hint file, not a history. */
const MAX_HOSTS = 32;
const MAX_REPOS_PER_HOST = 64;

export function memoryFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(stateDir(env), 'checkouts.json');
}

function load(file: string): Memory {
  return readPrivateJson(file, Memory) ?? { version: 1, hosts: {} };
}

/** The checkouts remembered for this host and remote key (empty when none). */
export function recallCheckouts(hostLabel: string, remoteKey: string, file = memoryFile()): string[] {
  return load(file).hosts[hostLabel]?.[remoteKey] ?? [];
}

/**
 * Remember the checkouts a search or check found (empty: forget them). Written atomically and
 * private; a failure only costs the next handoff the hint, so it never reaches the caller.
 */
export async function rememberCheckouts(hostLabel: string, remoteKey: string, paths: readonly string[], file = memoryFile()): Promise<void> {
  try {
    const memory = load(file);
    const before = memory.hosts[hostLabel]?.[remoteKey];
    if (before && before.length === paths.length && before.every((p, i) => p === paths[i])) return;
    const repos = newestLast(memory.hosts[hostLabel] ?? {}, remoteKey, paths.length > 0 ? [...paths] : undefined, MAX_REPOS_PER_HOST);
    const next: Memory = { version: 1, hosts: newestLast(memory.hosts, hostLabel, repos, MAX_HOSTS) };
    await replacePrivateFile(file, JSON.stringify(next) + '\n');
  } catch {
    // a hint that could not be written
  }
}
