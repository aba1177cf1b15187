// Where agent CLIs and herdr usually live even when a login profile does not add them.
const EXTRA_BIN_DIRS = ['~/.local/bin', '/opt/homebrew/bin', '/usr/local/bin'];

/** The login PATH with the usual extra bin folders appended (deduplicated, order kept). */
export function loginPathWithExtras(loginPath: string, home: string): string {
  const dirs = [...loginPath.split(':'), ...EXTRA_BIN_DIRS.map((d) => d.replace(/^~(?=\/)/, home))];
  return [...new Set(dirs.filter((d) => d.length > 0))].join(':');
}
