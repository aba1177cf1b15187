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
    expect(usage({ agent: 'a', here: true, from: 'vega', newWorktree: true })).toMatch(/cannot be combined with --from/);
    expect(usage({ agent: ['a', 'b', 'vega'], all: true })).toMatch(/--all chooses the agents itself/);
    expect(usage({ agent: ['vega'], workspace: 'w1', here: true })).toMatch(/takes no target/);
    expect(usage({ agent: ['vega'], workspace: 'w1', all: true })).toMatch(/give one/);
    expect(usage({ agent: ['a', 'b', 'vega'], name: 'x' })).toMatch(/--name names one agent/);
    expect(usage({ agent: ['a', 'b', 'vega'], session: 'abc' })).toMatch(/--session names the session of one agent/);
    expect(usage({ agent: [] })).toMatch(/Name the agent/);
    expect(usage({ agent: 'a', target: 'vega', newWorktree: true })).toMatch(/--new-worktree only/);
    expect(usage({ agent: 'a', target: 'vega', from: 'vega' })).toMatch(/same host/);
    expect(usage({ agent: 'a', target: 'vega', waitTimeout: 0 })).toMatch(/--wait-timeout must be/);
    expect(usage({ agent: 'a', target: 'vega', waitTimeout: 'abc' })).toMatch(/--wait-timeout must be/);
    expect(usage({ agent: 'a', target: 'vega', name: 'Bad Name' })).toMatch(/not a valid herdr agent name/);
    expect(usage({ target: 'vega' })).toMatch(/Name the agent/);
  });
  it('reads the words of a batch: the agents, then the target', () => {
    const words = (raw: Record<string, unknown>) => {
      const o = parseSendOptions(raw);
      return { agents: o.agents, target: o.target, here: o.here, from: o.from, all: o.all, workspace: o.workspace };
    };
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ agent: ['a', 'vega'] }, { agents: ['a'], target: 'vega' }],
      [{ agent: ['a', 'b', 'c', 'vega'] }, { agents: ['a', 'b', 'c'], target: 'vega' }],
      [{ agent: ['a', 'a', 'vega'] }, { agents: ['a'], target: 'vega' }],
      // --here: every word is an agent.
      [{ agent: ['a', 'b'], here: true }, { agents: ['a', 'b'], target: null, here: true }],
      // --from: one word is the agent brought here; with more, the last is the target.
      [{ agent: ['a'], from: 'vega' }, { agents: ['a'], target: null, from: 'vega' }],
      [{ agent: ['a', 'laptop'], from: 'vega' }, { agents: ['a'], target: 'laptop', from: 'vega' }],
      // --from with --here: every word is an agent, brought to this machine.
      [{ agent: ['a', 'b'], from: 'vega', here: true }, { agents: ['a', 'b'], target: null, here: false, from: 'vega' }],
      [{ agent: ['vega'], all: true }, { agents: [], target: 'vega', all: true }],
      [{ agent: [], all: true, from: 'vega' }, { agents: [], target: null, all: true, from: 'vega' }],
      [{ agent: ['vega'], workspace: 'w1' }, { agents: [], target: 'vega', workspace: 'w1' }],
      [{ agent: [], workspace: 'w1', here: true }, { agents: [], target: null, workspace: 'w1', here: true }],
    ];
    for (const [raw, want] of cases) expect(words(raw), JSON.stringify(raw)).toMatchObject(want);
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
