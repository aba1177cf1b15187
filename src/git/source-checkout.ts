// The agent's checkout at the source, read in one program: the folder with every link resolved,
// the repository's remotes, and its layout with HEAD. On a source across a link (--from) that is
// one round trip where a realpath, then the layout beside the remotes, took two or three.
import type { Host } from '../host/host.js';
import { REMOTE_URLS_ARGS, remotesOf, repoRemotes, type RemoteOfRepo } from './discover.js';
import { gitFailed } from './git.js';
import { quiet } from '../quiet.js';
import { LAYOUT_ENV, LAYOUT_SCRIPT, layoutOf, repoLayout, type HeadLayout } from './snapshot.js';

/** Exit of SOURCE_CHECKOUT_SCRIPT when the folder cannot be entered (it prints nothing then). */
const NO_FOLDER_EXIT = 3;

/**
 * $1 the folder, then git's arguments for the remotes' URLs. Enters the folder with its links
 * resolved (or exits 3, printing nothing), prints its physical path and a NUL, the URLs (a NUL
 * after each), a NUL, git's exit and a NUL; then LAYOUT_SCRIPT there.
 */
export const SOURCE_CHECKOUT_SCRIPT = [
  `CDPATH= cd -P -- "$1" 2>/dev/null || exit ${NO_FOLDER_EXIT}`,
  'shift',
  'pwd -P; printf "\\0"',
  'git "$@"; printf "\\0%s\\0" "$?"',
  LAYOUT_SCRIPT,
].join('\n');

export interface SourceCheckout {
  /** The folder, every link resolved. */
  cwd: string;
  layout: HeadLayout;
  /** Still being resolved where a remote is a local path (a realpath on the host): what needs only the layout need not wait. */
  remotes: Promise<RemoteOfRepo[]>;
}

/** SOURCE_CHECKOUT_SCRIPT's answer cut at its NULs: the folder, the URLs' output, git's exit, the layout's lines. */
export function sourceCheckoutParts(stdout: string): { cwd: string; urls: string; urlsExit: number; layout: string } | null {
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
  return { cwd: stdout.slice(0, cwdEnd).replace(/\n$/, ''), urls, urlsExit: Number(stdout.slice(at, exitEnd)), layout: stdout.slice(exitEnd + 1) };
}

/**
 * The checkout the agent works in, from its folder as herdr told it. Throws as the layout would
 * (not_a_repo, unborn_head, git_missing); a folder that cannot be entered, as the host's realpath
 * of it does.
 */
export async function readSourceCheckout(host: Host, folder: string): Promise<SourceCheckout> {
  const r = await host.run(['/bin/sh', '-c', SOURCE_CHECKOUT_SCRIPT, 'sh', folder, ...REMOTE_URLS_ARGS], { env: LAYOUT_ENV });
  const parts = r.exitCode === NO_FOLDER_EXIT && r.stdout === '' ? null : sourceCheckoutParts(r.stdout);
  if (!parts) {
    // The folder went (or the answer was cut): read the long way, which tells why.
    const cwd = await host.realpath(folder);
    const layout = await repoLayout(host, cwd);
    return { cwd, layout, remotes: quiet(repoRemotes(host, cwd, layout.repoRoot)) };
  }
  // A checkout that is broken is best told by the layout; then git's own failure on the URLs.
  const layout = await layoutOf(host, parts.cwd, { ...r, stdout: parts.layout });
  if (parts.urlsExit !== 0 && parts.urlsExit !== 1) throw gitFailed(host, parts.cwd, REMOTE_URLS_ARGS, { ...r, exitCode: parts.urlsExit, stdout: '' });
  return { cwd: parts.cwd, layout, remotes: quiet(remotesOf(host, parts.urls, parts.cwd, layout.repoRoot)) };
}
