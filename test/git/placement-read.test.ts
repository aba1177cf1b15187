// PLACEMENT_READ_PROGRAM (src/git/placement-read.ts), what deciding a placement reads of the target
// checkout, under each POSIX shell: whether the likely new worktree and the worktree home exist,
// whether the likely branch tracks something, the worktrees and every ref. Branch names as git
// allows them ($, quotes, parentheses, semicolons…) are data: nothing in them is ever run.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isFresh, PLACEMENT_READ_PROGRAM, placementReadProgram, placementReadsOf } from '../../src/git/placement-read.js';
import { LocalHost } from '../../src/host/local.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tempDir = tempDirs('ah-placement-read-');

function git(cwd: string, args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' }).trim();
}

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('PLACEMENT_READ_PROGRAM under %s', (_name, shell) => {
  it('says whether the likely branch tracks something, for names a shell would run', () => {
    const dir = tempDir();
    const repo = path.join(dir, 'repo');
    const canary = path.join(repo, 'canary');
    git(dir, ['init', '-q', repo]);
    fs.writeFileSync(path.join(repo, 'a'), 'a\n');
    git(repo, ['add', '.']);
    git(repo, ['commit', '-qm', 'one']);
    // Run in the checkout, each would make `canary` there (git refuses spaces and slashes in names).
    const hostile = ['x$(touch${IFS}canary)', `it's"q";touch\${IFS}canary`, 'a`touch${IFS}canary`', 'b|c&d;touch${IFS}canary'];
    const host = new LocalHost();
    const read = (branch: string | null) => {
      const p = placementReadProgram(repo, branch);
      expect(p.argv.slice(0, 3)).toEqual(['/bin/sh', '-c', PLACEMENT_READ_PROGRAM]);
      const stdout = execFileSync(shell[0]!, [...shell.slice(1), ...p.argv.slice(1)], { cwd: p.cwd, env: { ...process.env, ...p.env }, encoding: 'utf8' });
      return placementReadsOf(host, repo, branch, { exitCode: 0, stdout, stderr: '', durationMs: 0 });
    };
    for (const name of hostile) {
      git(repo, ['branch', name]);
      expect(read(name).upstream).toEqual({ branch: name, set: false });
      git(repo, ['config', `branch.${name}.merge`, `refs/heads/${name}`]);
      expect(read(name).upstream).toEqual({ branch: name, set: true });
      expect(read(name).refs.branches.has(name)).toBe(true);
    }
    // Not asked without a likely branch; the rest of the answer as before.
    const none = read(null);
    expect(none.upstream).toBeNull();
    expect(none.likely).toBeNull();
    expect(none.homeExists).toBe(false);
    expect(none.worktrees.map((w) => w.path)).toEqual([repo]);
    expect(fs.existsSync(canary)).toBe(false);
  });
});

describe('isFresh', () => {
  const at = (readAt: number) => ({ worktrees: [], refs: { branches: new Set<string>(), tips: new Map(), origin: new Set<string>(), all: [] }, likely: null, homeExists: false, upstream: null, readAt });
  it('a read of the last few seconds stands; an older one, or none, does not', () => {
    expect(isFresh(at(1_000), 5_000)).toBe(true);
    expect(isFresh(at(1_000), 10_999)).toBe(true);
    expect(isFresh(at(1_000), 11_000)).toBe(false);
    expect(isFresh(null)).toBe(false);
    expect(isFresh(undefined)).toBe(false);
  });
});
