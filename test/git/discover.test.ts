import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HandoffError } from '../../src/errors.js';
import type { Host, HostInfo } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { discoverCheckout, discoveryLook, likelyCheckouts, rankCheckouts, repoRemotes, type RemoteOfRepo } from '../../src/git/discover.js';
import { QuestionBatch } from '../../src/host/run-side-by-side.js';
import { recallCheckouts, rememberCheckouts } from '../../src/git/checkout-memory.js';
import { normaliseRemote } from '../../src/git/remote-url.js';
import { cleanupTemp, g, makePair, tempDir } from './repos.js';

afterAll(cleanupTemp);

describe('normaliseRemote', () => {
  it('gives every spelling of a hosted repository one form', () => {
    const same = [
      'git@github.com:Owner/Repo.git',
      'git@github.com:owner/repo',
      'ssh://git@github.com/owner/repo.git',
      'ssh://git@github.com:22/owner/repo.git',
      'ssh://git@GitHub.com:2222/Owner/Repo/',
      'https://github.com/owner/repo',
      'https://user:token@github.com/owner/repo.git/',
      'https://github.com/owner/repo//',
      'git://github.com/owner/repo.git',
      'github.com:owner/repo.git',
      '  https://github.com/owner/repo.git \n',
    ];
    for (const url of same) expect(normaliseRemote(url), url).toBe('github.com/owner/repo');
  });
  it('keeps what tells repositories apart', () => {
    expect(normaliseRemote('git@gitlab.com:group/sub/repo.git')).toBe('gitlab.com/group/sub/repo');
    expect(normaliseRemote('https://gitlab.com/group/sub/repo')).toBe('gitlab.com/group/sub/repo');
    expect(normaliseRemote('git@github.com:owner/repo2.git')).not.toBe(normaliseRemote('git@github.com:owner/repo.git'));
    expect(normaliseRemote('ssh://[::1]:22/srv/repo.git')).toBe('::1/srv/repo');
    expect(normaliseRemote('ssh://host/~user/repo.git')).toBe('host/~user/repo');
    expect(normaliseRemote('')).toBe('');
  });
  it('leaves local paths as paths (case kept) for realpath', () => {
    expect(normaliseRemote('/srv/Git/Repo.git/')).toBe('/srv/Git/Repo.git');
    expect(normaliseRemote('file:///srv/Git/repo%20x.git')).toBe('/srv/Git/repo x.git');
    expect(normaliseRemote('../sibling')).toBe('../sibling');
    expect(normaliseRemote('/weird:path/x')).toBe('/weird:path/x');
  });
});

describe('repoRemotes', () => {
  it('reads from a folder inside the checkout, and resolves a relative local remote from its top, origin first', async () => {
    const top = path.join(tempDir(), 'top dir');
    fs.mkdirSync(path.join(top, 'sub', 'deeper'), { recursive: true });
    const bare = path.join(path.dirname(top), 'bare.git');
    g(path.dirname(top), 'init', '-q', '--bare', bare);
    g(top, 'init', '-q');
    g(top, 'remote', 'add', 'mirror', '../bare.git');
    g(top, 'remote', 'add', 'origin', 'git@github.com:Owner/Repo.git');
    g(top, 'remote', 'add', 'abs', bare);
    let resolveRoot!: (root: string) => void;
    const root = new Promise<string>((r) => (resolveRoot = r));
    const reading = repoRemotes(new LocalHost(), path.join(top, 'sub', 'deeper'), root);
    resolveRoot(top);
    expect(await reading).toEqual([
      { name: 'origin', url: 'git@github.com:Owner/Repo.git', key: 'github.com/owner/repo' },
      { name: 'mirror', url: '../bare.git', key: fs.realpathSync(bare) },
      { name: 'abs', url: bare, key: fs.realpathSync(bare) },
    ]);
  });
});

describe('rankCheckouts', () => {
  it('puts the checkout with the branch first, then the most recently used', () => {
    const c = (p: string, branch: boolean, used: number) => ({ path: p, worktrees: [], remote: 'r', branchWorktree: branch ? p : null, lastUsedMs: used });
    expect(rankCheckouts([c('/a', false, 5), c('/b', true, 1), c('/c', false, 9)]).map((x) => x.path)).toEqual(['/b', '/c', '/a']);
  });
});

/** A "target machine" home with checkouts in the usual places, and a LocalHost whose HOME it is. */
function makeHome() {
  const pair = makePair();
  const home = path.join(tempDir(), 'home dir ü');
  fs.mkdirSync(home);
  const clone = (rel: string, url = pair.origin) => {
    const dest = path.join(home, rel);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    g('/', 'clone', '-q', pair.origin, dest);
    if (url !== pair.origin) g(dest, 'remote', 'set-url', 'origin', url);
    return dest;
  };
  const repos = {
    src: clone('src/proj'),
    team: clone('code/team/proj2'),
    deep: clone('work/a/b/c/deep'),
    tooDeep: clone('work/a/b/c/d/too-deep'),
    atHome: clone('proj-home'),
    hostile: clone('src/it\'s "x" $(touch pwned)/proj3'),
    skipped: clone('projects/node_modules/dep'),
    hidden: clone('.hidden/proj'),
    other: clone('src/other', 'git@github.com:someone/else.git'),
  };
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  delete env.XDG_CONFIG_HOME;
  const host = new LocalHost({ env });
  return { pair, home, repos, host, cacheFile: path.join(home, '.config', 'agent-handoff', 'repos.json') };
}

/** A Host whose login environment also carries AGENT_HANDOFF_ROOTS. */
function withLoginEnv(host: Host, extra: Record<string, string>): Host {
  return new Proxy(host, {
    get(t, prop, recv) {
      if (prop === 'info') return async (): Promise<HostInfo> => {
        const info = await t.info();
        return { ...info, loginEnv: { ...info.loginEnv, ...extra } };
      };
      const v = Reflect.get(t, prop, recv) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HandoffError);
  return (err as HandoffError).code;
}

describe('discoverCheckout', () => {
  it('scans the usual roots in one command, ranks, caches, and validates the cache', async () => {
    const w = makeHome();
    const remotes = await repoRemotes(w.pair.sourceHost, w.pair.source);
    expect(remotes[0]).toMatchObject({ name: 'origin', key: fs.realpathSync(w.pair.origin) });
    g(w.repos.team, 'checkout', '-q', '-b', 'feature');
    // Recency: touch the index of proj-home so it ranks above the others without the branch.
    const later = new Date(Date.now() + 60_000);
    fs.utimesSync(path.join(w.repos.atHome, '.git', 'index'), later, later);

    const runs: string[][] = [];
    const counting = new Proxy(w.host, {
      get(t, prop, recv) {
        if (prop === 'run') return (argv: string[], opts: object) => (runs.push(argv), t.run(argv, opts));
        const v = Reflect.get(t, prop, recv) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
      },
    });
    const dry = await discoverCheckout({ target: counting, remotes, branch: 'feature', dryRun: true });
    // One command scans every root; one more describes the matches (worktrees, git dirs).
    expect(runs.map((a) => a[0])).toEqual(['sh', 'sh']);
    expect(fs.existsSync(w.cacheFile)).toBe(false);
    expect(dry.via).toBe('scan');
    const paths = dry.checkouts.map((c) => c.path);
    expect(paths.slice(0, 2)).toEqual([w.repos.team, w.repos.atHome]);
    expect(paths.sort()).toEqual([w.repos.src, w.repos.team, w.repos.deep, w.repos.atHome, w.repos.hostile].sort());
    expect(dry.checkout.branchWorktree).toBe(w.repos.team);
    expect(fs.existsSync(path.join(w.home, 'src', 'pwned'))).toBe(false);

    const first = await discoverCheckout({ target: w.host, remotes, branch: 'feature' });
    await first.saved;
    expect(first).toMatchObject({ via: 'scan', cache: 'miss' });
    expect(JSON.parse(fs.readFileSync(w.cacheFile, 'utf8')).remotes[remotes[0]?.key ?? ''].paths.length).toBe(5);

    const hit = await discoverCheckout({ target: w.host, remotes, branch: 'feature' });
    expect(hit).toMatchObject({ via: 'cache', cache: 'hit', roots: [] });
    expect(hit.checkouts.map((c) => c.path)).toEqual(first.checkouts.map((c) => c.path));

    // A deleted checkout and one that now points elsewhere are dropped; the rest still answer.
    fs.rmSync(w.repos.deep, { recursive: true });
    g(w.repos.src, 'remote', 'set-url', 'origin', 'https://example.invalid/else.git');
    const pruned = await discoverCheckout({ target: w.host, remotes, branch: 'feature' });
    await pruned.saved;
    expect(pruned).toMatchObject({ via: 'cache', cache: 'pruned' });
    expect(pruned.checkouts.map((c) => c.path).sort()).toEqual([w.repos.team, w.repos.atHome, w.repos.hostile].sort());
    expect(JSON.parse(fs.readFileSync(w.cacheFile, 'utf8')).remotes[remotes[0]?.key ?? ''].paths.length).toBe(3);
  });

  it('answers from the checkouts this machine remembers without reading the cache first, and brings the cache up to date', async () => {
    const w = makeHome();
    const remotes = await repoRemotes(w.pair.sourceHost, w.pair.source);
    const key = remotes[0]?.key ?? '';
    g(w.repos.team, 'checkout', '-q', '-b', 'feature');
    const remembered = [w.repos.team, w.repos.atHome];
    // The cache names only one of them: it is read after the answer, off the critical path.
    fs.mkdirSync(path.dirname(w.cacheFile), { recursive: true });
    fs.writeFileSync(w.cacheFile, JSON.stringify({ version: 1, remotes: { [key]: { paths: [w.repos.atHome], updatedAt: 'x' } } }));
    const res = await discoverCheckout({ target: w.host, remotes, branch: 'feature', looked: await look(w.host, remotes, remembered) });
    expect(res).toMatchObject({ via: 'memory', cache: 'off', roots: [] });
    expect(res.checkout.path).toBe(w.repos.team);
    expect(res.checkouts.map((c) => c.path)).toEqual(remembered);
    await res.saved;
    expect(JSON.parse(fs.readFileSync(w.cacheFile, 'utf8')).remotes[key].paths.sort()).toEqual(remembered.sort());

    // Now the cache lists them (the look says so): it is not read again.
    const reads: string[] = [];
    const readFile = w.host.readFile.bind(w.host);
    w.host.readFile = (file: string) => (reads.push(file), readFile(file));
    const again = await discoverCheckout({ target: w.host, remotes, branch: 'feature', looked: await look(w.host, remotes, remembered) });
    await again.saved;
    expect(again).toMatchObject({ via: 'memory' });
    expect(reads).toEqual([]);
    w.host.readFile = readFile;

    // Remembered folders that no longer hold the repository: the cache answers as before.
    fs.rmSync(w.repos.team, { recursive: true });
    const fell = await discoverCheckout({ target: w.host, remotes, branch: 'feature', looked: await look(w.host, remotes, [w.repos.team]) });
    expect(fell).toMatchObject({ via: 'cache', cache: 'pruned' });
    expect(fell.checkout.path).toBe(w.repos.atHome);
    await fell.saved;
  });

  it("without remembered checkouts, the look reads the target's cache and config: the search answers from them, and the cache's first entry is the likely checkout", async () => {
    const w = makeHome();
    const remotes = await repoRemotes(w.pair.sourceHost, w.pair.source);
    const key = remotes[0]?.key ?? '';
    fs.mkdirSync(path.dirname(w.cacheFile), { recursive: true });
    fs.writeFileSync(w.cacheFile, JSON.stringify({ version: 1, remotes: { [key]: { paths: [w.repos.atHome, w.repos.team], updatedAt: 'x' } } }));
    const looked = await look(w.host, remotes, []);
    expect(looked.remembered).toBeNull();
    expect(await likelyCheckouts(looked, remotes)).toEqual([w.repos.atHome, w.repos.team]);
    const res = await discoverCheckout({ target: w.host, remotes, branch: null, looked });
    expect(res).toMatchObject({ via: 'cache', cache: 'hit' });
    // A cache that is not JSON is no cache: the search finds the checkouts, and the likely one is none.
    fs.writeFileSync(w.cacheFile, '{ not json');
    const broken = await look(w.host, remotes, []);
    expect(await likelyCheckouts(broken, remotes)).toEqual([]);
    const scanned = await discoverCheckout({ target: w.host, remotes, branch: null, looked: broken, dryRun: true });
    expect(scanned).toMatchObject({ via: 'scan', cache: 'miss' });
  });

  it('keeps the remembered checkouts per host and repository, privately, and forgets on an empty answer', async () => {
    const file = path.join(tempDir(), 'state', 'checkouts.json');
    expect(recallCheckouts('vega@h:22', 'github.com/o/r', file)).toEqual([]);
    await rememberCheckouts('vega@h:22', 'github.com/o/r', ['/home/vega/r', '/home/vega/r2'], file);
    await rememberCheckouts('vega@h:22', 'github.com/o/other', ['/home/vega/other'], file);
    await rememberCheckouts('local', 'github.com/o/r', ['/home/me/r'], file);
    expect(recallCheckouts('vega@h:22', 'github.com/o/r', file)).toEqual(['/home/vega/r', '/home/vega/r2']);
    expect(recallCheckouts('local', 'github.com/o/r', file)).toEqual(['/home/me/r']);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    await rememberCheckouts('vega@h:22', 'github.com/o/r', [], file);
    expect(recallCheckouts('vega@h:22', 'github.com/o/r', file)).toEqual([]);
    expect(recallCheckouts('vega@h:22', 'github.com/o/other', file)).toEqual(['/home/vega/other']);
    // A damaged file is no memory at all, and is replaced by the next answer.
    fs.writeFileSync(file, '{ not json');
    expect(recallCheckouts('local', 'github.com/o/r', file)).toEqual([]);
    await rememberCheckouts('local', 'github.com/o/r', ['/home/me/r'], file);
    expect(recallCheckouts('local', 'github.com/o/r', file)).toEqual(['/home/me/r']);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['checkouts.json']);
  });

  it('rescans when every cached entry is stale, and matches remotes spelled differently', async () => {
    const w = makeHome();
    for (const r of [w.repos.src, w.repos.team, w.repos.deep, w.repos.atHome, w.repos.hostile]) g(r, 'remote', 'set-url', 'origin', 'git@GitHub.com:Owner/Proj.git');
    fs.mkdirSync(path.dirname(w.cacheFile), { recursive: true });
    const key = 'github.com/owner/proj';
    fs.writeFileSync(w.cacheFile, JSON.stringify({ version: 1, remotes: { [key]: { paths: [path.join(w.home, 'gone')], updatedAt: 'x' } } }));
    const remotes: RemoteOfRepo[] = [{ name: 'origin', url: 'https://github.com/owner/proj', key }];
    const res = await discoverCheckout({ target: w.host, remotes, branch: null });
    await res.saved;
    expect(res).toMatchObject({ via: 'scan', cache: 'stale' });
    expect(res.checkouts).toHaveLength(5);
    expect(JSON.parse(fs.readFileSync(w.cacheFile, 'utf8')).remotes[key].paths).not.toContain(path.join(w.home, 'gone'));
  });

  it('honours roots from the option, AGENT_HANDOFF_ROOTS and config.json', async () => {
    const w = makeHome();
    const remotes = await repoRemotes(w.pair.sourceHost, w.pair.source);
    const viaOption = await discoverCheckout({ target: w.host, remotes, branch: null, roots: ['~/work'], dryRun: true });
    expect(viaOption.checkouts.map((c) => c.path)).toEqual([w.repos.deep]);
    expect(viaOption.roots).toEqual([path.join(w.home, 'work')]);

    const envHost = withLoginEnv(w.host, { AGENT_HANDOFF_ROOTS: `${path.join(w.home, 'code')}:~/proj-home` });
    const viaEnv = await discoverCheckout({ target: envHost, remotes, branch: null, dryRun: true });
    expect(viaEnv.checkouts.map((c) => c.path).sort()).toEqual([w.repos.team, w.repos.atHome].sort());

    fs.mkdirSync(path.join(w.home, '.config', 'agent-handoff'), { recursive: true });
    fs.writeFileSync(path.join(w.home, '.config', 'agent-handoff', 'config.json'), JSON.stringify({ roots: ['~/.hidden', '~/projects/node_modules'] }));
    const viaConfig = await discoverCheckout({ target: w.host, remotes, branch: null, dryRun: true });
    // A root is searched even when hidden or named like a skipped folder; only what is below it is pruned.
    expect(viaConfig.checkouts.map((c) => c.path).sort()).toEqual([w.repos.hidden, w.repos.skipped].sort());
  });

  it('takes --dir when it shares a remote, and refuses it otherwise', async () => {
    const w = makeHome();
    const remotes = await repoRemotes(w.pair.sourceHost, w.pair.source);
    const res = await discoverCheckout({ target: w.host, remotes, branch: null, dir: '~/work/a/b/c/d/too-deep' });
    expect(res).toMatchObject({ via: 'dir', cache: 'off' });
    expect(res.checkout.path).toBe(w.repos.tooDeep);
    const sub = await discoverCheckout({ target: w.host, remotes, branch: null, dir: path.join(w.repos.hostile, 'src') });
    expect(sub.checkout.path).toBe(w.repos.hostile);
    expect(await codeOf(discoverCheckout({ target: w.host, remotes, branch: null, dir: w.repos.other }))).toBe('dir_mismatch');
    expect(await codeOf(discoverCheckout({ target: w.host, remotes, branch: null, dir: w.home }))).toBe('dir_mismatch');
    expect(fs.existsSync(w.cacheFile)).toBe(false);
  });

  it('says clearly when there is no checkout, or no remote to match by', async () => {
    const w = makeHome();
    const remotes: RemoteOfRepo[] = [{ name: 'origin', url: 'git@github.com:nobody/nothing.git', key: 'github.com/nobody/nothing' }];
    expect(await codeOf(discoverCheckout({ target: w.host, remotes, branch: null, dryRun: true }))).toBe('repo_not_found');
    expect(await codeOf(discoverCheckout({ target: w.host, remotes: [], branch: null }))).toBe('no_remote');
  });
});

/** Discovery's part of the plan's look, asked alone. */
async function look(host: Host, remotes: RemoteOfRepo[], remembered: string[]) {
  const batch = new QuestionBatch();
  const looked = discoveryLook(batch, host, await host.info(), remotes, 'feature', remembered);
  batch.send(host);
  return looked;
}
