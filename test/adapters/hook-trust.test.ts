// The decision to carry the trust of herdr's hook, or to leave it to the user: only an untrusted
// herdr hook on the target, trusted at the source as the very same hook (its definition with the
// target's path, the same script bytes), gets the agent's own trust entry.
import { describe, expect, it } from 'vitest';
import { planHookTrust, runsScript, type HerdrHook, type HookLook } from '../../adapters/hook-trust.js';

const SCRIPT_SHA = 'f'.repeat(64);

function lookAt(home: string, hook: Partial<HerdrHook> | null, extra: Partial<HookLook> = {}): HookLook {
  const root = `${home}/.codex`;
  const script = `${root}/herdr-agent-state.sh`;
  return {
    root,
    script,
    scriptSha256: SCRIPT_SHA,
    problem: null,
    hook:
      hook === null
        ? null
        : {
            key: `${root}/hooks.json:session_start:0:0`,
            event: 'sessionStart',
            matcher: null,
            command: `bash '${script}' session`,
            timeoutSec: 10,
            async: false,
            statusMessage: null,
            enabled: true,
            currentHash: `sha256:${home === '/home/vega' ? 'a'.repeat(64) : 'b'.repeat(64)}`,
            trust: 'untrusted',
            ...hook,
          },
    ...extra,
  };
}

const labels = { source: 'laptop', target: 'vega' };
const trusted = lookAt('/home/laptop', { trust: 'trusted' });
const fresh = lookAt('/home/vega', {});

describe('planHookTrust', () => {
  it('carries the source trust to the same hook on the target: the target key and the hash codex gave there', () => {
    expect(planHookTrust(trusted, fresh, labels)).toEqual({ action: 'trust', key: '/home/vega/.codex/hooks.json:session_start:0:0', hash: `sha256:${'a'.repeat(64)}` });
  });

  it.each<[string, HookLook, HookLook, { action: string; status?: string; reason?: RegExp }]>([
    ['the target trusts it already', trusted, lookAt('/home/vega', { trust: 'trusted' }), { action: 'nothing', status: 'already_trusted' }],
    ['the target hook is managed', trusted, lookAt('/home/vega', { trust: 'managed' }), { action: 'nothing', status: 'already_trusted' }],
    ['the target lists no herdr hook', trusted, lookAt('/home/vega', null), { action: 'nothing', status: 'no_hook' }],
    ['the source does not trust it', lookAt('/home/laptop', {}), fresh, { action: 'leave', reason: /agent on laptop does not trust herdr's hook \(untrusted\)/ }],
    ['the source trusted an older hook', lookAt('/home/laptop', { trust: 'modified' }), fresh, { action: 'leave', reason: /does not trust herdr's hook \(modified\)/ }],
    ['the source has no herdr hook', lookAt('/home/laptop', null), fresh, { action: 'leave', reason: /not set up for the agent on laptop/ }],
    ['the source could not be asked', lookAt('/home/laptop', null, { problem: 'codex is not on the login PATH' }), fresh, { action: 'leave', reason: /could not ask the agent on laptop .*codex is not on the login PATH/ }],
    ['the target could not be asked', trusted, lookAt('/home/vega', null, { problem: 'exit 1' }), { action: 'leave', reason: /could not ask the agent on vega/ }],
    ['the target trusted an earlier version', trusted, lookAt('/home/vega', { trust: 'modified' }), { action: 'leave', reason: /earlier version/ }],
    ['the target turned it off', trusted, lookAt('/home/vega', { enabled: false }), { action: 'leave', reason: /turned off on vega/ }],
    ['another timeout', trusted, lookAt('/home/vega', { timeoutSec: 30 }), { action: 'leave', reason: /definition differs/ }],
    ['another event', trusted, lookAt('/home/vega', { event: 'userPromptSubmit' }), { action: 'leave', reason: /definition differs/ }],
    ['a matcher', trusted, lookAt('/home/vega', { matcher: 'startup' }), { action: 'leave', reason: /definition differs/ }],
    ['another command around the script', trusted, lookAt('/home/vega', { command: "bash '/home/vega/.codex/herdr-agent-state.sh' session --extra" }), { action: 'leave', reason: /definition differs/ }],
    ['another script', trusted, lookAt('/home/vega', {}, { scriptSha256: 'e'.repeat(64) }), { action: 'leave', reason: /script on vega differs/ }],
    ['no script on the target', trusted, lookAt('/home/vega', {}, { scriptSha256: null }), { action: 'leave', reason: /script on vega differs/ }],
    ['no script at the source', lookAt('/home/laptop', { trust: 'trusted' }, { scriptSha256: null }), fresh, { action: 'leave', reason: /script on vega differs/ }],
    ['a hash we do not recognise', trusted, lookAt('/home/vega', { currentHash: 'md5:x' }), { action: 'leave', reason: /no hash for herdr's hook/ }],
  ])('%s: not carried', (_what, source, target, want) => {
    const plan = planHookTrust(source, target, labels);
    expect(plan.action).toBe(want.action);
    if (plan.action === 'nothing') expect(plan.status).toBe(want.status);
    if (plan.action === 'leave') expect(plan.reason).toMatch(want.reason!);
  });

  it('compares the command with each machine own script path, wherever the homes are', () => {
    const odd = lookAt("/home/it's here", {});
    expect(planHookTrust(trusted, odd, labels)).toMatchObject({ action: 'trust', key: "/home/it's here/.codex/hooks.json:session_start:0:0" });
  });
});

describe('herdr quoting of the script path', () => {
  it('finds the script in a command herdr 0.8.2 wrote for a home with a quote, and compares across machines', () => {
    const odd = lookAt("/home/it's", {});
    odd.hook!.command = `bash '/home/it'"'"'s/.codex/herdr-agent-state.sh' session`;
    expect(runsScript(odd.hook!.command, odd.script)).toBe(true);
    expect(runsScript('bash /elsewhere/herdr-agent-state.sh session', odd.script)).toBe(false);
    expect(planHookTrust(trusted, odd, labels)).toMatchObject({ action: 'trust' });
  });
});
