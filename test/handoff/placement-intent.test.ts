// The placement's intent (recorded before place changes anything) takes the worktree home and the
// branch's upstream from the plan's read of the checkout while that read is fresh, asking the
// target nothing; an older read, or one about another branch, is asked again.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PlacementPlan } from '../../src/git/placement-decide.js';
import { readPlacementState } from '../../src/git/placement-read.js';
import { placementIntent } from '../../src/handoff/intents.js';
import type { Host } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tempDir = tempDirs('ah-placement-intent-');

function git(cwd: string, args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], { cwd, encoding: 'utf8' }).trim();
}

/** LocalHost, counting what is asked of it. */
function counted(): { host: Host; asked: string[] } {
  const asked: string[] = [];
  const local = new LocalHost();
  const host = new Proxy(local, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (prop === 'run' || prop === 'stat') asked.push(String(prop));
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { host, asked };
}

describe('placementIntent', () => {
  it('asks nothing with a fresh read of the same branch; asks with a stale one or another branch', async () => {
    const repo = path.join(tempDir(), 'repo');
    git(path.dirname(repo), ['init', '-q', repo]);
    fs.writeFileSync(path.join(repo, 'a'), 'a\n');
    git(repo, ['add', '.']);
    git(repo, ['commit', '-qm', 'one']);
    git(repo, ['branch', 'feature']);
    git(repo, ['config', 'branch.feature.merge', 'refs/heads/feature']);
    const head = git(repo, ['rev-parse', 'HEAD']);
    const plan = { id: 'h1', repo, branch: 'feature', mode: 'checked-out', worktree: repo, branchTip: head, head, wip: null } as unknown as PlacementPlan;
    const read = await readPlacementState(new LocalHost(), repo, 'feature');

    const fresh = counted();
    expect(await placementIntent(fresh.host, plan, read)).toMatchObject({ hadUpstream: true, homeExisted: false });
    expect(fresh.asked).toEqual([]);

    const stale = counted();
    git(repo, ['config', '--unset', 'branch.feature.merge']);
    expect(await placementIntent(stale.host, plan, { ...read, readAt: Date.now() - 60_000 })).toMatchObject({ hadUpstream: false, homeExisted: false });
    expect(stale.asked.sort()).toEqual(['run', 'stat']);

    const other = counted();
    expect(await placementIntent(other.host, { ...plan, branch: 'other' }, read)).toMatchObject({ hadUpstream: false });
    expect(other.asked).toEqual(['run']);
  });
});
