// Where each target's first TCP connect went last time, for the launcher to dial at once next
// time (launcher-socket.ts). A cache in the user's cache folder (private, as the launcher's code
// cache beside it): losing it costs the next send that head start, nothing else.
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { newestLast, readPrivateJson, replacePrivateFile } from '../private-file.js';

const Address = z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65535) });
const Memory = z.object({ version: z.literal(1), targets: z.record(z.string(), Address) });
type Memory = z.infer<typeof Memory>;

/** Targets kept (the least recently changed dropped first). */
const MAX_TARGETS = 32;

/** The file bin/agent-handoff.js reads (the same folder rule as its code cache). */
export function dialMemoryFile(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'agent-handoff', 'dial.json');
}

function load(file: string): Memory {
  return readPrivateJson(file, Memory) ?? { version: 1, targets: {} };
}

export function recallDial(target: string, file = dialMemoryFile()): { host: string; port: number } | null {
  return load(file).targets[target] ?? null;
}

/**
 * Remember that `target` (as typed, resolved with the default ssh configuration) connects first to
 * `host`:`port`. Written only when that changed, atomically and private; never rejects (a hint).
 */
export async function rememberDial(target: string, address: { host: string; port: number }, file = dialMemoryFile()): Promise<void> {
  try {
    const memory = load(file);
    const before = memory.targets[target];
    if (before && before.host === address.host && before.port === address.port) return;
    const next: Memory = { version: 1, targets: newestLast(memory.targets, target, Address.parse({ host: address.host, port: address.port }), MAX_TARGETS) };
    await replacePrivateFile(file, JSON.stringify(next) + '\n');
  } catch {
    // a hint that could not be written
  }
}
