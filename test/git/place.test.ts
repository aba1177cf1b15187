import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HandoffError } from '../../src/errors.js';
import { checkPlacement, place, PlacementRecordSchema, undoPlacement, type PlacementRequest } from '../../src/git/place.js';
import { snapshot } from '../../src/git/snapshot.js';
import { newHandoffId, transfer } from '../../src/git/transfer.js';
import { branchSlug, branchTaken, firstFree } from '../../src/git/worktrees.js';
import { cleanupTemp, commitAll, exists, fingerprintRepo, g, listFiles, makePair, read, write, type Pair } from './repos.js';

afterAll(cleanupTemp);

const BINARY = Buffer.from([0, 159, 146, 150, 0, 255, 10]);
const ODD = 'sp ace/ünï \'q\' "dq" $(id).txt';

/** Edits of every kind in the source checkout. */
function makeWork(source: string): void {
  write(source, 'README.md', 'hello from the laptop\n');
  g(source, 'add', 'README.md');
  write(source, 'src/app.ts', 'export const answer = 99;\n');
  write(source, 'new/file.txt', 'new\n');
  write(source, 'bin.dat', BINARY);
  write(source, ODD, 'odd\n');
  fs.rmSync(path.join(source, 'src', 'app.ts'));
  write(source, 'src/app.ts', 'export const answer = 99;\n');
}

interface Flow {
  req: PlacementRequest;
  plan: Awaited<ReturnType<typeof checkPlacement>>;
}

async function plan(p: Pair, extra: Partial<PlacementRequest> = {}): Promise<Flow> {
  const snap = await snapshot(p.sourceHost, p.source);
  const req: PlacementRequest = { target: p.targetHost, targetRepo: p.target, id: newHandoffId(), head: snap.head, wip: snap.snapshot, sourceBranch: snap.branch, ...extra };
  const result = await checkPlacement({ ...req, source: p.sourceHost, sourceRepo: p.source });
  return { req, plan: result };
}

async function handoff(p: Pair, extra: Partial<PlacementRequest> = {}) {
  const f = await plan(p, extra);
  await transfer({ source: p.sourceHost, sourceRepo: p.source, target: p.targetHost, targetRepo: p.target, id: f.req.id, head: f.req.head, wip: f.req.wip });
  const record = await place(f.req);
  expect(g(p.target, 'for-each-ref', 'refs/handoff/').trim()).toBe('');
  // The record survives a JSON round trip (it goes into the journal).
  expect(PlacementRecordSchema.parse(JSON.parse(JSON.stringify(record)))).toEqual(record);
  return { ...f, record };
}

async function refused(promise: Promise<unknown>): Promise<HandoffError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HandoffError);
  return err as HandoffError;
}

describe('placement naming (pure)', () => {
  it('slugs branch names into safe folder names', () => {
    expect(branchSlug('feature/login')).toBe('feature-login');
    expect(branchSlug('feat/it\'s-"q"-$(id)-ü')).toBe('feat-it-s-q-id');
    expect(branchSlug('../..')).toBe('branch');
    expect(branchSlug('.hidden')).toBe('hidden');
  });
  it('suffixes taken names and sees ref-store clashes', () => {
    const existing = new Set(['main', 'feature', 'feature-2', 'a/b']);
    expect(firstFree('feature', (c) => branchTaken(c, existing))).toBe('feature-3');
    expect(firstFree('new', (c) => branchTaken(c, existing))).toBe('new');
    expect(branchTaken('a', existing)).toBe(true);
    expect(branchTaken('main/x', existing)).toBe(true);
  });
});

describe('place', () => {
  it('fast-forwards the checked-out branch and applies the work (index untouched); undo restores it exactly', async () => {
    const p = makePair();
    write(p.source, 'src/more.ts', 'more\n');
    commitAll(p.source, 'ahead on the laptop');
    makeWork(p.source);
    const before = fingerprintRepo(p.target, { indexBytes: false });
    const oldHead = g(p.target, 'rev-parse', 'HEAD').trim();
    const { plan: pl, record, req } = await handoff(p);
    expect(pl).toMatchObject({ mode: 'checked-out', worktree: p.target, branch: 'main', fastForward: true, branchTip: oldHead });
    expect(record.actions.map((a) => a.kind)).toEqual(['fast-forwarded', 'snapshot-applied']);
    expect(record.previousCommit).toBe(oldHead);
    expect(g(p.target, 'rev-parse', 'HEAD').trim()).toBe(req.head);
    // Same files as the source (the source's .git excluded), index = HEAD.
    expect(listFiles(p.target)).toEqual(listFiles(p.source));
    expect(g(p.target, 'diff', '--cached', '--name-only').trim()).toBe('');
    expect(g(p.target, 'ls-files', '--others', '--exclude-standard', '-z').split('\0').filter(Boolean).sort()).toEqual(['bin.dat', 'new/file.txt', ODD].sort());
    expect(fs.readFileSync(path.join(p.target, 'bin.dat')).equals(BINARY)).toBe(true);

    const undo = await undoPlacement(p.targetHost, record);
    expect(undo.errors).toEqual([]);
    expect(fingerprintRepo(p.target, { indexBytes: false })).toBe(before);
  });

  it('plans without changing anything on the target: files, index bytes, refs, config', async () => {
    const p = makePair();
    write(p.source, 'ahead.txt', 'a\n');
    commitAll(p.source, 'ahead');
    makeWork(p.source);
    const before = fingerprintRepo(p.target);
    const objects = g(p.target, 'count-objects', '-v');
    const { plan: pl } = await plan(p);
    expect(pl).toMatchObject({ mode: 'checked-out', fastForward: true });
    expect(pl.changedFiles.map((f) => f.path).sort()).toEqual(['README.md', 'bin.dat', 'new/file.txt', 'src/app.ts', ODD].sort());
    expect(fingerprintRepo(p.target)).toBe(before);
    expect(g(p.target, 'count-objects', '-v')).toBe(objects);
  });

  it('refuses a dirty checked-out branch before anything changes', async () => {
    const p = makePair();
    makeWork(p.source);
    write(p.target, 'README.md', 'local edit on vega\n');
    const before = fingerprintRepo(p.target);
    const err = await refused(plan(p));
    expect(err.code).toBe('target_dirty');
    expect(err.message).toContain(p.target);
    expect(err.message).toContain('README.md');
    expect(err.fix).toMatch(/--new-branch/);
    // place() refuses the same way after the objects arrived, and leaves the checkout alone.
    const snap = await snapshot(p.sourceHost, p.source);
    const id = newHandoffId();
    await transfer({ source: p.sourceHost, sourceRepo: p.source, target: p.targetHost, targetRepo: p.target, id, head: snap.head, wip: snap.snapshot });
    expect((await refused(place({ target: p.targetHost, targetRepo: p.target, id, head: snap.head, wip: snap.snapshot, sourceBranch: 'main' }))).code).toBe('target_dirty');
    expect(fingerprintRepo(p.target)).toBe(before);
  });

  it('refuses a diverged branch (checked out or not)', async () => {
    const p = makePair();
    write(p.target, 'vega.txt', 'v\n');
    commitAll(p.target, 'only on vega');
    makeWork(p.source);
    const before = fingerprintRepo(p.target);
    expect((await refused(plan(p))).code).toBe('target_diverged');
    g(p.target, 'checkout', '-q', '-b', 'elsewhere');
    const before2 = fingerprintRepo(p.target);
    expect((await refused(plan(p))).code).toBe('target_diverged');
    expect(fingerprintRepo(p.target)).toBe(before2);
    expect(before).not.toBe(before2);
  });

  it('refuses, before anything changes, work that would overwrite untracked or ignored files', async () => {
    const p = makePair();
    makeWork(p.source);
    write(p.target, 'new/file.txt', 'vega has its own untracked file here\n');
    const before = fingerprintRepo(p.target);
    const err = await refused(plan(p));
    expect(err.code).toBe('apply_conflict');
    expect(err.details?.files).toEqual(['new/file.txt']);
    expect(fingerprintRepo(p.target)).toBe(before);
    // A file where the work needs a folder clashes too.
    fs.rmSync(path.join(p.target, 'new'), { recursive: true });
    write(p.target, 'new', 'a file, not a folder\n');
    expect((await refused(plan(p))).details?.files).toEqual(['new']);
    // An ignored file on the target (its own exclude rules) is just as much in the way.
    fs.rmSync(path.join(p.target, 'new'));
    write(p.target, '.git/info/exclude', 'bin.dat\n');
    write(p.target, 'bin.dat', 'vega build output\n');
    expect(g(p.target, 'status', '--porcelain').trim()).toBe('');
    expect((await refused(plan(p))).details?.files).toEqual(['bin.dat']);
  });

  it('adds a worktree beside the repository when the branch is not checked out; undo removes it and the branch', async () => {
    const p = makePair();
    g(p.source, 'checkout', '-q', '-b', 'feature/login');
    write(p.source, 'login.ts', 'login\n');
    commitAll(p.source, 'login');
    g(p.source, 'push', '-q', 'origin', 'feature/login');
    g(p.target, 'fetch', '-q', 'origin');
    makeWork(p.source);
    const before = fingerprintRepo(p.target);
    const { record, plan: pl } = await handoff(p);
    const wt = `${p.target}.worktrees/feature-login`;
    expect(pl).toMatchObject({ mode: 'new-worktree', worktree: wt, branchTip: null });
    expect(record.actions.map((a) => a.kind)).toEqual(['branch-created', 'worktree-added', 'snapshot-applied', 'upstream-set']);
    expect(g(wt, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('feature/login');
    expect(g(wt, 'rev-parse', '--abbrev-ref', '@{upstream}').trim()).toBe('origin/feature/login');
    expect(listFiles(wt)).toEqual(listFiles(p.source));
    expect(read(wt, 'new/file.txt')).toBe('new\n');
    // The main checkout did not move.
    expect(g(p.target, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('main');

    const undo = await undoPlacement(p.targetHost, record);
    expect(undo.errors).toEqual([]);
    expect(exists(path.dirname(wt), '')).toBe(false);
    expect(fingerprintRepo(p.target)).toBe(before);
  });

  it('moves a branch that is not checked out forward and undoes it', async () => {
    const p = makePair();
    g(p.target, 'branch', 'feature', 'HEAD~1');
    g(p.source, 'checkout', '-q', '-b', 'feature');
    write(p.source, 'f.txt', 'f\n');
    commitAll(p.source, 'feature work');
    const before = fingerprintRepo(p.target);
    const oldTip = g(p.target, 'rev-parse', 'feature').trim();
    const { record } = await handoff(p);
    expect(record.actions).toEqual([
      { kind: 'branch-moved', branch: 'feature', from: oldTip, to: record.head },
      { kind: 'worktree-added', path: `${p.target}.worktrees/feature`, createdHome: `${p.target}.worktrees` },
    ]);
    expect(record.wip).toBeNull();
    expect((await undoPlacement(p.targetHost, record)).errors).toEqual([]);
    expect(fingerprintRepo(p.target)).toBe(before);
  });

  it('makes a new branch with -2 when the name is taken, and handoff/<session> for a detached HEAD', async () => {
    const p = makePair();
    g(p.target, 'branch', 'spike');
    makeWork(p.source);
    const { record } = await handoff(p, { newBranch: 'spike' });
    expect(record.branch).toBe('spike-2');
    expect(record.worktree).toBe(`${p.target}.worktrees/spike-2`);
    expect(g(p.target, 'rev-parse', 'main').trim()).not.toBe(''); // main untouched
    expect((await undoPlacement(p.targetHost, record)).errors).toEqual([]);

    g(p.source, 'stash', '-q', '-u');
    g(p.source, 'checkout', '-q', '--detach', 'HEAD');
    write(p.source, 'detached.txt', 'd\n');
    // Named after the session's first 8 letters and digits; -2 when that branch exists there.
    g(p.target, 'branch', 'handoff/0199f3c2');
    const r2 = (await handoff(p, { sessionId: '0199f3c2-5d1e-7a40-9b11-2f6c0c7d8e01' })).record;
    expect(r2.branch).toBe('handoff/0199f3c2-2');
    expect(r2.worktree).toBe(`${p.target}.worktrees/handoff-0199f3c2-2`);
    expect(read(r2.worktree, 'detached.txt')).toBe('d\n');
    expect((await undoPlacement(p.targetHost, r2)).errors).toEqual([]);
    expect(g(p.target, 'branch', '--list', 'handoff/*').trim()).toBe('handoff/0199f3c2');
    // No session id: the handoff id's random part.
    const r3 = (await handoff(p)).record;
    expect(r3.branch).toBe(`handoff/${r3.id.split('-').pop()!.slice(0, 8)}`);
    expect((await undoPlacement(p.targetHost, r3)).errors).toEqual([]);
  });

  it('handles a hostile branch name end to end', async () => {
    const p = makePair();
    const branch = 'feat/it\'s-"q"-`id`-$(id)-ü';
    g(p.source, 'checkout', '-q', '-b', branch);
    makeWork(p.source);
    const { record } = await handoff(p);
    expect(record.branch).toBe(branch);
    expect(record.worktree).toBe(`${p.target}.worktrees/feat-it-s-q-id-id`);
    expect(g(record.worktree, 'symbolic-ref', 'HEAD').trim()).toBe(`refs/heads/${branch}`);
    // Every path in these tests contains `$(touch pwned)`: nothing may have run it.
    for (const dir of [record.worktree, p.target, path.dirname(p.target), process.cwd()]) expect(fs.existsSync(path.join(dir, 'pwned'))).toBe(false);
    expect((await undoPlacement(p.targetHost, record)).errors).toEqual([]);
  });

  it('picks a free worktree folder when the natural one exists', async () => {
    const p = makePair();
    g(p.source, 'checkout', '-q', '-b', 'topic');
    fs.mkdirSync(`${p.target}.worktrees/topic`, { recursive: true });
    const { record } = await handoff(p);
    expect(record.worktree).toBe(`${p.target}.worktrees/topic-2`);
    expect(record.actions.find((a) => a.kind === 'worktree-added')).toMatchObject({ createdHome: null });
    await undoPlacement(p.targetHost, record);
    expect(fs.existsSync(`${p.target}.worktrees/topic`)).toBe(true);
  });

  it('does not undo over work done after the apply', async () => {
    const p = makePair();
    makeWork(p.source);
    const { record } = await handoff(p);
    write(p.target, 'src/app.ts', 'edited on vega after the handoff\n');
    const undo = await undoPlacement(p.targetHost, record);
    expect(undo.errors.map((e) => e.action.kind)).toContain('snapshot-applied');
    expect(read(p.target, 'src/app.ts')).toBe('edited on vega after the handoff\n');
  });

  it('works from a linked worktree on the source and when the agent sits in a subfolder', async () => {
    const p = makePair();
    const wt = path.join(path.dirname(p.source), 'wt');
    g(p.source, 'worktree', 'add', '-q', '-b', 'side', wt);
    write(wt, 'deep/er/x.txt', 'x\n');
    const snap = await snapshot(p.sourceHost, path.join(wt, 'deep'));
    expect(snap.relativeCwd).toBe('deep');
    const req: PlacementRequest = { target: p.targetHost, targetRepo: p.target, id: newHandoffId(), head: snap.head, wip: snap.snapshot, sourceBranch: snap.branch };
    await checkPlacement({ ...req, source: p.sourceHost, sourceRepo: snap.repoRoot });
    await transfer({ source: p.sourceHost, sourceRepo: snap.repoRoot, target: p.targetHost, targetRepo: p.target, id: req.id, head: snap.head, wip: snap.snapshot });
    const record = await place(req);
    expect(read(path.join(record.worktree, snap.relativeCwd), 'er/x.txt')).toBe('x\n');
  });
});
