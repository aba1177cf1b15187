// The name of the new branch a handoff puts the work on (--new-branch, --here --new-worktree, a
// detached HEAD): short enough to type, `handoff/<first 8 of the session id>`, and unique on the
// target (`-2`, `-3`… when taken there). Pure: the same session, id and branches give the same
// name, so the plan and the placement agree without asking the target again.
import { branchTaken, firstFree } from './worktrees.js';

/** How many characters of the session id name the branch. */
export const BRANCH_ID_CHARS = 8;
/** Fewer usable characters than this and the id says too little: the next source is used. */
const MIN_CHARS = 4;

/**
 * The part of an id a branch name may carry: its ASCII letters and digits only (a session id may
 * hold anything — slashes, dots, `..`, spaces, a leading `-`, unicode), the first 8; '' when fewer
 * than 4 are left. Letters and digits alone are always a valid ref component.
 */
export function branchPart(id: string): string {
  const part = id.replace(/[^A-Za-z0-9]+/g, '').slice(0, BRANCH_ID_CHARS);
  return part.length >= MIN_CHARS ? part : '';
}

/** A handoff id's random part (`20261201-201721-20d31c39f8677e06` → `20d31c39`). */
function handoffPart(handoffId: string): string {
  const last = handoffId.split('-').pop() ?? '';
  return branchPart(last) || branchPart(handoffId);
}

/**
 * `handoff/<session>` (first 8 letters and digits of the session id; the handoff id's random part
 * when the session id has too few), suffixed `-2`, `-3`… while `taken` names it or a branch it
 * would clash with in the ref store. When a branch named `handoff` itself exists, no
 * `handoff/…` can be created: `handoff-<session>` then.
 */
export function handoffBranchName(sessionId: string, handoffId: string, taken: ReadonlySet<string>): string {
  const part = branchPart(sessionId) || handoffPart(handoffId) || 'work';
  return firstFree(taken.has('handoff') ? `handoff-${part}` : `handoff/${part}`, (name) => branchTaken(name, taken));
}
