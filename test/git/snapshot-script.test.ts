// SNAPSHOT_SCRIPT (src/git/snapshot.ts), the working tree and its commit in one program, run
// directly under each POSIX shell in a checkout under a hostile folder, with hostile messages:
// the tree on the first line, then (only when it is not HEAD's) the commit of it on HEAD and what
// it changes; the real index untouched, the temporary one gone, nothing in the data run. And
// LAYOUT_SCRIPT, the checkout's layout with its physical top, from the top, a subfolder and a
// symlinked path, in an unborn repository and outside one. And LAYOUT_AND_TREE_SCRIPT, both in one
// program for the snapshot after the quit: the layout, a NUL, the working tree of the checkout
// looked at before.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GIT_BASE_CONFIG, GIT_BASE_ENV } from '../../src/git/git.js';
import { LAYOUT_AND_TREE_SCRIPT, LAYOUT_SCRIPT, SNAPSHOT_IDENTITY, SNAPSHOT_SCRIPT } from '../../src/git/snapshot.js';
import { hostileArgs } from '../host/hostile-args.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { cleanupTemp, g, makePair, tempDir, write } from './repos.js';

afterAll(cleanupTemp);

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('SNAPSHOT_SCRIPT under %s', (_name, shell) => {
  const run = (cwd: string, head: string, headTree: string, message: string) => {
    const gitDir = g(cwd, 'rev-parse', '--absolute-git-dir').trim();
    const argv = ['-c', SNAPSHOT_SCRIPT, 'sh', path.join(gitDir, 'index'), path.join(gitDir, 'ah-test-index'), head, headTree, message, ...GIT_BASE_CONFIG];
    const r = spawnSync(shell[0]!, [...shell.slice(1), ...argv], { cwd, encoding: 'utf8', env: { ...process.env, ...GIT_BASE_ENV, ...SNAPSHOT_IDENTITY } });
    expect(fs.existsSync(path.join(gitDir, 'ah-test-index'))).toBe(false);
    return r;
  };

  it('answers the tree alone when the work is HEAD’s', () => {
    const { source } = makePair();
    const head = g(source, 'rev-parse', 'HEAD').trim();
    const tree = g(source, 'rev-parse', 'HEAD^{tree}').trim();
    const r = run(source, head, tree, 'm');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${tree}\n`);
  });

  it('commits the work on HEAD with the message as given, and says what it changes', () => {
    const { source } = makePair();
    const canaries = path.join(path.dirname(source), 'canaries');
    fs.mkdirSync(canaries, { recursive: true });
    write(source, 'src/app.ts', 'changed\n');
    write(source, 'new $(x).txt', 'new\n');
    const head = g(source, 'rev-parse', 'HEAD').trim();
    const headTree = g(source, 'rev-parse', 'HEAD^{tree}').trim();
    const index = fs.readFileSync(path.join(g(source, 'rev-parse', '--absolute-git-dir').trim(), 'index'));
    for (const message of hostileArgs(canaries).filter((m) => m.trim() !== '' && !m.includes('\0'))) {
      const r = run(source, head, headTree, message);
      expect(r.status, r.stderr).toBe(0);
      const [tree, commit, ...rest] = r.stdout.split('\n');
      expect(tree).toMatch(/^[0-9a-f]{40}$/);
      expect(tree).not.toBe(headTree);
      expect(g(source, 'rev-parse', `${commit}^`).trim()).toBe(head);
      expect(g(source, 'rev-parse', `${commit}^{tree}`).trim()).toBe(tree);
      // The message as git keeps it when given as one argument, no shell between.
      const direct = g(source, 'commit-tree', '-p', head, '-m', message, tree!).trim();
      expect(g(source, 'log', '-1', '--format=%B', commit!)).toBe(g(source, 'log', '-1', '--format=%B', direct));
      expect(rest.join('\n').split('\0').filter(Boolean)).toEqual(['A', 'new $(x).txt', 'M', 'src/app.ts']);
    }
    expect(fs.readFileSync(path.join(g(source, 'rev-parse', '--absolute-git-dir').trim(), 'index'))).toEqual(index);
    expect(fs.readdirSync(canaries)).toEqual([]);
  });
});

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('LAYOUT_SCRIPT under %s', (_name, shell) => {
  const layout = (cwd: string) => spawnSync(shell[0]!, [...shell.slice(1), '-c', LAYOUT_SCRIPT], { cwd, encoding: 'utf8', env: { ...process.env, ...GIT_BASE_ENV } });

  it('says the layout and the physical top, from the top, a subfolder and a symlinked path', () => {
    const { source } = makePair();
    fs.mkdirSync(path.join(source, 'sub $(x)'));
    const link = path.join(path.dirname(source), 'link to it');
    fs.symlinkSync(source, link);
    const head = g(source, 'rev-parse', 'HEAD').trim();
    const tree = g(source, 'rev-parse', 'HEAD^{tree}').trim();
    for (const [cwd, prefix] of [[source, ''], [path.join(source, 'sub $(x)'), 'sub $(x)/'], [path.join(link, 'sub $(x)'), 'sub $(x)/']] as const) {
      const r = layout(cwd);
      expect(r.status, r.stderr).toBe(0);
      const lines = r.stdout.split('\n');
      expect(lines.slice(3)).toEqual([prefix, head, tree, 'refs/heads/main', fs.realpathSync(source), '']);
      expect(lines[0]).toBe(fs.realpathSync(source));
    }
  });

  it('prints what git said and exits as git did, in an unborn repository and outside one', () => {
    const unborn = path.join(tempDir(), 'unborn $(x)');
    fs.mkdirSync(unborn);
    g(unborn, 'init', '-q');
    const r = layout(unborn);
    expect(r.status).not.toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(fs.realpathSync(unborn));
    expect(r.stderr).toMatch(/ambiguous argument 'HEAD'|unknown revision/);
    const outside = layout(tempDir());
    expect(outside.status).toBe(128);
    expect(outside.stdout).toBe('\n');
  });
});

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('LAYOUT_AND_TREE_SCRIPT under %s', (_name, shell) => {
  /** Run from `cwd` for the checkout at `top` (as looked at before): its stdout split at the NUL. */
  const run = (cwd: string, top: string) => {
    const gitDir = g(top, 'rev-parse', '--absolute-git-dir').trim();
    const argv = ['-c', LAYOUT_AND_TREE_SCRIPT, 'sh', path.join(gitDir, 'index'), path.join(gitDir, 'ah-test-index'), top, ...GIT_BASE_CONFIG];
    const r = spawnSync(shell[0]!, [...shell.slice(1), ...argv], { cwd, encoding: 'utf8', env: { ...process.env, ...GIT_BASE_ENV } });
    expect(fs.existsSync(path.join(gitDir, 'ah-test-index'))).toBe(false);
    const cut = r.stdout.indexOf('\0');
    return { r, layout: cut < 0 ? null : r.stdout.slice(0, cut), tree: cut < 0 ? null : r.stdout.slice(cut + 1) };
  };

  it('says the layout as LAYOUT_SCRIPT does, then the working tree, for checkouts under hostile folders', () => {
    const canaries = path.join(tempDir(), 'canaries');
    fs.mkdirSync(canaries);
    for (const name of hostileArgs(canaries).filter((n) => n.trim() !== '' && !n.includes('/') && !n.includes('\0') && n !== '.' && n !== '..').slice(0, 12)) {
      const { source } = makePair();
      const top = path.join(path.dirname(source), name);
      fs.renameSync(source, top);
      fs.mkdirSync(path.join(top, 'sub'));
      write(top, 'new.txt', 'work\n');
      const index = fs.readFileSync(path.join(top, '.git', 'index'));
      const { r, layout, tree } = run(path.join(top, 'sub'), top);
      expect(r.status, `${JSON.stringify(name)}: ${r.stderr}`).toBe(0);
      const alone = spawnSync(shell[0]!, [...shell.slice(1), '-c', LAYOUT_SCRIPT], { cwd: path.join(top, 'sub'), encoding: 'utf8', env: { ...process.env, ...GIT_BASE_ENV } });
      expect(layout).toBe(alone.stdout);
      expect(tree).toMatch(/^[0-9a-f]{40}\n$/);
      expect(tree!.trim()).not.toBe(g(top, 'rev-parse', 'HEAD^{tree}').trim());
      expect(g(top, 'ls-tree', '--name-only', tree!.trim(), 'new.txt').trim()).toBe('new.txt');
      expect(fs.readFileSync(path.join(top, '.git', 'index'))).toEqual(index);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it("prints the layout's failure and exit code alone, with no tree, in an unborn repository and outside one", () => {
    const { source } = makePair();
    const unborn = path.join(tempDir(), 'unborn $(x)');
    fs.mkdirSync(unborn);
    g(unborn, 'init', '-q');
    const gone = run(unborn, source);
    expect(gone.r.status).not.toBe(0);
    expect(gone.layout).toBeNull();
    expect(gone.r.stdout.split('\n')[0]).toBe(fs.realpathSync(unborn));
    expect(gone.r.stderr).toMatch(/ambiguous argument 'HEAD'|unknown revision/);
    const outside = run(tempDir(), source);
    expect(outside.r.status).toBe(128);
    expect(outside.r.stdout).toBe('\n');
  });

  it("fails with the tree's exit code after the layout when the checkout looked at before is gone", () => {
    const { source } = makePair();
    const other = makePair().source;
    const gitDir = g(other, 'rev-parse', '--absolute-git-dir').trim();
    fs.rmSync(other, { recursive: true });
    fs.mkdirSync(path.dirname(gitDir), { recursive: true });
    const argv = ['-c', LAYOUT_AND_TREE_SCRIPT, 'sh', path.join(gitDir, 'index'), path.join(gitDir, 'ah-test-index'), other, ...GIT_BASE_CONFIG];
    const r = spawnSync(shell[0]!, [...shell.slice(1), ...argv], { cwd: source, encoding: 'utf8', env: { ...process.env, ...GIT_BASE_ENV } });
    expect(r.status).not.toBe(0);
    expect(r.stdout.indexOf('\0')).toBeGreaterThan(0);
    expect(r.stdout.slice(r.stdout.indexOf('\0') + 1)).toBe('');
  });
});
