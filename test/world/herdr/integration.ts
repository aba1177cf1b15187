// `herdr integration status|install|uninstall`: local file operations at herdr's real paths,
// plain-text output. The hook files carry herdr's version marker; fake agents look for them.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { homeDir, type Env } from './paths.js';

const HOOK = 'herdr-agent-state.sh';

export interface Target {
  spelling: string;
  /** Agent kind whose session the hook reports (for the hook body). */
  kind: string;
  version: number;
  file: (env: Env) => string;
}

function root(env: Env, override: string, ...rel: string[]): string {
  const o = env[override];
  return o ? o : path.join(homeDir(env), ...rel);
}

const home = (env: Env, ...rel: string[]): string => path.join(homeDir(env), ...rel);

/** In herdr's order (0.8.0 versions; qwen as listed by 0.8.2). */
export const TARGETS: Target[] = [
  { spelling: 'pi', kind: 'pi', version: 8, file: (e) => path.join(root(e, 'PI_CODING_AGENT_DIR', '.pi', 'agent'), 'extensions', 'herdr-agent-state.ts') },
  { spelling: 'omp', kind: 'omp', version: 8, file: (e) => path.join(root(e, 'PI_CODING_AGENT_DIR', '.omp', 'agent'), 'extensions', 'herdr-omp-agent-state.ts') },
  { spelling: 'claude', kind: 'claude', version: 7, file: (e) => path.join(root(e, 'CLAUDE_CONFIG_DIR', '.claude'), 'hooks', HOOK) },
  { spelling: 'codex', kind: 'codex', version: 7, file: (e) => path.join(root(e, 'CODEX_HOME', '.codex'), HOOK) },
  { spelling: 'copilot', kind: 'copilot', version: 2, file: (e) => home(e, '.copilot', 'hooks', HOOK) },
  { spelling: 'devin', kind: 'devin', version: 2, file: (e) => home(e, '.config', 'devin', HOOK) },
  { spelling: 'droid', kind: 'droid', version: 2, file: (e) => home(e, '.factory', 'hooks', HOOK) },
  { spelling: 'kimi', kind: 'kimi', version: 6, file: (e) => home(e, '.kimi-code', 'hooks', HOOK) },
  { spelling: 'opencode', kind: 'opencode', version: 9, file: (e) => home(e, '.config', 'opencode', 'plugins', 'herdr-agent-state.js') },
  { spelling: 'kilo', kind: 'kilo', version: 4, file: (e) => home(e, '.config', 'kilo', 'plugin', 'herdr-agent-state.js') },
  { spelling: 'hermes', kind: 'hermes', version: 4, file: (e) => home(e, '.hermes', 'plugins', 'herdr-agent-state', '__init__.py') },
  { spelling: 'qodercli', kind: 'qodercli', version: 2, file: (e) => home(e, '.qoder', 'hooks', HOOK) },
  { spelling: 'qwen', kind: 'qwen', version: 1, file: (e) => home(e, '.qwen', 'hooks', 'herdr-agent-session.sh') },
  { spelling: 'cursor', kind: 'cursor', version: 1, file: (e) => home(e, '.cursor', HOOK) },
  { spelling: 'mastracode', kind: 'mastracode', version: 2, file: (e) => home(e, '.mastracode', 'hooks', HOOK) },
  { spelling: 'antigravity-cli', kind: 'agy', version: 1, file: (e) => home(e, '.gemini', 'config', 'hooks', HOOK) },
  { spelling: 'grok', kind: 'grok', version: 1, file: (e) => path.join(root(e, 'GROK_HOME', '.grok'), 'hooks', HOOK) },
];

export function findTarget(word: string): Target | undefined {
  return TARGETS.find((t) => t.spelling === word || (word === 'antigravity_cli' && t.spelling === 'antigravity-cli'));
}

export type InstalledState = { state: 'not_installed' } | { state: 'legacy' } | { state: 'versioned'; version: number };

export function installedVersion(file: string): InstalledState {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return { state: 'not_installed' };
  }
  for (const line of text.split('\n')) {
    const m = /HERDR_INTEGRATION_VERSION=(\d+)/.exec(line);
    if (m) return { state: 'versioned', version: Number(m[1]) };
  }
  return { state: 'legacy' };
}

function statusLine(t: Target, env: Env): { line: string; outdated: boolean } {
  const file = t.file(env);
  const s = installedVersion(file);
  if (s.state === 'not_installed') return { line: `${t.spelling}: not installed (${file})`, outdated: false };
  if (s.state === 'legacy') return { line: `${t.spelling}: legacy (${file})`, outdated: true };
  if (s.version >= t.version) return { line: `${t.spelling}: current (v${s.version}) (${file})`, outdated: false };
  return { line: `${t.spelling}: outdated (v${s.version} < v${t.version}) (${file})`, outdated: true };
}

function joinAnd(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1] ?? ''}`;
}

export interface TextResult {
  stdout: string;
  stderr: string;
  exit: number;
}

export function integrationStatus(outdatedOnly: boolean, env: Env): TextResult {
  const lines = TARGETS.map((t) => ({ t, ...statusLine(t, env) }));
  if (!outdatedOnly) return { stdout: lines.map((l) => `${l.line}\n`).join(''), stderr: '', exit: 0 };
  const stale = lines.filter((l) => l.outdated).map((l) => `herdr integration install ${l.t.spelling}`);
  const stderr = stale.length ? `installed herdr integrations need updating; run ${joinAnd(stale)}.\n` : '';
  return { stdout: '', stderr, exit: 0 };
}

function hookBody(t: Target): string {
  const marker = `HERDR_INTEGRATION_VERSION=${t.version}`;
  const source = t.kind === 'agy' ? 'herdr:antigravity_cli' : `herdr:${t.kind}`;
  const note = `herdr ${t.spelling} integration (herdr simulator stand-in); reports the session via: $HERDR_BIN_PATH pane report-agent-session "$HERDR_PANE_ID" --source ${source} --agent ${t.kind}`;
  if (t.file({ HOME: '/' }).endsWith('.sh')) {
    return `#!/bin/sh\n# ${marker}\n# ${note}\n[ "$HERDR_ENV" = 1 ] || exit 0\nexit 0\n`;
  }
  if (t.file({ HOME: '/' }).endsWith('.py')) return `# ${marker}\n# ${note}\n`;
  return `// ${marker}\n// ${note}\nexport default function herdrAgentState() {}\n`;
}

interface ClaudeSettings {
  hooks?: Record<string, unknown[]>;
  [k: string]: unknown;
}

function readJson(file: string): ClaudeSettings {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as ClaudeSettings) : {};
  } catch {
    return {};
  }
}

function isHerdrEntry(entry: unknown, hookPath: string): boolean {
  return JSON.stringify(entry).includes(JSON.stringify(hookPath).slice(1, -1));
}

export function integrationInstall(t: Target, env: Env): TextResult {
  const file = t.file(env);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, hookBody(t), { mode: 0o755 });
    // pi and omp get an extension (no "hook" in herdr's line); the others a hook script.
    let out = t.kind === 'pi' || t.kind === 'omp' ? `installed ${t.spelling} integration to ${file}\n` : `installed ${t.spelling} integration hook to ${file}\n`;
    if (t.spelling === 'claude') {
      const settingsFile = path.join(path.dirname(path.dirname(file)), 'settings.json');
      const settings = readJson(settingsFile);
      const hooks = settings.hooks ?? {};
      const start = (hooks.SessionStart ?? []).filter((e) => !isHerdrEntry(e, file));
      start.push({ hooks: [{ type: 'command', command: file }] });
      settings.hooks = { ...hooks, SessionStart: start };
      fs.writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
      out += `ensured claude settings at ${settingsFile}\n`;
    }
    if (t.spelling === 'codex') {
      // As herdr 0.8.2 does: its SessionStart entry (the path single-quoted for bash) in hooks.json,
      // the other hooks kept, and hooks turned on in config.toml.
      const hooksFile = path.join(path.dirname(file), 'hooks.json');
      const settings = readJson(hooksFile);
      const hooks = settings.hooks ?? {};
      const start = (hooks.SessionStart ?? []).filter((e) => !isHerdrEntry(e, file));
      start.push({ hooks: [{ command: `bash '${file.replace(/'/g, `'"'"'`)}' session`, timeout: 10, type: 'command' }] });
      settings.hooks = { ...hooks, SessionStart: start };
      fs.writeFileSync(hooksFile, JSON.stringify(settings, null, 2));
      out += `ensured codex hooks at ${hooksFile}\n`;
      const configFile = path.join(path.dirname(file), 'config.toml');
      const config = fs.existsSync(configFile) ? fs.readFileSync(configFile, 'utf8') : '';
      if (!/^\s*hooks\s*=\s*true/m.test(config)) fs.writeFileSync(configFile, `[features]\nhooks = true\n${config ? `\n${config}` : ''}`);
      out += `ensured codex config at ${configFile}\n`;
    }
    return { stdout: out, stderr: '', exit: 0 };
  } catch (err) {
    return { stdout: '', stderr: `failed to install ${t.spelling} integration: ${(err as Error).message}\n`, exit: 1 };
  }
}

export function integrationUninstall(t: Target, env: Env): TextResult {
  const file = t.file(env);
  try {
    if (!fs.existsSync(file)) return { stdout: `${t.spelling} integration not installed (${file})\n`, stderr: '', exit: 0 };
    fs.rmSync(file, { force: true });
    let out = `removed ${t.spelling} integration hook from ${file}\n`;
    if (t.spelling === 'claude') {
      const settingsFile = path.join(path.dirname(path.dirname(file)), 'settings.json');
      if (fs.existsSync(settingsFile)) {
        const settings = readJson(settingsFile);
        const start = (settings.hooks?.SessionStart ?? []).filter((e) => !isHerdrEntry(e, file));
        if (settings.hooks) settings.hooks.SessionStart = start;
        fs.writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`);
        out += `cleaned claude settings at ${settingsFile}\n`;
      }
    }
    if (t.spelling === 'codex') {
      const hooksFile = path.join(path.dirname(file), 'hooks.json');
      if (fs.existsSync(hooksFile)) {
        const settings = readJson(hooksFile);
        const start = (settings.hooks?.SessionStart ?? []).filter((e) => !isHerdrEntry(e, file));
        const hooks = { ...(settings.hooks ?? {}) };
        if (start.length > 0) hooks.SessionStart = start;
        else delete hooks.SessionStart;
        fs.writeFileSync(hooksFile, JSON.stringify({ ...settings, hooks }, null, 2));
        out += `removed herdr codex hook entries from ${hooksFile}\n`;
      }
    }
    return { stdout: out, stderr: '', exit: 0 };
  } catch (err) {
    return { stdout: '', stderr: `failed to uninstall ${t.spelling} integration: ${(err as Error).message}\n`, exit: 1 };
  }
}
