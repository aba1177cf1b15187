// What this machine remembers of a target's basic facts and login environment (HostInfo), so the
// plan's look can be sent the moment the target is connected instead of after its login probe
// (a login shell, some 3 round trips). Never trusted as it is: the look's answers are kept only
// when the probe finds the same facts (see openSides), else the look is asked again.
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { HostInfo } from '../host/host.js';
import { newestLast, readPrivateJson, replacePrivateFile } from '../private-file.js';
import { stateDir } from './journal.js';

const HostInfoSchema = z.object({
  home: z.string(),
  user: z.string(),
  hostname: z.string(),
  platform: z.string(),
  shell: z.string(),
  tmpdir: z.string(),
  loginEnv: z.record(z.string(), z.string()),
  homeReal: z.string().optional(),
});

const Memory = z.object({
  version: z.literal(1),
  /** Host address (user@host:port, not the alias typed) → its facts as last probed. */
  hosts: z.record(z.string(), HostInfoSchema),
});
type Memory = z.infer<typeof Memory>;

/** Hosts kept (the least recently probed dropped first): a hint file, not a history. */
const MAX_HOSTS = 32;

export function hostFactsFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(stateDir(env), 'hosts.json');
}

function load(file: string): Memory {
  return readPrivateJson(file, Memory) ?? { version: 1, hosts: {} };
}

/** The facts remembered for this host address (null when none). */
export function recallHostFacts(address: string, file = hostFactsFile()): HostInfo | null {
  return load(file).hosts[address] ?? null;
}

/** Whether two probes of a host found the same facts (every field, every variable). */
export function sameHostFacts(a: HostInfo, b: HostInfo): boolean {
  return isDeepStrictEqual(a, b);
}

/**
 * Remember what the probe found (written only when it changed). Atomic and private; a failure
 * only costs the next handoff the early look, so it never reaches the caller.
 */
export async function rememberHostFacts(address: string, info: HostInfo, file = hostFactsFile()): Promise<void> {
  try {
    const memory = load(file);
    const before = memory.hosts[address];
    if (before && sameHostFacts(before, info)) return;
    const next: Memory = { version: 1, hosts: newestLast(memory.hosts, address, HostInfoSchema.parse(info), MAX_HOSTS) };
    await replacePrivateFile(file, JSON.stringify(next) + '\n');
  } catch {
    // a hint that could not be written
  }
}
