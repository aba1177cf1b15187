// The command shell's loop (ssh-shell.ts), run here under each POSIX shell with a pipe for the
// channel: stdin reaches each command byte-exact whether it crosses escaped or raw, raw bytes
// never run as commands, and a loop without dd is never sent raw bytes.
import { execFileSync, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClientChannel } from 'ssh2';
import { afterAll, describe, expect, it } from 'vitest';
import { buildHeader } from '../../src/host/remote-command.js';
import { CommandShell, commandInput, shellLoop, SHELL_STDIN_MAX } from '../../src/host/ssh-shell.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { hostileArgs } from './hostile-args.js';

const MARK = 'AHSHtest0123';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-shell-loop-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The loop under `shell`, behind a CommandShell whose channel is the child's pipes. */
function startLoop(shell: string[], PATH = process.env.PATH): { shell: CommandShell; exited: Promise<number | null> } {
  const bin = execFileSync('sh', ['-c', 'command -v "$1"', 'sh', shell[0]!], { encoding: 'utf8' }).trim();
  const child = spawn(bin, [...shell.slice(1), '-c', shellLoop(MARK)], {
    // An empty HOME: bash on a socket for stdin (node's pipes) takes itself for sshd's and reads ~/.bashrc.
    env: { PATH, HOME: tmp },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const ch = Object.assign(new EventEmitter(), {
    stderr: child.stderr,
    write: (b: string | Buffer) => child.stdin.write(b),
    end: () => child.stdin.end(),
  });
  child.stdout.on('data', (d: Buffer) => ch.emit('data', d));
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => (ch.emit('close'), resolve(code))));
  return { shell: new CommandShell(ch as unknown as ClientChannel, MARK, 'here', () => child.kill('SIGTERM')), exited };
}

const cat = buildHeader({ argv: ['cat'] });
const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

describe('command input', () => {
  it('goes raw only for a loop with dd, and only where escaping costs more', () => {
    expect(commandInput(undefined, true)).toEqual({ line: ': >"$d/i"' });
    expect(commandInput(Buffer.from('{"json":"text"}\n'), true).raw).toBeUndefined();
    expect(commandInput(all, false).raw).toBeUndefined();
    const raw = commandInput(all, true);
    expect(raw.raw?.equals(all)).toBe(true);
    expect(raw.line).toBe(`dd ibs=1 obs=${SHELL_STDIN_MAX} count=256 of="$d/i" 2>/dev/null || exit 1`);
    expect(commandInput(Buffer.alloc(SHELL_STDIN_MAX + 1), true).raw).toBeUndefined();
  });
});

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('the command shell loop under %s', (_name, sh) => {
  it('gives every command its stdin byte-exact, raw or escaped, and runs none of it', async () => {
    const canaries = fs.mkdtempSync(path.join(tmp, 'canary-'));
    const { shell, exited } = startLoop(sh);
    try {
      // The first command may go before the ready line: escaped whatever it holds.
      const inputs = [
        all,
        Buffer.concat([all, Buffer.from(`\n${MARK} 0 1 1\ntouch ${canaries}/raw\n`)]),
        ...hostileArgs(canaries).map((a) => Buffer.from(a)),
        Buffer.from(Array.from({ length: SHELL_STDIN_MAX }, (_, i) => (i * 7919) % 256)),
        Buffer.alloc(0),
      ];
      let rawSent = 0;
      for (const input of inputs) {
        if (shell['parser'].ready === '+' && commandInput(input, true).raw) rawSent++;
        const out = await shell.run(cat, input, 10_000, 'cat');
        expect(out.exitCode).toBe(0);
        expect(out.stdout.equals(input)).toBe(true);
      }
      expect(rawSent).toBeGreaterThan(0);
      expect(fs.readdirSync(canaries)).toEqual([]);
    } finally {
      shell.close();
      await exited;
    }
  });

  it('is never sent raw bytes when it has no dd', async () => {
    const bin = fs.mkdtempSync(path.join(tmp, 'bin-'));
    for (const tool of ['mktemp', 'rm', 'cat', 'wc']) fs.symlinkSync(fs.realpathSync(`/usr/bin/${tool}`), path.join(bin, tool));
    const { shell, exited } = startLoop(sh, bin);
    try {
      await shell.run(cat, undefined, 10_000, 'cat');
      expect(shell['parser'].ready).toBe('');
      const out = await shell.run(cat, all, 10_000, 'cat');
      expect(out.stdout.equals(all)).toBe(true);
    } finally {
      shell.close();
      await exited;
    }
  });

  it('ends rather than read raw bytes as commands when dd cannot write them', async () => {
    const canaries = fs.mkdtempSync(path.join(tmp, 'canary-'));
    const { shell, exited } = startLoop(sh);
    try {
      await shell.run(cat, undefined, 10_000, 'cat');
      // A command that takes the input file's place with a folder: the next dd cannot write there.
      await shell.run('rm -f -- "$d/i" && mkdir -- "$d/i"', undefined, 10_000, 'break');
      const payload = Buffer.concat([Buffer.from([0, 255, 1]), Buffer.from(`\ntouch ${canaries}/ran\ntouch ${canaries}/ran2\n`), all]);
      expect(commandInput(payload, true).raw).toBeDefined();
      await expect(shell.run(cat, payload, 10_000, 'cat')).rejects.toThrow(/ended/);
      expect(await exited).toBe(1);
      expect(fs.readdirSync(canaries)).toEqual([]);
    } finally {
      shell.close();
    }
  });
});
