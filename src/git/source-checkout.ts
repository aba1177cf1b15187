// The agent's checkout at the source, read in one program: the folder with every link resolved,
// the repository's remotes, its layout with HEAD, and the snapshot of its uncommitted work. On a
// source across a link (--from) that is one round trip where a realpath, then the layout beside
// the remotes, then the snapshot took three or four.
import type { Host } from '../host/host.js';
import { singleQuote } from '../host/remote-command.js';
import { quiet } from '../quiet.js';
import { REMOTE_URLS_ARGS, remotesOf, repoRemotes, type RemoteOfRepo } from './discover.js';
import { GIT_BASE_CONFIG, GIT_BASE_ENV, gitFailed } from './git.js';
import { LAYOUT_SCRIPT, layoutOf, repoLayout, SNAPSHOT_AFTER_LAYOUT, SNAPSHOT_IDENTITY, SNAPSHOT_MESSAGES, snapshotAnswered, snapshotOf, tempIndexName, type HeadLayout, type Snapshot } from './snapshot.js';

/** Exit of SOURCE_CHECKOUT_SCRIPT when the folder cannot be entered (it prints nothing then). */
const NO_FOLDER_EXIT = 3;

/**
 * $1 the folder, $2 the temporary index's name, $3 and $4 the snapshot's messages (see
 * SNAPSHOT_AFTER_LAYOUT), then git's base options. Enters the folder with its links resolved (or
 * exits 3, printing nothing), prints its physical path and a NUL, the remotes' URLs
 * (REMOTE_URLS_ARGS; a NUL after each), a NUL, git's exit and a NUL; then LAYOUT_SCRIPT there
 * (on a failure its output and exit code, nothing more), a NUL, and SNAPSHOT_SCRIPT's answer.
 */
export const SOURCE_CHECKOUT_SCRIPT = [
  `CDPATH= cd -P -- "$1" 2>/dev/null || exit ${NO_FOLDER_EXIT}`,
  'n=$2; mb=$3; md=$4; shift 4',
  'pwd -P; printf "\\0"',
  `git "$@" ${REMOTE_URLS_ARGS.map(singleQuote).join(' ')}; printf "\\0%s\\0" "$?"`,
  LAYOUT_SCRIPT,
  'rc=$?; [ "$rc" -eq 0 ] || exit "$rc"',
  'printf "\\0"',
  SNAPSHOT_AFTER_LAYOUT,
].join('\n');

export interface SourceCheckout {
  /** The folder, every link resolved. */
  cwd: string;
  layout: HeadLayout;
  /** Still being resolved where a remote is a local path (a realpath on the host): what needs only the layout need not wait. */
  remotes: Promise<RemoteOfRepo[]>;
  /** The snapshot of its uncommitted work, or why there is none (a refusal of the snapshot, not of the checkout). */
  snapshot: Promise<Snapshot>;
}

/** SOURCE_CHECKOUT_SCRIPT's answer cut at its NULs: the folder, the URLs' output, git's exit, the layout's lines, and the snapshot's answer (null: the layout failed). */
export function sourceCheckoutParts(stdout: string): { cwd: string; urls: string; urlsExit: number; layout: string; snapshot: string | null } | null {
  const cwdEnd = stdout.indexOf('\0');
  if (cwdEnd < 0) return null;
  // The URLs end at an empty entry (an entry is never empty), then git's exit.
  let at = cwdEnd + 1;
  for (;;) {
    const next = stdout.indexOf('\0', at);
    if (next < 0) return null;
    const entry = stdout.slice(at, next);
    at = next + 1;
    if (entry === '') break;
  }
  const urls = stdout.slice(cwdEnd + 1, at - 1);
  const exitEnd = stdout.indexOf('\0', at);
  if (exitEnd < 0) return null;
  const rest = stdout.slice(exitEnd + 1);
  // The layout's lines hold no NUL; the snapshot's answer may (diff-tree -z).
  const layoutEnd = rest.indexOf('\0');
  return { cwd: stdout.slice(0, cwdEnd).replace(/\n$/, ''), urls, urlsExit: Number(stdout.slice(at, exitEnd)), layout: layoutEnd < 0 ? rest : rest.slice(0, layoutEnd), snapshot: layoutEnd < 0 ? null : rest.slice(layoutEnd + 1) };
}

/**
 * The checkout the agent works in, from its folder as herdr told it, with the snapshot made.
 * Throws as the layout would (not_a_repo, unborn_head, git_missing); a folder that cannot be
 * entered, as the host's realpath of it does.
 */
export async function readSourceCheckout(host: Host, folder: string): Promise<SourceCheckout> {
  const argv = ['/bin/sh', '-c', SOURCE_CHECKOUT_SCRIPT, 'sh', folder, tempIndexName(), SNAPSHOT_MESSAGES.branchStart, SNAPSHOT_MESSAGES.detached, ...GIT_BASE_CONFIG];
  const r = await host.run(argv, { env: { ...GIT_BASE_ENV, ...SNAPSHOT_IDENTITY } });
  const parts = r.exitCode === NO_FOLDER_EXIT && r.stdout === '' ? null : sourceCheckoutParts(r.stdout);
  if (!parts) {
    // The folder went (or the answer was cut): read the long way, which tells why.
    const cwd = await host.realpath(folder);
    const layout = await repoLayout(host, cwd);
    return { cwd, layout, remotes: quiet(repoRemotes(host, cwd, layout.repoRoot)), snapshot: quiet(snapshotOf(host, layout)) };
  }
  // A checkout that is broken is best told by the layout (its own exit code, when it failed); then git's own failure on the URLs.
  const layout = await layoutOf(host, parts.cwd, { ...r, exitCode: parts.snapshot === null ? r.exitCode : 0, stdout: parts.layout });
  if (parts.urlsExit !== 0 && parts.urlsExit !== 1) throw gitFailed(host, parts.cwd, REMOTE_URLS_ARGS, { ...r, exitCode: parts.urlsExit, stdout: '' });
  // The layout told means the snapshot's answer follows (the program ends before it only on a failed layout).
  const snapshot = quiet(Promise.resolve().then(() => snapshotAnswered(host, layout, { ...r, stdout: parts.snapshot ?? '' })));
  return { cwd: parts.cwd, layout, remotes: quiet(remotesOf(host, parts.urls, parts.cwd, layout.repoRoot)), snapshot };
}
