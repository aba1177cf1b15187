// A pane asked of herdr but never recorded (the controller died while herdr made it): the
// rollback finds it by its folder and label and closes it, and nothing else — against a
// throwaway real herdr 0.8.2.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HerdrClient } from '../../src/herdr/client.js';
import { LocalHost } from '../../src/host/local.js';
import { HandoffRecord } from '../../src/handoff/records.js';
import { rollback } from '../../src/handoff/rollback.js';
import { startThrowaway, type Throwaway } from '../herdr/throwaway.js';

describe('rollback of a pane intent', () => {
  let h: Throwaway;
  let herdr: HerdrClient;

  beforeAll(async () => {
    h = await startThrowaway('real');
    fs.symlinkSync(h.bin, path.join(h.binDir, 'herdr'));
    herdr = new HerdrClient(new LocalHost({ env: { ...h.env } }));
    await herdr.probe();
  });

  afterAll(async () => {
    await h?.stop();
  });

  const dir = (name: string): string => {
    const d = path.join(h.dir, name);
    fs.mkdirSync(d, { recursive: true });
    return d;
  };
  const undo = (rec: unknown) => rollback({ source: { host: herdr.host, herdr }, target: { host: herdr.host, herdr } }, [HandoffRecord.parse(rec)], { restart: false });
  const workspaceIds = async () => (await herdr.workspaceList()).map((w) => w.workspace_id).sort();

  it('closes the workspace made in that folder under that label, not a user\'s in the same folder or another folder', async () => {
    const worktree = dir('feature');
    const other = dir('other');
    const users = await herdr.workspaceCreate({ cwd: worktree, label: 'notes', focus: false });
    const elsewhere = await herdr.workspaceCreate({ cwd: other, label: 'feature (pi)', focus: false });
    const ours = await herdr.workspaceCreate({ cwd: worktree, label: 'feature (pi)', focus: false });
    const report = await undo({ kind: 'pane_intent', cwd: worktree, label: 'feature (pi)', split: false });
    expect(report.errors).toEqual([]);
    expect(report.undone).toEqual([`closed workspace ${ours.workspace.workspace_id} on local`]);
    expect(await workspaceIds()).toEqual([users.workspace.workspace_id, elsewhere.workspace.workspace_id].sort());
    for (const w of [users, elsewhere]) await herdr.workspaceClose(w.workspace.workspace_id);
  });

  it('says so when herdr cannot be asked (the connection is gone), and undoes the rest', async () => {
    const marker = path.join(dir('markers'), 'm.json');
    fs.writeFileSync(marker, '{}');
    const unreachable = { paneList: () => Promise.reject(new Error('connection lost')), workspaceList: () => Promise.reject(new Error('connection lost')) } as unknown as HerdrClient;
    const records = [HandoffRecord.parse({ kind: 'marker', path: marker }), HandoffRecord.parse({ kind: 'pane_intent', cwd: dir('gone'), label: 'gone (pi)', split: false })];
    const report = await rollback({ source: { host: herdr.host, herdr: unreachable }, target: { host: herdr.host, herdr: unreachable } }, records, { restart: false });
    expect(report.errors).toEqual([{ what: `closed the pane asked for in ${path.join(h.dir, 'gone')} on local`, error: 'connection lost' }]);
    expect(report.undone).toEqual([expect.stringContaining('marker')]);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('closes a pane split beside another agent\'s, leaving that one; nothing when no pane was made', async () => {
    const first = dir('first');
    const second = dir('second');
    const desk = await herdr.workspaceCreate({ cwd: first, label: 'first (pi)', focus: false });
    const split = await herdr.paneSplit(desk.paneId, { cwd: second });
    const report = await undo({ kind: 'pane_intent', cwd: second, label: 'second (pi)', split: true });
    expect(report.undone).toEqual([`closed pane ${split.pane_id} of workspace ${desk.workspace.workspace_id} on local`]);
    expect((await herdr.paneList()).map((p) => p.pane_id)).toEqual([desk.paneId]);

    const none = await undo({ kind: 'pane_intent', cwd: dir('never'), label: 'never (pi)', split: false });
    expect(none).toMatchObject({ undone: [], errors: [] });
    expect(await workspaceIds()).toEqual([desk.workspace.workspace_id]);
    await herdr.workspaceClose(desk.workspace.workspace_id);
  });
});
