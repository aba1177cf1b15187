import { describe, expect, it } from 'vitest';
import { renderHistory, renderShow } from '../../src/render/history.js';
import type { JournalSummary } from '../../src/handoff/journal.js';

const ok: JournalSummary = { batch: null, id: '20261130-191926-459627269bc3c03c', time: '2026-11-30T19:19:26.123Z', agent: 'api-claude', kind: 'claude', from: 'local', to: 'vega', outcome: 'succeeded', step: 'stash', failed_step: null, error: null };
const bad: JournalSummary = { ...ok, id: '20261130-201010-aaaa', time: '2026-11-30T20:10:10.000Z', outcome: 'rolled_back', failed_step: 'start', error: 'The agent did not start.' };

describe('renderHistory and renderShow', () => {
  it('history is a table, newest as given', () => {
    const text = renderHistory({ state_dir: '/home/me/.local/state/agent-handoff', handoffs: [bad, ok] }, { color: false, home: '/home/me' });
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+STARTED\s+AGENT\s+FROM → TO\s+OUTCOME\s+FAILED AT$/);
    expect(lines[1]).toMatch(/^20261130-201010-aaaa\s+2026-11-30 20:10:10\s+api-claude \(claude\)\s+local → vega\s+rolled back\s+start$/);
    expect(lines[2]).toMatch(/^20261130-191926-459627269bc3c03c\s+2026-11-30 19:19:26\s+api-claude \(claude\)\s+local → vega\s+succeeded$/);
  });
  it('an empty history says where the journals are', () => {
    expect(renderHistory({ state_dir: '/home/me/.local/state/agent-handoff', handoffs: [] }, { color: false, home: '/home/me' })).toBe('No handoffs yet (journals in ~/.local/state/agent-handoff).\n');
  });
  it('show: the handoff, then its events as a table', () => {
    const events = [
      { t: '2026-11-30T20:10:10.000Z', type: 'header' as const, data: { agent: 'api-claude', kind: 'claude', from: 'local', to: 'vega' } },
      { t: '2026-11-30T20:10:11.000Z', type: 'begin' as const, step: 'start' },
      { t: '2026-11-30T20:10:12.000Z', type: 'failed' as const, step: 'start', data: { error: 'The agent did not start.' } },
      { t: '2026-11-30T20:10:13.000Z', type: 'outcome' as const, data: { outcome: 'rolled_back' } },
    ];
    const text = renderShow({ handoff: bad, events }, { color: false, home: '/home/me' });
    expect(text).toMatch(/^20261130-201010-aaaa {2}api-claude \(claude\) {2}local → vega {2}rolled back$/m);
    expect(text).toContain('error: The agent did not start. (at start)');
    expect(text).toMatch(/^TIME\s+EVENT\s+STEP\s+DETAIL$/m);
    expect(text).toMatch(/^20:10:12\s+failed\s+start\s+The agent did not start\.$/m);
    expect(text).toMatch(/^20:10:13\s+outcome\s+rolled_back$/m);
  });
});
