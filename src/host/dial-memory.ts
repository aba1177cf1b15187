// Where each target's first TCP connect went last time, for the launcher to dial at once next
// time (launcher-socket.ts). A cache in the user's cache folder (private, as the launcher's code
// cache beside it): losing it costs the next send that head start, nothing else.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { newestLast } from '../private-file.js';

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
  try {
    const parsed = Memory.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : { version: 1, targets: {} };
  } catch {
    return { version: 1, targets: {} };
  }
}

export function recallDial(target: string, file = dialMemoryFile()): { host: string; port: number } | null {
  return load(file).targets[target] ?? null;
}

/**
 * Remember that `target` (as typed, resolved with the default ssh configuration) connects first to
 * `host`:`port`. Written only when that changed, atomically and private; never throws (a hint).
 * Synchronous: a small file, rarely written, and it must be there before the process exits.
 */
export function rememberDial(target: string, address: { host: string; port: number }, file = dialMemoryFile()): void {
  try {
    const memory = load(file);
    const before = memory.targets[target];
    if (before && before.host === address.host && before.port === address.port) return;
    const next: Memory = { version: 1, targets: newestLast(memory.targets, target, Address.parse({ host: address.host, port: address.port }), MAX_TARGETS) };
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
    fs.writeFileSync(tmp, JSON.stringify(next) + '\n', { mode: 0o600 });
    try {
      fs.renameSync(tmp, file);
    } catch {
      fs.rmSync(tmp, { force: true });
    }
  } catch {
    // a hint that could not be written
  }
}
