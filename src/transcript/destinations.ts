// Where a unit's files go on the target: every destination under the config root, checked to
// stay there (no `..`, no symlinked folder leading out), and the folders made before any write.
import path from 'node:path/posix';
import { HandoffError } from '../errors.js';
import type { FileStat, Host } from '../host/host.js';
import type { CopyRecord } from './copy-types.js';
import { inspectFolders, makeFolders, type FolderState } from './folders.js';

/** The absolute destination of a relative path under `root`, refusing anything that could leave it. */
export function destinationUnder(root: string, rel: string): string {
  const bad = (why: string) =>
    new HandoffError('unsafe_destination', `Refusing to write ${JSON.stringify(rel)} under ${root}: ${why}.`, {
      fix: 'This is a bug in the agent adapter or a tampered session; report it with the session path.',
    });
  if (!root.startsWith('/')) throw bad('the config root is not absolute');
  if (rel === '' || rel.startsWith('/')) throw bad('not a relative path');
  if (rel.includes('\0')) throw bad('it contains a NUL byte');
  const parts = rel.split('/');
  if (parts.some((p) => p === '..' || p === '.' || p === '')) throw bad('it has an empty, `.` or `..` component');
  return path.join(root, rel);
}

function isUnder(child: string, parent: string): boolean {
  return parent === '/' ? true : child === parent || child.startsWith(parent + '/');
}

/** What the target holds where a unit will go: its folders (the root first) and the files. */
export interface DestinationLook {
  root: string;
  dests: readonly string[];
  /** The root and each destination's folder, once each. */
  dirs: string[];
  states: FolderState[];
  stats: (FileStat | null)[];
}

/**
 * One program inspects the folders; then the files in folders that exist are stat'ed (a second
 * round trip, only then: a session's first arrival asks nothing more, where a stat of each file
 * cost about 200 bytes up). Read-only.
 */
export async function lookAtDestinations(host: Host, root: string, dests: readonly string[]): Promise<DestinationLook> {
  const dirs = [...new Set([root, ...dests.map((f) => path.dirname(f))])];
  const states = await inspectFolders(host, dirs);
  const present = new Set(states.filter((st) => st.missing.length === 0).map((st) => st.dir));
  const stats = await Promise.all(dests.map((f) => (present.has(path.dirname(f)) ? host.stat(f) : null)));
  return { root, dests, dirs, states, stats };
}

/** Whether `look` is one at exactly these destinations under `root` (so it need not be asked again). */
export function isLookAt(look: DestinationLook | null | undefined, root: string, dests: readonly string[]): look is DestinationLook {
  return !!look && look.root === root && look.dests.join('\0') === dests.join('\0');
}

/** The folders a unit needs, checked from a look at them; `toMake` when some do not exist yet. */
export interface CheckedFolders {
  /** The root and each destination's folder, once each (the root first). */
  dirs: string[];
  toMake: boolean;
  /** The destinations' current stats. */
  stats: (FileStat | null)[];
}

/**
 * Check the config root and every destination folder from a look at them, and record in `record`
 * the folders that will be made (parents first). The nearest existing ancestor of each folder
 * inside the root must resolve inside it BEFORE anything is created; once made (makeFolders
 * here, or the bundle's program: file-bundle.ts), every folder is checked again, so a symlinked
 * folder in the store can neither make us create folders elsewhere nor lead a write out of it.
 */
export async function checkFolders(host: Host, root: string, dests: string[], record: CopyRecord, looked?: Promise<DestinationLook>): Promise<CheckedFolders> {
  const asked = looked ? await looked : null;
  const { dirs, states, stats } = isLookAt(asked, root, dests) ? asked : await lookAtDestinations(host, root, dests);
  const rootState = states[0]!;
  for (const st of states) {
    if (!st.existingIsDir) {
      throw new HandoffError('unsafe_destination', `${st.existing} on ${host.label} is not a folder.`, { fix: `Move ${st.existing} out of the way, then run the handoff again.` });
    }
  }
  if (rootState.missing.length === 0) {
    for (const st of states.slice(1)) {
      // Ancestors above the root are the user's business; from the root down they must stay inside.
      if (isUnder(st.existing, root) && !isUnder(st.existingReal, rootState.existingReal)) {
        throw new HandoffError('unsafe_destination', `Refusing to write below ${st.existing} on ${host.label}: it resolves to ${st.existingReal}, outside ${rootState.existingReal}.`, {
          fix: "Remove the symlink that leads out of the agent's config folder.",
        });
      }
    }
  }
  const toMake = states.filter((st) => st.missing.length > 0);
  for (const st of toMake) for (const d of st.missing) if (!record.createdDirs.includes(d)) record.createdDirs.push(d);
  if (toMake.length === 0) refuseOutside(host, root, dirs, states.map((st) => st.existingReal));
  return { dirs, toMake: toMake.length > 0, stats };
}

/** Make the checked folders (0700) and check that each, made, still resolves under the root. */
export async function makeCheckedFolders(host: Host, root: string, folders: CheckedFolders): Promise<void> {
  if (folders.toMake) refuseOutside(host, root, folders.dirs, await makeFolders(host, folders.dirs));
}

function refuseOutside(host: Host, root: string, dirs: readonly string[], reals: readonly string[]): void {
  const rootReal = reals[0]!;
  for (const [i, real] of reals.entries()) {
    if (i > 0 && !isUnder(real, rootReal)) {
      throw new HandoffError('unsafe_destination', `Refusing to write into ${dirs[i]} on ${host.label}: it resolves to ${real}, outside ${rootReal}.`, {
        fix: `Remove the symlink that leads out of ${root}.`,
      });
    }
  }
}
