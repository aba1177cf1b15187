// RECEIVE_SCRIPT (src/git/transfer.ts), the transfer's arrival on the target, under each POSIX
// shell: the first file (the incoming marker) is written before anything else, private, with its
// text exactly; then the pack is indexed and the refs made in one transaction, each only when the
// step before succeeded. Folder, file and text are hostile data: nothing in them is ever run.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GIT_BASE_ENV } from '../../src/git/git.js';
import { receiveArgv } from '../../src/git/transfer.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { hostileArgs } from '../host/hostile-args.js';

const tempDir = tempDirs('ah-receive-');
const ID = '20261206-101010-0123456789';

function git(cwd: string, args: string[], input?: Buffer | string): string {
  return execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], { cwd, encoding: 'utf8', ...(input !== undefined ? { input } : {}) }).trim();
}

/** A source repository with one commit, and an empty target repository. */
function pair(): { source: string; target: string; head: string; pack: Buffer } {
  const dir = tempDir();
  const source = path.join(dir, 'source');
  const target = path.join(dir, 'target');
  for (const r of [source, target]) git(dir, ['init', '-q', r]);
  fs.writeFileSync(path.join(source, 'a.txt'), 'a\n');
  git(source, ['add', '.']);
  git(source, ['commit', '-qm', 'one']);
  const head = git(source, ['rev-parse', 'HEAD']);
  const pack = execFileSync('git', ['pack-objects', '--stdout', '--revs', '-q'], { cwd: source, input: `${head}\n` });
  return { source, target, head, pack };
}

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('RECEIVE_SCRIPT under %s', (_name, shell) => {
  const receive = (cwd: string, argv: string[], input: Buffer | string = '') => {
    // The argv is `/bin/sh -c SCRIPT sh …args`: the same arguments under this shell.
    expect(argv.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    return spawnSync(shell[0]!, [...shell.slice(1), ...argv.slice(1)], { cwd, input, env: { ...process.env, ...GIT_BASE_ENV }, encoding: 'utf8' });
  };
  const refs = (repo: string) => git(repo, ['for-each-ref', '--format=%(refname) %(objectname)']);

  it('writes the first file (hostile folder, name and text), then indexes the pack and makes the refs', () => {
    const p = pair();
    const canaries = path.join(path.dirname(p.target), 'canaries');
    fs.mkdirSync(canaries);
    for (const [i, word] of hostileArgs(canaries).entries()) {
      // A folder name holds at most 255 bytes, an argument 128 KiB: the long words are cut to fit.
      const dir = path.join(path.dirname(p.target), `state ${i}`, word.replace(/\//g, '_').slice(0, 200) || 'empty', 'incoming');
      const file = path.join(dir, `${ID}.json`);
      const text = JSON.stringify({ id: ID, agent: word.slice(0, 4096) });
      const r = receive(p.target, receiveArgv(ID, [`create refs/handoff/${ID}/head ${p.head}`], { dir, file, text: `${text}${word.slice(0, 4096)}` }, true), p.pack);
      expect(r.status, `${String(r.error)} ${r.signal} ${r.stderr}`).toBe(0);
      expect(fs.readFileSync(file, 'utf8')).toBe(`${text}${word.slice(0, 4096)}\n`);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
      expect(refs(p.target)).toBe(`refs/handoff/${ID}/head ${p.head}`);
      git(p.target, ['update-ref', '-d', `refs/handoff/${ID}/head`]);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
    // git's own files keep the caller's umask (the private one is the first file's alone).
    const packs = fs.readdirSync(path.join(p.target, '.git', 'objects', 'pack')).filter((f) => f.endsWith('.pack'));
    expect(packs.length).toBeGreaterThan(0);
    expect(fs.statSync(path.join(p.target, '.git', 'objects', 'pack', packs[0]!)).mode & 0o044).toBe(0o044);
  });

  it('without a first file or a pack: only the refs, in one transaction', () => {
    const p = pair();
    receive(p.target, receiveArgv(ID, [`create refs/handoff/${ID}/head ${p.head}`], undefined, true), p.pack);
    git(p.target, ['update-ref', '-d', `refs/handoff/${ID}/head`]);
    const updates = [`create refs/handoff/${ID}/head ${p.head}`, `create refs/handoff/${ID}/wip ${p.head}`];
    const r = receive(p.target, receiveArgv(ID, updates, undefined, false));
    expect(r.status, r.stderr).toBe(0);
    expect(refs(p.target).split('\n').sort()).toEqual([`refs/handoff/${ID}/head ${p.head}`, `refs/handoff/${ID}/wip ${p.head}`]);
    // One transaction: a second create of the same refs fails whole.
    expect(receive(p.target, receiveArgv(ID, updates, undefined, false)).status).not.toBe(0);
  });

  it('a first file that cannot be written: exit 71, nothing indexed, no ref', () => {
    const p = pair();
    const blocker = path.join(path.dirname(p.target), 'a-file');
    fs.writeFileSync(blocker, '');
    const r = receive(p.target, receiveArgv(ID, [`create refs/handoff/${ID}/head ${p.head}`], { dir: path.join(blocker, 'incoming'), file: path.join(blocker, 'incoming', 'm.json'), text: '{}' }, true), p.pack);
    expect(r.status).toBe(71);
    expect(refs(p.target)).toBe('');
    expect(fs.readdirSync(path.join(p.target, '.git', 'objects', 'pack'))).toEqual([]);
  });

  it('a pack that does not index: the first file is there (it went first), no ref', () => {
    const p = pair();
    const dir = path.join(path.dirname(p.target), 'state', 'incoming');
    const r = receive(p.target, receiveArgv(ID, [`create refs/handoff/${ID}/head ${p.head}`], { dir, file: path.join(dir, 'm.json'), text: '{}' }, true), 'not a pack');
    expect(r.status).not.toBe(0);
    expect(r.status).not.toBe(71);
    expect(fs.readFileSync(path.join(dir, 'm.json'), 'utf8')).toBe('{}\n');
    expect(refs(p.target)).toBe('');
  });
});
