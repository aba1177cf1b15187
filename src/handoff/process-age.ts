// When did the agent process start? (For guessing its session: the newest one written since.)
// `ps -o etime=` is on Linux and macOS alike; it prints [[dd-]hh:]mm:ss.
import type { Host } from '../host/host.js';

export function parseEtime(text: string): number | null {
  const m = /^\s*(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)\s*$/.exec(text);
  if (!m) return null;
  const [, d, h, min, s] = m;
  return ((Number(d ?? 0) * 24 + Number(h ?? 0)) * 60 + Number(min)) * 60 + Number(s);
}

/** Start time of `pid` on `host` in ms since epoch; 0 (= "any time") when it cannot be told. */
export async function agentStartedAt(host: Host, pid: number): Promise<number> {
  const r = await host.run(['ps', '-o', 'etime=', '-p', String(pid)]);
  const secs = r.exitCode === 0 ? parseEtime(r.stdout) : null;
  // etime has whole seconds: round the start down so a session written in that second counts.
  return secs === null ? 0 : Date.now() - (secs + 1) * 1000;
}
