// The adapter registry: one entry per agent kind herdr can report and we can move.
import { HandoffError } from '../src/errors.js';
import type { Adapter, AgentKind } from './adapter.js';
import { claude } from './claude.js';
import { codex } from './codex.js';
import { grok } from './grok.js';
import { omp } from './omp.js';
import { pi } from './pi.js';

export * from './adapter.js';
export { claude, claudeFolderName } from './claude.js';
export { codex, rolloutCwd } from './codex.js';
export { grok, grokFolderName } from './grok.js';
export { omp, ompFolderName } from './omp.js';
export { pi, piFolderName } from './pi.js';

export const ADAPTERS: Readonly<Record<AgentKind, Adapter>> = { claude, codex, pi, omp, grok };

/** herdr's spellings of the kinds we support (aliases it reports or accepts). */
const ALIASES: Record<string, AgentKind> = { 'claude-code': 'claude', 'grok-build': 'grok', 'oh-my-pi': 'omp' };

export function isSupportedKind(kind: string): kind is AgentKind {
  return Object.hasOwn(ADAPTERS, kind);
}

/** The adapter for a herdr agent kind, or a `unsupported_agent` error naming the ones we move. */
export function adapterFor(kind: string | null | undefined): Adapter {
  const k = (kind ?? '').toLowerCase();
  const canonical = isSupportedKind(k) ? k : ALIASES[k];
  if (canonical) return ADAPTERS[canonical];
  throw new HandoffError('unsupported_agent', `agent-handoff cannot move a ${kind ?? 'unknown'} agent.`, {
    fix: `Supported agents: ${Object.keys(ADAPTERS).join(', ')}.`,
  });
}
