// What a step is about to change, journaled before it acts: `place` and the session copy return
// their exact records only when they finish, so a controller killed inside them would leave
// changes no record names. From an intent, recovery inspects the target and undoes only what
// matches what the step would have made (never a change someone else made since).
import path from 'node:path/posix';
import { z } from 'zod';
import type { UnitEntry } from '../../adapters/adapter.js';
import type { Host } from '../host/host.js';
import { branchRef, git, line } from '../git/git.js';
import { undoPlacement, type PlacementAction, type PlacementRecord } from '../git/place.js';
import type { PlacementPlan } from '../git/placement-decide.js';
import { isFresh, knownUpstream, type PlacementReads } from '../git/placement-read.js';
import { workingTree } from '../git/snapshot.js';
import { listWorktrees, worktreeHome } from '../git/worktrees.js';
import { backupName, undoCopy, type CopyRecord } from '../transcript/copy.js';
import { bundleFolder } from '../transcript/file-bundle.js';
import type { DestinationLook } from '../transcript/destinations.js';

const Oid = z.string().regex(/^[0-9a-f]{40,64}$/);

export const PlacementIntentSchema = z.object({
  kind: z.literal('placement_intent'),
  id: z.string(),
  repo: z.string(),
  branch: z.string(),
  mode: z.enum(['checked-out', 'new-worktree']),
  worktree: z.string(),
  branchTip: Oid.nullable(),
  head: Oid,
  wip: Oid.nullable(),
  /** `<repo>.worktrees` existed before (else undo removes it when empty). */
  homeExisted: z.boolean(),
  /** branch.<name>.merge was set before (else undo unsets what `place` set). */
  hadUpstream: z.boolean(),
});
export type PlacementIntent = z.infer<typeof PlacementIntentSchema>;

export const SessionIntentSchema = z.object({
  kind: z.literal('session_intent'),
  targetRoot: z.string(),
  /** The copy's temp-name tag (`.<file>.ah-<tag>.tmp`). */
  tag: z.string(),
  files: z.array(
    z.object({
      path: z.string(),
      /** The mtime the copy gives the file (the source's). */
      mtimeMs: z.number(),
      /** The file before the copy (null: absent). */
      previous: z.object({ size: z.number(), mode: z.number(), mtimeMs: z.number() }).nullable(),
    }),
  ),
  /** Folders that did not exist, parents first. */
  missingDirs: z.array(z.string()),
});
export type SessionIntent = z.infer<typeof SessionIntentSchema>;

/**
 * What a placement will start from, recorded before it changes anything. `read`: what the plan
 * read of the plan's checkout (its worktree home and the branch's upstream are not asked again
 * while it is fresh).
 */
export async function placementIntent(target: Host, plan: PlacementPlan, read?: PlacementReads): Promise<PlacementIntent> {
  // Whether `<repo>.worktrees` was there is known to a new-worktree plan (read with the repository).
  const fresh = isFresh(read) ? read : null;
  const homeKnown = plan.worktreeHomeExists ?? fresh?.homeExists;
  const upstreamKnown = knownUpstream(fresh, plan.branch);
  const [hadUpstream, homeExisted] = await Promise.all([
    upstreamKnown ?? git(target, plan.repo, ['config', '--get', `branch.${plan.branch}.merge`], { okCodes: [1] }).then((r) => r.exitCode === 0),
    homeKnown ?? target.stat(worktreeHome(plan.repo)).then((s) => s !== null),
  ]);
  return {
    kind: 'placement_intent',
    id: plan.id,
    repo: plan.repo,
    branch: plan.branch,
    mode: plan.mode,
    worktree: plan.worktree,
    branchTip: plan.branchTip,
    head: plan.head,
    wip: plan.wip,
    homeExisted,
    hadUpstream,
  };
}

async function branchAt(target: Host, repo: string, branch: string): Promise<string | null> {
  const r = await git(target, repo, ['rev-parse', '--verify', '-q', branchRef(branch)], { okCodes: [1] });
  return r.exitCode === 0 ? line(r) : null;
}

async function treeOf(target: Host, repo: string, commit: string): Promise<string> {
  return line(await git(target, repo, ['rev-parse', `${commit}^{tree}`]));
}

/**
 * Undo a placement that has no record (the controller died inside `place`): look at the target
 * and rebuild the record of what `place` got done, then undo it exactly. A worktree whose files
 * are neither HEAD nor the snapshot has someone else's changes: it is left alone (an error).
 */
export async function undoPlacementIntent(target: Host, intent: PlacementIntent): Promise<string[]> {
  const notes: string[] = [];
  const actions: PlacementAction[] = [];
  const tip = await branchAt(target, intent.repo, intent.branch);
  const listed = await listWorktrees(target, intent.repo);
  const registered = listed.find((w) => w.path === intent.worktree) ?? null;
  const present = (await target.stat(intent.worktree)) !== null;
  const filesAre = async (): Promise<'head' | 'wip' | 'other'> => {
    const gitDir = line(await git(target, intent.worktree, ['rev-parse', '--absolute-git-dir']));
    const tree = await workingTree(target, { repoRoot: intent.worktree, gitDir });
    if (tree === (await treeOf(target, intent.repo, intent.head))) return 'head';
    if (intent.wip && tree === (await treeOf(target, intent.repo, intent.wip))) return 'wip';
    return 'other';
  };
  if (intent.mode === 'new-worktree') {
    if (intent.branchTip === null && tip === intent.head) actions.push({ kind: 'branch-created', branch: intent.branch, at: intent.head });
    if (intent.branchTip !== null && intent.branchTip !== intent.head && tip === intent.head) {
      actions.push({ kind: 'branch-moved', branch: intent.branch, from: intent.branchTip, to: intent.head });
    }
    if (registered && present) {
      const files = await filesAre();
      if (files === 'other') throw new Error(`${intent.worktree} holds changes the handoff did not make; left in place`);
      actions.push({ kind: 'worktree-added', path: intent.worktree, createdHome: intent.homeExisted ? null : worktreeHome(intent.repo) });
    } else if (registered || present) {
      // `git worktree add` died half way: a registration without folder, or a folder git never finished.
      actions.push({ kind: 'worktree-added', path: intent.worktree, createdHome: intent.homeExisted ? null : worktreeHome(intent.repo) });
    }
  } else if (present) {
    const files = await filesAre();
    if (intent.branchTip && intent.branchTip !== intent.head && (tip === intent.head || files !== 'other')) {
      actions.push({ kind: 'fast-forwarded', worktree: intent.worktree, branch: intent.branch, from: intent.branchTip, to: intent.head });
    }
    if (intent.wip && files === 'wip') actions.push({ kind: 'snapshot-applied', worktree: intent.worktree, head: intent.head, wip: intent.wip });
  }
  if (!intent.hadUpstream && (tip === intent.head || actions.length > 0)) {
    const set = await git(target, intent.repo, ['config', '--get', `branch.${intent.branch}.merge`], { okCodes: [1] });
    if (set.exitCode === 0) actions.push({ kind: 'upstream-set', branch: intent.branch });
  }
  if (actions.length === 0) return notes;
  // The rebuilt record in the order `place` acts: branch, worktree, snapshot, upstream.
  const order: PlacementAction['kind'][] = ['branch-created', 'branch-moved', 'fast-forwarded', 'worktree-added', 'snapshot-applied', 'upstream-set'];
  actions.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
  const record: PlacementRecord = {
    version: 1,
    id: intent.id,
    repo: intent.repo,
    branch: intent.branch,
    mode: intent.mode,
    worktree: intent.worktree,
    previousCommit: intent.branchTip,
    head: intent.head,
    wip: intent.wip,
    actions,
  };
  const undo = await undoPlacement(target, record);
  if (undo.errors.length > 0) throw new Error(undo.errors.map((e) => `${e.action.kind}: ${e.message}`).join('; '));
  for (const a of undo.undone) notes.push(a.kind);
  return notes;
}

/** The session copy's intent, from the look at its destinations the copy then uses too (lookAtDestinations). */
export async function sessionIntent(looked: Promise<DestinationLook>, entries: readonly UnitEntry[], tag: string): Promise<SessionIntent> {
  const { root, dests, states, stats } = await looked;
  const files: SessionIntent['files'] = entries.map((e, i) => {
    const st = stats[i] ?? null;
    return { path: dests[i]!, mtimeMs: e.mtimeMs, previous: st && st.size > 0 ? { size: st.size, mode: st.mode, mtimeMs: st.mtimeMs } : null };
  });
  const missingDirs = [...new Set(states.flatMap((f) => f.missing))].sort((a, b) => a.split('/').length - b.split('/').length);
  return { kind: 'session_intent', targetRoot: root, tag, files, missingDirs };
}

/**
 * Undo a session copy that has no record: remove our temp files, then every file that is ours —
 * absent before and now carrying the mtime the copy gives — or cut an extended file back to its
 * old size. A file someone else wrote since (another mtime) is left alone.
 */
export async function undoSessionIntent(target: Host, intent: SessionIntent): Promise<void> {
  const record: CopyRecord = { targetRoot: intent.targetRoot, files: [], createdDirs: [] };
  for (const f of intent.files) {
    const dir = path.dirname(f.path);
    const base = path.basename(f.path);
    for (const tmp of [`.${base}.ah-${intent.tag}.tmp`, `.${base}.tail.ah-${intent.tag}.tmp`, `.${base}.head.ah-${intent.tag}.tmp`]) await target.remove(path.join(dir, tmp));
    // A file replaced whole (as an earlier handoff left it, or forced) went aside first: it comes back.
    const backup = backupName(f.path, intent.tag);
    if ((await target.stat(backup))?.type === 'file') {
      await target.rename(backup, f.path);
      continue;
    }
    const now = await target.stat(f.path);
    // SFTP sets times in whole seconds: ours is the source's mtime to the second.
    if (!now || now.type !== 'file' || Math.abs(now.mtimeMs - f.mtimeMs) >= 1000) continue;
    if (f.previous === null) record.files.push({ path: f.path, action: 'created', sha256: '', size: now.size, verbatim: false, previous: null, backup: null, replacements: 0 });
    else if (now.size > f.previous.size) record.files.push({ path: f.path, action: 'appended', sha256: '', size: now.size, verbatim: false, previous: f.previous, backup: null, replacements: 0 });
  }
  // A bundle's unpacking folder, left by a program killed part-way (file-bundle.ts).
  for (const dir of new Set(intent.files.map((f) => path.dirname(f.path)))) await target.remove(bundleFolder(dir, intent.tag), { recursive: true });
  for (const d of intent.missingDirs) if (await target.stat(d)) record.createdDirs.push(d);
  await undoCopy(target, record);
}
