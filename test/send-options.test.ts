import { describe, expect, it } from 'vitest';
import { parseSendOptions } from '../src/handoff/options.js';
import { UsageError } from '../src/errors.js';

function usage(raw: Record<string, unknown>): string {
  try {
    parseSendOptions(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as UsageError).message;
  }
  throw new Error('expected a usage error');
}

describe('send options', () => {
  it('fills defaults and keeps agent args after --', () => {
    const o = parseSendOptions({ agent: 'rev', target: 'vega', '--': ['--model', 'x y'] });
    expect(o).toMatchObject({ agent: 'rev', target: 'vega', waitTimeoutS: 1800, timeoutS: 120, focus: true, trust: true, agentArgs: ['--model', 'x y'] });
  });
  it('reads --no-focus and --no-trust', () => {
    expect(parseSendOptions({ agent: 'a', target: 't', focus: false, trust: false })).toMatchObject({ focus: false, trust: false });
  });
  it('refuses the combinations the contract forbids', () => {
    expect(usage({ agent: 'a' })).toMatch(/No target/);
    expect(usage({ agent: 'a', target: 'vega', here: true })).toMatch(/takes no target/);
    expect(usage({ agent: 'a', here: true, from: 'vega' })).toMatch(/cannot be combined/);
    expect(usage({ agent: 'a', target: 'vega', newWorktree: true })).toMatch(/--new-worktree only/);
    expect(usage({ agent: 'a', target: 'vega', from: 'vega' })).toMatch(/same host/);
    expect(usage({ agent: 'a', target: 'vega', waitTimeout: 0 })).toMatch(/--wait-timeout must be/);
    expect(usage({ agent: 'a', target: 'vega', waitTimeout: 'abc' })).toMatch(/--wait-timeout must be/);
    expect(usage({ agent: 'a', target: 'vega', name: 'Bad Name' })).toMatch(/not a valid herdr agent name/);
    expect(usage({ target: 'vega' })).toMatch(/Name the agent/);
  });
  it('accepts --from alone (bring the agent here) and --here alone', () => {
    expect(parseSendOptions({ agent: 'a', from: 'vega' })).toMatchObject({ from: 'vega', target: null });
    expect(parseSendOptions({ agent: 'a', here: true, newWorktree: true })).toMatchObject({ here: true, newWorktree: true });
  });
});

describe('hand-off brief options', () => {
  it('--focus TEXT is the brief; --no-focus stays the workspace flag', () => {
    expect(parseSendOptions({ agent: 'a', target: 't', focus: 'fix it', doneWhen: 'green' })).toMatchObject({ focus: true, briefFocus: 'fix it', doneWhen: 'green' });
    expect(parseSendOptions({ agent: 'a', target: 't', focus: false })).toMatchObject({ focus: false, briefFocus: null });
    expect(parseSendOptions({ agent: 'a', target: 't', focus: false, briefFocus: 'x' })).toMatchObject({ focus: false, briefFocus: 'x' });
  });
  it('refuses --brief together with --focus TEXT or --done-when', () => {
    expect(() => parseSendOptions({ agent: 'a', target: 't', brief: 'b', doneWhen: 'd' })).toThrow(/--brief replaces/);
  });
});
