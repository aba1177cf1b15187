// Per-agent lock on the source host: two `send`s of one agent must never both proceed.
// `mkdir` is atomic on every POSIX filesystem, so the lock is a folder created by one
// `mkdir` through the Host (local or ssh alike), with an owner file inside.
import { z } from 'zod';
import { HandoffError } from '../errors.js';
import type { Host } from '../host/host.js';

export const LockOwner = z.object({
  handoff: z.string(),
  controller: z.string(),
  pid: z.number().int(),
  started: z.string(),
});
export type LockOwner = z.infer<typeof LockOwner>;

export interface HeldLock {
  dir: string;
  owner: LockOwner;
  /** True when a stale lock (dead holder) was taken over. */
  tookOver: LockOwner | null;
  release(): Promise<void>;
}

/** Lock names come from herdr pane ids and session ids: keep them to a safe alphabet. */
export function lockName(key: string): string {
  return key.replace(/[^A-Za-z0-9._-]/g, (c) => `_${c.codePointAt(0)!.toString(16)}`).slice(0, 200);
}

export interface AcquireOptions {
  /** State folder on the source host (its ~/.local/state/agent-handoff). */
  stateDir: string;
  /** What the lock covers: the agent's session (else its pane). */
  key: string;
  owner: LockOwner;
  /** Is a holder with this controller hostname and pid still alive? (only answerable for our own controller). */
  isAlive: (owner: LockOwner) => boolean | null;
}

export async function acquireLock(host: Host, opts: AcquireOptions): Promise<HeldLock> {
  const locks = `${opts.stateDir}/locks`;
  await host.mkdirp(locks, 0o700);
  const dir = `${locks}/${lockName(opts.key)}`;
  let tookOver: LockOwner | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const made = await host.run(['mkdir', '-m', '700', '--', dir]);
    if (made.exitCode === 0) {
      await host.writeFile(`${dir}/owner.json`, JSON.stringify(opts.owner) + '\n', { mode: 0o600 });
      return {
        dir,
        owner: opts.owner,
        tookOver,
        release: async () => {
          await host.remove(dir, { recursive: true });
        },
      };
    }
    // The holder writes its owner file right after its mkdir: give a fresh lock a moment
    // before calling it ownerless, or two racing sends would both get in.
    let holder = await readOwner(host, dir);
    for (let i = 0; holder === null && i < 10; i++) {
      await new Promise((r) => setTimeout(r, 100));
      if ((await host.stat(dir)) === null) break;
      holder = await readOwner(host, dir);
    }
    const alive = holder ? opts.isAlive(holder) : false;
    if (holder && alive !== false) {
      throw new HandoffError('handoff_in_progress', `Another handoff of this agent is running (${holder.handoff}, started ${holder.started} by pid ${holder.pid} on ${holder.controller}).`, {
        fix: alive === null ? `If that controller is gone, run \`agent-handoff recover ${holder.handoff}\` there, or remove ${dir} after checking.` : 'Wait for it to finish, or look at it with `agent-handoff history`.',
        details: { lock: dir, holder },
      });
    }
    // Dead holder (or an owner file that was never written): take the lock over — unless someone
    // else took it over meanwhile (then its owner file names another handoff).
    const now = await readOwner(host, dir);
    if (now && holder && now.handoff !== holder.handoff) continue;
    tookOver = holder;
    await host.remove(dir, { recursive: true });
  }
  throw new HandoffError('handoff_in_progress', `Could not take the lock ${dir}.`, { fix: 'Retry in a moment.' });
}

async function readOwner(host: Host, dir: string): Promise<LockOwner | null> {
  try {
    const parsed = LockOwner.safeParse(JSON.parse((await host.readFile(`${dir}/owner.json`)).toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** isAlive for a holder: answerable only when it ran on this controller. */
export function localLiveness(controller: string): (owner: LockOwner) => boolean | null {
  return (owner) => {
    if (owner.controller !== controller) return null;
    try {
      process.kill(owner.pid, 0);
      return true;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
}
