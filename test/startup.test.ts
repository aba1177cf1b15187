// The CLI's own start-up (issue #18): what a run builds before it answers, observed from inside the
// built launcher and bundle by a preloaded recorder, not by the clock. `--version` and help load
// neither zod (the result schemas, the handoff's modules) nor ssh2; `send` has its target's
// `ssh -G` running before any of that loads (for a plain target, before the bundle itself), sends
// its TCP connect before the handoff's modules load, and loads ssh2 while that connect is under way;
// zod parses without compiling.
import { spawnSync } from 'node:child_process';
import { isAscii } from 'node:buffer';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendRemoteOf } from '../src/cli.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'agent-handoff.js');
const BUNDLE = path.join(ROOT, 'dist', 'cli.cjs');

/**
 * Loaded with --require before the launcher. Each event notes whether zod is loaded by then (zod
 * sets globalThis.__zod_globalConfig when it loads; every result schema and most of the handoff's
 * modules need it). ssh2 shows as the request for its package (or, bundled, for cpu-features,
 * which the bundle requires from ssh2's package when ssh2 loads).
 */
const RECORDER = `
const Module = require('node:module');
const cp = require('node:child_process');
const net = require('node:net');
const fs = require('node:fs');
const events = [];
let segmenters = 0;
const note = (what) => events.push({ what, zod: globalThis.__zod_globalConfig !== undefined });
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === 'ssh2' || request === 'cpu-features') note('ssh2');
  return load.call(this, request, ...rest);
};
const spawn = cp.ChildProcess.prototype.spawn;
cp.ChildProcess.prototype.spawn = function (o) {
  note('spawn ' + [o.file, ...(o.args || []).slice(1)].join(' '));
  return spawn.call(this, o);
};
// The connect as the socket's handle makes it (net.connect itself defers it to a later tick).
const TCP = process.binding('tcp_wrap').TCP;
const connect = TCP.prototype.connect;
TCP.prototype.connect = function (req, address, port, ...rest) {
  note('connect ' + port);
  return connect.call(this, req, address, port, ...rest);
};
const vm = require('node:vm');
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(...a) { note('bundle'); super(...a); }
};
// Functions made from source text by zod (it compiles one per object schema unless told not to);
// ssh2 makes one of its own when it loads.
let zodFunctions = 0;
const RealFunction = globalThis.Function;
globalThis.Function = new Proxy(RealFunction, {
  construct(t, a) {
    if (/generateFastpass|[\\/]zod[\\/]/.test(new Error().stack)) zodFunctions++;
    return Reflect.construct(t, a);
  },
});
const Segmenter = Intl.Segmenter;
Intl.Segmenter = class extends Segmenter {
  constructor(...a) { super(...a); segmenters++; }
};
process.on('exit', () => {
  note('exit');
  fs.writeFileSync(process.env.AH_STARTUP_REPORT, JSON.stringify({ events, segmenters, zodFunctions }));
});
`;

interface Report {
  events: { what: string; zod: boolean }[];
  segmenters: number;
  zodFunctions: number;
}

let tmp: string;
let recorder: string;

beforeAll(() => {
  expect(fs.existsSync(BUNDLE), 'run `npm run build` first').toBe(true);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-startup-'));
  recorder = path.join(tmp, 'recorder.cjs');
  fs.writeFileSync(recorder, RECORDER);
  fs.mkdirSync(path.join(tmp, 'home'));
});

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** Run the launcher (code cache in a folder of this test) under the recorder; `bin` first on PATH. */
function run(args: string[], opts: { bin?: string; env?: Record<string, string> } = {}): { status: number | null; stdout: string; report: Report } {
  const file = path.join(tmp, `report-${Math.random().toString(36).slice(2)}.json`);
  const PATH = [opts.bin, process.env.PATH ?? '/usr/bin:/bin'].filter(Boolean).join(':');
  const r = spawnSync(process.execPath, ['--require', recorder, BIN, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH, HOME: path.join(tmp, 'home'), XDG_CACHE_HOME: path.join(tmp, 'cache'), AH_STARTUP_REPORT: file, LANG: 'C.UTF-8', ...opts.env },
  });
  return { status: r.status, stdout: r.stdout, report: JSON.parse(fs.readFileSync(file, 'utf8')) as Report };
}

const whats = (r: Report): string[] => r.events.map((e) => e.what);

/** A local port with nothing listening: the connect is refused at once. */
async function closedPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

describe('start-up: only what the command needs', () => {
  // Twice: the first run writes the code cache, the second runs from it.
  for (const round of ['first run', 'with the code cache']) {
    it(`--version builds no schema, loads no ssh2, lays out no help text, starts no process (${round})`, () => {
      const r = run(['--version']);
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, command: 'version' });
      expect(whats(r.report)).toEqual(['bundle', 'exit']);
      expect(r.report.events.at(-1)?.zod).toBe(false);
      expect(r.report.segmenters).toBe(0);
    });

    it(`send --help lays out the usage without zod or ssh2 (${round})`, () => {
      const r = run(['send', '--help', '--json']);
      expect(r.status).toBe(0);
      expect((JSON.parse(r.stdout) as { usage: string }).usage).toContain('--dry-run');
      expect(whats(r.report)).toEqual(['bundle', 'exit']);
      expect(r.report.events.at(-1)?.zod).toBe(false);
    });
  }

  it("send: the target's ssh -G starts before anything heavy loads, the TCP connect before the handoff's modules, ssh2 while it connects", async () => {
    const port = await closedPort();
    for (let round = 0; round < 2; round++) {
      const r = run(['send', 'some-agent', `ssh://u@127.0.0.1:${port}`, '--dry-run', '--json']);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, command: 'send' });
      const events = r.report.events;
      const at = (re: RegExp): number => events.findIndex((e) => re.test(e.what));
      const sshG = at(/^spawn \S*ssh -G /);
      const connect = at(new RegExp(`^connect ${port}$`));
      const ssh2 = at(/^ssh2$/);
      // Right after the bundle loaded (an ssh:// target is the bundle's to resolve, not the launcher's).
      expect(sshG, whats(r.report).join('\n')).toBe(1);
      expect(events[sshG]?.zod).toBe(false);
      expect(connect).toBeGreaterThan(sshG);
      expect(events[connect]?.zod).toBe(false);
      expect(ssh2).toBeGreaterThan(connect);
    }
  });

  it('a command parses with zod uncompiled: its schemas are made after zod is told (zod-setup.ts)', async () => {
    // A journal for `history` to read: each line is parsed with its schema.
    const { Journal } = await import('../src/handoff/journal.js');
    const state = path.join(tmp, 'state');
    const journal = Journal.create(path.join(state, 'agent-handoff'), '20261206-120000-0123456789', { agent: 'some-agent', target: 'vega' });
    journal.outcome('succeeded');
    const r = run(['history', '--json'], { env: { XDG_STATE_HOME: state } });
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, command: 'history', handoffs: [{ id: '20261206-120000-0123456789' }] });
    expect(r.report.events.at(-1)?.zod).toBe(true);
    expect(r.report.zodFunctions).toBe(0);
  });

  it("send with a plain [user@]host target: the launcher starts its ssh -G before it loads the bundle, which takes that answer over", () => {
    // A documentation address: nothing answers there (or, without a network, nothing is reachable).
    const r = run(['send', 'some-agent', 'u@192.0.2.1', '--dry-run', '--timeout', '1', '--json']);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, command: 'send' });
    const all = whats(r.report);
    expect(all.filter((w) => /^spawn \S*ssh -G /.test(w)), all.join('\n')).toEqual(['spawn ssh -G -- u@192.0.2.1']);
    expect(all.indexOf('spawn ssh -G -- u@192.0.2.1')).toBeLessThan(all.indexOf('bundle'));
    expect(all.indexOf('connect 22')).toBeGreaterThan(all.indexOf('bundle'));
  });

  it('a refused send command line ends the early ssh -G nobody took over', () => {
    const r = run(['send', 'some-agent', 'u@192.0.2.1', '--no-such-flag', '--json']);
    expect(r.status).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: 'usage' });
    expect(whats(r.report).filter((w) => w.startsWith('spawn') || w.startsWith('connect'))).toEqual(['spawn ssh -G -- u@192.0.2.1']);
  });

  describe("the launcher dials where the target's first hop was last time", () => {
    /** A server that notes each connection and the bytes the client sent on it (never answering). */
    async function listener(): Promise<{ port: number; seen: () => Promise<string[]>; close: () => Promise<void> }> {
      const got: Promise<string>[] = [];
      const srv = net.createServer((c) => {
        got.push(
          new Promise((resolve) => {
            let text = '';
            c.on('data', (d: Buffer) => (text += d.toString('latin1')));
            c.on('close', () => resolve(text));
            c.on('error', () => undefined);
            // The client gave up long ago (it ran in a blocking spawn): what it sent is buffered.
            setTimeout(() => c.destroy(), 200);
          }),
        );
      });
      await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
      return {
        port: (srv.address() as net.AddressInfo).port,
        // Connections made while the test's loop was blocked are accepted once it runs again.
        seen: async () => {
          await new Promise((resolve) => setTimeout(resolve, 100));
          return Promise.all(got);
        },
        close: () => new Promise((resolve) => srv.close(() => resolve())),
      };
    }

    /** An `ssh` whose -G answers what a config naming 127.0.0.1:port would. */
    function fakeSsh(port: number): string {
      const bin = fs.mkdtempSync(path.join(tmp, 'bin-'));
      fs.writeFileSync(path.join(bin, 'ssh'), `#!/bin/sh\nprintf 'user u\\nhostname 127.0.0.1\\nport ${port}\\nconnecttimeout 1\\n'\n`, { mode: 0o755 });
      return bin;
    }

    async function remember(target: string, port: number): Promise<void> {
      const { rememberDial } = await import('../src/host/dial-memory.js');
      await rememberDial(target, { host: '127.0.0.1', port }, path.join(tmp, 'cache', 'agent-handoff', 'dial.json'));
    }

    /** A dry send to `target` remembered at port `dialed` whose ssh -G names port `resolved`: what the launcher and bundle did, in order. */
    async function dialedSend(target: string, dialed: number, resolved: number): Promise<string[]> {
      await remember(target, dialed);
      const r = run(['send', 'some-agent', target, '--dry-run', '--timeout', '1', '--json'], { bin: fakeSsh(resolved) });
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, command: 'send' });
      return whats(r.report);
    }

    /** The one connection `server` saw carried ssh's greeting. */
    async function greetedOnce(server: Awaited<ReturnType<typeof listener>>): Promise<void> {
      const seen = await server.seen();
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatch(/^SSH-2\.0-/);
    }

    it('before the bundle loads; the bundle takes that socket over when ssh -G resolves the same address', async () => {
      const server = await listener();
      try {
        const all = await dialedSend('u@dial-same', server.port, server.port);
        expect(all.filter((w) => w === `connect ${server.port}`), all.join('\n')).toHaveLength(1);
        expect(all.indexOf(`connect ${server.port}`)).toBeLessThan(all.indexOf('bundle'));
        // One connection, and ssh's greeting went on it: the launcher's socket was the one used.
        await greetedOnce(server);
      } finally {
        await server.close();
      }
    });

    it('the source of `send … --from HOST` likewise', async () => {
      const server = await listener();
      try {
        await remember('u@dial-from', server.port);
        const r = run(['send', 'some-agent', '--from', 'u@dial-from', '--dry-run', '--timeout', '1', '--json'], { bin: fakeSsh(server.port) });
        expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, command: 'send' });
        const all = whats(r.report);
        expect(all.filter((w) => /^spawn \S*ssh -G /.test(w)), all.join('\n')).toEqual(['spawn ssh -G -- u@dial-from']);
        expect(all.filter((w) => w === `connect ${server.port}`)).toHaveLength(1);
        expect(all.indexOf(`connect ${server.port}`)).toBeLessThan(all.indexOf('bundle'));
        await greetedOnce(server);
      } finally {
        await server.close();
      }
    });

    it('a target that moved: the early socket is closed unused, the bundle connects where ssh -G says', async () => {
      const before = await listener();
      const now = await listener();
      try {
        const all = await dialedSend('u@dial-moved', before.port, now.port);
        expect(all.indexOf(`connect ${before.port}`), all.join('\n')).toBeLessThan(all.indexOf('bundle'));
        expect(all.indexOf(`connect ${now.port}`)).toBeGreaterThan(all.indexOf('bundle'));
        // Not a byte on the old address; ssh's greeting on the new one.
        expect((await before.seen()).filter((t) => t !== '')).toEqual([]);
        await greetedOnce(now);
      } finally {
        await before.close();
        await now.close();
      }
    });

    it('nothing remembered for that target, or a command line that is refused: no early connect left open', async () => {
      const server = await listener();
      try {
        await remember('u@dial-other', server.port);
        const none = run(['send', 'some-agent', 'u@dial-unknown', '--dry-run', '--timeout', '1', '--json'], { bin: fakeSsh(1) });
        expect(whats(none.report).filter((w) => w === `connect ${server.port}`)).toEqual([]);
        const refused = run(['send', 'some-agent', 'u@dial-other', '--no-such-flag', '--json'], { bin: fakeSsh(server.port) });
        expect(refused.status).toBe(2);
        expect(whats(refused.report).filter((w) => w.startsWith('connect'))).toEqual([`connect ${server.port}`]);
        // Closed by the launcher as the command ended, not a byte sent (it may not have been accepted yet).
        expect((await server.seen()).filter((t) => t !== '')).toEqual([]);
      } finally {
        await server.close();
      }
    });
  });

  it('the bundle is all ASCII (the launcher makes it a one-byte string without decoding UTF-8)', () => {
    expect(isAscii(fs.readFileSync(BUNDLE))).toBe(true);
  });
});

describe('sendRemoteOf: the host a send connects to first, read before the parse, only when certain', () => {
  const cases: [string[], string | null][] = [
    [['send', 'api', 'vega'], 'vega'],
    [['send', 'api', 'ssh://me@vega:2222', '--dry-run', '--dir', 'x'], 'ssh://me@vega:2222'],
    [['send', 'api', 'vega', '--', '--model', 'x'], 'vega'],
    // An option before the words: which word is the target is the parser's to say.
    [['send', '--dir', 'x', 'api', 'vega'], null],
    // The source of a way back: `--from` takes a value, wherever it stands.
    [['send', 'api', '--from', 'vega'], 'vega'],
    [['send', '--from', 'vega', 'api'], 'vega'],
    [['send', 'api', '--from=me@vega', '--here'], 'me@vega'],
    [['send', 'api', 'mars', '--from', 'vega'], 'vega'],
    [['send', 'api', '--from', 'vega', '--from', 'mars'], null],
    [['send', 'api', '--from', '--dry-run'], null],
    [['send', 'api', '--from'], null],
    [['send', 'api', '--from', 'local'], null],
    [['send', 'api', '--', '--from', 'vega'], null],
    [['--json', 'send', 'api', 'vega'], null],
    [['send', 'api'], null],
    [['send', 'api', 'vega', '--here'], null],
    [['send', 'api', 'local'], null],
    [['list', 'api', 'vega'], null],
    [['send', 'api', '--', 'vega'], null],
    // A batch: the last of the words is the target.
    [['send', 'api', 'web', 'vega', '--dry-run'], 'vega'],
    [['send', '--all', 'vega'], 'vega'],
    [['send', '--all', '--from', 'vega'], 'vega'],
    [['send', '--all', 'api', 'vega'], null],
    [['send', 'api', 'web', '--here'], null],
  ];
  for (const [argv, want] of cases) it(`${argv.join(' ')} → ${want}`, () => expect(sendRemoteOf(argv)).toBe(want));
});
