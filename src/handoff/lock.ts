// Per-agent lock on the source host: two `send`s of one agent must never both proceed.
// `mkdir` is atomic on every POSIX filesystem, so the lock is a folder created by one
// `mkdir` through the Host (local or ssh alike: Host.makeFolderWith), with its owner file inside.
// Two locks per handoff: the agent's pane (taken as soon as the agent is found, before planning,
// so a second send is refused before it can trip over the first one's quit) and its session
// (taken once the plan knows it: two panes resuming one session are still one agent).
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { HandoffError } from '../errors.js';
import type { Host } from '../host/host.js';
import { pidAlive } from './process-age.js';

export const LockOwner = z.object({
  handoff: z.string(),
  controller: z.string(),
  pid: z.number().int(),
  /** The controller's start (process-age.ts `processStartId`): a reused pid is not the holder. Absent in old locks. */
  pid_start: z.string().nullable().optional(),
  started: z.string(),
  /** Which agent the holder moves, so a send that no longer finds it (already quit) can say why. Absent in old locks. */
  agent: z.string().nullable().optional(),
  pane: z.string().optional(),
  /** The herdr server (its socket) the pane belongs to. Absent in old locks. */
  herdr_server: z.string().nullable().optional(),
  session: z.string().nullable().optional(),
});
export type LockOwner = z.infer<typeof LockOwner>;

export interface HeldLock {
  dir: string;
  owner: LockOwner;
  /** True when a stale lock (dead holder) was taken over. */
  tookOver: LockOwner | null;
  release(): Promise<void>;
}

/**
 * The lock keys: one for the pane the agent runs in, one for its session. Pane ids are unique only
 * within one herdr server: the server's socket (when known) is part of the pane's key.
 */
export const paneLockKey = (pane: string, server: string | null) => (server ? `pane-${pane}@${createHash('sha256').update(server).digest('hex').slice(0, 12)}` : `pane-${pane}`);
export const sessionLockKey = (kind: string, session: string) => `${kind}-${session}`;

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

/** The lock's folder made and its owner written in it (true), or the folder not made (false). */
async function takeLock(host: Host, dir: string, owner: LockOwner): Promise<boolean> {
  return host.makeFolderWith(dir, 'owner.json', JSON.stringify(owner)).catch((err: unknown) => {
    throw new HandoffError('io_failed', `Could not write the lock ${dir} on ${host.label}: ${err instanceof Error ? err.message : String(err)}`, { fix: `Check that ${dir} on ${host.label} is writable.` });
  });
}

export async function acquireLock(host: Host, opts: AcquireOptions): Promise<HeldLock> {
  const locks = locksDir(opts.stateDir);
  const dir = `${locks}/${lockName(opts.key)}`;
  let tookOver: LockOwner | null = null;
  let tomb: string | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    let made = await takeLock(host, dir, opts.owner);
    // The locks folder is made once per host: only a failed mkdir pays for looking.
    if (!made && (await host.stat(locks)) === null) {
      await host.mkdirp(locks, 0o700);
      made = await takeLock(host, dir, opts.owner);
    }
    if (made) {
      const aside = tomb;
      return {
        dir,
        owner: opts.owner,
        tookOver,
        release: async () => {
          await host.remove(dir, { recursive: true });
          if (aside) await host.remove(aside, { recursive: true });
        },
      };
    }
    // The holder writes its owner file right after its mkdir: give a fresh lock a moment
    // before calling it ownerless, or two racing sends would both get in.
    let holder = await readOwner(host, dir);
    let present = true;
    for (let i = 0; holder === null && i < 10; i++) {
      await new Promise((r) => setTimeout(r, 100));
      present = (await host.stat(dir)) !== null;
      if (!present) break;
      holder = await readOwner(host, dir);
    }
    if (!present) continue;
    const alive = holder ? opts.isAlive(holder) : false;
    if (holder && alive !== false) {
      // Someone got in after an earlier round moved a stale lock aside: that one is theirs now.
      if (tomb) await host.remove(tomb, { recursive: true }).catch(() => undefined);
      throw inProgress(holder, dir, alive);
    }
    // Dead holder (or an owner file that was never written): move its folder aside under a name
    // that only this stale lock can have. rename(2) onto a folder that is not empty fails, so of
    // several sends taking over at once exactly one moves it; the others retry and meet its lock.
    // The moved folder stays until the new holder releases, so a late taker's rename keeps failing.
    const stale = await host.stat(dir);
    if (!stale) continue;
    // (A file name stays under 255 bytes: the lock's own name is at most 200.)
    const aside = `${dir}.stale-${lockName(holder ? holder.handoff : `ownerless-${Math.trunc(stale.mtimeMs)}`).slice(0, 40)}`;
    if ((await host.stat(aside)) !== null) continue;
    const moved = await host.rename(dir, aside).then(
      () => true,
      () => false,
    );
    if (!moved) continue;
    const was = await readOwner(host, aside);
    if ((was?.handoff ?? null) !== (holder?.handoff ?? null)) {
      // What moved was a newer holder's lock (it took over between our look and our move): give it back.
      await host.rename(aside, dir).catch(() => undefined);
      continue;
    }
    tookOver = holder;
    tomb = aside;
  }
  throw new HandoffError('handoff_in_progress', `Could not take the lock ${dir}.`, { fix: 'Retry in a moment.' });
}

function locksDir(stateDir: string): string {
  return `${stateDir}/locks`;
}

/** The refusal for a live (or unanswerable) holder: who holds it, and the way out. */
export function inProgress(holder: LockOwner, dir: string, alive: boolean | null): HandoffError {
  return new HandoffError('handoff_in_progress', `Another handoff of this agent is running (${holder.handoff}, started ${holder.started} by pid ${holder.pid} on ${holder.controller}).`, {
    fix: alive === null ? `If that controller is gone, run \`agent-handoff recover ${holder.handoff}\` there, or remove ${dir} after checking.` : 'Wait for it to finish, or look at it with `agent-handoff history`.',
    details: { lock: dir, holder },
  });
}

/** Who holds the lock on `key`, if anyone still does (a dead holder counts as none). Changes nothing. */
export async function lockHolder(host: Host, opts: Pick<AcquireOptions, 'stateDir' | 'key' | 'isAlive'>): Promise<{ dir: string; holder: LockOwner; alive: boolean | null } | null> {
  const dir = `${locksDir(opts.stateDir)}/${lockName(opts.key)}`;
  const holder = await readOwner(host, dir);
  if (!holder) return null;
  const alive = opts.isAlive(holder);
  return alive === false ? null : { dir, holder, alive };
}

/**
 * A live lock naming this agent (by name, pane or session prefix), for a send that did not find
 * the agent: when another handoff holds it, the agent is gone because that handoff quit it.
 */
export async function heldFor(host: Host, stateDir: string, ref: string, server: string | null, isAlive: AcquireOptions['isAlive']): Promise<{ dir: string; holder: LockOwner; alive: boolean | null } | null> {
  const locks = locksDir(stateDir);
  const entries = await host.list(locks).catch(() => []);
  const owners = await Promise.all(entries.filter((e) => e.type === 'dir').map(async (e) => ({ dir: `${locks}/${e.name}`, holder: await readOwner(host, `${locks}/${e.name}`) })));
  const lower = ref.toLowerCase();
  for (const { dir, holder } of owners) {
    // Folders moved aside by a takeover hold a dead holder's owner file.
    if (!holder || dir.includes('.stale-')) continue;
    // A pane of another herdr server may have the same id.
    if (holder.herdr_server && server && holder.herdr_server !== server) continue;
    const names = holder.agent === ref || holder.pane === ref || (ref.length >= 4 && !!holder.session?.toLowerCase().startsWith(lower));
    if (!names) continue;
    const alive = isAlive(holder);
    if (alive !== false) return { dir, holder, alive };
  }
  return null;
}

async function readOwner(host: Host, dir: string): Promise<LockOwner | null> {
  try {
    const parsed = LockOwner.safeParse(JSON.parse((await host.readFile(`${dir}/owner.json`)).toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * isAlive for a holder: answerable only when it ran on this controller. A holder recorded with its
 * start time is dead when its pid now belongs to a process that started at another time.
 */
export function localLiveness(controller: string): (owner: Pick<LockOwner, 'controller' | 'pid' | 'pid_start'>) => boolean | null {
  return (owner) => (owner.controller === controller ? pidAlive(owner.pid, owner.pid_start) : null);
}
