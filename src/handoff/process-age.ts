// When did a process start? For the agent (on any host): to guess its session, the newest one
// written since. For a controller (on this machine): to tell it from a later process that got its pid.
import fs from 'node:fs';
import type { Host } from '../host/host.js';

export function parseEtime(text: string): number | null {
  const m = /^\s*(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)\s*$/.exec(text);
  if (!m) return null;
  const [, d, h, min, s] = m;
  return ((Number(d ?? 0) * 24 + Number(h ?? 0)) * 60 + Number(min)) * 60 + Number(s);
}

// `ps -o etime=` is on Linux and macOS alike; it prints [[dd-]hh:]mm:ss.
/** Start time of `pid` on `host` in ms since epoch; 0 (= "any time") when it cannot be told. */
export async function agentStartedAt(host: Host, pid: number): Promise<number> {
  const r = await host.run(['ps', '-o', 'etime=', '-p', String(pid)]);
  const secs = r.exitCode === 0 ? parseEtime(r.stdout) : null;
  // etime has whole seconds: round the start down so a session written in that second counts.
  return secs === null ? 0 : Date.now() - (secs + 1) * 1000;
}

// Pids are reused: a controller that died can leave its pid to an unrelated process, and
// `kill(pid, 0)` alone would call that controller alive. A process is identified by its pid plus
// its start time. Linux gives the start in clock ticks since boot (field 22 of /proc/<pid>/stat),
// made unique across reboots with the boot id. Elsewhere (or when /proc hides the process) the
// start is unknown and callers fall back to the pid alone.
let bootIdCache: string | undefined;
function bootId(): string {
  if (bootIdCache === undefined) {
    try {
      bootIdCache = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      bootIdCache = '';
    }
  }
  return bootIdCache;
}

/** Field 22 (starttime) of a /proc/<pid>/stat line. The command name (field 2) may hold spaces and parentheses: count from its last ')'. */
export function parseStartTicks(stat: string): string | null {
  const close = stat.lastIndexOf(')');
  if (close < 0) return null;
  // After ") " come fields 3, 4, …: field 22 is the 20th of them.
  const ticks = stat.slice(close + 2).split(' ')[19];
  return ticks !== undefined && /^\d+$/.test(ticks) ? ticks : null;
}

/** `<boot id>:<start ticks>` of a local process, or null when it cannot be told (not Linux, gone, hidden). */
export function processStartId(pid: number): string | null {
  try {
    const ticks = parseStartTicks(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
    return ticks === null ? null : `${bootId()}:${ticks}`;
  } catch {
    return null;
  }
}

/**
 * Is the local process `pid` still the one recorded? Without a recorded start (old records) or
 * when the start cannot be read now, the pid alone decides, as before. EPERM means it exists.
 */
export function pidAlive(pid: number, recordedStart?: string | null): boolean {
  // 0 and negative pids name process groups, never one process.
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (!recordedStart) return true;
  const now = processStartId(pid);
  return now === null || now === recordedStart;
}
