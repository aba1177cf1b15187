// STASH_COMMIT_SCRIPT (src/git/stash.ts), the source stash's commit built in one program, run
// directly under each POSIX shell in a checkout under a hostile folder, with hostile branch
// descriptions, messages and untracked file names: the commit has the shape `git stash push -u`
// gives (same trees for the work, the index and the untracked files; same parents), the real
// index is untouched, both temporary files are gone, and nothing in the data ran.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GIT_BASE_CONFIG, GIT_BASE_ENV, splitNul } from '../../src/git/git.js';
import { SNAPSHOT_IDENTITY } from '../../src/git/snapshot.js';
import { STASH_COMMIT_SCRIPT } from '../../src/git/stash.js';
import { hostileArgs, hostileFileNames } from '../host/hostile-args.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { cleanupTemp, g, makePair, write } from './repos.js';

afterAll(cleanupTemp);

const tree = (repo: string, rev: string) => g(repo, 'rev-parse', `${rev}^{tree}`).trim();

/** The trees and parents of a stash commit: work, index, untracked (or null), and HEAD. */
function shape(repo: string, commit: string): { work: string; index: string; untracked: string | null; parents: number; head: string } {
  const parents = g(repo, 'rev-list', '--parents', '-n', '1', commit).trim().split(' ').slice(1);
  return {
    work: tree(repo, commit),
    index: tree(repo, `${commit}^2`),
    untracked: parents[2] ? tree(repo, `${commit}^3`) : null,
    parents: parents.length,
    head: parents[0] ?? '',
  };
}

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('STASH_COMMIT_SCRIPT under %s', (_name, shell) => {
  const run = (repo: string, short: string, message: string) => {
    const gitDir = g(repo, 'rev-parse', '--absolute-git-dir').trim();
    const tmp = path.join(gitDir, 'ah-test-index');
    const list = path.join(gitDir, 'ah-test-untracked');
    const head = g(repo, 'rev-parse', 'HEAD').trim();
    const argv = ['-c', STASH_COMMIT_SCRIPT, 'sh', path.join(gitDir, 'index'), tmp, list, head, short, message, ...GIT_BASE_CONFIG];
    const r = spawnSync(shell[0]!, [...shell.slice(1), ...argv], { cwd: repo, encoding: 'utf8', env: { ...process.env, ...GIT_BASE_ENV, ...SNAPSHOT_IDENTITY } });
    expect(fs.existsSync(tmp)).toBe(false);
    expect(fs.existsSync(list)).toBe(false);
    const nl = r.stdout.indexOf('\n');
    return { ...r, commit: r.stdout.slice(0, nl), untracked: splitNul(r.stdout.slice(nl + 1)) };
  };

  it('builds what `git stash push -u` builds, with hostile untracked names, descriptions and messages', () => {
    const { source } = makePair();
    const canaries = path.join(path.dirname(source), 'canaries');
    fs.mkdirSync(canaries, { recursive: true });
    write(source, 'README.md', 'staged edit\n');
    g(source, 'add', 'README.md');
    write(source, 'src/app.ts', 'unstaged edit\n');
    const names = hostileFileNames(canaries).filter((n) => !n.includes('\0'));
    for (const name of names) write(source, `new/${name}`, `${name}\n`);
    const index = fs.readFileSync(path.join(source, '.git', 'index'));

    const expected = [...names.map((n) => `new/${n}`)].sort();
    for (const text of hostileArgs(canaries).filter((m) => m.trim() !== '' && !m.includes('\0'))) {
      const r = run(source, text, text);
      expect(r.status, r.stderr).toBe(0);
      expect(r.commit).toMatch(/^[0-9a-f]{40}$/);
      expect([...r.untracked].sort()).toEqual(expected);
      expect(g(source, 'log', '-1', '--format=%B', r.commit)).toBe(g(source, 'log', '-1', '--format=%B', g(source, 'commit-tree', '-m', text, tree(source, 'HEAD')).trim()));
      expect(g(source, 'log', '-1', '--format=%B', `${r.commit}^2`)).toBe(g(source, 'log', '-1', '--format=%B', g(source, 'commit-tree', '-m', `index on ${text}`, tree(source, 'HEAD')).trim()));
    }
    expect(fs.readFileSync(path.join(source, '.git', 'index'))).toEqual(index);
    expect(fs.readdirSync(canaries)).toEqual([]);

    // git's own stash of the same state: the same trees and parents.
    const ours = run(source, 'main: 0000000', 'm').commit;
    g(source, 'stash', 'push', '-u', '-q');
    expect(shape(source, ours)).toEqual(shape(source, 'stash@{0}'));
  });

  it('has two parents when nothing is untracked, as `git stash push` makes it', () => {
    const { source } = makePair();
    write(source, 'src/app.ts', 'unstaged edit\n');
    const r = run(source, 'main: 0000000', 'm');
    expect(r.status, r.stderr).toBe(0);
    expect(r.untracked).toEqual([]);
    g(source, 'stash', 'push', '-q');
    expect(shape(source, r.commit)).toEqual(shape(source, 'stash@{0}'));
    expect(shape(source, r.commit).parents).toBe(2);
  });

  it('starts from an empty index when the repository has none, and says why it failed when git does', () => {
    const { source } = makePair();
    const gitDir = path.join(source, '.git');
    fs.rmSync(path.join(gitDir, 'index'));
    const r = run(source, 'main: 0000000', 'm');
    expect(r.status, r.stderr).toBe(0);
    // Every file now counts as untracked (nothing is in an index).
    expect(r.untracked.sort()).toEqual(['README.md', 'src/app.ts']);

    const bad = spawnSync(shell[0]!, [...shell.slice(1), '-c', STASH_COMMIT_SCRIPT, 'sh', path.join(gitDir, 'index'), path.join(gitDir, 't'), path.join(gitDir, 'u'), 'not-a-commit', 's', 'm', ...GIT_BASE_CONFIG], {
      cwd: source,
      encoding: 'utf8',
      env: { ...process.env, ...GIT_BASE_ENV, ...SNAPSHOT_IDENTITY },
    });
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/not-a-commit/);
    expect(fs.existsSync(path.join(gitDir, 't'))).toBe(false);
    expect(fs.existsSync(path.join(gitDir, 'u'))).toBe(false);
  });
});
