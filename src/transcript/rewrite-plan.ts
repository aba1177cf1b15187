// What a session's paths become on the target: each source folder, under every name it goes by,
// mapped to its target folder, most specific first. Pure; how the paths are written in a file's
// bytes is path-spellings.ts.
import path from 'node:path/posix';

export interface PathMapping {
  from: string;
  to: string;
}

export interface RewritePlan {
  /** Absolute source → target paths, most specific first (before spelling variants). */
  mappings: PathMapping[];
}

export interface RewritePlanInput {
  /** Every spelling of the source repo root (git toplevel, its realpath, herdr cwd minus the relative part). */
  repo?: { source: readonly string[]; target: string };
  configRoot?: { source: readonly string[]; target: string };
  home?: { source: readonly string[]; target: string };
  /** The adapter's folder renames (`Placement.renames`), and anything else specific. */
  renames?: readonly PathMapping[];
}

function normalise(p: string): string {
  const n = path.normalize(p);
  return n.length > 1 ? n.replace(/\/+$/, '') : n;
}

/** macOS spells temp and var folders both ways (`/private/tmp` is where `/tmp` points). */
function aliases(p: string): string[] {
  const out = [p];
  const m = /^\/private(\/(?:tmp|var|etc)(?:\/.*)?)$/.exec(p);
  if (m) out.push(m[1]!);
  else if (/^\/(?:tmp|var|etc)(?:\/|$)/.test(p)) out.push(`/private${p}`);
  return out;
}

/**
 * A pure function: the mappings a session needs, most specific first. Identity mappings and
 * the root `/` are dropped; a source spelling already mapped keeps its first (more specific) target.
 */
export function buildRewritePlan(input: RewritePlanInput): RewritePlan {
  const groups: { sources: readonly string[]; target: string }[] = [];
  for (const r of input.renames ?? []) groups.push({ sources: [r.from], target: r.to });
  if (input.repo) groups.push({ sources: input.repo.source, target: input.repo.target });
  if (input.configRoot) groups.push({ sources: input.configRoot.source, target: input.configRoot.target });
  if (input.home) groups.push({ sources: input.home.source, target: input.home.target });
  const seen = new Map<string, string>();
  for (const g of groups) {
    const to = normalise(g.target);
    for (const s of g.sources) {
      if (!s.startsWith('/')) continue;
      for (const from of aliases(normalise(s))) {
        if (from === '/' || seen.has(from)) continue;
        seen.set(from, to);
      }
    }
  }
  const mappings = [...seen].filter(([from, to]) => from !== to).map(([from, to]) => ({ from, to }));
  mappings.sort((a, b) => b.from.length - a.from.length);
  return { mappings };
}
