// The search for checkouts on a host: one sh program that reports every checkout under the
// search roots (or in the folders given) with its remotes, and a batch's searches shared.
import type { Host } from '../host/host.js';
import { HandoffError } from '../errors.js';
import { saveCache, withEntry, type Cache } from './checkout-cache.js';

export const SKIPPED_FOLDERS = ['node_modules', 'vendor', 'target', 'build', 'dist', 'Library', 'Applications', 'Pictures', 'Music', 'Movies', '__pycache__', 'venv', 'snap'];

// The script gets the per-repository report script as $1 (find -exec starts a new sh, which
// cannot see shell functions), then a mode. Mode "scan": pairs <maxdepth> <root>; every `.git`
// within maxdepth is reported, hidden and skipped folders pruned. Mode "check": folders.
// Each repository is reported as: D NUL <folder> NUL <git config -z remote urls> E NUL.
export const REPORT = `top=$1; shift
for g do
  d=\${g%/.git}
  case $d in .) p=$top ;; *) p=$top/\${d#./} ;; esac
  printf 'D\\0%s\\0' "$p"
  git -C "$p" config -z --get-regexp '^remote\\..*\\.url$' 2>/dev/null
  printf 'E\\0'
done`;
const SKIP_EXPR = SKIPPED_FOLDERS.map((n) => `-name ${n}`).join(' -o ');
/** Check mode: each folder in "$@" that is a checkout is reported ($report: REPORT). */
export const CHECK_LOOP = `for dir do
  if [ -e "$dir/.git" ]; then sh -c "$report" sh "$dir" ./.git; fi
done`;
const SCAN_SCRIPT = `report=$1; mode=$2; shift 2
if [ "$mode" = check ]; then
${CHECK_LOOP}
  exit 0
fi
while [ $# -ge 2 ]; do
  depth=$1; root=$2; shift 2
  (
    cd -P -- "$root" 2>/dev/null || exit 0
    find . -maxdepth "$depth" \\( -name .git -prune -exec sh -c "$report" sh "$(pwd -P)" {} + \\) -o \\( -type d \\( -name '.?*' -o ${SKIP_EXPR} \\) -prune \\) 2>/dev/null
  )
done
exit 0`;

export interface FoundRepo {
  dir: string;
  urls: string[];
}

export function parseReport(out: string): FoundRepo[] {
  const tokens = out.split('\0');
  const found: FoundRepo[] = [];
  let cur: FoundRepo | null = null;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] ?? '';
    if (t === 'D' && cur === null) {
      cur = { dir: tokens[++i] ?? '', urls: [] };
    } else if (t === 'E' && cur) {
      found.push(cur);
      cur = null;
    } else if (cur && t.includes('\n')) {
      cur.urls.push(t.slice(t.indexOf('\n') + 1));
    }
  }
  return found;
}

/**
 * The scans of one batch (several agents planned at once): a search of the same roots on the
 * same host runs once and answers every agent, whatever its repository (the scan reports every
 * checkout with its remotes). The cache updates go one after the other, each on the last, so
 * the agents' entries all stay.
 */
export class SharedScans {
  private readonly scans = new Map<string, Promise<FoundRepo[]>>();
  private saving: Promise<Cache | null> = Promise.resolve(null);

  scan(target: Host, params: string[], timeoutMs: number): Promise<FoundRepo[]> {
    const key = `${target.address}\0${params.join('\0')}`;
    let found = this.scans.get(key);
    if (!found) {
      found = runScan(target, params, timeoutMs);
      this.scans.set(key, found);
    }
    return found;
  }

  save(target: Host, file: string, read: Cache, key: string, paths: string[]): Promise<void> {
    const next = this.saving.then(async (last) => {
      const cache = withEntry(last ?? read, key, paths);
      await saveCache(target, file, cache);
      return cache;
    });
    this.saving = next.catch(() => null);
    return next.then(() => undefined);
  }
}

export async function runScan(target: Host, params: string[], timeoutMs: number): Promise<FoundRepo[]> {
  const r = await target.run(['sh', '-c', SCAN_SCRIPT, 'sh', REPORT, ...params], { timeoutMs });
  if (r.exitCode !== 0) {
    throw new HandoffError('discover_failed', `Searching for checkouts on ${target.label} failed: ${r.stderr.trim().slice(-500)}`, {
      fix: 'Name the checkout with --dir.',
    });
  }
  return parseReport(r.stdout);
}
