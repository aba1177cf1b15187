// The plan's look at the target: everything the plan needs there in ONE program, each answer
// parsed apart (herdr, integrations, home, free space and the agent CLI, the remembered
// checkouts, the likely placement), with folder names and branches that a shell must not read.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adapterFor } from '../../adapters/index.js';
import { repoRemotes } from '../../src/git/discover.js';
import { branchSlug } from '../../src/git/worktrees.js';
import { HerdrClient } from '../../src/herdr/client.js';
import type { RunOptions } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { lookAtTarget } from '../../src/handoff/target-look.js';
import type { Side } from '../../src/handoff/sides.js';
import { cleanupTemp, g, makePair, tempDir } from '../git/repos.js';

afterAll(cleanupTemp);

/** A herdr that answers the probe and `integration status` as herdr 0.8.2 does. */
function fakeHerdr(dir: string): string {
  const bin = path.join(dir, 'herdr');
  fs.writeFileSync(
    bin,
    [
      '#!/bin/sh',
      'case "$1 $2" in',
      `  "status server") echo '{"status":"running","running":true,"version":"0.8.2","protocol":1,"compatible":true,"socket":"${dir}/herdr.sock"}' ;;`,
      '  "integration status") echo "pi: current (v7) (/x/pi.ts)"; echo "claude: not installed (/x/claude)" ;;',
      '  *) exit 2 ;;',
      'esac',
    ].join('\n'),
    { mode: 0o755 },
  );
  return bin;
}

/** A LocalHost that counts the programs it runs. */
class CountingHost extends LocalHost {
  runs: string[][] = [];
  override run(argv: readonly string[], opts?: RunOptions) {
    this.runs.push([...argv]);
    return super.run(argv, opts);
  }
}

describe('lookAtTarget', () => {
  it('asks herdr, the home, the free space, the agent CLI, the remembered checkout and its placement in one program', async () => {
    const pair = makePair();
    const bins = tempDir('ah-look-bin-');
    const herdrBin = fakeHerdr(bins);
    fs.writeFileSync(path.join(bins, 'pi'), '#!/bin/sh\n', { mode: 0o755 });
    // The target checkout sits in a folder whose name a shell would read, on a branch with a quote.
    const hostile = path.join(tempDir('ah-look-'), "it's $(touch canary) `x`");
    fs.renameSync(pair.target, hostile);
    g(hostile, 'checkout', '-q', '-b', "feat/it's");
    const host = new CountingHost({ env: { ...process.env, PATH: `${bins}:${process.env.PATH ?? ''}` } });
    await host.info();
    const side: Side = { role: 'target', spec: 'local', host, herdr: new HerdrClient(host, { bin: herdrBin }), info: await host.info() };
    const remotes = await repoRemotes(pair.sourceHost, pair.source);
    const look = await lookAtTarget(side, { adapter: adapterFor('pi'), repo: { remotes, branch: "feat/it's" }, searching: true, remembered: [hostile], likelyBranch: "feat/it's", sessionDests: async (_ctx, worktrees) => worktrees.map((w) => `${w}/session.jsonl`), timeoutMs: 30_000 });
    const [probe, integrations, ctx, space, checkouts, read] = await Promise.all([look.probe, look.integrations, look.ctx, look.space, look.discovery!.remembered!.checkouts, look.guess!.read]);
    expect(host.runs).toHaveLength(1);
    expect(probe).toMatchObject({ path: herdrBin, server: 'running', version: { version: '0.8.2', ok: true } });
    expect(integrations.find((i) => i.target === 'pi')).toMatchObject({ status: 'current', version: 7 });
    expect(ctx.homeReal).toBe(fs.realpathSync(side.info.home));
    expect(space.program).toBe(path.join(bins, 'pi'));
    expect(space.free.availKb).toBeGreaterThan(0);
    expect(checkouts.map((c) => c.path)).toEqual([hostile]);
    expect(checkouts[0]!.branchWorktree).toBe(hostile);
    expect(read.worktrees[0]!.path).toBe(hostile);
    expect(read.likely).toEqual({ path: `${hostile}.worktrees/${branchSlug("feat/it's")}`, exists: false });
    expect(read.homeExists).toBe(false);
    // The ledger was asked about the session's files in both likely worktrees (no entries: nothing hashed).
    const left = await look.left!;
    expect([...left.states.keys()]).toEqual([`${hostile}/session.jsonl`, `${read.likely!.path}/session.jsonl`]);
    expect([...left.states.values()].every((st) => st.left === null && st.sha256Now === null)).toBe(true);
    expect(fs.existsSync(path.join(path.dirname(hostile), 'canary'))).toBe(false);
  });

  it("without a remembered checkout reads the target's cache and config in the same program; a failing part fails only its own answer", async () => {
    const pair = makePair();
    const bins = tempDir('ah-look-bin-');
    const host = new CountingHost({ env: { ...process.env, PATH: `${bins}:${process.env.PATH ?? ''}` } });
    const info = await host.info();
    // No herdr on the PATH: the probe says not installed; everything else still answers.
    const side: Side = { role: 'target', spec: 'local', host, herdr: new HerdrClient(host), info };
    const remotes = await repoRemotes(pair.sourceHost, pair.source);
    const look = await lookAtTarget(side, { adapter: adapterFor('claude'), repo: { remotes, branch: 'main' }, searching: true, remembered: [], likelyBranch: 'main', sessionDests: async () => ['/nowhere/session.jsonl'], timeoutMs: 30_000 });
    expect(look.guess).toBeNull();
    // Without a likely checkout the session's destinations are not known yet: the ledger is asked later.
    expect(look.left).toBeNull();
    expect(look.discovery?.remembered).toBeNull();
    const [probe, space] = await Promise.all([look.probe, look.space]);
    await expect(look.integrations).rejects.toThrow();
    await look.discovery!.cache;
    expect(probe).toMatchObject({ path: null, server: 'not_installed' });
    expect(space.program).toBeNull();
    expect(host.runs).toHaveLength(1);
  });
});
