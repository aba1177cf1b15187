// Real repositories for the git tests: an origin, a "source machine" clone and a "target
// machine" clone, each in its own temp folder (two LocalHosts = two machines).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleGit } from 'simple-git';
import { LocalHost } from '../../src/host/local.js';

const made: string[] = [];

export function tempDir(prefix = 'ah-git-'): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(d);
  return d;
}

export function cleanupTemp(): void {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

const IDENTITY = ['-c', 'user.name=Tester', '-c', 'user.email=tester@example.invalid', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgSign=false'];

/** git in `cwd`, output as text (throws on failure). */
export function g(cwd: string, ...args: string[]): string {
  // No optional locks: a test's own `git status` must not rewrite the index it is checking.
  return execFileSync('git', [...IDENTITY, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } });
}

export function write(root: string, rel: string, content: string | Buffer): void {
  const p = path.join(root, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

export function read(root: string, rel: string): string {
  return fs.readFileSync(path.join(root, rel), 'utf8');
}

export function exists(root: string, rel: string): boolean {
  try {
    fs.lstatSync(path.join(root, rel));
    return true;
  } catch {
    return false;
  }
}

export function commitAll(repo: string, message: string): string {
  g(repo, 'add', '-A');
  g(repo, 'commit', '-q', '-m', message);
  return g(repo, 'rev-parse', 'HEAD').trim();
}

export interface Pair {
  origin: string;
  source: string;
  target: string;
  sourceHost: LocalHost;
  targetHost: LocalHost;
}

/** origin with two commits on main; source and target clones on different "machines". */
export function makePair(opts: { files?: number } = {}): Pair {
  // Hostile on purpose: every path of every test has a space, quotes, $() and non-ASCII in it.
  const base = path.join(tempDir(), `it's "a" $(touch pwned) ü`);
  fs.mkdirSync(base);
  const seed = path.join(base, 'seed');
  fs.mkdirSync(seed);
  g(seed, 'init', '-q');
  write(seed, 'README.md', 'hello\n');
  write(seed, 'src/app.ts', 'export const answer = 42;\n');
  for (let i = 0; i < (opts.files ?? 0); i++) write(seed, `lib/file${i}.txt`, `file ${i}\n`.repeat(200));
  commitAll(seed, 'initial');
  write(seed, 'src/app.ts', 'export const answer = 43;\n');
  commitAll(seed, 'second');
  const origin = path.join(base, 'origin.git');
  g(base, 'clone', '-q', '--bare', seed, origin);
  const source = path.join(base, 'laptop', 'src', 'proj');
  const target = path.join(base, 'vega', 'code', 'proj');
  fs.mkdirSync(path.dirname(source), { recursive: true });
  fs.mkdirSync(path.dirname(target), { recursive: true });
  g(base, 'clone', '-q', origin, source);
  g(base, 'clone', '-q', origin, target);
  return { origin, source, target, sourceHost: new LocalHost(), targetHost: new LocalHost() };
}

/** Status of a checkout as simple-git reports it (to prove what changed and what did not). */
export async function status(repo: string): Promise<{ staged: string[]; modified: string[]; notAdded: string[]; deleted: string[]; current: string | null }> {
  const s = await simpleGit(repo).status();
  return { staged: s.staged, modified: s.modified, notAdded: s.not_added, deleted: s.deleted, current: s.current };
}

/** Everything that describes a repository's state: refs, index bytes, HEAD, worktrees, status. */
export function fingerprintRepo(repo: string, opts: { indexBytes?: boolean } = {}): string {
  const refs = g(repo, 'for-each-ref', '--format=%(refname) %(objectname)');
  const files = listFiles(repo);
  const gitDir = g(repo, 'rev-parse', '--absolute-git-dir').trim();
  // Raw index bytes prove nothing wrote it; `ls-files -s` is the index content (undo rewrites stat data).
  const index = opts.indexBytes === false ? g(repo, 'ls-files', '-s') : fs.existsSync(path.join(gitDir, 'index')) ? fs.readFileSync(path.join(gitDir, 'index')).toString('base64') : '';
  const head = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8');
  const worktrees = g(repo, 'worktree', 'list', '--porcelain');
  const st = g(repo, 'status', '--porcelain=v1', '-uall', '--ignored');
  const config = g(repo, 'config', '--local', '-l');
  return JSON.stringify({ refs, files, index, head, worktrees, st, config });
}

/** Every file below `root` (not .git) with its content hash and mode. */
export function listFiles(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = path.join(dir, e.name);
      const rel = path.relative(root, p);
      if (e.isDirectory()) walk(p);
      else if (e.isSymbolicLink()) out[rel] = `link:${fs.readlinkSync(p)}`;
      else out[rel] = `${(fs.statSync(p).mode & 0o777).toString(8)}:${createHash('sha1').update(fs.readFileSync(p)).digest('hex')}`;
    }
  };
  walk(root);
  return out;
}
