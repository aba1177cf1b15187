// Parses `herdr integration status` (plain text, one line per target):
//   <label>: not installed (<path>) | current (v7) (<path>) | outdated (v5 < v7) (<path>) | legacy (<path>)
export type IntegrationStatus = 'not_installed' | 'current' | 'outdated' | 'legacy' | 'unknown';

export interface IntegrationState {
  /** The target as herdr spells it (`claude`, `pi`, `antigravity-cli`, …), lower-cased. */
  target: string;
  status: IntegrationStatus;
  version: number | null;
  path: string | null;
}

/** The state of `target`'s integration among `states` (null: herdr did not list it). */
export function integrationFor(states: readonly IntegrationState[], target: string): IntegrationState | null {
  return states.find((s) => s.target === target) ?? null;
}

const LINE = /^\s*([^:]+):\s*(not installed|current|outdated|legacy)\b(?:\s*\((?:v(\d+))?[^)]*\))?(?:\s*\(([^)]*)\))?\s*$/i;

export function parseIntegrationStatus(text: string): IntegrationState[] {
  const states: IntegrationState[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const word = (m[2] ?? '').toLowerCase();
    const status: IntegrationStatus = word === 'not installed' ? 'not_installed' : (word as IntegrationStatus);
    // "not installed (<path>)" has only the path group in the first parentheses.
    let version: number | null = m[3] ? Number(m[3]) : null;
    let path = m[4] ?? null;
    if (status === 'not_installed' || status === 'legacy') {
      const p = /\(([^)]*)\)\s*$/.exec(line);
      path = p?.[1] ?? null;
      version = null;
    }
    states.push({ target: (m[1] ?? '').trim().toLowerCase(), status, version, path });
  }
  return states;
}
