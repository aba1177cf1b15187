import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Journal, listJournals, listUnsettled, newHandoffId, stateDir } from '../../src/handoff/journal.js';
import { acquireLock, heldFor, localLiveness, lockHolder, paneLockKey } from '../../src/handoff/lock.js';
import { processStartId } from '../../src/handoff/process-age.js';
import { unfinishedFor } from '../../src/handoff/recover.js';
import { LocalHost } from '../../src/host/local.js';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-journal-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('journal', () => {
  it('lives under XDG_STATE_HOME, else ~/.local/state', () => {
    expect(stateDir({ XDG_STATE_HOME: '/x/state', HOME: '/h' })).toBe('/x/state/agent-handoff');
    expect(stateDir({ HOME: '/h' })).toBe('/h/.local/state/agent-handoff');
  });
  it('appends private, ordered events and summarises them', () => {
    const id = newHandoffId();
    const j = Journal.create(dir, id, { agent: 'rev', kind: 'claude', from: 'local', to: 'vega' });
    j.begin('quit');
    j.done('quit');
    j.begin('transfer');
    expect((fs.statSync(j.file).mode & 0o777).toString(8)).toBe('600');
    // A torn last line (crash mid-write) is ignored.
    fs.appendFileSync(j.file, '{"t":"x","type":"do');
    const [s] = listJournals(dir);
    expect(s).toMatchObject({ id, agent: 'rev', kind: 'claude', from: 'local', to: 'vega', outcome: 'unfinished', step: 'transfer' });
    j.outcome('rolled_back');
    expect(listJournals(dir)[0]?.outcome).toBe('rolled_back');
  });
  it('lists the journals recover may need, passing over settled ones on their last outcome alone', () => {
    const make = (name: string, build: (j: Journal) => void) => {
      const id = `20261201-0000${name}`;
      build(Journal.create(dir, id, { agent: name }));
      return id;
    };
    make('00-ok', (j) => j.outcome('succeeded'));
    make('01-dry', (j) => j.outcome('dry_run'));
    const open = make('02-open', (j) => j.begin('quit'));
    const torn = make('03-torn', (j) => {
      j.outcome('succeeded');
      // An outcome line cut short by a crash settles nothing (summarise decides: still succeeded).
      fs.appendFileSync(j.file, '{"t":"x","type":"outcome","data":{"outc');
    });
    const incomplete = make('04-incomplete', (j) => {
      j.append({ type: 'undone', data: { undone: [], errors: [{ what: 'refs', error: 'unreachable' }] } });
      j.outcome('rolled_back');
    });
    make('05-recovered', (j) => {
      j.append({ type: 'undone', data: { undone: [], errors: [{ what: 'refs', error: 'unreachable' }] } });
      j.outcome('rollback_incomplete');
      j.outcome('recovered');
    });
    make('06-rolled-back', (j) => j.outcome('rolled_back'));
    // A data string that spells an outcome is not one.
    const spelled = make('07-spelled', (j) => j.record('quit', { note: '"type":"outcome","data":{"outcome":"succeeded"}' }));
    const unsettled = listUnsettled(dir);
    expect(unsettled.sort()).toEqual([open, incomplete, spelled].sort());
    expect(unsettled).not.toContain(torn);
    // The same answer as summarising every journal.
    const slow = listJournals(dir).filter((j) => j.outcome === 'unfinished' || j.outcome === 'rollback_incomplete').map((j) => j.id);
    expect(unsettled.sort()).toEqual(slow.sort());
  });
  it('never reuses a journal and makes ids that do not collide', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newHandoffId()));
    expect(ids.size).toBe(1000);
    const id = newHandoffId();
    Journal.create(dir, id, {});
    expect(() => Journal.create(dir, id, {})).toThrow();
  });
});

describe('per-agent lock', () => {
  const host = new LocalHost();
  const owner = (pid: number) => ({ handoff: `h${pid}`, controller: os.hostname(), pid, started: new Date().toISOString() });

  it('lets exactly one holder in, and refuses the second clearly', async () => {
    const first = await acquireLock(host, { stateDir: dir, key: 'w1:p2', owner: owner(process.pid), isAlive: localLiveness(os.hostname()) });
    await expect(acquireLock(host, { stateDir: dir, key: 'w1:p2', owner: owner(process.pid), isAlive: localLiveness(os.hostname()) })).rejects.toMatchObject({ code: 'handoff_in_progress' });
    await first.release();
    const again = await acquireLock(host, { stateDir: dir, key: 'w1:p2', owner: owner(process.pid), isAlive: localLiveness(os.hostname()) });
    await again.release();
  });
  it('takes over a stale lock whose holder is dead', async () => {
    const dead = 2 ** 22 + 12345; // above pid_max defaults: never alive
    await acquireLock(host, { stateDir: dir, key: 'sess', owner: owner(dead), isAlive: () => true });
    const taken = await acquireLock(host, { stateDir: dir, key: 'sess', owner: owner(process.pid), isAlive: localLiveness(os.hostname()) });
    expect(taken.tookOver?.pid).toBe(dead);
    await taken.release();
  });
  it('of many concurrent attempts exactly one wins', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => acquireLock(host, { stateDir: dir, key: 'race', owner: owner(process.pid), isAlive: localLiveness(os.hostname()) })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
  });
  it('takes over a lock whose holder pid now belongs to a process that started at another time', async () => {
    const isAlive = localLiveness(os.hostname());
    // The "holder" has our pid (alive) but another start: the pid was reused.
    await acquireLock(host, { stateDir: dir, key: 'reused', owner: { ...owner(process.pid), handoff: 'old', pid_start: 'boot:1' }, isAlive: () => true });
    const taken = await acquireLock(host, { stateDir: dir, key: 'reused', owner: { ...owner(process.pid), pid_start: processStartId(process.pid) }, isAlive });
    expect(taken.tookOver?.handoff).toBe('old');
    // With the right start it is alive, and refused.
    await expect(acquireLock(host, { stateDir: dir, key: 'reused', owner: owner(process.pid), isAlive })).rejects.toMatchObject({ code: 'handoff_in_progress' });
    await taken.release();
    expect(fs.readdirSync(path.join(dir, 'locks'))).toEqual([]);
  });
  it('of many sends taking over one stale lock at once exactly one wins', async () => {
    const dead = 2 ** 22 + 777;
    for (let round = 0; round < 3; round++) {
      await acquireLock(host, { stateDir: dir, key: `stale-${round}`, owner: { ...owner(dead), handoff: `dead-${round}` }, isAlive: () => true });
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) => acquireLock(host, { stateDir: dir, key: `stale-${round}`, owner: { ...owner(process.pid), handoff: `new-${i}` }, isAlive: localLiveness(os.hostname()) })),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      expect(won, JSON.stringify(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'won')))).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'handoff_in_progress' });
      await won[0]!.value.release();
    }
    expect(fs.readdirSync(path.join(dir, 'locks'))).toEqual([]);
  });
  it('a held lock can be looked at without taking it, and found by the agent it moves', async () => {
    const isAlive = localLiveness(os.hostname());
    const key = paneLockKey('w3:p1', null);
    expect(await lockHolder(host, { stateDir: dir, key, isAlive })).toBeNull();
    const held = await acquireLock(host, { stateDir: dir, key, owner: { ...owner(process.pid), agent: 'rev', pane: 'w3:p1', session: 'abcdef12-3456' }, isAlive });
    expect((await lockHolder(host, { stateDir: dir, key, isAlive }))?.holder.handoff).toBe(`h${process.pid}`);
    for (const ref of ['rev', 'w3:p1', 'abcdef']) expect((await heldFor(host, dir, ref, null, isAlive))?.holder.pane).toBe('w3:p1');
    expect(await heldFor(host, dir, 'other', null, isAlive)).toBeNull();
    expect(await heldFor(host, dir, 'abc', null, isAlive)).toBeNull();
    await held.release();
    // A dead holder's lock names nobody running.
    await acquireLock(host, { stateDir: dir, key, owner: { ...owner(2 ** 22 + 99), agent: 'rev', pane: 'w3:p1' }, isAlive: () => true });
    expect(await heldFor(host, dir, 'rev', null, isAlive)).toBeNull();
    expect(await lockHolder(host, { stateDir: dir, key, isAlive })).toBeNull();
  });

  it('pane ids are unique only within one herdr server: the same id of two servers is two locks, two agents', async () => {
    const isAlive = localLiveness(os.hostname());
    const [a, b] = ['/home/u/.config/herdr/herdr.sock', '/home/u/.config/herdr/sessions/desk/herdr.sock'];
    expect(paneLockKey('w1:p1', a)).not.toBe(paneLockKey('w1:p1', b));
    expect(paneLockKey('w1:p1', a)).toBe(paneLockKey('w1:p1', a));
    const first = await acquireLock(host, { stateDir: dir, key: paneLockKey('w1:p1', a), owner: { ...owner(process.pid), agent: 'rev', pane: 'w1:p1', herdr_server: a }, isAlive });
    const second = await acquireLock(host, { stateDir: dir, key: paneLockKey('w1:p1', b), owner: { ...owner(process.pid), agent: 'rev', pane: 'w1:p1', herdr_server: b }, isAlive });
    expect((await heldFor(host, dir, 'w1:p1', a, isAlive))?.holder.herdr_server).toBe(a);
    expect((await heldFor(host, dir, 'w1:p1', b, isAlive))?.holder.herdr_server).toBe(b);
    await first.release();
    expect(await heldFor(host, dir, 'rev', a, isAlive)).toBeNull();
    await second.release();

    // An unfinished journal is another server's agent's when it names another server; one that
    // names none (older journals) or a caller that knows none still match, as before.
    const stateRoot = path.join(dir, 'state');
    const header = (server?: string) => ({ agent: 'rev', pane: 'w1:p1', source_spec: 'local', ...(server ? { herdr_server: server } : {}) });
    const ofA = Journal.create(stateRoot, '20261202-000001-aaaa', header(a)).id;
    const ofB = Journal.create(stateRoot, '20261202-000002-bbbb', header(b)).id;
    const old = Journal.create(stateRoot, '20261202-000003-cccc', header()).id;
    expect(unfinishedFor(stateRoot, { sourceSpec: 'local', herdrServer: a, pane: 'w1:p1' }).sort()).toEqual([ofA, old]);
    expect(unfinishedFor(stateRoot, { sourceSpec: 'local', herdrServer: b, agent: 'rev' }).sort()).toEqual([ofB, old]);
    expect(unfinishedFor(stateRoot, { sourceSpec: 'local', herdrServer: undefined, pane: 'w1:p1' }).sort()).toEqual([ofA, ofB, old]);
  });
});
