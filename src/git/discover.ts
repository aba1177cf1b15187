// Discover: which checkout on the target is "the same repository" as the source's — matched by
// normalised remote URL, never by path (the two machines lay out their folders differently).
//
// The scan is ONE remote command: a POSIX `sh` script running `find` with prunes over the
// search roots and `git config --get-regexp` in every repository found. Roots and folders reach
// the script as positional parameters, never inside its text. Results are cached per remote in
// ~/.config/agent-handoff/repos.json on the target; a cached entry is re-validated (same one-
// command script, restricted to the cached folders) before it is trusted.
import path from 'node:path';
import { HandoffError } from '../errors.js';
import type { Host, HostInfo, RunResult } from '../host/host.js';
import type { QuestionBatch } from '../host/run-side-by-side.js';
import { cacheListsQuestion, cacheOf, CacheSchema, configDir, configDirOf, expandHome, jsonFileQuestion, readCache, saveCache, searchRoots, withEntry } from './checkout-cache.js';
import { git, splitNul } from './git.js';
import { CHECK_LOOP, parseReport, REPORT, runScan, type FoundRepo, type SharedScans } from './checkout-scan.js';

export { SharedScans, SKIPPED_FOLDERS } from './checkout-scan.js';
import { isLocalRemote, normaliseRemote } from './remote-url.js';
import { parseWorktreeList, type Worktree } from './worktrees.js';

/** Folders never searched: dependency trees, build output, macOS media (hidden folders are skipped too). */

export interface RemoteOfRepo {
  name: string;
  url: string;
  /** normaliseRemote(url), local paths resolved with realpath on their host. */
  key: string;
}

export interface TargetCheckout {
  /** Main worktree of the repository. */
  path: string;
  worktrees: Worktree[];
  /** The remote key that matched. */
  remote: string;
  /** Worktree where the wanted branch is checked out, if any. */
  branchWorktree: string | null;
  /** Newest mtime of an index (or HEAD) among the repository's worktrees: recent use (0 when only one repository matched: nothing to rank). */
  lastUsedMs: number;
}

export interface DiscoverRequest {
  target: Host;
  /** The source repository's remotes (see `repoRemotes`). */
  remotes: readonly RemoteOfRepo[];
  /** The branch that will be placed (ranks checkouts that have it checked out first). */
  branch: string | null;
  /** A folder the user named (`--dir`): used as-is if it shares a remote, else `dir_mismatch`. */
  dir?: string;
  /** Search roots that override everything (absolute, or `~/…`). */
  roots?: readonly string[];
  /** Write nothing (the cache included). */
  dryRun?: boolean;
  timeoutMs?: number;
  /** What the plan's look already asked (see discoveryLook): used instead of asking again. */
  looked?: DiscoveryLook;
  /** A batch's scans, shared by its agents. */
  shared?: SharedScans;
}

export interface DiscoverResult {
  /** The best checkout. */
  checkout: TargetCheckout;
  /** Every matching checkout, best first. */
  checkouts: TargetCheckout[];
  /** How the answer was found ('memory': the checkouts this machine remembers, see precheckRemembered). */
  via: 'dir' | 'memory' | 'cache' | 'scan';
  /** Cache state: hit (all valid), pruned (hit after dropping stale entries), stale (all invalid, rescanned), miss, off (dir, memory). */
  cache: 'hit' | 'pruned' | 'stale' | 'miss' | 'off';
  /** Roots searched (empty when the cache answered). */
  roots: string[];
  /**
   * The cache update, written off the critical path: settles when it is on disk (or failed — the
   * cache only saves a search, so a failure is not the handoff's). Await it before closing the host.
   */
  saved: Promise<void>;
}

const NOTHING_TO_SAVE: Promise<void> = Promise.resolve();

/**
 * The repository's remotes with normalised keys, origin first. Read from any folder of the checkout (`dir`), so that
 * it can go beside the read of the checkout's layout: `root` (its top folder, maybe still being
 * read) is awaited only to resolve a relative local-path remote. Local paths are resolved side by side.
 */
export async function repoRemotes(host: Host, dir: string, root: string | Promise<string> = dir): Promise<RemoteOfRepo[]> {
  // No remote: exit 1, not a failure.
  return remotesOf(host, (await git(host, dir, REMOTE_URLS_ARGS, { okCodes: [1] })).stdout, dir, root);
}

/** git's arguments that print each remote's URL (`remote.NAME.url`, a newline, the URL; NUL after each). */
export const REMOTE_URLS_ARGS = ['config', '-z', '--get-regexp', '^remote\\..*\\.url$'] as const;

/** The remotes in REMOTE_URLS_ARGS' output, as repoRemotes tells them (`dir`, `root`: see there). */
export async function remotesOf(host: Host, output: string, dir: string, root: string | Promise<string> = dir): Promise<RemoteOfRepo[]> {
  const entries = splitNul(output).flatMap((entry) => {
    const nl = entry.indexOf('\n');
    return nl < 0 ? [] : [{ name: entry.slice('remote.'.length, nl - '.url'.length), url: entry.slice(nl + 1) }];
  });
  const keyOf = async (url: string) => {
    const key = normaliseRemote(url);
    return remoteKey(host, isLocalRemote(key) && !key.startsWith('/') ? await root : dir, url);
  };
  const remotes = await Promise.all(entries.map(async (e) => ({ ...e, key: await keyOf(e.url) })));
  return remotes.sort((a, b) => (a.name === 'origin' ? -1 : b.name === 'origin' ? 1 : 0));
}

/**
 * normaliseRemote, with a local-path remote resolved (relative to the repository, then realpath).
 * A path that is literally one of `wanted` needs no look on the host (another spelling of it does).
 */
export async function remoteKey(host: Host, repo: string, url: string, wanted?: ReadonlySet<string>): Promise<string> {
  const key = normaliseRemote(url);
  if (!isLocalRemote(key)) return key;
  const abs = path.posix.resolve(repo, key);
  if (wanted?.has(abs)) return abs;
  return host.realpath(abs).catch(() => abs);
}

async function matching(target: Host, found: FoundRepo[], keys: ReadonlySet<string>): Promise<{ dir: string; remote: string }[]> {
  // Every URL's key at once: a local-path remote costs a realpath on the target, unless it is
  // literally a wanted key.
  const perRepo = await Promise.all(found.map((f) => Promise.all(f.urls.map((url) => remoteKey(target, f.dir, url, keys)))));
  return found.flatMap((f, i) => {
    const key = perRepo[i]?.find((k) => keys.has(k));
    return key === undefined ? [] : [{ dir: f.dir, remote: key }];
  });
}

const DESCRIBE_SCRIPT = `for d do
  printf 'D\\0%s\\0' "$d"
  git -C "$d" rev-parse --absolute-git-dir 2>/dev/null
  printf '\\0'
  git -C "$d" worktree list --porcelain 2>/dev/null
  printf '\\0'
done
exit 0`;

// Check mode of SCAN_SCRIPT and DESCRIBE_SCRIPT for the same folders, in one program: the
// report, a NUL-framed token no report holds (its tokens are D, E, absolute folders and
// `key\nvalue` pairs), then the description.
const DESCRIBE_SPLIT = 'AH-DESCRIBE';
const CHECK_AND_DESCRIBE_SCRIPT = `report=$1; shift
${CHECK_LOOP}
printf '\\0%s\\0' ${DESCRIBE_SPLIT}
${DESCRIBE_SCRIPT}`;

/** The describe program's output for these folders (any folder may be left out later). */
async function describeOutput(target: Host, dirs: readonly string[]): Promise<string> {
  return (await target.run(['sh', '-c', DESCRIBE_SCRIPT, 'sh', ...dirs])).stdout;
}

/**
 * Group matching folders by repository (main worktree), with worktrees and recency. `asked`: the
 * describe output already asked for a superset of the folders (only the matching ones count).
 */
async function describe(target: Host, matches: { dir: string; remote: string }[], branch: string | null, asked?: string): Promise<TargetCheckout[]> {
  if (matches.length === 0) return [];
  const tokens = (asked ?? (await describeOutput(target, matches.map((m) => m.dir)))).split('\0');
  const byMain = new Map<string, TargetCheckout>();
  const gitDirs = new Map<string, string[]>();
  for (let i = 0; i + 3 < tokens.length + 1; ) {
    if (tokens[i] !== 'D') {
      i++;
      continue;
    }
    const dir = tokens[i + 1] ?? '';
    const gitDir = (tokens[i + 2] ?? '').trim();
    const worktrees = parseWorktreeList(tokens[i + 3] ?? '');
    i += 4;
    const main = worktrees[0];
    const match = matches.find((m) => m.dir === dir);
    if (!main || !match || !gitDir) continue;
    gitDirs.set(main.path, [...(gitDirs.get(main.path) ?? []), gitDir]);
    if (byMain.has(main.path)) continue;
    const branchWorktree = branch === null ? null : (worktrees.find((w) => w.branch === branch && !w.bare)?.path ?? null);
    byMain.set(main.path, { path: main.path, worktrees, remote: match.remote, branchWorktree, lastUsedMs: 0 });
  }
  // Recency only ranks several repositories: one needs no look at its index.
  if (byMain.size > 1) {
    await Promise.all(
      [...byMain.values()].map(async (c) => {
        const times = await Promise.all((gitDirs.get(c.path) ?? []).map(async (g) => ((await target.stat(`${g}/index`)) ?? (await target.stat(`${g}/HEAD`)))?.mtimeMs ?? 0));
        c.lastUsedMs = Math.max(0, ...times);
      }),
    );
  }
  return rankCheckouts([...byMain.values()]);
}

/** Best first: the branch checked out somewhere, then the most recently used. */
export function rankCheckouts(list: readonly TargetCheckout[]): TargetCheckout[] {
  return [...list].sort((a, b) => Number(b.branchWorktree !== null) - Number(a.branchWorktree !== null) || b.lastUsedMs - a.lastUsedMs || a.path.localeCompare(b.path));
}

/**
 * The listed folders that still hold a checkout with one of `keys`, described and ranked. They are
 * described while they are checked: one round trip instead of two.
 */
async function checkListed(target: Host, folders: readonly string[], keys: ReadonlySet<string>, branch: string | null, timeoutMs: number): Promise<TargetCheckout[]> {
  return checkedOf(target, await target.run(['sh', '-c', CHECK_AND_DESCRIBE_SCRIPT, 'sh', REPORT, ...folders], { timeoutMs }), keys, branch);
}

/** CHECK_AND_DESCRIBE_SCRIPT's answer: the folders that still hold a checkout with one of `keys`, described and ranked. */
async function checkedOf(target: Host, r: RunResult, keys: ReadonlySet<string>, branch: string | null): Promise<TargetCheckout[]> {
  const split = r.stdout.indexOf(`\0${DESCRIBE_SPLIT}\0`);
  if (r.exitCode !== 0 || split < 0) {
    throw new HandoffError('discover_failed', `Checking the checkouts on ${target.label} failed: ${r.stderr.trim().slice(-500)}`, { fix: 'Name the checkout with --dir.' });
  }
  const valid = await matching(target, parseReport(r.stdout.slice(0, split + 1)), keys);
  return describe(target, valid, branch, r.stdout.slice(split + DESCRIBE_SPLIT.length + 2));
}

/** What discovery asked in the plan's look, beside the look's other questions (see discoveryLook). */
export interface DiscoveryLook {
  /** The checkouts this machine remembers for the source's primary remote, checked and described. */
  remembered: { key: string; branch: string | null; paths: string[]; checkouts: Promise<TargetCheckout[]>; cacheLists: Promise<boolean> } | null;
  /** Without remembered checkouts: the target's cache and config as read (undefined: none). */
  cache: Promise<unknown> | null;
  config: Promise<unknown> | null;
}

/**
 * Discovery's questions for the plan's look, asked in `batch`: the checkouts this machine
 * remembers (src/git/checkout-memory.ts) are checked as a cache entry would be; without any, the
 * target's cache and config are read. Either way one program with the look's others.
 */
export function discoveryLook(batch: QuestionBatch, target: Host, info: HostInfo, remotes: readonly RemoteOfRepo[], branch: string | null, remembered: readonly string[]): DiscoveryLook {
  const key = remotes[0]?.key;
  const keys = new Set(remotes.map((r) => r.key).filter(Boolean));
  if (key && remembered.length > 0) {
    const checkouts = batch.ask({ program: { argv: ['sh', '-c', CHECK_AND_DESCRIBE_SCRIPT, 'sh', REPORT, ...remembered] }, answer: (r) => checkedOf(target, r, keys, branch) });
    const cacheLists = batch.ask(cacheListsQuestion(path.posix.join(configDirOf(info), 'repos.json'), key, remembered));
    return { remembered: { key, branch, paths: [...remembered], checkouts, cacheLists }, cache: null, config: null };
  }
  const dir = configDirOf(info);
  return { remembered: null, cache: batch.ask(jsonFileQuestion(path.posix.join(dir, 'repos.json'))), config: batch.ask(jsonFileQuestion(path.posix.join(dir, 'config.json'))) };
}

/**
 * The checkouts the look found likely: the remembered ones, else those the target's cache lists
 * for these remotes (unchecked; empty without either): a guess of the answer, for reads that can
 * start while it is checked.
 */
export async function likelyCheckouts(looked: DiscoveryLook, remotes: readonly RemoteOfRepo[]): Promise<string[]> {
  const primary = remotes[0]?.key;
  if (looked.remembered) return looked.remembered.key === primary ? looked.remembered.paths : [];
  const parsed = CacheSchema.safeParse(await (looked.cache ?? Promise.resolve(undefined)).catch(() => undefined));
  return primary && parsed.success ? (parsed.data.remotes[primary]?.paths ?? []) : [];
}

/**
 * The remembered checkouts that hold, described (null when there was no check for this key and
 * branch, it failed, or none held: the cache and the search then answer). The target's cache is brought up
 * to date off the critical path when it lacks them.
 */
async function fromRemembered(req: DiscoverRequest, primary: string, cacheFile: string): Promise<DiscoverResult | null> {
  const { target } = req;
  const pre = req.looked?.remembered;
  if (!pre || pre.key !== primary || pre.branch !== req.branch) return null;
  const checkouts = await pre.checkouts.catch(() => []);
  const best = checkouts[0];
  if (!best) return null;
  const kept = checkouts.map((c) => c.path);
  // The look said whether the cache lists every remembered checkout already (so those kept
  // too): then it is not read. Entries the cache has beyond these stay (they are checked when the
  // cache is next used).
  const alreadyListed = await pre.cacheLists.catch(() => false);
  const saved = req.dryRun || alreadyListed
    ? NOTHING_TO_SAVE
    : readCache(target, cacheFile).then(
        (cache) => {
          const listed = cache.remotes[primary]?.paths ?? [];
          return kept.every((p) => listed.includes(p)) ? undefined : saveCache(target, cacheFile, withEntry(cache, primary, [...new Set([...kept, ...listed])]));
        },
        () => undefined,
      );
  return { checkout: best, checkouts, via: 'memory', cache: 'off', roots: [], saved };
}

/** Find the target checkout of the source repository. */
export async function discoverCheckout(req: DiscoverRequest): Promise<DiscoverResult> {
  const { target } = req;
  const timeoutMs = req.timeoutMs ?? 60_000;
  const keys = new Set(req.remotes.map((r) => r.key).filter(Boolean));
  const primary = req.remotes[0]?.key;
  if (!primary) {
    throw new HandoffError('no_remote', 'The source repository has no remote, so its checkout on the target cannot be recognised.', {
      fix: 'Add a remote (git remote add origin <url>) or name the target checkout with --dir.',
    });
  }
  const info = await target.info();

  if (req.dir !== undefined) {
    const dir = expandHome(req.dir, info.home);
    const top = await git(target, '/', ['-C', dir, 'rev-parse', '--show-toplevel'], { okCodes: [128, 1] });
    const root = top.exitCode === 0 ? top.stdout.trim() : null;
    const found = root ? await matching(target, await runScan(target, ['check', root], timeoutMs), keys) : [];
    const [checkout] = await describe(target, found, req.branch);
    if (!checkout) {
      throw new HandoffError('dir_mismatch', root ? `${dir} on ${target.label} is a checkout of another repository (no remote in common with the source).` : `${dir} on ${target.label} is not a git checkout.`, {
        fix: `Name a checkout of ${primary} with --dir, or leave --dir out to search for one.`,
        details: { dir, remotes: [...keys] },
      });
    }
    return { checkout, checkouts: [checkout], via: 'dir', cache: 'off', roots: [], saved: NOTHING_TO_SAVE };
  }

  const cacheFile = path.posix.join(await configDir(target), 'repos.json');
  const remembered = await fromRemembered(req, primary, cacheFile);
  if (remembered) return remembered;
  const cache = await cacheOf(target, cacheFile, req.looked?.cache ?? null);
  const cached = cache.remotes[primary]?.paths ?? [];
  let cacheState: DiscoverResult['cache'] = 'miss';
  if (cached.length > 0) {
    const checkouts = await checkListed(target, cached, keys, req.branch, timeoutMs);
    if (checkouts.length > 0) {
      const kept = checkouts.map((c) => c.path);
      const pruned = kept.length !== cached.length || kept.some((p) => !cached.includes(p));
      const saved = pruned && !req.dryRun ? (req.shared ? req.shared.save(target, cacheFile, cache, primary, kept) : saveCache(target, cacheFile, withEntry(cache, primary, kept))) : NOTHING_TO_SAVE;
      return { checkout: checkouts[0] as TargetCheckout, checkouts, via: 'cache', cache: pruned ? 'pruned' : 'hit', roots: [], saved };
    }
    cacheState = 'stale';
  }

  const roots = await searchRoots(target, req.roots, req.looked?.config ?? null);
  const params = ['scan', ...roots.flatMap((r) => [String(r.depth), r.root])];
  const found = await (req.shared ? req.shared.scan(target, params, timeoutMs) : runScan(target, params, timeoutMs));
  const unique = [...new Map(found.map((f) => [f.dir, f])).values()];
  const checkouts = await describe(target, await matching(target, unique, keys), req.branch);
  const paths = checkouts.map((c) => c.path);
  const save = () => (req.shared ? req.shared.save(target, cacheFile, cache, primary, paths) : saveCache(target, cacheFile, withEntry(cache, primary, paths)));
  const saved = !req.dryRun && (checkouts.length > 0 || cacheState === 'stale') ? save() : NOTHING_TO_SAVE;
  const best = checkouts[0];
  if (!best) {
    await saved;
    throw new HandoffError('repo_not_found', `No checkout of ${primary} was found on ${target.label}.`, {
      fix: `Clone it on ${target.label} (git clone ${req.remotes[0]?.url ?? primary}) or name it with --dir; search roots can be set with AGENT_HANDOFF_ROOTS or ~/.config/agent-handoff/config.json.`,
      details: { remote: primary, roots: roots.map((r) => r.root) },
    });
  }
  return { checkout: best, checkouts, via: 'scan', cache: cacheState, roots: roots.map((r) => r.root), saved };
}

