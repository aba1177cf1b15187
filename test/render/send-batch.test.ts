import { describe, expect, it } from 'vitest';
import { renderSendBatch } from '../../src/render/send-batch.js';
import { renderForPerson } from '../../src/render/index.js';
import { SendBatchResult } from '../../src/commands/send-batch.js';

const moved = (name: string, worktree: string, pane: string) => ({
  agent: name,
  pane: `w1:${pane}`,
  kind: 'pi',
  outcome: 'moved' as const,
  handoff: `20261202-091500-aaaa-${pane}`,
  result: { ok: true as const, command: 'send' as const, dry_run: false, deferred: false, target_worktree: worktree, target_agent: { name, pane: `w9:${pane}`, workspace: 'w9' } },
  error: null,
});

const partial: SendBatchResult = SendBatchResult.parse({
  ok: false,
  command: 'send',
  batch: '20261202-091500-aaaa',
  dry_run: false,
  deferred: false,
  code: 'batch_incomplete',
  error: '1 of 3 agents did not move: web-pi (start_failed).',
  fix: 'Each entry of `agents` with an error says why and what to do.',
  source: { host: 'local', address: 'local' },
  target: { host: 'vega', address: 'vega@10.0.0.2' },
  summary: { chosen: 3, moved: 2, planned: 0, failed: 1, refused: 0 },
  checkouts: [
    { repo: '/home/me/src/api', agents: ['api-pi', 'api-omp'], target_worktree: '/home/vega/code/api', stashed: true },
    { repo: '/home/me/src/web', agents: ['web-pi'], target_worktree: null, stashed: null },
  ],
  agents: [
    moved('api-pi', '/home/vega/code/api', 'p1'),
    moved('api-omp', '/home/vega/code/api', 'p2'),
    { agent: 'web-pi', pane: 'w2:p1', kind: 'pi', outcome: 'failed', handoff: '20261202-091500-aaaa-3', result: null, error: { code: 'start_failed', error: 'The pi agent exited on the target right after starting.', fix: 'Read its last output.' } },
  ],
  ms: 14_200,
});

describe('renderSendBatch', () => {
  it('a table of who went where, what they share, and what did not go with its fix', () => {
    const text = renderSendBatch(partial, { color: false, home: '/home/me' });
    const lines = text.split('\n');
    expect(lines[0]).toBe('2 of 3 agents moved local → vega; 1 did not.');
    expect(text).toMatch(/^AGENT\s+KIND\s+OUTCOME\s+WORKTREE\s+DETAIL$/m);
    expect(text).toMatch(/^api-pi\s+pi\s+moved\s+\/home\/vega\/code\/api\s+pane w9:p1$/m);
    expect(text).toMatch(/^web-pi\s+pi\s+failed\s+start_failed$/m);
    expect(text).toContain('api-pi, api-omp share ~/src/api: one snapshot, one placement, one stash.');
    expect(text).toContain('web-pi: The pi agent exited on the target right after starting.');
    expect(text).toContain('  fix: Read its last output.');
    expect(text).toContain('agent-handoff show 20261202-091500-aaaa');
  });
  it('renderForPerson shows a batch as its table even when not every agent moved (ok: false)', () => {
    expect(renderForPerson(partial, { color: false, home: '/home/me' })).toBe(renderSendBatch(partial, { color: false, home: '/home/me' }));
  });
  it('all moved: one line that says so, with the time', () => {
    const ok = { ...partial, ok: true, code: undefined, error: undefined, fix: undefined, summary: { chosen: 2, moved: 2, planned: 0, failed: 0, refused: 0 }, agents: partial.agents.slice(0, 2) };
    expect(renderSendBatch(ok, { color: false, home: '/home/me' }).split('\n')[0]).toBe('✓ 2 agents moved local → vega in 14 s.');
  });
});
