import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The package's folder and version, found once: package.json is two levels above dist/src/
 * (the compiled modules) and one above dist/ (the bundle, dist/cli.cjs).
 */
const PACKAGE: { root: string; version: string } = (() => {
  for (const rel of ['../../', '../']) {
    try {
      const root = new URL(rel, import.meta.url);
      const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'agent-handoff' && pkg.version) return { root: fileURLToPath(root), version: pkg.version };
    } catch {
      // try the next location
    }
  }
  return { root: fileURLToPath(new URL('../../', import.meta.url)), version: '0.0.0' };
})();

export const VERSION: string = PACKAGE.version;

/** The launcher the user ran (bin/agent-handoff.js), for helpers that run the CLI again. */
export const LAUNCHER: string = `${PACKAGE.root.replace(/\/$/, '')}/bin/agent-handoff.js`;
