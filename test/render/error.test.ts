import { describe, expect, it } from 'vitest';
import { errorResult } from '../../src/result.js';
import { UsageError, HandoffError } from '../../src/errors.js';
import { renderError } from '../../src/render/error.js';
import { renderForPerson } from '../../src/render/index.js';

describe('renderError', () => {
  it('error: and fix: lines', () => {
    const { result } = errorResult('send', new UsageError('No target given.', 'Pass a TARGET, or --here.'));
    expect(renderError(result, { color: false, home: '/h' })).toBe('error: No target given. (usage)\nfix:   Pass a TARGET, or --here.\n');
  });
  it('a failed step and what was undone', () => {
    const { result } = errorResult('send', new HandoffError('start_failed', 'The agent did not start.', { fix: 'Log in there.', details: { failed_step: 'start', undone: ['placement', 'session copy'] } }));
    const text = renderForPerson(result, { color: false, home: '/h' });
    expect(text).toContain('error: The agent did not start. (start_failed)');
    expect(text).toContain('fix:   Log in there.');
    expect(text).toContain('step:  start');
    expect(text).toContain('undone: placement, session copy');
  });
  it('other results: version in words, help as its text, anything else as indented JSON', () => {
    expect(renderForPerson({ ok: true, command: 'version', version: '0.1.0' }, { color: false, home: '/h' })).toBe('agent-handoff 0.1.0\n');
    expect(renderForPerson({ ok: true, command: 'help', usage: 'agent-handoff [command]\n\n' }, { color: false, home: '/h' })).toBe('agent-handoff [command]\n');
    expect(renderForPerson({ ok: true, command: 'recover', recovered: [] }, { color: false, home: '/h' })).toBe('{\n  "ok": true,\n  "command": "recover",\n  "recovered": []\n}\n');
  });
});
