// The target's record of a started agent (src/handoff/started-agents.ts), written beside the
// verification and journaled first: a rollback removes it when it is still this handoff's, and
// leaves one a later start in the same pane wrote.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HerdrClient } from '../../src/herdr/client.js';
import { LocalHost } from '../../src/host/local.js';
import { HandoffRecord } from '../../src/handoff/records.js';
import { rollback } from '../../src/handoff/rollback.js';
import { readStarted, recordStarted, startedFile, type StartedAgent } from '../../src/handoff/started-agents.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tmp = tempDirs('ah-started-');

const entry = (handoff: string): StartedAgent => ({
  pane: 'w1:p1',
  workspace: 'w1',
  name: 'pi-1',
  kind: 'pi',
  handle: { kind: 'path', value: '/home/vega/.pi/agent/sessions/x.jsonl' },
  cwd: '/home/vega/code/x',
  startedMs: 1_700_000_000_000,
  handoff,
});

describe('the rollback of a started record', () => {
  const host = new LocalHost();
  const herdr = {} as HerdrClient;
  const undo = (rec: unknown) => rollback({ source: { host, herdr }, target: { host, herdr } }, [HandoffRecord.parse(rec)], { restart: false });

  it("removes the record this handoff wrote, and keeps one a later start in that pane wrote", async () => {
    const dir = tmp();
    const file = startedFile(dir, 'w1:p1');
    await recordStarted(host, dir, entry('20261206-a'));
    expect(await readStarted(host, dir, 'w1:p1')).toMatchObject({ handoff: '20261206-a' });
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');

    const later = await undo({ kind: 'started_record', path: file, handoff: '20261206-earlier' });
    expect(later.errors).toEqual([]);
    expect(fs.existsSync(file)).toBe(true);

    const ours = await undo({ kind: 'started_record', path: file, handoff: '20261206-a' });
    expect(ours.errors).toEqual([]);
    expect(ours.undone).toEqual([expect.stringContaining('removed the record of the agent started')]);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('has nothing to do when the record was never written, or is not ours to read', async () => {
    const dir = tmp();
    const missing = path.join(dir, 'started', 'none.json');
    expect((await undo({ kind: 'started_record', path: missing, handoff: 'h' })).errors).toEqual([]);
    const garbled = path.join(dir, 'garbled.json');
    fs.writeFileSync(garbled, 'not json');
    expect((await undo({ kind: 'started_record', path: garbled, handoff: 'h' })).errors).toEqual([]);
    expect(fs.existsSync(garbled)).toBe(true);
  });
});
