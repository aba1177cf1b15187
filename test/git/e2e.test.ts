// The git steps between the two world machines over ssh: source = laptop, target = vega, both
// reached through SshHost (so the controller relays the pack between two remote hosts, and git
// runs as the owning user, never as root on someone else's repository).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverCheckout, repoRemotes } from '../../src/git/discover.js';
import { checkPlacement, place, undoPlacement } from '../../src/git/place.js';
import { snapshot } from '../../src/git/snapshot.js';
import { stashSourceChanges } from '../../src/git/stash.js';
import { cleanupRefs, newHandoffId, transfer } from '../../src/git/transfer.js';
import type { Host } from '../../src/host/host.js';
import { SshHost } from '../../src/host/ssh.js';
import type { World } from '../world/machines.js';
import { makeSshFixture } from '../host/ssh-fixtures.js';
import { useWorld } from '../helpers/world.js';

let world: World;
let laptop: SshHost;
let vega: SshHost;
const tag = `ah-git-e2e-${randomBytes(4).toString('hex')}`;

async function sh(host: Host, cwd: string, argv: string[], stdin?: string): Promise<string> {
  const r = await host.run(argv, { cwd, ...(stdin !== undefined ? { stdin } : {}) });
  if (r.exitCode !== 0) throw new Error(`${argv.join(' ')} on ${host.label} failed: ${r.stderr}`);
  return r.stdout;
}

/** Fresh clones of the world's origin in each user's home (the world's own checkouts stay untouched). */
async function clones(name: string): Promise<{ source: string; target: string }> {
  const source = `${world.users.laptop?.home}/${tag}/src/${name}`;
  const target = `${world.users.vega?.home}/${tag}/code/${name}`;
  await sh(laptop, world.users.laptop?.home ?? '/', ['git', 'clone', '-q', world.origin, source]);
  await sh(vega, world.users.vega?.home ?? '/', ['git', 'clone', '-q', world.origin, target]);
  return { source, target };
}

beforeAll(async () => {
  world = await useWorld();
  const fx = makeSshFixture(world);
  try {
    laptop = await SshHost.connect('w-laptop', fx.opts);
    vega = await SshHost.connect('w-vega', fx.opts);
  } finally {
    fs.rmSync(fx.dir, { recursive: true, force: true });
  }
});

afterAll(async () => {
  await laptop?.remove(`${world.users.laptop?.home}/${tag}`, { recursive: true }).catch(() => undefined);
  await vega?.remove(`${world.users.vega?.home}/${tag}`, { recursive: true }).catch(() => undefined);
  await laptop?.close();
  await vega?.close();
});

describe('git steps laptop → vega over ssh', () => {
  it('snapshot, discover, check, transfer, place, stash — and the files arrive exactly', async () => {
    const { source, target } = await clones('hark');
    await sh(laptop, source, ['git', 'checkout', '-q', '-b', 'feature/ssh']);
    await laptop.writeFile(`${source}/src/app.ts`, 'export const answer = 7;\n');
    await sh(laptop, source, ['git', 'commit', '-q', '-am', 'laptop commit']);
    await laptop.writeFile(`${source}/src/app.ts`, 'edited on the laptop\n');
    await laptop.mkdirp(`${source}/notes dir`);
    await laptop.writeFile(`${source}/notes dir/ünï 'q' $(id).txt`, 'untracked\n');
    await laptop.writeFile(`${source}/blob.bin`, Buffer.from([0, 255, 0, 1, 2]));
    await sh(laptop, source, ['git', 'rm', '-q', 'README.md']);

    const snap = await snapshot(laptop, `${source}/src`);
    expect(snap).toMatchObject({ branch: 'feature/ssh', relativeCwd: 'src', repoRoot: source });
    const remotes = await repoRemotes(laptop, source);
    const found = await discoverCheckout({ target: vega, remotes, branch: snap.branch, roots: [`~/${tag}`], dryRun: true });
    expect(found.checkout.path).toBe(target);

    const id = newHandoffId();
    const req = { target: vega, targetRepo: found.checkout.path, id, head: snap.head, wip: snap.snapshot, sourceBranch: snap.branch };
    const plan = await checkPlacement({ ...req, source: laptop, sourceRepo: snap.repoRoot });
    expect(plan).toMatchObject({ mode: 'new-worktree', worktree: `${target}.worktrees/feature-ssh` });

    const started = Date.now();
    const sent = await transfer({ source: laptop, sourceRepo: snap.repoRoot, target: vega, targetRepo: target, id, head: snap.head, wip: snap.snapshot });
    console.log(`e2e transfer laptop → vega: ${sent.bytesSent} bytes in ${Date.now() - started} ms (common tips ${sent.commonTips})`);
    expect(sent.bytesSent).toBeGreaterThan(0);
    expect(sent.bytesSent).toBeLessThan(2000);

    const record = await place(req);
    const wt = record.worktree;
    expect((await vega.readFile(`${wt}/src/app.ts`)).toString()).toBe('edited on the laptop\n');
    expect((await vega.readFile(`${wt}/notes dir/ünï 'q' $(id).txt`)).toString()).toBe('untracked\n');
    expect([...(await vega.readFile(`${wt}/blob.bin`))]).toEqual([0, 255, 0, 1, 2]);
    expect(await vega.stat(`${wt}/README.md`)).toBeNull();
    expect(await sh(vega, wt, ['git', 'for-each-ref', 'refs/handoff/'])).toBe('');
    expect(await sh(vega, wt, ['git', 'diff', '--cached', '--name-only'])).toBe('');

    const stash = await stashSourceChanges({ host: laptop, snapshot: snap, id, targetLabel: 'vega' });
    expect(stash.stashed).toBe(true);
    expect(await sh(laptop, source, ['git', 'status', '--porcelain'])).toBe('');
    expect(await sh(laptop, source, ['git', 'stash', 'list'])).toContain(`agent-handoff ${id} → vega`);

    expect((await undoPlacement(vega, record)).errors).toEqual([]);
    expect(await vega.stat(wt)).toBeNull();
    expect(await sh(vega, target, ['git', 'branch', '--list', 'feature/ssh'])).toBe('');
  });

  it('refuses a dirty target checkout over ssh before anything changes, and leaves no refs', async () => {
    const { source, target } = await clones('dirty');
    await laptop.writeFile(`${source}/README.md`, 'laptop\n');
    await vega.writeFile(`${target}/README.md`, 'vega has local work\n');
    const snap = await snapshot(laptop, source);
    const id = newHandoffId();
    const req = { target: vega, targetRepo: target, id, head: snap.head, wip: snap.snapshot, sourceBranch: snap.branch };
    const err = await checkPlacement({ ...req, source: laptop, sourceRepo: source }).catch((e: unknown) => e as { code: string });
    expect(err).toMatchObject({ code: 'target_dirty' });
    await transfer({ source: laptop, sourceRepo: source, target: vega, targetRepo: target, id, head: snap.head, wip: snap.snapshot });
    await cleanupRefs(vega, target, id);
    expect(await sh(vega, target, ['git', 'for-each-ref', 'refs/handoff/'])).toBe('');
    expect((await vega.readFile(`${target}/README.md`)).toString()).toBe('vega has local work\n');
  });
});
