// SNAPSHOT_SCRIPT (src/git/snapshot.ts), the working tree and its commit in one program, run
// directly under each POSIX shell in a checkout under a hostile folder, with hostile messages:
// the tree on the first line, then (only when it is not HEAD's) the commit of it on HEAD and what
// it changes; the real index untouched, the temporary one gone, nothing in the data run. And
// LAYOUT_SCRIPT, the checkout's layout with its physical top, from the top, a subfolder and a
// symlinked path, in an unborn repository and outside one.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { GIT_BASE_CONFIG, GIT_BASE_ENV } from '../../src/git/git.js';
import { LAYOUT_SCRIPT, SNAPSHOT_IDENTITY, SNAPSHOT_SCRIPT } from '../../src/git/snapshot.js';
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
