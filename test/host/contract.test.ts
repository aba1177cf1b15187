// The Host contract, run against BOTH implementations: LocalHost (this machine, as root) and
// SshHost (laptop's key → the world's `vega` user over the loopback sshd).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostError } from '../../src/errors.js';
import type { Host } from '../../src/host/host.js';
import { LocalHost } from '../../src/host/local.js';
import { SshHost } from '../../src/host/ssh.js';
import { useWorld } from '../helpers/world.js';
import { makeSshFixture } from './ssh-fixtures.js';

const implementations: [string, () => Promise<Host>][] = [
  ['LocalHost', async () => new LocalHost()],
  [
    'SshHost',
    async () => {
      const world = await useWorld();
      const fx = makeSshFixture(world);
      try {
        return await SshHost.connect('w-vega', fx.opts);
      } finally {
        fs.rmSync(fx.dir, { recursive: true, force: true }); // read once at connect
      }
    },
  ],
];

function sha(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

class Collect extends Writable {
  readonly chunks: Buffer[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.chunks.push(chunk);
    cb();
  }
  get bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

async function expectHostError(p: Promise<unknown>, code: string): Promise<HostError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HostError);
  expect((err as HostError).code).toBe(code);
  return err as HostError;
}

describe.each(implementations)('%s: Host contract', (name, make) => {
  let host: Host;
  let dir: string;

  beforeAll(async () => {
    host = await make();
    const info = await host.info();
    dir = path.posix.join(info.tmpdir, `ah-contract-${name}-${randomBytes(4).toString('hex')}`);
    await host.mkdirp(dir);
  });

  afterAll(async () => {
    await host?.remove(dir, { recursive: true });
    await host?.close();
    await host?.close(); // safe twice
  });

  it('runs argv with cwd and env, and reports the exit code', async () => {
    const r = await host.run(['sh', '-c', 'printf "%s|%s|%s" "$1" "$AH_FOO" "$(pwd)"; exit 3', 'sh', 'a b'], { cwd: dir, env: { AH_FOO: 'x y' } });
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toBe(`a b|x y|${await host.realpath(dir)}`);
    expect(r.durationMs).toBeGreaterThanOrEqual(0);
    const e = await host.run(['sh', '-c', 'echo oops >&2; exit 0']);
    expect(e.stderr).toBe('oops\n');
  });

  it('feeds stdin from a string, a Buffer and a stream; no stdin means EOF', async () => {
    expect((await host.run(['cat'], { stdin: 'hello\nworld' })).stdout).toBe('hello\nworld');
    expect((await host.run(['cat'], { stdin: Buffer.from([0x68, 0, 0x69]) })).stdout).toBe('h\0i');
    const big = randomBytes(1 << 20);
    const r = await host.run(['sha256sum'], { stdin: Readable.from([big.subarray(0, 1000), big.subarray(1000)]) });
    expect(r.stdout.split(' ')[0]).toBe(sha(big));
    expect((await host.run(['cat'], { timeoutMs: 10_000 })).stdout).toBe('');
  });

  it('pipes stdout to a stream', async () => {
    const sink = new Collect();
    const r = await host.run(['head', '-c', '3000000', '/dev/zero'], { stdout: sink });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('');
    expect(sink.bytes.length).toBe(3_000_000);
  });

  it('ends a run that exceeds its timeout with command_timeout', async () => {
    const started = Date.now();
    await expectHostError(host.run(['sleep', '30'], { timeoutMs: 400 }), 'command_timeout');
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await host.run(['echo', 'still fine'])).stdout).toBe('still fine\n');
  });

  it("runs programs with the user's umask, not the command shell's private one", async () => {
    // A streamed stdin never goes through a command shell: that run tells the user's umask.
    const usual = (await host.run(['sh', '-c', 'umask'], { stdin: Readable.from([]) })).stdout.trim();
    expect(usual).not.toBe('');
    for (let i = 0; i < 3; i++) expect((await host.run(['sh', '-c', 'umask'])).stdout.trim()).toBe(usual);
    // Files a program makes get the usual modes (a worktree's files must not end up private).
    const file = path.posix.join(dir, 'umask-made');
    expect((await host.run(['sh', '-c', ': >"$1"', 'sh', file])).exitCode).toBe(0);
    expect(((await host.stat(file))?.mode ?? 0) & 0o777).toBe(0o666 & ~parseInt(usual, 8));
  });

  it('reports 126 for a missing cwd, 127 for a missing program, 128+n for a signal', async () => {
    const r = await host.run(['true'], { cwd: path.posix.join(dir, 'no such dir') });
    expect(r.exitCode).toBe(126);
    expect(r.stderr).toContain('no such dir');
    expect((await host.run(['ah-no-such-program-xyz'])).exitCode).toBe(127);
    expect((await host.run(['sh', '-c', 'kill -TERM $$'])).exitCode).toBe(143);
  });

  it('writes and reads streams byte-exact (a few MB) with the requested mode', async () => {
    const data = randomBytes(5 * 1024 * 1024 + 123);
    const file = path.posix.join(dir, 'big.bin');
    const { stream, done } = await host.writeStream(file, { mode: 0o640 });
    await pipeline(Readable.from([data.subarray(0, 1 << 20), data.subarray(1 << 20)]), stream);
    await done;
    const st = await host.stat(file);
    expect(st).toMatchObject({ type: 'file', size: data.length, mode: 0o640 });
    const back = new Collect();
    await pipeline(await host.readStream(file), back);
    expect(sha(back.bytes)).toBe(sha(data));
    // Part of it: from an offset to the end, a length inside, nothing, and past the end.
    const part = async (range: { start: number; length?: number }) => {
      const c = new Collect();
      await pipeline(await host.readStream(file, range), c);
      return c.bytes;
    };
    expect(sha(await part({ start: 3 * 1024 * 1024 + 7 }))).toBe(sha(data.subarray(3 * 1024 * 1024 + 7)));
    expect(sha(await part({ start: 1000, length: 70_000 }))).toBe(sha(data.subarray(1000, 71_000)));
    expect((await part({ start: 5, length: 0 })).length).toBe(0);
    expect((await part({ start: data.length + 10 })).length).toBe(0);
    // Truncates an existing file and applies the default private mode.
    await host.writeFile(file, 'short');
    expect((await host.readFile(file)).toString()).toBe('short');
    expect((await host.stat(file))?.mode).toBe(0o600);
    expect((await host.readFile(path.posix.join(dir, 'empty-ok.txt')).catch((e: HostError) => e.code))).toBe('not_found');
    await host.writeFile(path.posix.join(dir, 'empty.txt'), '');
    expect((await host.readFile(path.posix.join(dir, 'empty.txt'))).length).toBe(0);
  });

  it('streams asked to compress still write and read the exact bytes (whole, parts, empty)', async () => {
    // Text that compresses, with a run of random bytes that does not.
    const text = Buffer.from(Array.from({ length: 40_000 }, (_, i) => `{"line":${i},"cwd":"/home/x/repo"}\n`).join(''));
    const data = Buffer.concat([text.subarray(0, 700_000), randomBytes(300_000), text.subarray(700_000)]);
    const file = path.posix.join(dir, 'z.jsonl');
    const { stream, done } = await host.writeStream(file, { mode: 0o600, compress: true });
    await pipeline(Readable.from([data.subarray(0, 12_345), data.subarray(12_345, 2_000_000), data.subarray(2_000_000)]), stream);
    await done;
    expect((await host.stat(file))?.size).toBe(data.length);
    const read = async (range?: { start: number; length?: number }) => {
      const c = new Collect();
      await pipeline(await host.readStream(file, range, { compress: true }), c);
      return c.bytes;
    };
    expect(sha(await read())).toBe(sha(data));
    expect(sha(await read({ start: 999_999 }))).toBe(sha(data.subarray(999_999)));
    expect(sha(await read({ start: 10, length: 500_000 }))).toBe(sha(data.subarray(10, 500_010)));
    expect((await read({ start: 5, length: 0 })).length).toBe(0);
    const empty = path.posix.join(dir, 'z-empty');
    const w = await host.writeStream(empty, { compress: true });
    w.stream.end();
    await w.done;
    expect((await host.stat(empty))?.size).toBe(0);
    expect((await read({ start: data.length })).length).toBe(0);
    await expectHostError(host.readStream(path.posix.join(dir, 'missing'), undefined, { compress: true }), 'not_found');
  });

  it('readFiles: small regular files whole, in order of nothing; the rest left out', async () => {
    const at = (n: string) => path.posix.join(dir, 'many', n);
    await host.mkdirp(path.posix.join(dir, 'many', 'sub'));
    const files: Record<string, Buffer> = {
      'a.jsonl': Buffer.from('{"a":1}\n{"b":2}\n'),
      "it's $(touch x) \n`y`.json": Buffer.from('hostile name\n'),
      'binary': Buffer.concat([randomBytes(3000), Buffer.from('\n-\n12\n')]),
      'empty': Buffer.alloc(0),
      'no newline at the end': Buffer.from('12'),
      'exactly the most': Buffer.alloc(4096, 0x61),
    };
    for (const [n, b] of Object.entries(files)) await host.writeFile(at(n), b);
    await host.writeFile(at('one too many'), Buffer.alloc(4097, 0x62));
    expect((await host.run(['mkfifo', at('fifo')])).exitCode).toBe(0);
    expect((await host.run(['ln', '-s', 'a.jsonl', at('link')])).exitCode).toBe(0);
    const asked = [...Object.keys(files), 'one too many', 'fifo', 'sub', 'missing', 'link'].map(at);
    const got = await host.readFiles(asked, 4096);
    expect([...got.keys()].sort()).toEqual([...Object.keys(files), 'link'].map(at).sort());
    for (const [n, b] of Object.entries(files)) expect(got.get(at(n))!.equals(b), n).toBe(true);
    expect(got.get(at('link'))!.equals(files['a.jsonl']!)).toBe(true);
    expect(await host.readFiles([], 10)).toEqual(new Map());
    expect((await host.list(path.posix.join(dir, 'many'))).map((e) => e.name)).not.toContain('x');
  });

  it('walk: every regular file below a folder with its stat, links neither followed nor listed', async () => {
    const top = path.posix.join(dir, 'walked');
    await host.mkdirp(path.posix.join(top, 'sub dir', '.deep'));
    await host.writeFile(path.posix.join(top, 'a.jsonl'), 'abc', { mode: 0o640 });
    await host.writeFile(path.posix.join(top, 'sub dir', '.deep', "it's"), '', { mode: 0o600 });
    await host.utimes(path.posix.join(top, 'a.jsonl'), 1_700_000_000_000, 1_700_000_000_000);
    expect((await host.run(['ln', '-s', 'sub dir', path.posix.join(top, 'link')])).exitCode).toBe(0);
    expect((await host.run(['mkfifo', path.posix.join(top, 'fifo')])).exitCode).toBe(0);
    const got = (await host.walk(top)).sort((a, b) => (a.path < b.path ? -1 : 1));
    expect(got).toEqual([
      { path: path.posix.join(top, 'a.jsonl'), stat: { type: 'file', size: 3, mode: 0o640, mtimeMs: 1_700_000_000_000 } },
      { path: path.posix.join(top, 'sub dir', '.deep', "it's"), stat: expect.objectContaining({ type: 'file', size: 0, mode: 0o600 }) },
    ]);
    expect(await host.walk(path.posix.join(top, 'link'))).toEqual([]);
    expect(await host.walk(path.posix.join(top, 'missing'))).toEqual([]);
    expect(await host.walk(path.posix.join(top, 'a.jsonl'))).toEqual([]);
  });

  it('makeFolderWith: of many callers exactly one makes the folder (private, its file in it), none makes a missing parent', async () => {
    const lock = path.posix.join(dir, 'lock once');
    const made = await Promise.all(Array.from({ length: 6 }, (_, i) => host.makeFolderWith(lock, 'owner.json', `{"n":${i}}`)));
    expect(made.filter(Boolean)).toHaveLength(1);
    expect(await host.stat(lock)).toMatchObject({ type: 'dir', mode: 0o700 });
    expect(await host.stat(path.posix.join(lock, 'owner.json'))).toMatchObject({ type: 'file', mode: 0o600 });
    expect((await host.readFile(path.posix.join(lock, 'owner.json'))).toString('utf8')).toBe(`{"n":${made.indexOf(true)}}\n`);
    expect(await host.makeFolderWith(path.posix.join(dir, 'no parent', 'x'), 'owner.json', '{}')).toBe(false);
    expect(await host.stat(path.posix.join(dir, 'no parent'))).toBeNull();
  });

  it('rejects reading a missing file with not_found, and writing into a missing folder', async () => {
    await expectHostError(host.readStream(path.posix.join(dir, 'missing')), 'not_found');
    await expect(host.writeFile(path.posix.join(dir, 'no-dir', 'f'), 'x')).rejects.toThrow();
  });

  it('stat, list, mkdirp, rename, remove, realpath, chmod, utimes', async () => {
    const deep = path.posix.join(dir, 'a', 'b c', 'd');
    await host.mkdirp(deep, 0o750);
    await host.mkdirp(deep); // again: fine
    expect((await host.stat(deep))?.type).toBe('dir');
    expect((await host.stat(deep))?.mode).toBe(0o750);
    expect(await host.stat(path.posix.join(dir, 'nope'))).toBeNull();
    expect(await host.stat(path.posix.join(dir, 'nope', 'deeper'))).toBeNull();

    const f1 = path.posix.join(dir, 'a', 'one.txt');
    const f2 = path.posix.join(dir, 'a', 'two.txt');
    await host.writeFile(f1, 'one');
    await host.writeFile(f2, 'two');
    await host.rename(f1, f2); // replaces
    expect((await host.readFile(f2)).toString()).toBe('one');
    expect(await host.stat(f1)).toBeNull();
    await host.run(['ln', '-s', 'two.txt', path.posix.join(dir, 'a', 'link')]);
    const entries = (await host.list(path.posix.join(dir, 'a'))).sort((x, y) => x.name.localeCompare(y.name));
    expect(entries).toEqual([
      { name: 'b c', type: 'dir' },
      { name: 'link', type: 'symlink' },
      { name: 'two.txt', type: 'file' },
    ]);
    await expectHostError(host.list(path.posix.join(dir, 'nope')), 'not_found');
    expect(await host.realpath(path.posix.join(dir, 'a', 'link'))).toBe(path.posix.join(await host.realpath(dir), 'a', 'two.txt'));
    await expectHostError(host.realpath(path.posix.join(dir, 'nope')), 'not_found');

    await host.chmod(f2, 0o604);
    expect((await host.stat(f2))?.mode).toBe(0o604);
    const when = Date.UTC(2024, 0, 2, 3, 4, 5);
    await host.utimes(f2, when, when);
    expect((await host.stat(f2))?.mtimeMs).toBe(when);
    await host.utimes(f2, when + 250, when + 1500);
    // SFTP carries whole seconds; locally the fraction stays.
    expect(Math.floor((await host.stat(f2))!.mtimeMs / 1000)).toBe(Math.floor((when + 1500) / 1000));
    if (name === 'LocalHost') expect((await host.stat(f2))?.mtimeMs).toBe(when + 1500);

    await host.remove(f2);
    await host.remove(f2); // missing is fine
    expect(await host.stat(f2)).toBeNull();
    await expect(host.remove(path.posix.join(dir, 'a'))).rejects.toThrow();
    await host.remove(path.posix.join(dir, 'a'), { recursive: true });
    expect(await host.stat(path.posix.join(dir, 'a'))).toBeNull();
  });

  it('tells home, user, platform, tmpdir and the login environment', async () => {
    const info = await host.info();
    expect(info.platform).toBe('linux');
    expect(info.home.startsWith('/')).toBe(true);
    expect(info.loginEnv.HOME).toBe(info.home);
    expect(info.loginEnv.PATH).toContain(`${info.home}/.local/bin`);
    expect(await host.info()).toBe(info); // cached
    if (name === 'SshHost') {
      expect(info.user).toBe('vega');
      expect(info.home).toBe('/home/vega');
      expect(info.shell).toBe('/bin/bash');
      // With the facts: no SFTP realpath needed for it.
      expect(info.homeReal).toBe(fs.realpathSync('/home/vega'));
      // From ~/.profile: only a login shell has it.
      expect(info.loginEnv.PATH?.split(':')[0]).toBe('/tmp/ah-world/bin');
      expect((await host.run(['sh', '-c', 'echo "$PATH"'])).stdout.trim()).toBe(info.loginEnv.PATH);
    }
  });

  it('finds programs on the login PATH', async () => {
    expect(await host.which('git')).toMatch(/\/git$/);
    expect(await host.which('sh')).toMatch(/\/sh$/);
    expect(await host.which('ah-no-such-program-xyz')).toBeNull();
    expect(await host.which('/bin/sh')).toBe('/bin/sh');
  });
});
