// herdr's agent vocabulary as the simulator needs it: kinds, aliases, the executable `agent start`
// types, which (source, agent) pairs may report a session ref, and how a process name maps to a kind.

/** Canonical kind → executable typed by `agent start`. */
export const AGENT_EXECUTABLES: Record<string, string> = {
  pi: 'pi',
  claude: 'claude',
  codex: 'codex',
  gemini: 'gemini',
  cursor: 'cursor-agent',
  devin: 'devin',
  agy: 'agy',
  cline: 'cline',
  omp: 'omp',
  mastracode: 'mastracode',
  opencode: 'opencode',
  copilot: 'copilot',
  kimi: 'kimi',
  kiro: 'kiro-cli',
  droid: 'droid',
  amp: 'amp',
  grok: 'grok',
  hermes: 'hermes',
  kilo: 'kilo',
  qodercli: 'qodercli',
  maki: 'maki',
};

const ALIASES: Record<string, string> = {
  'claude-code': 'claude',
  'cursor-agent': 'cursor',
  antigravity: 'agy',
  'antigravity-cli': 'agy',
  antigravity_cli: 'agy',
  'kiro-cli': 'kiro',
  opencode2: 'opencode',
  ghcs: 'copilot',
  'grok-build': 'grok',
  'hermes-agent': 'hermes',
  'kilo-code': 'kilo',
  qoder: 'qodercli',
  'amp-local': 'amp',
};

/** Canonical kind for a kind name or alias (case-insensitive), or null. */
export function canonicalKind(word: string): string | null {
  const w = word.toLowerCase();
  if (Object.hasOwn(AGENT_EXECUTABLES, w)) return w;
  return ALIASES[w] ?? null;
}

/** Kinds whose integrations report a session ref (official `(source, agent)` pairs). */
const SESSION_KINDS = ['claude', 'codex', 'copilot', 'devin', 'droid', 'kimi', 'omp', 'mastracode', 'pi', 'hermes', 'opencode', 'qodercli', 'kilo', 'cursor', 'grok'];

/** The agent kind an official session source speaks for, or null for custom/unknown sources. */
export function officialSourceKind(source: string): string | null {
  if (source === 'herdr:antigravity_cli' || source === 'agy') return 'agy';
  const k = source.startsWith('herdr:') ? source.slice('herdr:'.length) : source;
  return SESSION_KINDS.includes(k) ? k : null;
}

/** Sources whose reports are the state authority (full-lifecycle integrations). */
const LIFECYCLE_KINDS = new Set(['pi', 'omp', 'mastracode', 'opencode', 'kilo', 'kimi']);

/** True when `pane report-agent` from this source sets state directly (lifecycle or custom source). */
export function isStateAuthority(source: string): boolean {
  const k = officialSourceKind(source);
  return k === null || LIFECYCLE_KINDS.has(k);
}

/** pi and omp report the session file path; everyone else is id-only. */
export function reportsPath(kind: string): boolean {
  return kind === 'pi' || kind === 'omp';
}

export const SHELL_NAMES = new Set(['sh', 'bash', 'dash', 'zsh', 'fish', 'ksh', 'mksh', 'csh', 'tcsh', 'elvish', 'xonsh', 'nu', 'pwsh', 'powershell', 'cmd']);

const WRAPPERS = /^(node|nodejs|bun|python[0-9.]*|sh|bash|zsh|fish)$/;

/** argv0-style name → lowercase basename without .exe/.cmd/.bat/.ps1/.js. */
export function programName(arg0: string): string {
  const base = (arg0.split('/').pop() ?? arg0).toLowerCase();
  return base.replace(/\.(exe|cmd|bat|ps1|js)$/, '');
}

/** The script a wrapper runs (`node /x/claude` → `claude`), or null when it runs none. */
function wrappedScript(argv: readonly string[]): string | null {
  for (const arg of argv.slice(1)) {
    if (['-c', '-e', '--eval', '-m', '-p', '--print'].includes(arg)) return null;
    if (arg.startsWith('-')) continue;
    return programName(arg);
  }
  return null;
}

/** Agent kind of a foreground leader from its argv (or comm), honouring `HERDR_AGENT`. */
export function kindOfProcess(argv: readonly string[], comm: string, herdrAgent: string | undefined): string | null {
  if (herdrAgent) {
    const forced = canonicalKind(herdrAgent);
    if (forced) return forced;
  }
  const name = programName(argv[0] ?? comm);
  if (WRAPPERS.test(name)) {
    const script = wrappedScript(argv);
    return script ? canonicalKind(script) : null;
  }
  return canonicalKind(name) ?? canonicalKind(programName(comm));
}
