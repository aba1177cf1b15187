// Which journal records a rollback undoes (toUndo): newest first; an intent only when its step
// died before writing the record; a placement, session copy or seat already undone (replaced by
// another made after it) is skipped with its intent.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { trustLines } from '../../adapters/codex-hooks.js';
import type { HerdrClient } from '../../src/herdr/client.js';
import { LocalHost } from '../../src/host/local.js';
import { rollback, toUndo } from '../../src/handoff/rollback.js';
import { HandoffRecord } from '../../src/handoff/records.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

function intent(worktree: string): HandoffRecord {
  return HandoffRecord.parse({ kind: 'placement_intent', id: 'h1', repo: '/r', branch: 'feature', mode: 'new-worktree', worktree, branchTip: null, head: A, wip: B, homeExisted: true, hadUpstream: false });
}

function placement(worktree: string): HandoffRecord {
  return HandoffRecord.parse({
    kind: 'placement',
    record: { version: 1, id: 'h1', repo: '/r', branch: 'feature', mode: 'new-worktree', worktree, previousCommit: null, head: A, wip: B, actions: [{ kind: 'worktree-added', path: worktree, createdHome: null }] },
  });
}

function sessionIntent(root: string): HandoffRecord {
  return HandoffRecord.parse({ kind: 'session_intent', targetRoot: root, tag: 'abcd1234', files: [], missingDirs: [] });
}

function sessionCopy(root: string): HandoffRecord {
  return HandoffRecord.parse({ kind: 'session_copy', record: { targetRoot: root, files: [], createdDirs: [] } });
}

const refs = HandoffRecord.parse({ kind: 'refs', targetRepo: '/r', id: 'h1' });
const marker = HandoffRecord.parse({ kind: 'marker', path: '/m' });
const undonePlacement = HandoffRecord.parse({ kind: 'undone', what: 'placement' });
const undoneCopy = HandoffRecord.parse({ kind: 'undone', what: 'session_copy' });

/** A short name per record, to compare lists. */
function names(records: HandoffRecord[]): string[] {
  return records.map((r) => {
    if (r.kind === 'placement_intent') return `intent ${r.worktree}`;
    if (r.kind === 'placement') return `placement ${r.record.worktree}`;
    if (r.kind === 'session_intent') return `session intent ${r.targetRoot}`;
    if (r.kind === 'session_copy') return `session copy ${r.record.targetRoot}`;
    if (r.kind === 'hook_trust') return `hook trust ${r.file}`;
    return r.kind;
  });
}

describe('toUndo', () => {
  it('undoes records newest first, the intent standing in only for a record never written', () => {
    expect(names(toUndo([marker, refs, intent('/w1'), placement('/w1'), sessionIntent('/s1'), sessionCopy('/s1')]))).toEqual(['session copy /s1', 'placement /w1', 'refs', 'marker']);
    expect(names(toUndo([marker, refs, intent('/w1'), sessionIntent('/s1')]))).toEqual(['session intent /s1', 'intent /w1', 'refs', 'marker']);
  });

  it('skips a placement undone already, with its intent, and undoes the one that replaced it', () => {
    const records = [marker, refs, intent('/w1'), placement('/w1'), refs, undonePlacement, intent('/w2'), placement('/w2')];
    expect(names(toUndo(records))).toEqual(['placement /w2', 'refs', 'refs', 'marker']);
  });

  it('after a placement undone, an intent with no record of its own still stands in (died inside the second place)', () => {
    const records = [marker, refs, intent('/w1'), placement('/w1'), undonePlacement, intent('/w1')];
    expect(names(toUndo(records))).toEqual(['intent /w1', 'refs', 'marker']);
  });

  it('treats a session copy made again the same way', () => {
    const records = [sessionIntent('/s1'), sessionCopy('/s1'), undoneCopy, sessionIntent('/s2'), sessionCopy('/s2')];
    expect(names(toUndo(records))).toEqual(['session copy /s2']);
    expect(names(toUndo(records.slice(0, 4)))).toEqual(['session intent /s2']);
  });

  it('keeps the two kinds apart: an undone placement does not hide a session copy', () => {
    const records = [intent('/w1'), placement('/w1'), sessionIntent('/s1'), sessionCopy('/s1'), undonePlacement, intent('/w2'), placement('/w2')];
    expect(names(toUndo(records))).toEqual(['placement /w2', 'session copy /s1']);
  });

  it('takes the trust of herdr\'s hook out after the start, before the session copy', () => {
    const trust = HandoffRecord.parse({ kind: 'hook_trust', agentKind: 'codex', file: '/c/config.toml', lines: ['[hooks.state."k"]', 'trusted_hash = "h"'], tag: 't' });
    const workspace = HandoffRecord.parse({ kind: 'workspace', workspace: 'w1', pane: 'p1' });
    expect(names(toUndo([marker, refs, intent('/w1'), placement('/w1'), sessionIntent('/s1'), sessionCopy('/s1'), trust, workspace]))).toEqual(['workspace', 'hook trust /c/config.toml', 'session copy /s1', 'placement /w1', 'refs', 'marker']);
  });

  it('closes the pane by its record, and by its intent only when the record was never written', () => {
    const paneIntent = HandoffRecord.parse({ kind: 'pane_intent', cwd: '/w1', label: 'w1 (pi)', split: false });
    const workspace = HandoffRecord.parse({ kind: 'workspace', workspace: 'w2', pane: 'w2:p1' });
    expect(names(toUndo([marker, intent('/w1'), placement('/w1'), paneIntent, workspace]))).toEqual(['workspace', 'placement /w1', 'marker']);
    expect(names(toUndo([marker, intent('/w1'), placement('/w1'), paneIntent]))).toEqual(['pane_intent', 'placement /w1', 'marker']);
    expect(names(toUndo([marker, paneIntent, sessionIntent('/s1'), sessionCopy('/s1')]))).toEqual(['session copy /s1', 'pane_intent', 'marker']);
  });

  it('skips a seat closed already (its work placed anew), with its intent, and closes the one that replaced it', () => {
    const paneIntent = HandoffRecord.parse({ kind: 'pane_intent', cwd: '/w1', label: 'w1 (pi)', split: false });
    const early = HandoffRecord.parse({ kind: 'workspace', workspace: 'w2', pane: 'w2:p1' });
    const again = HandoffRecord.parse({ kind: 'workspace', workspace: 'w3', pane: 'w3:p1' });
    const undoneSeat = HandoffRecord.parse({ kind: 'undone', what: 'seat' });
    const seated = [marker, intent('/w1'), placement('/w1'), paneIntent, early, undoneSeat, undonePlacement, intent('/w1'), placement('/w1')];
    expect(names(toUndo([...seated, paneIntent, again]))).toEqual(['workspace', 'placement /w1', 'marker']);
    expect(toUndo([...seated, paneIntent, again]).find((r) => r.kind === 'workspace')).toEqual(again);
    // Died while the second pane was asked for: its intent stands in, the closed one stays skipped.
    expect(names(toUndo([...seated, paneIntent]))).toEqual(['pane_intent', 'placement /w1', 'marker']);
    // Died before the seat was made again: nothing of the closed one is closed twice.
    expect(names(toUndo(seated))).toEqual(['placement /w1', 'marker']);
  });
});

describe('rollback of a hook trust entry', () => {
  it('removes exactly the lines the handoff wrote, by the kind\'s own undo', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-rollback-hook-'));
    try {
      const file = path.join(dir, 'config.toml');
      const lines = trustLines(`${dir}/hooks.json:session_start:0:0`, `sha256:${'a'.repeat(64)}`);
      fs.writeFileSync(file, `[features]\nhooks = true\n\n${lines.join('\n')}\n\n[tui]\nx = 1\n`);
      const host = new LocalHost();
      const herdr = {} as HerdrClient;
      const rec = HandoffRecord.parse({ kind: 'hook_trust', agentKind: 'codex', file, lines, tag: 't' });
      const report = await rollback({ source: { host, herdr }, target: { host, herdr } }, [rec], { restart: false });
      expect(report.errors).toEqual([]);
      expect(report.undone).toEqual([`removed the trust of herdr's codex hook from ${file} on local`]);
      expect(fs.readFileSync(file, 'utf8')).toBe('[features]\nhooks = true\n\n[tui]\nx = 1\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
