import { describe, expect, it } from 'vitest';
import { ListResult } from '../../src/result.js';
import { renderList, sessionPrefix } from '../../src/render/list.js';

const result = ListResult.parse({
  ok: true,
  command: 'list',
  host: 'local',
  address: 'local',
  agents: [
    { target: 'api-claude', name: 'api-claude', pane: 'w1:p1', workspace: 'w1', kind: 'claude', status: 'idle', cwd: '/home/me/src/api', session: { kind: 'id', value: '0199f3c2-5d1e-7a40-9b11-2f6c0c7d8e01', source: 'herdr' }, supported: true, this_pane: false, moved: null },
    { target: 'w2:p1', name: null, pane: 'w2:p1', workspace: 'w2', kind: 'pi', status: 'working', cwd: '/srv/other', session: { kind: 'path', value: '/home/me/.pi/agent/sessions/x/2026-12-01T23-02-32-716Z_01a233d8-720c-763f.jsonl', source: 'herdr' }, supported: true, this_pane: true, moved: null },
    { target: 'shell-thing', name: 'shell-thing', pane: 'w3:p1', workspace: 'w3', kind: 'aider', status: 'unknown', cwd: null, session: null, supported: false, this_pane: false, moved: { to: 'vega', path: '/x', at: '2026-12-01T10:00:00Z', handoff: 'h1' } },
  ],
});

describe('renderList', () => {
  it('is an aligned table: target, kind, status, cwd with ~, session prefix, movable', () => {
    const text = renderList(result, { color: false, home: '/home/me' });
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('Agents on local:');
    expect(lines[1]).toMatch(/^TARGET\s+KIND\s+STATUS\s+CWD\s+SESSION\s+MOVABLE$/);
    expect(lines[2]).toMatch(/^api-claude\s+claude\s+idle\s+~\/src\/api\s+0199f3c2\s+yes$/);
    expect(lines[3]).toMatch(/^w2:p1 \(this pane\)\s+pi\s+working\s+\/srv\/other\s+01a233d8\s+yes$/);
    expect(lines[4]).toMatch(/^shell-thing\s+aider\s+unknown\s+-\s+-\s+no$/);
    // Aligned: every column starts at the same place on each row.
    const at = (l: string, word: string) => l.lastIndexOf(word);
    expect(at(lines[2]!, 'claude')).toBe(at(lines[1]!, 'KIND'));
    expect(at(lines[3]!, 'pi')).toBe(at(lines[1]!, 'KIND'));
    expect(at(lines[4]!, 'no')).toBe(at(lines[1]!, 'MOVABLE'));
    expect(text).toContain("note: shell-thing's session was handed off to vega");
  });
  it('says so when there is no agent', () => {
    expect(renderList({ ...result, agents: [] }, { color: false, home: '/home/me' })).toBe('No herdr agents on local.\n');
    expect(renderList({ ...result, host: 'vega', address: 'vega@127.0.0.1:2222' }, { color: false, home: '/home/me' })).toMatch(/^Agents on vega \(vega@127\.0\.0\.1:2222\):\n/);
  });
  it('session prefixes: an id, a transcript path', () => {
    expect(sessionPrefix({ kind: 'id', value: 'abcdef0123', source: 'x' })).toBe('abcdef01');
    expect(sessionPrefix({ kind: 'path', value: '/a/b/2026-01-01_1234abcd-ef.jsonl', source: 'x' })).toBe('1234abcd');
    expect(sessionPrefix(null)).toBe('-');
  });
  it('colours align as plain text does', () => {
    const plain = renderList(result, { color: false, home: '/home/me' });
    const coloured = renderList(result, { color: true, home: '/home/me' });
    expect(coloured.replace(/\x1b\[[0-9;]*m/g, '')).toBe(plain);
  });
});
