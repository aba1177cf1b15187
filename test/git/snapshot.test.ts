import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HandoffError } from '../../src/errors.js';
import { LocalHost } from '../../src/host/local.js';
import { sameWork, snapshot, snapshotAgain } from '../../src/git/snapshot.js';
import { cleanupTemp, commitAll, fingerprintRepo, g, makePair, tempDir, write } from './repos.js';

afterAll(cleanupTemp);

const BINARY = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13, 0, 128]);
const ODD_NAME = 'dir with space/naïve «file» $(echo hi) \'q\'.txt';

describe('snapshot', () => {
  it('returns no snapshot for a clean tree', async () => {
    const { source, sourceHost } = makePair();
    const s = await snapshot(sourceHost, source);
    expect(s.snapshot).toBeNull();
    expect(s.changedFiles).toEqual([]);
    expect(s.branch).toBe('main');
    expect(s.head).toBe(g(source, 'rev-parse', 'HEAD').trim());
    expect(s.tree).toBe(g(source, 'rev-parse', 'HEAD^{tree}').trim());
    expect(s.repoRoot).toBe(source);
    expect(s.relativeCwd).toBe('');
    expect(s.fingerprint).toBe(`${s.head}:${s.tree}`);
  });

  it('captures staged, unstaged, untracked, deleted, binary and oddly named files without touching anything', async () => {
    const { source, sourceHost } = makePair();
    write(source, '.gitignore', 'ignored.log\n');
    write(source, 'old.txt', 'to be deleted\n');
    commitAll(source, 'ignore');
    write(source, 'README.md', 'hello, staged\n');
    g(source, 'add', 'README.md');
    write(source, 'src/app.ts', 'export const answer = 44; // unstaged\n');
    write(source, 'new.txt', 'untracked\n');
    write(source, 'bin.dat', BINARY);
    write(source, ODD_NAME, 'odd\n');
    write(source, 'ignored.log', 'not moved\n');
    fs.rmSync(path.join(source, 'old.txt'));
    const before = fingerprintRepo(source);
    const s = await snapshot(sourceHost, source);
    expect(fingerprintRepo(source)).toBe(before);
    expect(s.snapshot).toMatch(/^[0-9a-f]{40}$/);
    expect(g(source, 'rev-parse', `${s.snapshot}^`).trim()).toBe(s.head);
    const files = Object.fromEntries(s.changedFiles.map((f) => [f.path, f.status]));
    expect(files).toEqual({ 'README.md': 'M', 'src/app.ts': 'M', 'new.txt': 'A', 'bin.dat': 'A', [ODD_NAME]: 'A', 'old.txt': 'D' });
    expect(Buffer.from(execBlob(source, `${s.snapshot}:bin.dat`))).toEqual(BINARY);
    expect(g(source, 'show', `${s.snapshot}:${ODD_NAME}`)).toBe('odd\n');
    expect(files['ignored.log']).toBeUndefined();
  });

  it('snapshots again after the quit from the layout seen before: the same answer as a fresh snapshot, a moved HEAD included', async () => {
    const { source, sourceHost } = makePair();
    write(source, 'src/app.ts', 'first\n');
    const before = await snapshot(sourceHost, source);
    // The agent wrote more before it quit, and someone committed.
    write(source, 'late.txt', 'late\n');
    g(source, 'add', 'src/app.ts');
    g(source, 'commit', '-q', '-m', 'moved');
    write(source, 'src/app.ts', 'second\n');
    const again = await snapshotAgain(sourceHost, source, before);
    const fresh = await snapshot(sourceHost, source);
    expect(again.head).not.toBe(before.head);
    expect({ head: again.head, tree: again.tree, changed: again.changedFiles, root: again.repoRoot, fingerprint: again.fingerprint }).toEqual({
      head: fresh.head,
      tree: fresh.tree,
      changed: fresh.changedFiles,
      root: fresh.repoRoot,
      fingerprint: fresh.fingerprint,
    });
    expect(g(source, 'rev-parse', `${again.snapshot}^`).trim()).toBe(fresh.head);
    expect(g(source, 'show', `${again.snapshot}:src/app.ts`)).toBe('second\n');
  });

  it('snapshots again unchanged: the snapshot from before, its commit included (what went ahead stands); a changed file is new work', async () => {
    const { source, sourceHost } = makePair();
    write(source, 'src/app.ts', 'first\n');
    write(source, 'new.txt', 'untracked\n');
    const before = await snapshot(sourceHost, source);
    const again = await snapshotAgain(sourceHost, source, before);
    expect(again).toEqual(before);
    expect(sameWork(again, before)).toBe(true);
    write(source, 'new.txt', 'written while quitting\n');
    const changed = await snapshotAgain(sourceHost, source, before);
    expect(changed.head).toBe(before.head);
    expect(changed.snapshot).not.toBe(before.snapshot);
    expect(sameWork(changed, before)).toBe(false);
    expect(g(source, 'show', `${changed.snapshot}:new.txt`)).toBe('written while quitting\n');
  });

  it('works without any git identity configured', async () => {
    const { source } = makePair();
    const home = tempDir('ah-home-');
    const host = new LocalHost({ env: { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: path.join(home, 'none') } });
    expect((await host.run(['git', 'config', 'user.name'], { cwd: source })).exitCode).toBe(1);
    write(source, 'x.txt', 'x\n');
    const s = await snapshot(host, source);
    expect(s.snapshot).not.toBeNull();
    expect(g(source, 'log', '-1', '--format=%an <%ae>', s.snapshot as string).trim()).toBe('agent-handoff <agent-handoff@localhost>');
  });

  it('handles a detached HEAD', async () => {
    const { source, sourceHost } = makePair();
    g(source, 'checkout', '-q', '--detach', 'HEAD~1');
    write(source, 'd.txt', 'd\n');
    const s = await snapshot(sourceHost, source);
    expect(s.branch).toBeNull();
    expect(s.head).toBe(g(source, 'rev-parse', 'HEAD').trim());
    expect(s.snapshot).not.toBeNull();
  });

  it('records the subfolder the agent runs in', async () => {
    const { source, sourceHost } = makePair();
    write(source, 'src/deep/er/f.txt', 'f\n');
    const s = await snapshot(sourceHost, path.join(source, 'src', 'deep'));
    expect(s.relativeCwd).toBe('src/deep');
    expect(s.repoRoot).toBe(source);
    expect(s.changedFiles).toEqual([{ status: 'A', path: 'src/deep/er/f.txt' }]);
  });

  it('works inside a linked worktree, leaving both indexes alone', async () => {
    const { source, sourceHost } = makePair();
    const wt = path.join(path.dirname(source), 'proj-wt');
    g(source, 'worktree', 'add', '-q', '-b', 'feature', wt);
    write(wt, 'feature.txt', 'f\n');
    write(source, 'main-only.txt', 'm\n');
    const before = fingerprintRepo(wt);
    const s = await snapshot(sourceHost, wt);
    expect(fingerprintRepo(wt)).toBe(before);
    expect(s.branch).toBe('feature');
    expect(s.gitDir).toBe(path.join(source, '.git', 'worktrees', 'proj-wt'));
    expect(s.commonDir).toBe(path.join(source, '.git'));
    expect(s.changedFiles).toEqual([{ status: 'A', path: 'feature.txt' }]);
  });

  it('refuses an unborn HEAD with the fix', async () => {
    const repo = tempDir();
    g(repo, 'init', '-q');
    write(repo, 'a.txt', 'a\n');
    const err = await snapshot(new LocalHost(), repo).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HandoffError);
    expect((err as HandoffError).code).toBe('unborn_head');
    expect((err as HandoffError).fix).toMatch(/first commit/);
  });

  it('says when the folder is not a repository', async () => {
    const dir = tempDir();
    const err = await snapshot(new LocalHost(), dir).catch((e: unknown) => e);
    expect((err as HandoffError).code).toBe('not_a_repo');
  });
});

function execBlob(repo: string, spec: string): Buffer {
  return execFileSync('git', ['cat-file', 'blob', spec], { cwd: repo });
}
