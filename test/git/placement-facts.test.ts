// The facts step against real repositories: what it reports, and how many programs it runs on
// the target once the target's read is in hand (the round trips a placement check costs).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunOptions, RunResult } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import type { PlacementWish } from '../../src/git/placement-decide.js';
import { commitsOn, gatherPlacementFacts } from '../../src/git/placement-facts.js';
import { readPlacementState } from '../../src/git/placement-read.js';
import { snapshot } from '../../src/git/snapshot.js';
import { cleanupTemp, commitAll, g, makePair, write, type Pair } from './repos.js';

afterAll(cleanupTemp);

/** A local host that counts the programs it runs. */
class CountingHost extends LocalHost {
  runs = 0;
  override run(argv: readonly string[], opts?: RunOptions): Promise<RunResult> {
    this.runs++;
    return super.run(argv, opts);
  }
}

async function factsFor(p: Pair, wish: Partial<PlacementWish> = {}, targetRepo = p.target) {
  const snap = await snapshot(p.sourceHost, p.source);
  const full: PlacementWish = { id: '20261201-201721-20d31c39f8677e06', targetRepo, targetLabel: 'vega', head: snap.head, wip: snap.snapshot, sourceBranch: snap.branch, ...wish };
  const target = new CountingHost();
  const read = await readPlacementState(target, targetRepo, full.sourceBranch);
  target.runs = 0;
  const facts = await gatherPlacementFacts(full, { target, commits: commitsOn(p.sourceHost, p.source), read: Promise.resolve(read), changedFiles: snap.changedFiles });
  return { facts, targetRuns: target.runs };
}

describe('gatherPlacementFacts', () => {
  it('asks the checked-out worktree\'s folder, dirty files and what is in the way in one program', async () => {
    const p = makePair();
    write(p.source, 'new/file.txt', 'new\n');
    write(p.target, 'new/file.txt', 'untracked on vega\n');
    write(p.target, 'README.md', 'edited on vega\n');
    const { facts, targetRuns } = await factsFor(p);
    expect(facts.checkedOut).toEqual({ exists: true, dirty: ['README.md'], inTheWay: ['new/file.txt'] });
    expect(facts.tipIsAncestor).toBeNull();
    expect(targetRuns).toBe(1);
  });

  it('asks nothing of the worktree when the branches diverged', async () => {
    const p = makePair();
    write(p.target, 'vega.txt', 'v\n');
    commitAll(p.target, 'only on vega');
    const { facts, targetRuns } = await factsFor(p);
    expect(facts).toMatchObject({ tipIsAncestor: false, checkedOut: null });
    expect(targetRuns).toBe(0);
  });

  it('asks nothing more when the read answered the new worktree folder', async () => {
    const p = makePair();
    g(p.source, 'checkout', '-q', '-b', 'topic');
    const { facts, targetRuns } = await factsFor(p);
    expect(facts).toMatchObject({ occupiedPaths: [], worktreeHomeExists: false, checkedOut: null });
    expect(targetRuns).toBe(0);
  });

  it('asks the next folders in one program when the natural one is taken', async () => {
    const p = makePair();
    g(p.source, 'checkout', '-q', '-b', 'topic');
    for (const n of ['topic', 'topic-2', 'topic-3']) fs.mkdirSync(`${p.target}.worktrees/${n}`, { recursive: true });
    const { facts, targetRuns } = await factsFor(p);
    expect(facts).toMatchObject({ occupiedPaths: [`${p.target}.worktrees/topic`, `${p.target}.worktrees/topic-2`, `${p.target}.worktrees/topic-3`], worktreeHomeExists: true });
    expect(targetRuns).toBe(1);
  });

  it('asks whether the main checkout\'s worktree home exists when the read was of a linked worktree', async () => {
    const p = makePair();
    const linked = path.join(path.dirname(p.target), 'linked');
    g(p.target, 'worktree', 'add', '-q', '-b', 'elsewhere', linked);
    fs.mkdirSync(`${p.target}.worktrees`);
    g(p.source, 'checkout', '-q', '-b', 'topic');
    const { facts, targetRuns } = await factsFor(p, {}, linked);
    expect(facts).toMatchObject({ occupiedPaths: [], worktreeHomeExists: true });
    expect(targetRuns).toBe(1);
  });
});
