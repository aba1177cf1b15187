// The fake Codex's hooks, as real codex 0.171 keeps them (measured against it): command hooks
// in <root>/hooks.json ({"hooks":{"<Event>":[{"matcher"?, "hooks":[{type, command, timeout?,
// async?, statusMessage?}]}]}}), each keyed `<hooks.json>:<event_label>:<group>:<handler>` and
// trusted by a `[hooks.state."<key>"]` table with `trusted_hash` in config.toml. The hash is
// codex's: sha256 over the compact JSON, keys sorted, of {event_name, matcher (when given),
// hooks: [the handler with timeout defaulted to 600 (at least 1) and async to false]}, so the
// fake and the real CLI agree on each other's trust in the world's shared homes. Node built-ins only.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writePrivate } from './files.js';

export type HookTrustStatus = 'trusted' | 'untrusted' | 'modified';

export interface FakeHook {
  key: string;
  /** hooks.json's spelling (`SessionStart`). */
  event: string;
  /** codex's label in keys and hashes (`session_start`). */
  label: string;
  /** hooks/list's spelling (`sessionStart`). */
  eventName: string;
  matcher: string | null;
  command: string;
  timeoutSec: number;
  async: boolean;
  statusMessage: string | null;
  sourcePath: string;
  currentHash: string;
  trust: HookTrustStatus;
  enabled: boolean;
}

const snake = (event: string) => event.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
const camel = (event: string) => event.charAt(0).toLowerCase() + event.slice(1);

/** JSON with every object's keys sorted, no white space (codex's canonical form). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** codex's trust hash of one command hook. */
export function hookHash(h: { label: string; matcher: string | null; command: string; timeoutSec: number; async: boolean; statusMessage: string | null }): string {
  const handler: Record<string, unknown> = { type: 'command', command: h.command, timeout: h.timeoutSec, async: h.async };
  if (h.statusMessage !== null) handler.statusMessage = h.statusMessage;
  const identity: Record<string, unknown> = { event_name: h.label, hooks: [handler] };
  if (h.matcher !== null) identity.matcher = h.matcher;
  return `sha256:${createHash('sha256').update(canonical(identity)).digest('hex')}`;
}

interface HookState {
  trustedHash?: string;
  enabled?: boolean;
}

/** The `[hooks.state."<key>"]` tables of a config.toml (only the forms codex writes). */
export function hookStates(configText: string): Map<string, HookState> {
  const out = new Map<string, HookState>();
  let current: HookState | undefined;
  for (const line of configText.split('\n')) {
    const h = /^\s*\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*\]\s*(#.*)?$/.exec(line);
    if (h) {
      const q = h[1]!;
      const key = q.startsWith('"') ? (JSON.parse(q) as string) : q.slice(1, -1);
      current = out.get(key) ?? {};
      out.set(key, current);
      continue;
    }
    if (/^\s*\[/.test(line)) {
      current = undefined;
      continue;
    }
    const hash = /^\s*trusted_hash\s*=\s*"([^"]*)"\s*(#.*)?$/.exec(line);
    if (current && hash) current.trustedHash = hash[1];
    const enabled = /^\s*enabled\s*=\s*(true|false)\s*(#.*)?$/.exec(line);
    if (current && enabled) current.enabled = enabled[1] === 'true';
  }
  return out;
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

interface HooksFile {
  hooks?: Record<string, { matcher?: unknown; hooks?: unknown[] }[]>;
}

/** The command hooks of <root>/hooks.json with their trust in <root>/config.toml, in hooks/list order. */
export function listHooks(root: string): FakeHook[] {
  const sourcePath = path.join(root, 'hooks.json');
  let parsed: HooksFile;
  try {
    parsed = JSON.parse(fs.readFileSync(sourcePath, 'utf8')) as HooksFile;
  } catch {
    return [];
  }
  const states = hookStates(readText(path.join(root, 'config.toml')));
  const out: FakeHook[] = [];
  for (const [event, groups] of Object.entries(parsed.hooks ?? {})) {
    if (!Array.isArray(groups)) continue;
    groups.forEach((group, g) => {
      const matcher = typeof group.matcher === 'string' ? group.matcher : null;
      (Array.isArray(group.hooks) ? group.hooks : []).forEach((raw, i) => {
        const hk = (raw ?? {}) as Record<string, unknown>;
        if (hk.type !== 'command' || typeof hk.command !== 'string' || hk.command.trim() === '') return;
        const label = snake(event);
        const timeoutSec = Math.max(1, typeof hk.timeout === 'number' ? hk.timeout : 600);
        const def = { label, matcher, command: hk.command, timeoutSec, async: hk.async === true, statusMessage: typeof hk.statusMessage === 'string' ? hk.statusMessage : null };
        const key = `${sourcePath}:${label}:${g}:${i}`;
        const currentHash = hookHash(def);
        const state = states.get(key);
        const trust: HookTrustStatus = state?.trustedHash === undefined ? 'untrusted' : state.trustedHash === currentHash ? 'trusted' : 'modified';
        out.push({ ...def, key, event, eventName: camel(event), sourcePath, currentHash, trust, enabled: state?.enabled !== false });
      });
    });
  }
  return out.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
}

/** Hooks the review screen asks about: enabled and not trusted as they are now. */
export function needingReview(root: string): FakeHook[] {
  return listHooks(root).filter((h) => h.enabled && h.trust !== 'trusted');
}

/** Record these hooks as trusted in <root>/config.toml, as codex does (an existing table gets its hash replaced). */
export function trustHooks(root: string, hooks: readonly Pick<FakeHook, 'key' | 'currentHash'>[]): void {
  const file = path.join(root, 'config.toml');
  let text = readText(file);
  for (const h of hooks) {
    const header = `[hooks.state.${JSON.stringify(h.key)}]`;
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.trim() === header);
    const value = `trusted_hash = ${JSON.stringify(h.currentHash)}`;
    if (at >= 0) {
      let end = at + 1;
      while (end < lines.length && !/^\s*\[/.test(lines[end]!)) end++;
      const old = lines.slice(at + 1, end).findIndex((l) => /^\s*trusted_hash\s*=/.test(l));
      if (old >= 0) lines[at + 1 + old] = value;
      else lines.splice(at + 1, 0, value);
      text = lines.join('\n');
    } else {
      text = `${text}${text && !text.endsWith('\n') ? '\n' : ''}\n${header}\n${value}\n`;
    }
  }
  if (fs.existsSync(file)) fs.writeFileSync(file, text);
  else writePrivate(file, text);
}

/** Does herdr's hook (the one that runs `script`) run: enabled and trusted? */
export function hookRuns(root: string, script: string): boolean {
  const quoted = script.replace(/'/g, `'"'"'`); // herdr's single-quoting of the path
  return listHooks(root).some((h) => (h.command.includes(script) || h.command.includes(quoted)) && h.enabled && h.trust === 'trusted');
}
