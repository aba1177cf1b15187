import { describe, expect, it } from 'vitest';
import { ownRecords, sharedRecords } from '../../src/handoff/member.js';
import { recordsToUndo } from '../../src/handoff/recover.js';
import type { HandoffRecord } from '../../src/handoff/records.js';

// One agent's journal records in a batch checkout of two: the work's move is in both journals.
const records: HandoffRecord[] = [
  { kind: 'controller', host: 'laptop', pid: 1 },
  { kind: 'group', lead: 'b-1', members: ['b-1', 'b-2'] },
  { kind: 'quit', pane: 'w1:p2', name: 'api-pi', agentKind: 'pi', restartArgs: ['--session', 'x'] },
  { kind: 'marker', path: '/home/vega/.local/state/agent-handoff/incoming/b-1.json' },
  { kind: 'refs', targetRepo: '/home/vega/code/api', id: 'b-1' },
  { kind: 'snapshot', head: 'h', wip: null, fingerprint: 'h:t', repo: '/home/me/src/api' },
  { kind: 'undone', what: 'placement' },
  { kind: 'session_copy', record: { targetRoot: '/home/vega/.pi', files: [], createdDirs: [] } },
  { kind: 'undone', what: 'session_copy' },
  { kind: 'workspace', workspace: 'w9', pane: 'w9:p1' },
  { kind: 'stash', stashed: false, stash: null },
];
const kinds = (rs: HandoffRecord[]) => rs.map((r) => (r.kind === 'undone' ? `undone:${r.what}` : r.kind));

describe('the records of one agent of a checkout', () => {
  it('its own part: quit, session copy (and its undone), workspace', () => {
    expect(kinds(ownRecords(records))).toEqual(['quit', 'session_copy', 'undone:session_copy', 'workspace']);
  });
  it("the work's move: the rest", () => {
    expect(kinds(sharedRecords(records))).toEqual(['controller', 'group', 'marker', 'refs', 'snapshot', 'undone:placement', 'stash']);
  });
  it('recover undoes the move only when the last of them settles with none moved', () => {
    expect(recordsToUndo(records, null)).toEqual(records);
    expect(kinds(recordsToUndo(records, { others: 1, moved: [], unfinished: ['b-2'] }))).toEqual(kinds(ownRecords(records)));
    expect(recordsToUndo(records, { others: 1, moved: [], unfinished: [] })).toEqual(records);
    // Another stays moved: its placement stays, the refs and the marker go.
    expect(kinds(recordsToUndo(records, { others: 1, moved: ['b-2'], unfinished: [] }))).toEqual(['quit', 'marker', 'refs', 'session_copy', 'undone:session_copy', 'workspace']);
  });
});
