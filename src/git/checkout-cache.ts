// The target's checkout cache (~/.config/agent-handoff/repos.json: the checkouts found per remote)
// and config (search roots), read in the plan's look or on their own, and the cache's update.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { HostError } from '../errors.js';
import type { Host, HostInfo } from '../host/host.js';
import type { Question } from '../host/run-side-by-side.js';

/** Where people keep checkouts, searched 4 levels deep (`~` itself: 2 levels). */
export const DEFAULT_ROOTS = ['github.com', 'gitlab.com', 'src', 'code', 'dev', 'Developer', 'projects', 'repos', 'work', 'git', 'workspace'];
const ROOT_DEPTH = 4;
const HOME_DEPTH = 2;

const ConfigSchema = z.object({ roots: z.array(z.string()).optional() }).passthrough();
export const CacheSchema = z.object({
  version: z.literal(1),
  remotes: z.record(z.string(), z.object({ paths: z.array(z.string()), updatedAt: z.string() })),
});
export type Cache = z.infer<typeof CacheSchema>;

export function expandHome(p: string, home: string): string {
  if (p === '~') return home;
  if (p.startsWith('~/')) return path.posix.join(home, p.slice(2));
  return path.posix.isAbsolute(p) ? p : path.posix.join(home, p);
}

/** Where this tool keeps its files on a host: $XDG_CONFIG_HOME/agent-handoff, else ~/.config/agent-handoff. */
export function configDirOf(info: HostInfo): string {
  const xdg = info.loginEnv.XDG_CONFIG_HOME;
  return path.posix.join(xdg && path.posix.isAbsolute(xdg) ? xdg : path.posix.join(info.home, '.config'), 'agent-handoff');
}

export async function configDir(target: Host): Promise<string> {
  return configDirOf(await target.info());
}

async function readJson(target: Host, file: string): Promise<unknown> {
  try {
    return JSON.parse((await target.readFile(file)).toString('utf8')) as unknown;
  } catch (err) {
    if (err instanceof HostError && err.code === 'not_found') return undefined;
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}

/** A JSON file's content as a question for a look (undefined: missing, unreadable or not JSON). */
export function jsonFileQuestion(file: string): Question<unknown> {
  return {
    program: { argv: ['cat', '--', file] },
    answer: (r) => {
      if (r.exitCode !== 0) return undefined;
      try {
        return JSON.parse(r.stdout) as unknown;
      } catch {
        return undefined;
      }
    },
  };
}

/** Search roots as [maxdepth of .git, folder] pairs: explicit > AGENT_HANDOFF_ROOTS > config.json > defaults. */
export async function searchRoots(target: Host, explicit?: readonly string[], lookedConfig?: Promise<unknown> | null): Promise<{ depth: number; root: string }[]> {
  const info = await target.info();
  let custom: readonly string[] | undefined = explicit;
  if (!custom?.length) {
    const env = info.loginEnv.AGENT_HANDOFF_ROOTS;
    if (env) custom = env.split(':').filter(Boolean);
  }
  if (!custom?.length) {
    const parsed = ConfigSchema.safeParse(await configOf(target, lookedConfig ?? null));
    if (parsed.success && parsed.data.roots?.length) custom = parsed.data.roots;
  }
  // maxdepth counts the `.git` entry: a repository N folders down has its .git at N + 1.
  if (custom?.length) return custom.map((r) => ({ depth: ROOT_DEPTH + 1, root: expandHome(r, info.home) }));
  return [...DEFAULT_ROOTS.map((r) => ({ depth: ROOT_DEPTH + 1, root: path.posix.join(info.home, r) })), { depth: HOME_DEPTH + 1, root: info.home }];
}

/** config.json's content (undefined when missing), from the look when it read it. */
async function configOf(target: Host, looked: Promise<unknown> | null): Promise<unknown> {
  const got = looked ? await looked.then((v) => ({ v }), () => null) : null;
  return got ? got.v : readJson(target, path.posix.join(await configDir(target), 'config.json'));
}

/** The cache, from the look when it read it (a failed read is asked again, to say why). */
export async function cacheOf(target: Host, file: string, looked: Promise<unknown> | null): Promise<Cache> {
  const got = looked ? await looked.then((v) => ({ v }), () => null) : null;
  if (!got) return readCache(target, file);
  const parsed = CacheSchema.safeParse(got.v);
  return parsed.success ? parsed.data : { version: 1, remotes: {} };
}

export async function readCache(target: Host, file: string): Promise<Cache> {
  const parsed = CacheSchema.safeParse(await readJson(target, file));
  return parsed.success ? parsed.data : { version: 1, remotes: {} };
}

/**
 * $1 the cache file, then JSON strings (quotes included) that must each appear in it: prints
 * `yes` when all do, else `no` (no file, unreadable: `no`). Fixed strings, one `-e` each.
 */
export const CACHE_LISTS_SCRIPT = '[ -r "$1" ] || { echo no; exit 0; }; f=$1; shift; for s do grep -qF -e "$s" -- "$f" || { echo no; exit 0; }; done; echo yes';

/**
 * Whether the cache already lists these checkouts for this remote (as its JSON spells them),
 * asked in a look so that keeping the cache current needs no read of the whole file.
 */
export function cacheListsQuestion(file: string, key: string, paths: readonly string[]): Question<boolean> {
  return {
    program: { argv: ['/bin/sh', '-c', CACHE_LISTS_SCRIPT, 'sh', file, JSON.stringify(key), ...paths.map((p) => JSON.stringify(p))] },
    answer: (r) => r.exitCode === 0 && r.stdout.trim() === 'yes',
  };
}

// The folder, a temporary file in it, then a rename over the cache: one program.
const SAVE_SCRIPT = 'umask 077; mkdir -p -- "$1" && cat >"$2" && mv -f -- "$2" "$3" || { rm -f -- "$2"; exit 1; }';

/**
 * Atomic (temporary file, then rename), in one round trip, and not awaited by the search: the
 * answer does not depend on it. Settles either way (a cache that cannot be written is only slower).
 */
export function saveCache(target: Host, file: string, cache: Cache): Promise<void> {
  const tmp = `${file}.tmp-${randomBytes(6).toString('hex')}`;
  return target
    .run(['/bin/sh', '-c', SAVE_SCRIPT, 'sh', path.posix.dirname(file), tmp, file], { stdin: JSON.stringify(cache, null, 2) + '\n' })
    .then(
      () => undefined,
      () => undefined,
    );
}

export function withEntry(cache: Cache, key: string, paths: string[]): Cache {
  const remotes = { ...cache.remotes };
  if (paths.length === 0) delete remotes[key];
  else remotes[key] = { paths, updatedAt: new Date().toISOString() };
  return { version: 1, remotes };
}
