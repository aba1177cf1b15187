// The watch of a launched agent (src/herdr/start-watch.ts): its sh program under each POSIX shell
// with hostile names as data, the parser of its stream, and watchStart on a host, ended by us.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.js';
import { LocalHost } from '../../src/host/local.js';
import { HerdrCli } from '../../src/herdr/cli-runner.js';
import { HerdrError } from '../../src/herdr/herdr-error.js';
import { WATCH_START_PROGRAM, WatchParser, watchStart, type StartWatch, type WatchRound } from '../../src/herdr/start-watch.js';
import { watchedRounds, type StartRound, type StartRounds } from '../../src/herdr/start-wait.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { hostileArgs } from '../host/hostile-args.js';

const tmp = tempDirs('ah-watch-');

const MARK = 'AHWATCHtest0123456789';
const agentJson = (status: string, pending: boolean) =>
  JSON.stringify({
    id: 'cli:agent:get',
    result: { type: 'agent_info', agent: { terminal_id: 't1', name: 'a', agent: 'pi', agent_status: status, workspace_id: 'w1', tab_id: 'w1:t1', pane_id: 'w1:p1', focused: false, launch_pending: pending, interactive_ready: !pending, revision: 1 } },
  });
const processJson = JSON.stringify({ id: 'cli:pane:process_info', result: { type: 'pane_process_info', process_info: { pane_id: 'w1:p1', shell_pid: 10, foreground_process_group_id: 20, foreground_processes: [] } } });
const notFound = JSON.stringify({ id: 'cli:agent:get', error: { code: 'agent_not_found', message: 'agent target a not found' } });

/**
 * A herdr stand-in: logs each call's arguments (each ended by a NUL) in a file of its own, and answers
 * `agent get` from a counter: launching twice, then ready; `pane process-info` always the same;
 * `pane read` the screen of the round it was asked in (no newline at its end, as herdr's).
 */
function fakeHerdr(dir: string): string {
  const bin = path.join(dir, 'herdr');
  fs.writeFileSync(
    bin,
    [
      '#!/bin/sh',
      `d='${dir}'`,
      // A file per call: the two questions of a round run at once, and their writes would interleave.
      'f=$(mktemp "$d/call.XXXXXX") && printf "%s\\0" "$@" >"$f"',
      'case $1 in',
      `  pane) if [ "$2" = read ]; then printf '%s' "screen of round $(cat "$d/n" 2>/dev/null || echo 0)"; else printf '%s\\n' '${processJson}'; fi ;;`,
      '  agent) n=$(cat "$d/n" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" >"$d/n"',
      `    if [ "$n" -le 2 ]; then printf '%s\\n' '${agentJson('unknown', true)}'; else printf '%s\\n' '${agentJson('idle', false)}'; fi ;;`,
      'esac',
    ].join('\n'),
    { mode: 0o755 },
  );
  return bin;
}

/** Run the watch under `shell` until `rounds` rounds arrived, then end its stdin; its whole stdout and how it ended. */
function watchUnder(shell: readonly string[], args: string[], rounds: number): Promise<{ out: string; code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const p = spawn(shell[0]!, [...shell.slice(1), '-c', WATCH_START_PROGRAM, 'sh', ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (out.split(`${MARK} .\n`).length - 1 >= rounds) p.stdin.end();
    });
    p.on('error', reject);
    p.on('close', (code, signal) => resolve({ out, code, signal }));
  });
}

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('the watch program under %s', (_name, shell) => {
  it('asks herdr about the agent and its pane with the names as data, round after round, reads the screen when the agent changed, and ends when its stdin does', async () => {
    const canaries = tmp();
    const hostile = hostileArgs(canaries).filter((h) => h.length < 1000 && h !== '');
    for (const [i, name] of hostile.entries()) {
      const dir = tmp();
      const pane = hostile[(i + 7) % hostile.length]!;
      const { out, code } = await watchUnder(shell, [fakeHerdr(dir), name, pane, MARK, '0.01'], 4);
      expect(code).toBe(0);
      // Every call named the agent and the pane exactly.
      const calls = fs
        .readdirSync(dir)
        .filter((f) => f.startsWith('call.'))
        .map((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\0').slice(0, -1));
      expect(calls.filter((c) => c[0] === 'agent').length).toBeGreaterThanOrEqual(4);
      const processCalls = calls.filter((c) => c[0] === 'pane' && c[1] === 'process-info');
      const screenCalls = calls.filter((c) => c[0] === 'pane' && c[1] === 'read');
      expect(processCalls.length).toBeGreaterThanOrEqual(4);
      expect(calls.filter((c) => c[0] === 'agent').every((c) => c.join('\0') === ['agent', 'get', name].join('\0'))).toBe(true);
      expect(processCalls.every((c) => c.join('\0') === ['pane', 'process-info', '--pane', pane].join('\0'))).toBe(true);
      // The screen only in rounds whose answer about the agent changed: the first and the third.
      expect(screenCalls.map((c) => c.join('\0'))).toEqual([0, 1].map(() => ['pane', 'read', pane, '--source', 'visible'].join('\0')));
      // Whole answers when they change, "=" when herdr said the same again.
      const rounds = out.split(`${MARK} .\n`).slice(0, 4);
      expect(rounds[0]).toBe(`${MARK} A 0\n${agentJson('unknown', true)}\n\n${MARK} P 0\n${processJson}\n\n${MARK} S 0\nscreen of round 1\n`);
      expect(rounds[1]).toBe(`${MARK} A 0 =\n${MARK} P 0 =\n`);
      expect(rounds[2]).toBe(`${MARK} A 0\n${agentJson('idle', false)}\n\n${MARK} P 0 =\n${MARK} S 0\nscreen of round 3\n`);
      expect(rounds[3]).toBe(`${MARK} A 0 =\n${MARK} P 0 =\n`);
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  }, 60_000);

  it('passes herdr failures on with their exit code, and leaves no temporary folder behind', async () => {
    const dir = tmp();
    const tmpdir = tmp();
    const bin = path.join(dir, 'herdr');
    fs.writeFileSync(bin, `#!/bin/sh\nprintf '%s\\n' '${notFound}' >&2\nexit 1\n`, { mode: 0o755 });
    const out = await new Promise<string>((resolve) => {
      const p = spawn(shell[0]!, [...shell.slice(1), '-c', WATCH_START_PROGRAM, 'sh', bin, 'a', 'w1:p1', MARK, '0.01'], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, TMPDIR: tmpdir } });
      let text = '';
      p.stdout.on('data', (d: Buffer) => {
        text += d.toString('utf8');
        if (text.includes(`${MARK} .\n`)) p.stdin.end();
      });
      p.on('close', () => resolve(text));
    });
    expect(out.startsWith(`${MARK} A 1\n${notFound}\n\n${MARK} P 1\n${notFound}\n\n${MARK} S 1\n${notFound}\n\n${MARK} .\n`)).toBe(true);
    expect(fs.readdirSync(tmpdir)).toEqual([]);
  }, 30_000);
});

describe('WatchParser', () => {
  const cli = new HerdrCli(new LocalHost(), 1000, '/nonexistent/herdr');
  const parse = (chunks: string[]): WatchRound[] => {
    const rounds: WatchRound[] = [];
    const parser = new WatchParser(MARK, cli, (r) => rounds.push(r));
    for (const c of chunks) parser.push(c);
    return rounds;
  };
  // A screen keeps its own end: herdr prints it with no newline of its own, or with some.
  const screen = `${MARK} is not at the start of this line\n  Trust this folder? (y/n)\n\n`;
  const stream = [
    `${MARK} A 0\n${agentJson('unknown', true)}\n\n${MARK} P 0\n${processJson}\n\n${MARK} S 0\n$ pi --resume\n${MARK} .\n`,
    `${MARK} A 0 =\n${MARK} P 0 =\n${MARK} .\n`,
    `${MARK} A 1\n${notFound}\n\n${MARK} P 1\nnot json\n\n${MARK} S 0\n${screen}\n${MARK} .\n`,
    `${MARK} A 1 =\n${MARK} P 1 =\n${MARK} S 0 =\n${MARK} .\n`,
    `${MARK} A 0\n${agentJson('idle', false)}\n\n${MARK} P 0 =\n${MARK} S 1\n${notFound}\n\n${MARK} .\n`,
  ].join('');

  it('gives each round once it is complete, however the stream is cut, with "=" meaning the answer before', () => {
    for (const size of [1, 3, 7, 64, stream.length]) {
      const chunks: string[] = [];
      for (let i = 0; i < stream.length; i += size) chunks.push(stream.slice(i, i + size));
      const rounds = parse(chunks);
      expect(rounds).toHaveLength(5);
      expect(rounds[0]!.agent).toMatchObject({ info: { agent_status: 'unknown', launch_pending: true } });
      expect(rounds[0]!.processes).toMatchObject({ shell_pid: 10, foreground_process_group_id: 20 });
      expect(rounds[0]!.screen).toBe('$ pi --resume');
      // No screen read in a round whose answer about the agent did not change.
      expect(rounds[1]).toEqual({ ...rounds[0], screen: null });
      const err = (rounds[2]!.agent as { err: unknown }).err;
      expect(err).toBeInstanceOf(HerdrError);
      expect((err as HerdrError).herdrCode).toBe('agent_not_found');
      expect(rounds[2]!.processes).toBeNull();
      expect(rounds[2]!.screen).toBe(screen);
      expect(rounds[3]!.screen).toBe(screen);
      // A screen herdr could not read is none.
      expect(rounds[4]!.agent).toMatchObject({ info: { agent_status: 'idle' } });
      expect(rounds[4]!.screen).toBeNull();
    }
  });

  it('holds back a round that has not ended, and ignores what is not framed', () => {
    expect(parse([`noise before\n${MARK} A 0\n${agentJson('idle', false)}\n`])).toEqual([]);
    expect(parse([`${MARK} A 0\n{"id":"cli:agent:get","result":{"type":"agent_info"}}\n${MARK} .\n`])[0]!.agent).toHaveProperty('err');
  });
});

describe('watchStart on a host', () => {
  it('streams the rounds as they come and its program ends when stopped', async () => {
    const dir = tmp();
    const host = new LocalHost();
    const cli = new HerdrCli(host, 5000, path.join(dir, 'herdr'));
    const watch = watchStart(host, cli, fakeHerdr(dir), 'a', 'w1:p1', { pauseMs: 10, timeoutMs: 20_000 });
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      const round = await watch.next();
      seen.push('info' in round.agent ? String(round.agent.info.agent_status) : 'error');
    }
    expect(seen).toEqual(['unknown', 'unknown', 'idle', 'idle']);
    watch.stop();
    // Ended: what is left are the rounds already on their way, then the end.
    let ended: unknown = null;
    for (let i = 0; i < 20 && !ended; i++) await watch.next().catch((err: unknown) => (ended = err));
    expect(String(ended)).toMatch(/watch of a .* ended \(exit 0\)/);
  }, 30_000);

  it('decodes its stream across chunks: a name cut inside a multibyte character arrives whole', async () => {
    const name = 'réviseur-日本-🚀';
    const cwd = '/home/vega/código/プロジェクト';
    const agent = JSON.stringify({ id: 'cli:agent:get', result: { type: 'agent_info', agent: { ...JSON.parse(agentJson('idle', false)).result.agent, name, cwd } } });
    // A host whose program answers one round, one byte per chunk (every character cut apart).
    const host = new LocalHost();
    host.run = async (argv, opts = {}) => {
      const mark = argv[argv.length - 2]!;
      const bytes = Buffer.from(`${mark} A 0\n${agent}\n\n${mark} P 0\n${processJson}\n\n${mark} .\n`, 'utf8');
      for (const b of bytes) await new Promise<void>((resolve) => opts.stdout!.write(Buffer.from([b]), () => resolve()));
      await new Promise((resolve) => (opts.stdin as NodeJS.ReadableStream).once('end', resolve).resume());
      return { exitCode: 0, stdout: '', stderr: '', durationMs: 0 };
    };
    const watch = watchStart(host, new HerdrCli(host, 5000, '/nonexistent/herdr'), '/nonexistent/herdr', name, 'w1:p1', { pauseMs: 10, timeoutMs: 20_000 });
    const round = await watch.next();
    expect(round.agent).toMatchObject({ info: { name, cwd } });
    watch.stop();
  });

  it('a herdr that cannot run is an answer too (exit 127), which its caller judges', async () => {
    const host = new LocalHost();
    const cli = new HerdrCli(host, 5000, '/nonexistent/herdr');
    const watch = watchStart(host, cli, '/nonexistent/herdr', 'a', 'w1:p1', { pauseMs: 10, timeoutMs: 20_000 });
    const round = await watch.next();
    expect((round.agent as { err: unknown }).err).toMatchObject({ herdrCode: 'herdr_failed' });
    watch.stop();
  }, 30_000);
});

describe('watchedRounds', () => {
  const info = JSON.parse(agentJson('unknown', true)).result.agent;
  const processes = JSON.parse(processJson).result.process_info;
  /** A watch that gives `rounds` in turn, then ends with `end`. */
  const scripted = (rounds: WatchRound[], end: unknown = new Error('ended')): StartWatch & { stopped: number } => {
    const w = { stopped: 0, next: () => (rounds.length > 0 ? Promise.resolve(rounds.shift()!) : Promise.reject(end)), stop: () => void w.stopped++ };
    return w;
  };
  const polls = (): StartRounds & { asked: number } => {
    const p = { asked: 0, next: async (): Promise<StartRound> => (p.asked++, { got: { info }, shellOwns: false, running: null, screen: null }), stop: () => undefined };
    return p;
  };

  it("gives the watch's rounds with their screens, the pane's shell counted only once looking, its program whenever seen", async () => {
    const shellOwns = { ...processes, foreground_process_group_id: processes.shell_pid };
    const fallback = polls();
    const rounds = watchedRounds(
      scripted([
        { agent: { info }, processes: shellOwns, screen: 'Trust this folder?' },
        { agent: { info }, processes: shellOwns, screen: null },
        { agent: { info }, processes, screen: null },
        { agent: { info }, processes: null, screen: null },
      ]),
      () => fallback,
    );
    expect(await rounds.next(false)).toEqual({ got: { info }, shellOwns: false, running: false, screen: 'Trust this folder?' });
    expect(await rounds.next(true)).toEqual({ got: { info }, shellOwns: true, running: false, screen: null });
    expect(await rounds.next(false)).toEqual({ got: { info }, shellOwns: false, running: true, screen: null });
    expect(await rounds.next(true)).toEqual({ got: { info }, shellOwns: false, running: null, screen: null });
    await expect(rounds.next(true)).rejects.toThrow('ended');
    expect(fallback.asked).toBe(0);
  });

  it('gives way to polls when the watch ends before its first round, or its first answer is not herdr speaking', async () => {
    for (const watch of [scripted([]), scripted([{ agent: { err: new HerdrError('herdr_failed', 'exited 127: not found', 'vega') }, processes: null, screen: null }])]) {
      const fallback = polls();
      const rounds = watchedRounds(watch, () => fallback);
      expect(await rounds.next(false)).toEqual({ got: { info }, shellOwns: false, running: null, screen: null });
      expect(await rounds.next(false)).toEqual({ got: { info }, shellOwns: false, running: null, screen: null });
      expect(fallback.asked).toBe(2);
      expect(watch.stopped).toBeGreaterThan(0);
    }
  });

  it("keeps herdr's own answers and a timeout: they are the start's outcome, not the watch's trouble", async () => {
    const gone = new HerdrError('agent_not_found', 'agent target a not found', 'vega');
    const fallback = polls();
    const rounds = watchedRounds(scripted([{ agent: { err: gone }, processes: null, screen: null }]), () => fallback);
    expect(await rounds.next(false)).toEqual({ got: { err: gone }, shellOwns: false, running: null, screen: null });
    const late = watchedRounds(scripted([], new HerdrError('timeout', 'timed out waiting for agent startup', 'vega')), () => fallback);
    await expect(late.next(false)).rejects.toMatchObject({ herdrCode: 'timeout' });
    expect(fallback.asked).toBe(0);
  });
});
