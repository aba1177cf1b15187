// SOURCE_CHECKOUT_SCRIPT (src/git/source-checkout.ts): the agent's checkout and its snapshot read
// in one program, under each POSIX shell. Its answer must be what the long way reads (realpath,
// then the layout and the remotes, each on its own, then snapshotOf), for checkouts in hostile
// folders reached through links, with hostile remote names and URLs and hostile changed files;
// and its refusals those of the long way (the snapshot's apart from the checkout's).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HandoffError } from '../../src/errors.js';
import { repoRemotes } from '../../src/git/discover.js';
import { repoLayout, snapshotOf, type Snapshot } from '../../src/git/snapshot.js';
import { readSourceCheckout, sourceCheckoutParts } from '../../src/git/source-checkout.js';
import type { RunOptions, RunResult } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { canaryFolder, hostileFileNames } from '../host/hostile-args.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { cleanupTemp, g, tempDir, write } from './repos.js';

afterAll(cleanupTemp);

/** A LocalHost whose `/bin/sh` programs run under another POSIX shell. */
class ShellHost extends LocalHost {
  constructor(private readonly shell: readonly string[]) {
    super();
  }
  override run(argv: readonly string[], opts?: RunOptions): Promise<RunResult> {
    return super.run(argv[0] === '/bin/sh' ? [...this.shell, ...argv.slice(1)] : argv, opts);
  }
}

/** The long way: what the plan read before, one question at a time. */
async function longWay(host: LocalHost, folder: string) {
  const cwd = await host.realpath(folder);
  const layout = await repoLayout(host, cwd);
  return { cwd, layout, remotes: await repoRemotes(host, cwd, layout.repoRoot) };
}

/** readSourceCheckout with its remotes resolved (its snapshot apart), to compare with the long way. */
async function readWhole(host: LocalHost, folder: string) {
  const { snapshot, ...read } = await readSourceCheckout(host, folder);
  snapshot.catch(() => undefined);
  return { ...read, remotes: await read.remotes };
}

/** The snapshot the one program made, and the one snapshotOf makes of the same checkout now. */
async function bothSnapshots(host: LocalHost, folder: string): Promise<[Snapshot, Snapshot]> {
  const read = await readSourceCheckout(host, folder);
  return [await read.snapshot, await snapshotOf(host, read.layout)];
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (err instanceof HandoffError) return err.code;
  return err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err);
}

/** A committed repository at `dir` with `remotes` (name → URL) set in its config. */
function repoAt(dir: string, remotes: [string, string][]): void {
  fs.mkdirSync(dir, { recursive: true });
  g(dir, 'init', '-q');
  write(dir, 'sub/dir/file.txt', 'hello\n');
  g(dir, 'add', '-A');
  g(dir, 'commit', '-q', '-m', 'first');
  for (const [name, url] of remotes) g(dir, 'config', `remote.${name}.url`, url);
}

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('readSourceCheckout under %s', (_name, shell) => {
  const host = new ShellHost(shell);
  // Commits made a second apart differ only by their dates: fixed here, the two ways' snapshot commits are the same object.
  const dates = ['GIT_AUTHOR_DATE', 'GIT_COMMITTER_DATE'] as const;
  beforeEach(() => {
    for (const d of dates) process.env[d] = '2026-12-07T10:00:00Z';
  });
  afterEach(() => {
    for (const d of dates) delete process.env[d];
  });

  it('makes the snapshot snapshotOf makes: hostile changed, added and removed files on a branch, a clean tree, a detached HEAD', async () => {
    const root = tempDir('ah-source-co-');
    const canaries = canaryFolder(root);
    const names = hostileFileNames(canaries).filter((n) => !n.includes('\n'));
    const repo = path.join(root, 'it\'s $(touch x) repo');
    repoAt(repo, [['origin', 'https://example.invalid/r.git']]);
    g(repo, 'checkout', '-q', '-b', names.find((n) => /^[A-Za-z]/.test(n) && !/[\s~^:?*[\\]/.test(n)) ?? 'topic');
    // Clean: the tree is HEAD's, no commit.
    const [cleanOne, cleanLong] = await bothSnapshots(host, path.join(repo, 'sub'));
    expect(cleanOne).toEqual(cleanLong);
    expect(cleanOne.snapshot).toBeNull();
    for (const [i, name] of names.slice(0, 12).entries()) write(repo, `new ${i}/${name}`, `${i}\n`);
    write(repo, 'sub/dir/file.txt', 'changed\n');
    g(repo, 'add', '-A');
    write(repo, 'untracked $(touch y).txt', 'u\n');
    fs.rmSync(path.join(repo, 'sub/dir/file.txt'));
    const [one, long] = await bothSnapshots(host, path.join(repo, 'sub'));
    expect(one).toEqual(long);
    expect(one.snapshot).toMatch(/^[0-9a-f]{40}$/);
    expect(one.changedFiles.length).toBeGreaterThan(12);
    expect(g(repo, 'log', '-1', '--format=%s', one.snapshot!).trim()).toBe(`agent-handoff snapshot of ${one.branch}`);
    // Detached: the message says so.
    g(repo, 'checkout', '-q', '--detach');
    const [detachedOne, detachedLong] = await bothSnapshots(host, repo);
    expect(detachedOne).toEqual(detachedLong);
    expect(g(repo, 'log', '-1', '--format=%s', detachedOne.snapshot!).trim()).toBe('agent-handoff snapshot of detached HEAD');
    // Nothing the user sees changed: the index and HEAD are as they were, no temporary index left.
    expect(g(repo, 'status', '--porcelain=v1', '-z', '--untracked-files=all').split('\0').filter(Boolean).some((l) => l.startsWith('A '))).toBe(true);
    expect(fs.readdirSync(path.join(repo, '.git')).filter((f) => f.startsWith('agent-handoff-'))).toEqual([]);
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('a snapshot that cannot be made fails alone, as snapshotOf fails: the checkout is still read', async () => {
    const root = tempDir('ah-source-co-');
    const repo = path.join(root, 'repo');
    repoAt(repo, []);
    write(repo, 'dirty.txt', 'x\n');
    // The real index cannot be copied: a folder in its place.
    fs.rmSync(path.join(repo, '.git', 'index'));
    fs.mkdirSync(path.join(repo, '.git', 'index'));
    const read = await readSourceCheckout(host, repo);
    expect(read.layout.repoRoot).toBe(repo);
    expect(await refusal(read.snapshot)).toBe(await refusal(snapshotOf(host, read.layout)));
    const err = await read.snapshot.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err instanceof HandoffError && err.message).toMatch(/^Could not copy the git index in .*\.git on /);
  });

  it('reads what the long way reads, for hostile folders through links and hostile remotes', async () => {
    const root = tempDir('ah-source-co-');
    const canaries = canaryFolder(root);
    const names = hostileFileNames(canaries).filter((n) => !n.includes('\n'));
    for (const [i, name] of names.slice(0, 10).entries()) {
      const repo = path.join(root, `${i} ${name}`, 'repo');
      const hostile = names[(i + 3) % names.length]!;
      repoAt(repo, [
        ['upstream', `https://example.invalid/${encodeURIComponent(hostile)}.git`],
        [hostile.replace(/[.\s]/g, '_') || 'x', `git@example.invalid:team/${i}.git`],
        ['origin', '../origin.git'],
      ]);
      // Reached through a link to a subfolder, as herdr may tell it.
      const link = path.join(root, `link ${i}`);
      fs.symlinkSync(path.join(repo, 'sub'), link);
      const folder = path.join(link, 'dir');
      const got = await readWhole(host, folder);
      expect(got).toEqual(await longWay(host, folder));
      expect(got.cwd).toBe(path.join(repo, 'sub', 'dir'));
      expect(got.layout.relativeCwd).toBe('sub/dir');
      expect(got.remotes[0]!.name).toBe('origin');
      expect(got.remotes).toHaveLength(3);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('a linked worktree, a detached HEAD and no remote at all', async () => {
    const root = tempDir('ah-source-co-');
    const repo = path.join(root, 'main repo');
    repoAt(repo, []);
    const linked = path.join(root, "it's linked");
    g(repo, 'worktree', 'add', '-q', '--detach', linked);
    const got = await readWhole(host, linked);
    expect(got).toEqual(await longWay(host, linked));
    expect(got.remotes).toEqual([]);
    expect(got.layout.branch).toBeNull();
    expect(got.layout.commonDir).toBe(path.join(repo, '.git'));
  });

  it('tells the folder and the layout without waiting for a local-path remote to be resolved', async () => {
    const root = tempDir('ah-source-co-');
    const repo = path.join(root, 'repo');
    repoAt(repo, [['origin', '../origin.git']]);
    // The host's realpath (a round trip across a link) held until the layout has been told.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = new (class extends ShellHost {
      override async realpath(p: string): Promise<string> {
        await held;
        return super.realpath(p);
      }
    })(shell);
    const read = await readSourceCheckout(slow, repo);
    expect(read.layout.repoRoot).toBe(repo);
    let resolved = false;
    void read.remotes.then(() => (resolved = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(resolved).toBe(false);
    release();
    expect((await read.remotes).map((r) => r.key)).toEqual([path.join(root, 'origin.git')]);
  });

  it('refuses as the long way does: not a checkout, no commit yet, a folder that is gone', async () => {
    const root = tempDir('ah-source-co-');
    const plain = path.join(root, 'plain $(touch x)');
    fs.mkdirSync(plain);
    expect(await refusal(readSourceCheckout(host, plain))).toBe('not_a_repo');
    const unborn = path.join(root, 'unborn');
    fs.mkdirSync(unborn);
    g(unborn, 'init', '-q');
    expect(await refusal(readSourceCheckout(host, unborn))).toBe('unborn_head');
    const gone = path.join(root, 'gone');
    expect(await refusal(readSourceCheckout(host, gone))).toBe(await refusal(longWay(host, gone)));
  });
});

describe('sourceCheckoutParts', () => {
  const rows: [string, string, ReturnType<typeof sourceCheckoutParts>][] = [
    ['no remotes, the layout failed', '/r\n\0\x001\0/r\nlayout', { cwd: '/r', urls: '', urlsExit: 1, layout: '/r\nlayout', snapshot: null }],
    ['two remotes, the layout failed', '/r\n\0remote.a.url\nu1\0remote.b.url\nu2\0\x000\0L', { cwd: '/r', urls: 'remote.a.url\nu1\0remote.b.url\nu2\0', urlsExit: 0, layout: 'L', snapshot: null }],
    ['a folder with a newline of its own', '/a\nb\n\0\x001\0L', { cwd: '/a\nb', urls: '', urlsExit: 1, layout: 'L', snapshot: null }],
    ['a clean snapshot', '/r\n\0\x001\0L\n\0t\n', { cwd: '/r', urls: '', urlsExit: 1, layout: 'L\n', snapshot: 't\n' }],
    ['a snapshot commit and what it changes (NULs of its own)', '/r\n\0\x001\0L\n\0t\nc\nM\0a\0A\0b\0', { cwd: '/r', urls: '', urlsExit: 1, layout: 'L\n', snapshot: 't\nc\nM\0a\0A\0b\0' }],
    ['a snapshot that wrote nothing', '/r\n\0\x001\0L\n\0', { cwd: '/r', urls: '', urlsExit: 1, layout: 'L\n', snapshot: '' }],
    ['cut before the URLs end', '/r\n\0remote.a.url\nu1\0', null],
    ['cut before git’s exit ends', '/r\n\0\x001', null],
    ['nothing', '', null],
  ];
  for (const [what, stdout, expected] of rows) it(what, () => expect(sourceCheckoutParts(stdout)).toEqual(expected));
});
