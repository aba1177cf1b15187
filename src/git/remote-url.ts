// One spelling for every way of writing the same git remote, so a checkout on another machine
// can be matched to the source repository by its remote rather than by its path.
//
//   git@github.com:Owner/Repo.git          → github.com/owner/repo
//   ssh://git@github.com:22/owner/repo     → github.com/owner/repo
//   https://user@github.com/owner/repo/    → github.com/owner/repo
//   /srv/git/repo.git, file:///srv/git/repo.git → /srv/git/repo.git (callers resolve it with realpath)
//
// The port is dropped: the same repository is commonly reached over ssh (22, or a custom port)
// and https (443), and two repositories that differ only by port on one host are vanishingly rare.
// Case is folded for hosted remotes (hosting services treat owner/repo case-insensitively), kept
// for local paths (file systems usually do not).

/** Normalised form of a remote URL; '' for an empty one. Local paths come back absolute-or-as-given, cleaned. */
export function normaliseRemote(url: string): string {
  const u = url.trim();
  if (!u) return '';
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(.*)$/.exec(u);
  if (scheme) {
    const kind = (scheme[1] ?? '').toLowerCase();
    const rest = scheme[2] ?? '';
    if (kind === 'file') return cleanPath(decodeURIComponentSafe(rest.replace(/^localhost(?=\/)/, '')));
    const slash = rest.indexOf('/');
    const authority = slash < 0 ? rest : rest.slice(0, slash);
    const repoPath = slash < 0 ? '' : rest.slice(slash + 1);
    return hosted(hostOf(authority), repoPath);
  }
  // scp-like: [user@]host:path — a colon before any slash (a local path with a colon has a slash first).
  const scp = /^(?:[^@/]*@)?(\[[^\]]+\]|[^:/]+):(.*)$/.exec(u);
  if (scp && !u.startsWith('/')) return hosted(stripBrackets(scp[1] ?? ''), scp[2] ?? '');
  return cleanPath(u);
}

/** True when a normalised remote names a folder (resolve it with realpath before comparing). */
export function isLocalRemote(normalised: string): boolean {
  return normalised.startsWith('/') || normalised.startsWith('.');
}

function hostOf(authority: string): string {
  const at = authority.lastIndexOf('@');
  let h = at >= 0 ? authority.slice(at + 1) : authority;
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return h.slice(1, end < 0 ? undefined : end);
  }
  h = h.replace(/:\d*$/, '');
  return h;
}

function stripBrackets(h: string): string {
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

function hosted(host: string, repoPath: string): string {
  let p = repoPath.replace(/^\/+/, '').replace(/\/+$/, '');
  p = p.replace(/\.git$/i, '').replace(/\/+$/, '');
  p = p.replace(/\/{2,}/g, '/');
  return `${host.toLowerCase()}/${p.toLowerCase()}`.replace(/\/$/, '');
}

function cleanPath(p: string): string {
  const cleaned = p.replace(/\/{2,}/g, '/').replace(/\/+$/, '');
  return cleaned || '/';
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
