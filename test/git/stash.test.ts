import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { snapshot } from '../../src/git/snapshot.js';
import { prepareStash, stashSourceChanges } from '../../src/git/stash.js';
import { cleanupTemp, exists, g, listFiles, makePair, read, status, write } from './repos.js';

afterAll(cleanupTemp);

const BINARY = Buffer.from([0, 1, 2, 3, 255, 0]);

function makeWork(repo: string): void {
  write(repo, 'README.md', 'staged edit\n');
  g(repo, 'add', 'README.md');
  write(repo, 'src/app.ts', 'unstaged edit\n');
  write(repo, 'untracked dir/ü new.txt', 'untracked\n');
  write(repo, 'bin.dat', BINARY);
}

describe('source stash', () => {
  it('stores exactly the snapshot as a git stash and resets the checkout; stash pop brings it all back', async () => {
    const { source, sourceHost } = makePair();
    makeWork(source);
    const filesBefore = listFiles(source);
    const statusBefore = await status(source);
    const snap = await snapshot(sourceHost, source);
    const res = await stashSourceChanges({ host: sourceHost, snapshot: snap, id: 'lx1-abcdef012345', targetLabel: 'vega' });
    expect(res).toMatchObject({ stashed: true, reason: 'stashed', message: 'agent-handoff lx1-abcdef012345 → vega' });
    expect(g(source, 'stash', 'list').trim()).toBe('stash@{0}: agent-handoff lx1-abcdef012345 → vega');
    expect(g(source, 'status', '--porcelain', '-uall').trim()).toBe('');
    expect(exists(source, 'untracked dir')).toBe(false);
    // The stash holds the same working state that moved.
    expect(g(source, 'rev-parse', 'stash@{0}^1').trim()).toBe(snap.head);

    g(source, 'stash', 'pop', '--index', '-q');
    expect(listFiles(source)).toEqual(filesBefore);
    expect(await status(source)).toEqual(statusBefore);
  });

  it('keeps the files when they changed after the snapshot, and names them', async () => {
    const { source, sourceHost } = makePair();
    makeWork(source);
    const snap = await snapshot(sourceHost, source);
    write(source, 'src/app.ts', 'edited after the snapshot\n');
    write(source, 'late.txt', 'late\n');
    const res = await stashSourceChanges({ host: sourceHost, snapshot: snap, id: 'lx1-abcdef012345', targetLabel: 'vega' });
    expect(res).toMatchObject({ stashed: false, reason: 'changed_after_snapshot' });
    expect(res.changedAfterSnapshot.sort()).toEqual(['late.txt', 'src/app.ts']);
    expect(res.note).toMatch(/left as they are/);
    expect(read(source, 'src/app.ts')).toBe('edited after the snapshot\n');
    expect(g(source, 'stash', 'list').trim()).toBe('');
  });

  it('stores nothing when HEAD moved after the snapshot, even with the stash commit built ahead (the guard runs in the same program)', async () => {
    const { source, sourceHost } = makePair();
    makeWork(source);
    const snap = await snapshot(sourceHost, source);
    const prepared = prepareStash(sourceHost, snap, 'lx1-abcdef012345', 'vega');
    expect(await prepared).not.toBeNull();
    g(source, 'commit', '-q', '-m', 'committed after the snapshot');
    const moved = g(source, 'rev-parse', 'HEAD').trim();
    const res = await stashSourceChanges({ host: sourceHost, snapshot: snap, id: 'lx1-abcdef012345', targetLabel: 'vega', prepared });
    expect(res).toMatchObject({ stashed: false, stash: null, reason: 'changed_after_snapshot' });
    expect(res.note).toContain(`HEAD of the source checkout moved after the snapshot (${snap.head.slice(0, 12)} → ${moved.slice(0, 12)})`);
    expect(g(source, 'stash', 'list').trim()).toBe('');
    // Nothing was reset: the unstaged edit and the untracked files are still there.
    expect(read(source, 'src/app.ts')).toBe('unstaged edit\n');
    expect(exists(source, 'untracked dir')).toBe(true);
  });

  it('uses the stash commit built ahead when nothing changed', async () => {
    const { source, sourceHost } = makePair();
    makeWork(source);
    const snap = await snapshot(sourceHost, source);
    const prepared = await prepareStash(sourceHost, snap, 'lx1-abcdef012345', 'vega');
    const res = await stashSourceChanges({ host: sourceHost, snapshot: snap, id: 'lx1-abcdef012345', targetLabel: 'vega', prepared: Promise.resolve(prepared) });
    expect(res).toMatchObject({ stashed: true, stash: prepared?.commit });
    expect(g(source, 'status', '--porcelain', '-uall').trim()).toBe('');
    expect(exists(source, 'untracked dir')).toBe(false);
  });

  it('says so when a clean checkout changed after the snapshot', async () => {
    const { source, sourceHost } = makePair();
    const clean = await snapshot(sourceHost, source);
    write(source, 'late.txt', 'late\n');
    const res = await stashSourceChanges({ host: sourceHost, snapshot: clean, id: 'lx1-abcdef012345', targetLabel: 'vega' });
    expect(res).toMatchObject({ stashed: false, reason: 'changed_after_snapshot', changedAfterSnapshot: ['late.txt'] });
    expect(read(source, 'late.txt')).toBe('late\n');
  });

  it('skips when asked to keep the changes, and when there is nothing uncommitted', async () => {
    const { source, sourceHost } = makePair();
    const clean = await snapshot(sourceHost, source);
    expect((await stashSourceChanges({ host: sourceHost, snapshot: clean, id: 'lx1-abcdef012345', targetLabel: 'vega' })).reason).toBe('nothing_uncommitted');
    makeWork(source);
    const snap = await snapshot(sourceHost, source);
    const res = await stashSourceChanges({ host: sourceHost, snapshot: snap, id: 'lx1-abcdef012345', targetLabel: 'vega', keepSourceChanges: true });
    expect(res).toMatchObject({ stashed: false, reason: 'keep_requested' });
    expect(fs.readFileSync(path.join(source, 'bin.dat')).equals(BINARY)).toBe(true);
    expect(g(source, 'stash', 'list').trim()).toBe('');
  });
});
