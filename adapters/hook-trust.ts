// Carrying the trust of herdr's own hook: an agent that holds a new hook for review (codex 0.171:
// "Hooks need review") would stop the resumed agent at that screen, and herdr would never learn its
// session. When the source's agent already trusts herdr's hook, and the target's is the same hook
// (same definition with the target's path, same script bytes), that trust is written on the target
// for herdr's entry alone, as the folder trust is answered. Anything else is left to the user,
// with the keys that answer the screen. The decision here is pure; the agent's programs are in
// its own module (codex-hooks.ts).
import type { Host } from '../src/host/host.js';
import type { SideCtx } from './adapter.js';

/** How the agent judges a hook against what its config says was trusted. */
export type HookTrustStatus = 'trusted' | 'untrusted' | 'modified' | 'managed';

/** herdr's hook as one machine's agent sees it. */
export interface HerdrHook {
  /** The agent's own name for the hook's trust entry. */
  key: string;
  event: string;
  matcher: string | null;
  command: string;
  timeoutSec: number;
  async: boolean;
  statusMessage: string | null;
  enabled: boolean;
  /** What the agent would record as trusted for the hook as it is now. */
  currentHash: string;
  trust: HookTrustStatus;
}

/** One machine's look at herdr's hook: its script, and the agent's own answer about it. */
export interface HookLook {
  /** The agent's config root there. */
  root: string;
  /** herdr's hook script (its absolute path appears in the hook's command). */
  script: string;
  /** sha256 of the script's bytes, or null when it is not there. */
  scriptSha256: string | null;
  /** herdr's hook, or null when the agent lists none. */
  hook: HerdrHook | null;
  /** Why the agent could not be asked (then `hook` is null), or null. */
  problem: string | null;
}

/** What the handoff does about herdr's hook on the target. */
export type HookTrustPlan =
  | { action: 'nothing'; status: 'already_trusted' | 'no_hook' }
  | { action: 'trust'; key: string; hash: string }
  | { action: 'leave'; reason: string };

export type HookTrustStatusOut = 'carried' | 'already_trusted' | 'no_hook' | 'left_for_user';

/** What came of it, for the result. */
export interface HookTrustOutcome {
  status: HookTrustStatusOut;
  /** One sentence for the person: what was done, or why it was left to them. */
  detail: string;
  /** left_for_user: what the agent's review screen asks and the keys that answer it. */
  help: string | null;
}

/** A trust entry written on the target, journaled before it is written: its undo removes exactly these lines. */
export interface HookTrustWrite {
  agentKind: string;
  file: string;
  lines: string[];
  /** The temp-name tag of the write (a crash may leave `.<file>.ah-<tag>.tmp`). */
  tag: string;
}

export interface HookTrustRequest {
  target: Host;
  ctx: SideCtx;
  /** The agent's cwd on the target. */
  cwd: string;
  /** The source's look (asked beside the quit). */
  source: HookLook;
  /** The target's look taken beside the quit, when herdr's integration there was left as it was since; else null. */
  early: Promise<HookLook | null> | null;
  sourceLabel: string;
  /** The handoff's temp-name tag. */
  tag: string;
  /** False with --no-trust: nothing is written, the review is left to the user. */
  allowed: boolean;
  /** Journals the write before it is made. */
  journal: (write: HookTrustWrite) => void;
}

/** An agent kind whose hooks need trust before they run. */
export interface HookTrust {
  /** herdr's hook as the agent sees it on a machine (read-only). */
  look(host: Host, ctx: SideCtx, cwd: string): Promise<HookLook>;
  /** On the target, after herdr's integration is in place: carry the source's trust, or say why not. */
  carry(req: HookTrustRequest): Promise<HookTrustOutcome>;
  /** Remove a trust entry this handoff wrote (rollback, recover). */
  undo(host: Host, write: HookTrustWrite): Promise<void>;
}

export const SHA256_HASH = /^sha256:[0-9a-f]{64}$/;

/** How a hook command may name the script: as herdr 0.8.2 single-quotes it (`'` as `'"'"'`), or as it is. */
export function scriptSpellings(script: string): string[] {
  const quoted = script.replace(/'/g, `'"'"'`);
  return quoted === script ? [script] : [quoted, script];
}

/** Does this hook command run herdr's script? */
export function runsScript(command: string, script: string): boolean {
  return scriptSpellings(script).some((s) => command.includes(s));
}

/** The hook definition with the machine's script path taken out, for comparing across machines. */
function definition(look: HookLook): string {
  const h = look.hook!;
  const command = scriptSpellings(look.script).reduce((c, s) => c.split(s).join('\0'), h.command);
  return JSON.stringify([h.event, h.matcher, command, h.timeoutSec, h.async, h.statusMessage]);
}

/**
 * Carry, or not: only an untrusted herdr hook on the target, when the source's agent trusts the
 * very same hook (definition and script bytes), gets the entry the agent itself would write.
 */
export function planHookTrust(source: HookLook, target: HookLook, labels: { source: string; target: string }): HookTrustPlan {
  const t = target.hook;
  if (target.problem) return { action: 'leave', reason: `could not ask the agent on ${labels.target} about herdr's hook (${target.problem})` };
  if (!t) return { action: 'nothing', status: 'no_hook' };
  if (t.trust === 'trusted' || t.trust === 'managed') return { action: 'nothing', status: 'already_trusted' };
  if (t.trust === 'modified') return { action: 'leave', reason: `the agent on ${labels.target} trusted an earlier version of herdr's hook; only you can trust this one` };
  if (!t.enabled) return { action: 'leave', reason: `herdr's hook is turned off on ${labels.target}` };
  if (source.problem) return { action: 'leave', reason: `could not ask the agent on ${labels.source} whether it trusts herdr's hook (${source.problem})` };
  const s = source.hook;
  if (!s) return { action: 'leave', reason: `herdr's hook is not set up for the agent on ${labels.source}, so there is no trust to carry` };
  if (s.trust !== 'trusted') return { action: 'leave', reason: `the agent on ${labels.source} does not trust herdr's hook (${s.trust}), so there is no trust to carry` };
  if (definition(source) !== definition(target)) return { action: 'leave', reason: `herdr's hook on ${labels.target} is not the one trusted on ${labels.source} (its definition differs)` };
  if (!source.scriptSha256 || source.scriptSha256 !== target.scriptSha256) {
    return { action: 'leave', reason: `herdr's hook script on ${labels.target} differs from the one trusted on ${labels.source} (another herdr version?)` };
  }
  if (!SHA256_HASH.test(t.currentHash)) return { action: 'leave', reason: `the agent on ${labels.target} gave no hash for herdr's hook that we recognise` };
  return { action: 'trust', key: t.key, hash: t.currentHash };
}
