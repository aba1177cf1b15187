// SshHost against the world's loopback sshd: command encoding under sh/bash/zsh/fish login
// shells, one handshake per host, login environment, timeouts, host keys, auth and ProxyJump.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Client } from 'ssh2';
import { SshHost } from '../../src/host/ssh.js';
import { useWorld } from '../helpers/world.js';
import { pidsOfUser, startSshd, type World } from '../world/machines.js';
import { hostileArgs } from './hostile-args.js';
import { connectThrough, cuttableProxy, hostErrorOf, makeSshFixture, type CuttableProxy, type SshFixture } from './ssh-fixtures.js';

let world: World;
let fx: SshFixture;

beforeAll(async () => {
  world = await useWorld();
  fx = makeSshFixture(world);
});

afterAll(() => {
  fs.rmSync(fx.dir, { recursive: true, force: true });
});

function writeConfig(name: string, text: string): string {
  const file = path.join(fx.dir, name);
  fs.writeFileSync(file, text);
  return file;
}

function hostKeyB64(): string {
  return world.sshd.hostKeyLine.split(' ')[2]!;
}

describe('command encoding through every login shell', () => {
  let canaryDir = '';
  beforeAll(() => {
    canaryDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-canary-'));
    fs.chmodSync(canaryDir, 0o777); // every world user may write (and so touch) here
  });
  afterAll(() => fs.rmSync(canaryDir, { recursive: true, force: true }));

  for (const [user, shell] of [
    ['vegash', '/bin/sh'],
    ['vega', '/bin/bash'],
    ['vegazsh', '/usr/bin/zsh'],
    ['vegafish', '/usr/bin/fish'],
  ] as const) {
    it(`passes hostile argv, env and cwd unchanged to a program when the login shell is ${path.basename(shell)}`, async () => {
      const host = await SshHost.connect(`w-${user}`, fx.opts);
      try {
        const info = await host.info();
        expect(info.shell).toBe(shell);
        expect(info.user).toBe(user);
        // Each shell's login files put the world's bin first (.profile, .zprofile, config.fish).
        expect(info.loginEnv.PATH?.split(':')[0]).toBe('/tmp/ah-world/bin');

        const args = hostileArgs(canaryDir);
        const r = await host.run(['printf', '%s\\0', ...args]);
        expect(r.stderr).toBe('');
        const got = r.stdout.split('\0');
        expect(got.pop()).toBe('');
        expect(got).toEqual(args);

        // Hostile folder names and env values too; stdin follows the header untouched.
        // A folder name (no slash) that would touch files in the home or the folder if a shell ran it.
        const weird = path.posix.join(canaryDir, `${user} $(touch canary-a) ;touch canary-b; '"\`touch canary-c\`\n`);
        await host.mkdirp(weird);
        const env = { AH_VALUE: args.slice(0, 30).join('\n') };
        const r2 = await host.run(['sh', '-c', 'printf "%s\\0%s\\0" "$PWD" "$AH_VALUE"; cat', 'sh'], { cwd: weird, env, stdin: 'first line\n$(touch x)\n' });
        expect(r2.stdout).toBe(`${weird}\0${env.AH_VALUE}\0first line\n$(touch x)\n`);
        expect((await host.list(weird)).length).toBe(0);
        await host.remove(weird, { recursive: true });
        expect(fs.readdirSync(canaryDir)).toEqual([]);
        expect(fs.readdirSync(info.home).filter((f) => f.startsWith('canary'))).toEqual([]);
      } finally {
        await host.close();
      }
    });
  }
});

describe('one connection', () => {
  it('does 20 operations over exactly one handshake', async () => {
    // Only what sshd logs from now on: a client port is reused over a long suite.
    const logFrom = fs.statSync(world.sshd.log).size;
    const host = await SshHost.connect('w-vega', fx.opts);
    const port = host.localPort;
    try {
      const info = await host.info();
      const dir = path.posix.join(info.tmpdir, `ah-count-${process.pid}`);
      await host.mkdirp(dir);
      for (let i = 0; i < 6; i++) await host.writeFile(path.posix.join(dir, `f${i}`), `file ${i}`);
      for (let i = 0; i < 6; i++) expect((await host.readFile(path.posix.join(dir, `f${i}`))).toString()).toBe(`file ${i}`);
      expect((await host.list(dir)).length).toBe(6);
      await Promise.all([host.run(['true']), host.stat(dir), host.which('git'), host.run(['echo', 'x'])]);
      await host.remove(dir, { recursive: true });
      const c = host.counters;
      expect(c.handshakes).toBe(1);
      expect(c.commands).toBeGreaterThanOrEqual(16);
      expect(c.sftpRequests).toBeGreaterThanOrEqual(2);
      expect(c.bytesIn).toBeGreaterThan(0);
      expect(c.bytesOut).toBeGreaterThan(0);
    } finally {
      await host.close();
    }
    // sshd saw one publickey login from our client port.
    const log = fs.readFileSync(world.sshd.log).subarray(logFrom).toString('utf8');
    expect(log.split('\n').filter((l) => l.includes('Accepted publickey') && l.includes(` port ${port} `)).length).toBe(1);
  });

  it('runs small commands, file reads and writes on one command shell, byte-exact', async () => {
    const host = await SshHost.connect('w-vega', fx.opts);
    try {
      const info = await host.info();
      const file = path.posix.join(info.tmpdir, `ah-shell-${process.pid}`);
      const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 256));
      // The connection opened its shell and SFTP channel at once (warm-up); count from there.
      await host.run(['true']);
      await host.stat(info.tmpdir);
      const before = host.counters.channels;
      for (let i = 0; i < 10; i++) expect((await host.run(['sh', '-c', 'printf "%s" "$1"; printf e >&2; exit 3', 'sh', `out ${i}`])).stdout).toBe(`out ${i}`);
      await host.writeFile(file, bytes, { mode: 0o640 });
      expect((await host.readFile(file)).equals(bytes)).toBe(true);
      // stdin through the shell, and a program that prints something that looks like framing.
      const r = await host.run(['cat'], { stdin: 'AHSH 0 1 1\nline\n' });
      expect(r).toMatchObject({ exitCode: 0, stdout: 'AHSH 0 1 1\nline\n', stderr: '' });
      expect(await hostErrorOf(host.readFile(`${file}.missing`))).toMatchObject({ code: 'not_found' });
      // No channel per command: every one of them ran on the shell that was already open.
      expect(host.counters.channels - before).toBe(0);
      await host.remove(file);
    } finally {
      await host.close();
    }
  });

  it('file streams asked to compress cross gzipped when the remote has gzip, plain when not; a cut one fails', async () => {
    const text = Buffer.from(Array.from({ length: 60_000 }, (_, i) => `{"type":"message","n":${i},"cwd":"/home/laptop/code/hark"}\n`).join(''));
    const crossing = async (host: SshHost, file: string) => {
      const before = host.counters.bytesOut;
      const { stream, done } = await host.writeStream(file, { compress: true });
      await pipeline(Readable.from([text]), stream);
      await done;
      const up = host.counters.bytesOut - before;
      const down0 = host.counters.bytesIn;
      const chunks: Buffer[] = [];
      for await (const c of await host.readStream(file, { start: 1 }, { compress: true })) chunks.push(c as Buffer);
      expect(Buffer.concat(chunks).equals(text.subarray(1))).toBe(true);
      expect(fs.readFileSync(file).equals(text)).toBe(true);
      return { up, down: host.counters.bytesIn - down0 };
    };
    const gz = await SshHost.connect('w-vega', fx.opts);
    const plain = await SshHost.connect('w-vega', { ...fx.opts, streamCompressor: 'ah-no-such-gzip' });
    try {
      const dir = (await gz.info()).tmpdir;
      const z = await crossing(gz, path.posix.join(dir, `ah-z-${process.pid}`));
      expect(z.up).toBeLessThan(text.length / 5);
      expect(z.down).toBeLessThan(text.length / 5);
      // The remote lacks the compressor: the same calls send the plain bytes.
      const p = await crossing(plain, path.posix.join(dir, `ah-plain-${process.pid}`));
      expect(p.up).toBeGreaterThan(text.length);
      expect(p.down).toBeGreaterThan(text.length - 1);
      // A compressed write stopped half-way: the remote sees a cut stream and `done` fails.
      const cut = path.posix.join(dir, `ah-cut-${process.pid}`);
      const { stream, done } = await gz.writeStream(cut, { compress: true });
      stream.write(text.subarray(0, 3 << 20));
      stream.destroy();
      expect(await hostErrorOf(done)).toMatchObject({ code: 'io_failed' });
      for (const f of [`ah-z-${process.pid}`, `ah-plain-${process.pid}`, `ah-cut-${process.pid}`]) await gz.remove(path.posix.join(dir, f));
    } finally {
      await Promise.all([gz.close(), plain.close()]);
    }
  });

  it("exports the login environment on a command shell once; a command's own variables still win, for it alone", async () => {
    const host = await SshHost.connect('w-vega', fx.opts);
    try {
      const info = await host.info();
      const seen = (env?: Record<string, string>) => host.run(['sh', '-c', 'printf "%s|%s|%s" "$PATH" "$HOME" "${AH_ONLY-unset}"'], env ? { env } : {});
      // The first command on the shell carries the login environment's exports.
      const up = host.counters.bytesOut;
      expect((await seen()).stdout).toBe(`${info.loginEnv.PATH}|${info.loginEnv.HOME}|unset`);
      const first = host.counters.bytesOut - up;
      expect((await seen({ PATH: '/usr/bin:/bin', AH_ONLY: "it's $(mine)" })).stdout).toBe(`/usr/bin:/bin|${info.loginEnv.HOME}|it's $(mine)`);
      const again = host.counters.bytesOut;
      expect((await seen()).stdout).toBe(`${info.loginEnv.PATH}|${info.loginEnv.HOME}|unset`);
      // The same command again: the login environment no longer travels with it.
      expect(host.counters.bytesOut - again).toBeLessThan(first - (info.loginEnv.PATH ?? '').length);
    } finally {
      await host.close();
    }
  });

  it('queues channels below MaxSessions: 30 parallel commands all succeed', async () => {
    const host = await SshHost.connect('w-vega', { ...fx.opts, maxChannels: 8 });
    try {
      const results = await Promise.all(Array.from({ length: 30 }, (_, i) => host.run(['sh', '-c', 'sleep 0.05; echo "$1"', 'sh', String(i)])));
      expect(results.map((r) => r.stdout.trim())).toEqual(Array.from({ length: 30 }, (_, i) => String(i)));
      expect(host.counters.handshakes).toBe(1);
    } finally {
      await host.close();
    }
  });

  it('keeps the exit status and output of programs that end in the read that brings their exec reply', async () => {
    // A link that hands the client what the server sent in 40 ms as one read: the exec reply,
    // the output, the exit status and the close of a quick program come together, before ssh2
    // has handed the channel over (so a listener attached then would miss the exit status).
    const server = net.createServer((down) => {
      const up = net.connect(world.sshd.port, world.sshd.host);
      let held: Buffer[] = [];
      const flush = setInterval(() => {
        if (held.length) down.write(Buffer.concat(held));
        held = [];
      }, 40);
      up.on('data', (d: Buffer) => held.push(d));
      down.on('data', (d: Buffer) => up.write(d));
      const end = (): void => {
        clearInterval(flush);
        up.destroy();
        down.destroy();
      };
      up.on('close', end);
      down.on('close', end);
      up.on('error', end);
      down.on('error', end);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const configFile = writeConfig('coalescing', `Host w-coalesce\n  HostName 127.0.0.1\n  Port ${port}\n  User vega\n  HostKeyAlias [${world.sshd.host}]:${world.sshd.port}\n  IdentityFile ${world.users.laptop!.key}\n  IdentitiesOnly yes\n  UserKnownHostsFile ${fx.knownHosts}\n  GlobalKnownHostsFile none\n`);
    const host = await SshHost.connect('w-coalesce', { configFile, agent: null });
    try {
      await host.info();
      // More at once than there are shells: the rest go on channels carrying their program.
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => host.run(['sh', '-c', 'echo "$1"; echo err >&2; exit "$1"', 'sh', String(i + 3)])));
      expect(results.map((r) => [r.exitCode, r.stdout, r.stderr])).toEqual(Array.from({ length: 8 }, (_, i) => [i + 3, `${i + 3}\n`, 'err\n']));
      const empty = `${(await host.info()).tmpdir}/ah-empty-${process.pid}`;
      await host.writeFile(empty, '');
      const chunks: Buffer[] = [];
      for await (const c of await host.readStream(empty)) chunks.push(c as Buffer);
      expect(Buffer.concat(chunks).length).toBe(0);
      await expect(host.readStream(`${empty}.missing`)).rejects.toThrow(/No such file|not found|does not exist/i);
      await host.remove(empty);
    } finally {
      await host.close();
      server.close();
    }
  });

  it('kills the remote program on command timeout and stays usable', async () => {
    const host = await SshHost.connect('w-vega', fx.opts);
    try {
      const marker = `${30 + (process.pid % 1000) / 1000}`;
      const started = Date.now();
      const err = await hostErrorOf(host.run(['sleep', marker], { timeoutMs: 500 }));
      expect(err.code).toBe('command_timeout');
      expect(Date.now() - started).toBeLessThan(3000);
      const vega = world.users.vega!;
      const stillRunning = (): boolean =>
        pidsOfUser(vega.uid).some((pid) => {
          try {
            return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
          } catch {
            return false;
          }
        });
      const deadline = Date.now() + 3000;
      while (stillRunning() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(stillRunning()).toBe(false);
      expect((await host.run(['echo', 'ok'])).stdout).toBe('ok\n');
    } finally {
      await host.close();
    }
  });

  it('a command shell whose command timed out removes its private folder', async () => {
    const host = await SshHost.connect('w-vega', fx.opts);
    const note = path.join(world.users.vega!.home, `.ah-shell-folder-${process.pid}`);
    try {
      // A command's stdin is the loop's input file, in the loop's private folder: the command
      // notes which folder, then outlives its bound.
      const err = await hostErrorOf(host.run(['sh', '-c', 'readlink /proc/$$/fd/0 >"$1"; exec sleep 30', 'sh', note], { timeoutMs: 500 }));
      expect(err.code).toBe('command_timeout');
      const folder = path.dirname(fs.readFileSync(note, 'utf8').trim());
      expect(path.basename(folder)).toMatch(/^agent-handoff\./);
      const deadline = Date.now() + 3000;
      while (fs.existsSync(folder) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(fs.existsSync(folder)).toBe(false);
      expect((await host.run(['echo', 'ok'])).stdout).toBe('ok\n');
    } finally {
      fs.rmSync(note, { force: true });
      await host.close();
    }
  });

  it('fails in-flight and later operations with connection_lost when the connection drops', async () => {
    const host = await SshHost.connect('w-vega', fx.opts);
    await host.info();
    const running = hostErrorOf(host.run(['sleep', '5']));
    const reading = hostErrorOf(host.stat('/tmp').then(() => host.run(['sleep', '5'])));
    await new Promise((r) => setTimeout(r, 300));
    (host as unknown as { socket: net.Socket }).socket.destroy();
    expect((await running).code).toBe('connection_lost');
    expect((await reading).code).toBe('connection_lost');
    expect((await hostErrorOf(host.readFile('/etc/hostname'))).code).toBe('connection_lost');
    await host.close();
  });

  it('leaves no socket behind after close()', async () => {
    const sockets = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
    const before = sockets();
    const host = await SshHost.connect('w-vega', fx.opts);
    await host.run(['true']);
    await host.stat('/tmp');
    expect(sockets()).toBe(before + 1);
    await host.close();
    await new Promise((r) => setImmediate(r));
    expect(sockets()).toBe(before);
    expect((await hostErrorOf(host.run(['true']))).code).toBe('connection_closed');
  });
});

describe('a connection that drops under a file stream', () => {
  // The link stops passing bytes (backpressure builds up), then the connection dies: whoever
  // waits on the stream learns it at once, with the host's own error.
  const stallThenCut = async (proxy: CuttableProxy, progress: () => number, stallAt: number, cut = true): Promise<number> => {
    let stalled = false;
    let last = -1;
    let still = 0;
    // Looked at often: over loopback a stream moves megabytes between two looks.
    for (;;) {
      await new Promise((r) => setTimeout(r, 10));
      const now = progress();
      if (!stalled && now >= stallAt) {
        proxy.stall();
        stalled = true;
      }
      still = stalled && now === last ? still + 1 : 0;
      last = now;
      if (still >= 30) break;
    }
    if (cut) proxy.cut();
    return Date.now();
  };
  const within = <T,>(p: Promise<T>, ms: number): Promise<T> =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still waiting ${ms} ms after the cut`)), ms).unref())]);

  /** Random bytes (gzip cannot shrink them) piped into `stream` for ever: only a cut ends it. */
  const writeForever = (stream: NodeJS.WritableStream): { writing: Promise<void>; sent: () => number } => {
    const block = randomBytes(64 << 10);
    let sent = 0;
    const endless = Readable.from(
      (function* () {
        for (;;) {
          sent += block.length;
          yield block;
        }
      })(),
    );
    const writing = pipeline(endless, stream);
    writing.catch(() => undefined);
    return { writing, sent: () => sent };
  };

  for (const [kind, opts] of [
    ['gzipped', {}],
    ['plain', { streamCompressor: 'ah-no-such-gzip' }],
  ] as const) {
    it(`a write stream (${kind}) held by backpressure fails, and so does done, with connection_lost`, async () => {
      const proxy = await cuttableProxy(world);
      const host = await connectThrough(world, fx, proxy, opts);
      try {
        const file = path.posix.join((await host.info()).tmpdir, `ah-drop-${kind}-${process.pid}`);
        const { stream, done } = await host.writeStream(file, { compress: true });
        const { writing, sent } = writeForever(stream);
        done.catch(() => undefined);
        const cutAt = await stallThenCut(proxy, sent, 2 << 20);
        expect(await hostErrorOf(within(writing, 5000))).toMatchObject({ code: 'connection_lost' });
        expect(await hostErrorOf(within(done, 1000))).toMatchObject({ code: 'connection_lost' });
        expect(Date.now() - cutAt).toBeLessThan(3000);
        fs.rmSync(file, { force: true });
      } finally {
        await host.close();
        await proxy.close();
      }
    });

    it(`a write stream (${kind}) on a link that goes silent (no reset) fails once the keepalive gives up`, async () => {
      const proxy = await cuttableProxy(world);
      const host = await connectThrough(world, fx, proxy, { ...opts, keepaliveIntervalMs: 250, keepaliveCountMax: 2 });
      try {
        const file = path.posix.join((await host.info()).tmpdir, `ah-silent-${kind}-${process.pid}`);
        const { stream, done } = await host.writeStream(file, { compress: true });
        const { writing, sent } = writeForever(stream);
        done.catch(() => undefined);
        const stalledAt = await stallThenCut(proxy, sent, 2 << 20, false);
        expect(await hostErrorOf(within(writing, 5000))).toMatchObject({ code: 'connection_lost' });
        expect(Date.now() - stalledAt).toBeLessThan(3000);
        fs.rmSync(file, { force: true });
      } finally {
        await host.close();
        proxy.cut();
        await proxy.close();
      }
    });

    it(`a read stream (${kind}) fails its reader with connection_lost`, async () => {
      const proxy = await cuttableProxy(world);
      const host = await connectThrough(world, fx, proxy, opts);
      const file = path.join(os.tmpdir(), `ah-drop-read-${kind}-${process.pid}`);
      // Far more than passes before the stall (the window and the buffers on the way).
      fs.writeFileSync(file, randomBytes(64 << 20), { mode: 0o644 });
      try {
        let got = 0;
        const reading = (async () => {
          for await (const chunk of await host.readStream(file, undefined, { compress: true })) got += (chunk as Buffer).length;
        })();
        reading.catch(() => undefined);
        const cutAt = await stallThenCut(proxy, () => got, 2 << 20);
        expect(got).toBeLessThan(64 << 20);
        expect(await hostErrorOf(within(reading, 5000))).toMatchObject({ code: 'connection_lost' });
        expect(Date.now() - cutAt).toBeLessThan(3000);
      } finally {
        fs.rmSync(file, { force: true });
        await host.close();
        await proxy.close();
      }
    });
  }
});

describe('login environment', () => {
  const vegash = (): World['users'][string] => world.users.vegash!;
  const profile = (): string => path.join(vegash().home, '.profile');
  let original = '';
  const flag = path.join(os.tmpdir(), `ah-host-hang-${process.pid}`);

  beforeAll(() => {
    original = fs.readFileSync(profile(), 'utf8');
    // Junk on stdout (even a fake marker and NULs), then a hang when the flag file exists.
    fs.appendFileSync(profile(), `echo "JUNK from profile"; printf 'AHENVfake\\0PATH=/evil\\0'\n[ -f ${flag} ] && sleep 20\n`);
  });

  afterAll(() => {
    fs.writeFileSync(profile(), original);
    fs.rmSync(flag, { force: true });
    // The hung profile's sleep was started by this test: end it by pid.
    for (const pid of pidsOfUser(vegash().uid)) {
      try {
        if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') === 'sleep\x0020\x00') process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  it('ignores what a login profile prints', async () => {
    const host = await SshHost.connect('w-vegash', fx.opts);
    try {
      const info = await host.info();
      expect(info.loginEnv.PATH?.split(':')[0]).toBe('/tmp/ah-world/bin');
      expect(info.loginEnv.PATH).not.toContain('/evil');
      expect(host.warnings).toEqual([]);
      expect(host.counters.commands).toBe(1); // the whole probe is one exec
    } finally {
      await host.close();
    }
  });

  it('falls back to the bare PATH plus the usual folders when the profile hangs', async () => {
    fs.writeFileSync(flag, '');
    fs.chmodSync(flag, 0o644);
    const host = await SshHost.connect('w-vegash', { ...fx.opts, loginEnvTimeoutMs: 800 });
    try {
      const started = Date.now();
      const info = await host.info();
      expect(Date.now() - started).toBeLessThan(3000);
      expect(info.user).toBe('vegash');
      expect(info.loginEnv.PATH).not.toContain('/tmp/ah-world/bin');
      expect(info.loginEnv.PATH).toContain('/usr/bin');
      expect(info.loginEnv.PATH).toContain('/home/vegash/.local/bin');
      expect(host.warnings.join('\n')).toMatch(/did not finish within 0.8 s/);
      expect((await host.run(['echo', 'works'])).stdout).toBe('works\n');
    } finally {
      await host.close();
      fs.rmSync(flag, { force: true });
    }
  });
});

describe('shell start-up files that print', () => {
  const zshenv = (): string => path.join(world.users.vegazsh!.home, '.zshenv');
  let existed = false;
  let original = '';

  beforeAll(() => {
    existed = fs.existsSync(zshenv());
    original = existed ? fs.readFileSync(zshenv(), 'utf8') : '';
    // zsh reads ~/.zshenv for every `zsh -c` sshd runs, so this lands before every command's output.
    fs.appendFileSync(zshenv(), `echo "junk from zshenv"; printf 'AHGO0000 partial mark'\n`);
  });

  afterAll(() => {
    if (existed) fs.writeFileSync(zshenv(), original);
    else fs.rmSync(zshenv(), { force: true });
  });

  it('keeps stdout, file reads and writes exact', async () => {
    const host = await SshHost.connect('w-vegazsh', fx.opts);
    try {
      // Without the mark, a plain exec shows the junk first.
      const client = (host as unknown as { client: Client }).client;
      const raw = await new Promise<string>((resolve) =>
        client.exec('printf x', (_e, ch) => {
          let text = '';
          ch.on('data', (d: Buffer) => (text += d.toString()));
          ch.on('close', () => resolve(text));
          ch.end();
        }),
      );
      expect(raw).toBe('junk from zshenv\nAHGO0000 partial markx');
      expect((await host.run(['printf', '%s', 'exact'])).stdout).toBe('exact');
      const sink: Buffer[] = [];
      const { Writable } = await import('node:stream');
      await host.run(['printf', 'piped'], { stdout: new Writable({ write: (c: Buffer, _e, cb) => (sink.push(c), cb()) }) });
      expect(Buffer.concat(sink).toString()).toBe('piped');
      const file = path.posix.join((await host.info()).tmpdir, `ah-junk-${process.pid}`);
      await host.writeFile(file, 'content\n');
      expect((await host.readFile(file)).toString()).toBe('content\n');
      await host.remove(file);
      expect(await host.which('sh')).toMatch(/^\/(usr\/)?bin\/sh$/);
      expect((await host.run(['true'], { cwd: '/nonexistent' })).exitCode).toBe(126);
    } finally {
      await host.close();
    }
  });
});

describe('timeouts and refusals before a session exists', () => {
  it('ends with connect_timeout when a TCP peer accepts and never answers', async () => {
    const peers: net.Socket[] = [];
    const closed: Promise<void>[] = [];
    const server = net.createServer((s) => {
      peers.push(s);
      s.resume(); // flowing, so the client's FIN shows up as 'close'
      closed.push(new Promise((r) => s.on('close', () => r())));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const started = Date.now();
      const err = await hostErrorOf(SshHost.connect(`ssh://vega@127.0.0.1:${port}`, { ...fx.opts, connectTimeoutMs: 700 }));
      expect(err.code).toBe('connect_timeout');
      // Named as typed, with where that is.
      expect(err.message).toContain(`No ssh session with ssh://vega@127.0.0.1:${port} (vega@127.0.0.1:${port}) within`);
      expect(Date.now() - started).toBeLessThan(2500);
      // Our side let go of the socket.
      expect(peers.length).toBe(1);
      await Promise.race([Promise.all(closed), new Promise((_, rej) => setTimeout(() => rej(new Error('socket left open')), 2000))]);
    } finally {
      server.close();
    }
  });

  it('reports connect_failed when nothing listens', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    const err = await hostErrorOf(SshHost.connect(`ssh://vega@127.0.0.1:${port}`, fx.opts));
    expect(err.code).toBe('connect_failed');
    expect(err.message).toContain(`127.0.0.1:${port}`);
  });

  it('refuses bad destinations before running ssh', async () => {
    for (const bad of ['-oProxyCommand=touch /tmp/x', 'vega@host;rm', "a'b", 'ssh://vega@host:99999', '']) {
      expect((await hostErrorOf(SshHost.connect(bad, fx.opts))).code).toBe('bad_target');
    }
  });
});

describe('host keys', () => {
  const kh = (name: string, text: string): string => writeConfig(name, text);
  const connectWith = (knownHosts: string, extra = ''): Promise<SshHost> => {
    const cfg = writeConfig(`cfg-${path.basename(knownHosts)}`, `Host t\n  HostName 127.0.0.1\n  Port ${world.sshd.port}\n  User vega\n  IdentityFile ${world.users.laptop!.key}\n  UserKnownHostsFile ${knownHosts}\n  GlobalKnownHostsFile none\n${extra}`);
    return SshHost.connect('t', { configFile: cfg, agent: null });
  };

  it('refuses an unknown host with the command that adds it, even with StrictHostKeyChecking no', async () => {
    const file = kh('kh-empty', '');
    const err = await hostErrorOf(connectWith(file, '  StrictHostKeyChecking no\n'));
    expect(err.code).toBe('host_key_unknown');
    const fp = execFileSync('ssh-keygen', ['-lf', '-'], { input: world.sshd.hostKeyLine, encoding: 'utf8' }).split(' ')[1]!;
    expect(err.message).toContain(fp);
    expect(err.message).toContain('relaxes StrictHostKeyChecking');
    expect(err.fix).toContain(`ssh-keyscan -p ${world.sshd.port} -t ed25519 127.0.0.1 >> ${file}`);
    expect(fs.readFileSync(file, 'utf8')).toBe(''); // never written by us
    // The fix, run as given, makes the host known.
    const cmd = /then run: (.*?) {2}\(/.exec(err.fix ?? '')?.[1];
    expect(cmd).toBeDefined();
    execFileSync('sh', ['-c', cmd!]);
    const host = await connectWith(file);
    await host.close();
  });

  it('refuses a changed key loudly, naming the file and line of the old entry', async () => {
    const other = execFileSync('sh', ['-c', `d=$(mktemp -d) && ssh-keygen -q -t ed25519 -N '' -f $d/k && cat $d/k.pub && rm -r $d`], { encoding: 'utf8' }).split(' ')[1]!;
    const file = kh('kh-changed', `# comment\n[127.0.0.1]:${world.sshd.port} ssh-ed25519 ${other}\n`);
    const err = await hostErrorOf(connectWith(file));
    expect(err.code).toBe('host_key_changed');
    expect(err.message).toContain(`${file}:2`);
    expect(err.message).toMatch(/HAS CHANGED/);
  });

  it('accepts a hashed entry (ssh-keygen -H)', async () => {
    const file = kh('kh-hashed', `${world.sshd.hostKeyLine}\n`);
    execFileSync('ssh-keygen', ['-q', '-H', '-f', file], { stdio: 'ignore' });
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^\|1\|/);
    const host = await connectWith(file);
    expect((await host.run(['id', '-un'])).stdout).toBe('vega\n');
    await host.close();
  });

  it('needs the [host]:port form for a non-22 port; a bare host entry does not match', async () => {
    const err = await hostErrorOf(connectWith(kh('kh-bare', `127.0.0.1 ssh-ed25519 ${hostKeyB64()}\n`)));
    expect(err.code).toBe('host_key_unknown');
    const host = await connectWith(kh('kh-port', `[127.0.0.1]:${world.sshd.port},other.example ssh-ed25519 ${hostKeyB64()}\n`));
    await host.close();
  });

  it('looks the key up under HostKeyAlias', async () => {
    const host = await connectWith(kh('kh-alias', `my-vega-alias ssh-ed25519 ${hostKeyB64()}\n`), '  HostKeyAlias my-vega-alias\n');
    await host.close();
  });

  it('refuses a @revoked key', async () => {
    const err = await hostErrorOf(connectWith(kh('kh-revoked', `${world.sshd.hostKeyLine}\n@revoked * ssh-ed25519 ${hostKeyB64()}\n`)));
    expect(err.code).toBe('host_key_revoked');
  });
});

describe('auth without prompts', () => {
  const vegaKeys = (): string => path.join(world.users.vega!.home, '.ssh', 'authorized_keys');
  let keyDir: string;
  let encKey: string;
  let pubLine: string;

  beforeAll(() => {
    keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-agent-'));
    encKey = path.join(keyDir, 'id_enc');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'correct horse', '-C', `ah-host-test-${process.pid}`, '-f', encKey]);
    pubLine = fs.readFileSync(`${encKey}.pub`, 'utf8').trim();
    fs.appendFileSync(vegaKeys(), `${pubLine}\n`);
  });

  afterAll(() => {
    const kept = fs.readFileSync(vegaKeys(), 'utf8').split('\n').filter((l) => l.trim() !== pubLine);
    fs.writeFileSync(vegaKeys(), kept.join('\n'));
    fs.rmSync(keyDir, { recursive: true, force: true });
  });

  it('uses a passphrase-protected key held only by ssh-agent', async () => {
    const sock = path.join(keyDir, 'agent.sock');
    const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    try {
      const deadline = Date.now() + 5000;
      while (!fs.existsSync(sock) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      const askpass = path.join(keyDir, 'askpass');
      fs.writeFileSync(askpass, "#!/bin/sh\necho 'correct horse'\n", { mode: 0o700 });
      const add = spawnSync('ssh-add', [encKey], { env: { ...process.env, SSH_AUTH_SOCK: sock, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0' }, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
      expect(add.status, add.stderr).toBe(0);
      const host = await SshHost.connect('w-vega', { ...fx.opts, agent: sock, identityFiles: [encKey] });
      expect((await host.run(['id', '-un'])).stdout).toBe('vega\n');
      await host.close();
      // IdentitiesOnly (set in the fixture config): agent keys that match no identity file are not offered.
      const other = path.join(keyDir, 'id_other');
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other]);
      const err = await hostErrorOf(SshHost.connect('w-vega', { ...fx.opts, agent: sock, identityFiles: [other] }));
      expect(err.code).toBe('auth_failed');
      const plain = writeConfig('cfg-no-identities-only', `Host v\n  HostName 127.0.0.1\n  Port ${world.sshd.port}\n  User vega\n  UserKnownHostsFile ${fx.knownHosts}\n`);
      const viaAgent = await SshHost.connect('v', { configFile: plain, agent: sock, identityFiles: [other] });
      await viaAgent.close();
    } finally {
      agent.kill('SIGTERM');
    }
  });

  it('says to ssh-add an encrypted key that no agent holds, never prompting', async () => {
    const err = await hostErrorOf(SshHost.connect('w-vega', { ...fx.opts, agent: null, identityFiles: [encKey] }));
    expect(err.code).toBe('auth_key_encrypted');
    expect(err.message).toContain(encKey);
    expect(err.fix).toContain(`ssh-add ${encKey}`);
  });

  it('names user@host and the keys tried when every key is refused', async () => {
    const stranger = path.join(keyDir, 'id_stranger');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', stranger]);
    const err = await hostErrorOf(SshHost.connect('w-vega', { ...fx.opts, identityFiles: [stranger] }));
    expect(err.code).toBe('auth_failed');
    expect(err.message).toContain(`vega@127.0.0.1:${world.sshd.port}`);
    expect(err.message).toContain(stranger);
  });
});

describe('ProxyJump', () => {
  let inner: Awaited<ReturnType<typeof startSshd>> | undefined;
  let innerDir: string;

  beforeAll(async () => {
    innerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-sshd2-'));
    inner = await startSshd(innerDir, { host: '127.0.0.2', users: ['vega'] });
  });

  afterAll(() => {
    if (inner) {
      try {
        process.kill(inner.pid, 'SIGTERM');
      } catch {
        // gone
      }
    }
    fs.rmSync(innerDir, { recursive: true, force: true });
  });

  const config = (knownHosts: string): string =>
    writeConfig(
      `cfg-jump-${path.basename(knownHosts)}`,
      [
        `Host jump`,
        `  HostName 127.0.0.1`,
        `  Port ${world.sshd.port}`,
        `  User vega`,
        `Host inner`,
        `  HostName 127.0.0.2`,
        `  Port ${inner!.port}`,
        `  User vega`,
        `  ProxyJump jump`,
        `Host *`,
        `  IdentityFile ${world.users.laptop!.key}`,
        `  UserKnownHostsFile ${knownHosts}`,
        `  GlobalKnownHostsFile none`,
        '',
      ].join('\n'),
    );

  it('reaches a host behind a jump host through a forwarded channel, verifying both', async () => {
    const known = writeConfig('kh-jump', `${world.sshd.hostKeyLine}\n${inner!.hostKeyLine}\n`);
    const host = await SshHost.connect('inner', { configFile: config(known), agent: null });
    try {
      expect(host.chain.map((h) => `${h.hostName}:${h.port}`)).toEqual([`127.0.0.1:${world.sshd.port}`, `127.0.0.2:${inner!.port}`]);
      const r = await host.run(['sh', '-c', 'echo "$SSH_CONNECTION"']);
      // The inner sshd sees a connection to 127.0.0.2 coming from the jump host.
      expect(r.stdout.trim().split(' ').slice(2)).toEqual(['127.0.0.2', String(inner!.port)]);
      expect(host.counters.handshakes).toBe(2);
      expect(fs.readFileSync(inner!.log, 'utf8')).toContain('Accepted publickey for vega');
    } finally {
      await host.close();
    }
  });

  it('chains two jumps (ProxyJump a,b), each hop verified', async () => {
    const known = writeConfig('kh-jump2', `${world.sshd.hostKeyLine}\n${inner!.hostKeyLine}\n`);
    const base = fs.readFileSync(config(known), 'utf8');
    const cfg = writeConfig('cfg-jump2', `Host inner2\n  HostName 127.0.0.2\n  Port ${inner!.port}\n  User vega\n  ProxyJump jump,jumpb\nHost jumpb\n  HostName 127.0.0.1\n  Port ${world.sshd.port}\n  User vegash\n${base}`);
    const host = await SshHost.connect('inner2', { configFile: cfg, agent: null });
    try {
      expect(host.chain.map((h) => h.user)).toEqual(['vega', 'vegash', 'vega']);
      expect(host.counters.handshakes).toBe(3);
      expect((await host.run(['sh', '-c', 'echo "$SSH_CONNECTION"'])).stdout.trim().split(' ')[2]).toBe('127.0.0.2');
    } finally {
      await host.close();
    }
  });

  it('verifies the inner host key too', async () => {
    const known = writeConfig('kh-jump-only', `${world.sshd.hostKeyLine}\n`);
    const err = await hostErrorOf(SshHost.connect('inner', { configFile: config(known), agent: null }));
    expect(err.code).toBe('host_key_unknown');
    expect(err.message).toContain(`127.0.0.2:${inner!.port}`);
    // Behind a jump host, keyscan from here cannot reach it: the fix is the known_hosts line.
    expect(err.fix).toContain(`[127.0.0.2]:${inner!.port} ssh-ed25519`);
  });
});

describe('forwarded connections and MaxSessions', () => {
  let sshd: Awaited<ReturnType<typeof startSshd>> | undefined;
  let dir: string;
  let server: net.Server;
  let socketPath: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-sshd-sessions-'));
    fs.chmodSync(dir, 0o755);
    // sshd allows two sessions per connection: the command shell and the SFTP channel take both.
    sshd = await startSshd(path.join(dir, 'sshd'), { host: '127.0.0.3', users: ['vega'], extra: ['MaxSessions 2'] });
    // A socket vega may connect to (as herdr's is), answering each line with it.
    const sockets = path.join(dir, 'sockets');
    fs.mkdirSync(sockets, { mode: 0o777 });
    fs.chmodSync(sockets, 0o777);
    socketPath = path.join(sockets, 'echo.sock');
    server = net.createServer((c) => c.on('data', (d) => c.end(d)));
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    fs.chmodSync(socketPath, 0o777);
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    if (sshd) {
      try {
        process.kill(sshd.pid, 'SIGTERM');
      } catch {
        // gone
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('do not wait for a session slot: sshd does not count them against MaxSessions', async () => {
    const known = writeConfig('kh-sessions', `${sshd!.hostKeyLine}\n`);
    const configFile = writeConfig(
      'cfg-sessions',
      [`Host two`, `  HostName 127.0.0.3`, `  Port ${sshd!.port}`, `  User vega`, `  IdentityFile ${world.users.laptop!.key}`, `  UserKnownHostsFile ${known}`, `  GlobalKnownHostsFile none`, ''].join('\n'),
    );
    const host = await SshHost.connect('two', { configFile, agent: null, maxChannels: 2 });
    try {
      // Both sessions in use: the command shell (held between commands) and SFTP.
      expect((await host.run(['echo', 'ok'])).stdout).toBe('ok\n');
      expect(await host.stat(dir)).not.toBeNull();
      const echoed = await Promise.all(
        Array.from({ length: 4 }, async (_, i) => {
          const c = await host.connectSocket(socketPath);
          return new Promise<string>((resolve, reject) => {
            let got = '';
            c.on('data', (d: Buffer) => (got += d.toString()));
            c.on('end', () => resolve(got));
            c.on('error', reject);
            c.write(`hello ${i}`);
          });
        }),
      );
      expect(echoed).toEqual(['hello 0', 'hello 1', 'hello 2', 'hello 3']);
      expect((await host.run(['echo', 'still'])).stdout).toBe('still\n');
    } finally {
      await host.close();
    }
  }, 30_000);
});
