import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalHost } from '../../src/host/local.js';
import { handleOf, isOurAgent, readStarted, recordStarted, type StartedAgent } from '../../src/handoff/started-agents.js';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});

const T = Date.UTC(2026, 11, 1, 12, 0, 0);
const entry: StartedAgent = { pane: 'w3:p1', workspace: 'w3', name: 'hark-codex', kind: 'codex', handle: { kind: 'id', value: '019a-uuid' }, cwd: '/home/vega/code/hark', startedMs: T, handoff: 'h1' };

describe('isOurAgent', () => {
  it.each([
    ['the agent we started, moments after', { kind: 'codex', cwd: entry.cwd, processStartedMs: T + 2_000 }, true],
    ['clocks a minute apart', { kind: 'codex', cwd: entry.cwd, processStartedMs: T - 30_000 }, true],
    ['another kind in that pane', { kind: 'claude', cwd: entry.cwd, processStartedMs: T + 2_000 }, false],
    ['another folder', { kind: 'codex', cwd: '/home/vega/code/other', processStartedMs: T + 2_000 }, false],
    ['started by hand an hour later', { kind: 'codex', cwd: entry.cwd, processStartedMs: T + 3_600_000 }, false],
    ['running since before our start', { kind: 'codex', cwd: entry.cwd, processStartedMs: T - 3_600_000 }, false],
    ['a start time that cannot be told', { kind: 'codex', cwd: entry.cwd, processStartedMs: 0 }, false],
  ])('%s', (_what, now, expected) => {
    expect(isOurAgent(entry, now)).toBe(expected);
  });
});

describe('recordStarted and readStarted', () => {
  it('round-trip per pane, privately; a newer start replaces the entry; garbage reads as none', async () => {
    const dir = path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ah-started-'))), 'state', 'started');
    temps.push(path.dirname(path.dirname(dir)));
    const host = new LocalHost();
    const hostile = { ...entry, pane: "w1:p1'; touch /tmp/x #", cwd: '/tmp/$(x)/a b' };
    await recordStarted(host, dir, entry);
    await recordStarted(host, dir, hostile);
    expect(await readStarted(host, dir, entry.pane)).toEqual(entry);
    expect(await readStarted(host, dir, hostile.pane)).toEqual(hostile);
    expect(await readStarted(host, dir, 'w9:p9')).toBeNull();
    for (const f of fs.readdirSync(dir)) expect(fs.statSync(path.join(dir, f)).mode & 0o777).toBe(0o600);
    const newer = { ...entry, startedMs: T + 1, handoff: 'h2' };
    await recordStarted(host, dir, newer);
    expect(await readStarted(host, dir, entry.pane)).toEqual(newer);
    for (const f of fs.readdirSync(dir)) fs.writeFileSync(path.join(dir, f), '{"pane":');
    expect(await readStarted(host, dir, entry.pane)).toBeNull();
  });

  it('handleOf: a path for pi and omp, an id for the others', () => {
    expect(handleOf('pi', '/a/s.jsonl')).toEqual({ kind: 'path', value: '/a/s.jsonl' });
    expect(handleOf('omp', '/a/s.jsonl')).toEqual({ kind: 'path', value: '/a/s.jsonl' });
    expect(handleOf('codex', 'u')).toEqual({ kind: 'id', value: 'u' });
  });
});
