// Before a handoff says ok: the target holds exactly what left the source (HEAD, the files, the
// session files as written with no source path left in them), and the agent lives there.
import { HandoffError } from '../errors.js';
import type { Host } from '../host/host.js';
import { headAndWorkingTree, type Snapshot } from '../git/snapshot.js';
import type { CopyRecord } from '../transcript/copy-types.js';
import { remotePrefixHashes } from '../transcript/target-files.js';
import type { Plan } from './plan.js';
import type { Sides } from './sides.js';
import type { StartResult } from './start.js';

/**
 * The target holds exactly what left the source: HEAD, the files, the session files (as written,
 * with no source path left in the rewritten ones). Returns the checks that held.
 */
export async function checkTargetFiles(plan: Plan, sides: Sides, snap: Snapshot, worktree: string, session: CopyRecord): Promise<string[]> {
  const { target } = sides;
  // Independent: asked all at once (one round trip each, side by side).
  const [tgt, copy, leftovers] = await Promise.all([
    headAndWorkingTree(target.host, worktree),
    sessionInPlace(target.host, session),
    // No source path may be left in the rewritten files (verbatim ones hold user content).
    sourcePathsLeft(target.host, session, plan.snapshot.repoRoot, worktree),
  ]);
  const checks: string[] = [];
  if (tgt.head !== snap.head) throw new HandoffError('verify_failed', `HEAD of ${worktree} on ${target.host.label} is ${tgt.head.slice(0, 12)}, not the source's ${snap.head.slice(0, 12)}.`);
  checks.push('target HEAD equals the source HEAD');
  if (tgt.tree !== snap.tree) throw new HandoffError('verify_failed', `The files in ${worktree} on ${target.host.label} differ from the snapshot that left the source.`, { fix: 'Nothing was lost at the source; look at the target worktree.' });
  checks.push('target files equal the snapshot');
  if (copy.length > 0) throw new HandoffError('verify_failed', `Session files on ${target.host.label} do not start with what was written: ${copy.join(', ')}.`);
  if (leftovers.length > 0) throw new HandoffError('verify_failed', `Session files on ${target.host.label} still name the source repository ${plan.snapshot.repoRoot}: ${leftovers.join(', ')}.`);
  checks.push(sessionFilesChecked(session.files.length));
  return checks;
}

/** The session check's line in `verified` (one file, or several). */
export function sessionFilesChecked(count: number): string {
  return `${count} session ${count === 1 ? 'file' : 'files'} in place, hashes match, no source path left`;
}

/**
 * Before ok: the files checked (see checkTargetFiles), and the agent lives on the target. The
 * start's last act was to find it in herdr's list after its screens were answered (startAgent):
 * asking herdr again moments later would tell nothing new.
 */
export async function verify(plan: Plan, sides: Sides, started: StartResult, filesChecked: Promise<string[]>): Promise<string[]> {
  const checks = await filesChecked;
  if (started.agent?.pane_id !== started.pane) throw new HandoffError('start_failed', `The ${plan.kind} agent was not seen running on ${sides.target.host.label} after its start.`);
  return [...checks, 'agent alive in herdr after its start'];
}

/**
 * Files whose first `size` bytes are not what we wrote. The resumed agent appends to its session
 * at once (claude writes mode records on start), so the written bytes must be a prefix, not all;
 * and some rewrite a file as they resume (grok's prompt_context.json and summary.json): a file
 * that no longer starts with our bytes but carries a newer mtime than the one we gave it was
 * written by the agent since, which is no failure of the copy.
 */
async function sessionInPlace(host: Host, session: CopyRecord): Promise<string[]> {
  // Every file's prefix hashed by one program; only a file that differs is looked at again.
  const hashes = await remotePrefixHashes(host, session.files).catch(() => session.files.map(() => null));
  const ok = await Promise.all(
    session.files.map(async (f, i) => {
      if (hashes[i] === f.sha256) return true;
      const now = await host.stat(f.path).catch(() => null);
      // SFTP sets times in whole seconds: ours is the source's mtime to the second.
      return now?.type === 'file' && f.source !== undefined && now.mtimeMs - f.source.mtimeMs >= 1000;
    }),
  );
  return session.files.filter((_, i) => !ok[i]).map((f) => f.path);
}

/**
 * Rewritten session files that still contain the source repo root followed by a path boundary
 * (`/`, `"` or end of line). One `grep` on the target; none when source and target paths are equal.
 */
async function sourcePathsLeft(host: Host, session: CopyRecord, sourceRoot: string, targetRoot: string): Promise<string[]> {
  if (sourceRoot === targetRoot || targetRoot.startsWith(`${sourceRoot}/`)) return [];
  const files = session.files.filter((f) => !f.verbatim).map((f) => f.path);
  if (files.length === 0) return [];
  const patterns = [`${sourceRoot}/`, `${sourceRoot}"`, `${sourceRoot}\\`].join('\n');
  const r = await host.run(['grep', '-l', '-F', '-e', patterns, '--', ...files]);
  return r.exitCode === 0 ? r.stdout.split('\n').filter(Boolean) : [];
}

