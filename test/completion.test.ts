// Shell completion: the candidates for each position (from the CLI's own usage), the real
// `__complete` entry (quiet and fast without herdr, agent names with a running herdr), and the
// bash and zsh scripts loaded into real shells.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parserFor } from '../src/cli.js';
import { commandSpecs, complete, completionScript, sshConfigHosts, type CompletionData } from '../src/completion.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const APP = path.join(ROOT, 'bin', 'agent-handoff.js');
const WORLD = path.join(ROOT, 'dist', 'test', 'world');

let data: CompletionData;
const asked: string[] = [];

beforeAll(async () => {
  const specs = await commandSpecs(parserFor);
  data = {
    ...specs,
    agents: async () => {
      asked.push('agents');
      return ['reviewer', 'w3:p1', 'pi-main'];
    },
    hosts: () => ['vega', 'build-box'],
    handoffs: () => ['20261130-101010-aaaa', '20261129-090909-bbbb'],
  };
});

describe('completion candidates', () => {
  it('derives every command and flag from the CLI usage', () => {
    const names = data.commands.map((c) => c.name);
    expect(names).toEqual(['list', 'doctor', 'send', 'recover', 'history', 'show', 'schema', 'completion', 'help']);
    const send = data.commands.find((c) => c.name === 'send')!;
    expect(send.positionals).toEqual(['agent..']);
    const flags = Object.fromEntries(send.flags.map((f) => [f.name, f]));
    for (const f of ['dry-run', 'here', 'new-worktree', 'dir', 'from', 'self', 'wait', 'wait-timeout', 'new-branch', 'keep-source-changes', 'name', 'session', 'focus', 'trust', 'timeout']) {
      expect(flags[f], f).toBeDefined();
    }
    expect(flags.dir?.takesValue).toBe(true);
    expect(flags['wait-timeout']?.takesValue).toBe(true);
    expect(flags.here?.takesValue).toBe(false);
    expect(flags.focus?.negatable).toBe(true);
    expect(data.globalFlags.map((f) => f.name)).toEqual(['version', 'quiet', 'help', 'json']);
  });

  const cases: [string[], string[]][] = [
    [[''], ['list', 'doctor', 'send', 'recover', 'history', 'show', 'schema', 'completion', 'help']],
    [['s'], ['send', 'show', 'schema']],
    [['-'], ['--version', '--quiet', '--help', '--json']],
    [['send', ''], ['reviewer', 'w3:p1', 'pi-main']],
    [['send', 're'], ['reviewer']],
    // send's words: agents, then the target (hosts first, then the other agents).
    [['send', 'reviewer', ''], ['vega', 'build-box', 'w3:p1', 'pi-main']],
    [['send', 'reviewer', 'vega', ''], ['build-box', 'w3:p1', 'pi-main']],
    [['send', 'reviewer', 'p'], ['pi-main']],
    [['send', '--all', ''], ['vega', 'build-box']],
    [['send', '--all', 'vega', ''], []],
    [['send', '--dry-run', 'reviewer', 'b'], ['build-box']],
    [['send', '--dir', '/x', ''], ['reviewer', 'w3:p1', 'pi-main']],
    [['send', 'reviewer', '--from', ''], ['vega', 'build-box']],
    [['send', 'reviewer', '--dir', ''], []],
    [['send', 'reviewer', '--d'], ['--dry-run', '--dir', '--done-when']],
    [['send', 'reviewer', '--no-'], ['--no-focus', '--no-trust']],
    [['send', 'reviewer', '--dry-run', '--dr'], []],
    [['send', 'reviewer', 'vega', '--', ''], []],
    [['doctor', ''], ['vega', 'build-box']],
    [['list', '--'], ['--version', '--quiet', '--help', '--json', '--from']],
    [['show', ''], ['20261130-101010-aaaa', '20261129-090909-bbbb']],
    [['recover', '2026113'], ['20261130-101010-aaaa']],
    [['recover', '--r'], ['--rollback']],
    [['completion', '--s'], ['--shell']],
    [['help', 's'], ['send', 'show', 'schema']],
    [['frobnicate', ''], []],
  ];
  for (const [words, want] of cases) {
    it(`agent-handoff ${words.join(' ')}<TAB>`, async () => {
      expect(await complete(words, data)).toEqual(want);
    });
  }

  it('asks herdr for agents only where an agent is named', async () => {
    asked.length = 0;
    await complete(['send', '--all', ''], data);
    await complete(['doctor', ''], data);
    await complete(['send', '--h'], data);
    expect(asked).toEqual([]);
    await complete(['send', ''], data);
    expect(asked).toEqual(['agents']);
  });

  it('reads host aliases from ~/.ssh/config, skipping patterns', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-compl-'));
    try {
      expect(sshConfigHosts(home)).toEqual([]);
      fs.mkdirSync(path.join(home, '.ssh'));
      fs.writeFileSync(path.join(home, '.ssh', 'config'), 'Host vega vega-ts\n  HostName 10.0.0.2\nHost *.internal !bad\n  User x\n  host lab\nMatch all\n');
      expect(sshConfigHosts(home)).toEqual(['vega', 'vega-ts', 'lab']);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

/** A private sandbox: HOME, a bin folder with `agent-handoff`, `herdr` and the fake agents. */
function sandbox(): { dir: string; home: string; bin: string; env: Record<string, string> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-compl-'));
  const home = path.join(dir, 'home');
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(path.join(home, '.config'), { recursive: true });
  fs.mkdirSync(bin);
  fs.symlinkSync(APP, path.join(bin, 'agent-handoff'));
  const env: Record<string, string> = {
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    HERDR_SOCKET_PATH: path.join(dir, 'herdr.sock'),
    PATH: `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    HERDR_SIM_READY_MS: '300',
    HERDR_SIM_POLL_MS: '100',
    FAKE_AGENT_TURN_MS: '200',
  };
  return { dir, home, bin, env };
}

function completeCli(env: Record<string, string>, words: string[]): { code: number | null; stdout: string; stderr: string; ms: number } {
  const started = Date.now();
  const r = spawnSync(process.execPath, [APP, '__complete', ...words], { env, encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, ms: Date.now() - started };
}

describe('agent-handoff __complete (the real CLI)', () => {
  it('without herdr: commands and flags, no agents, nothing on stderr, exit 0', () => {
    const sb = sandbox();
    try {
      expect(fs.existsSync(path.join(sb.bin, 'herdr'))).toBe(false);
      const agents = completeCli(sb.env, ['send', '']);
      expect(agents).toMatchObject({ code: 0, stdout: '', stderr: '' });
      // A guard against hanging on a missing herdr (the bound is loose for loaded CI machines).
      expect(agents.ms).toBeLessThan(20_000);
      const cmds = completeCli(sb.env, ['s']);
      expect(cmds).toMatchObject({ code: 0, stdout: 'send\nshow\nschema\n', stderr: '' });
      const flags = completeCli(sb.env, ['send', 'x', '--wait']);
      expect(flags.stdout).toBe('--wait\n--wait-timeout\n');
    } finally {
      fs.rmSync(sb.dir, { recursive: true, force: true });
    }
  });

  it('with herdr installed but its server stopped: still quiet', () => {
    const sb = sandbox();
    try {
      fs.writeFileSync(path.join(sb.bin, 'herdr'), `#!/usr/bin/env node\nimport(${JSON.stringify(path.join(WORLD, 'herdr', 'cli.js'))}).then(async (m) => { process.exitCode = await m.main(process.argv.slice(2)); });\n`, { mode: 0o755 });
      expect(completeCli(sb.env, ['send', ''])).toMatchObject({ code: 0, stdout: '', stderr: '' });
    } finally {
      fs.rmSync(sb.dir, { recursive: true, force: true });
    }
  });

  describe('with a running herdr and an agent', () => {
    let sb: ReturnType<typeof sandbox>;
    let serverPid: number | undefined;
    const herdr = (args: string[]) => spawnSync(path.join(sb.bin, 'herdr'), args, { env: sb.env, encoding: 'utf8', cwd: sb.home });

    beforeAll(async () => {
      sb = sandbox();
      const { writeAgentBins } = (await import(path.join(WORLD, 'agents', 'install.js'))) as { writeAgentBins: (bin: string, lib: string) => void };
      const { writeLauncher } = (await import(path.join(WORLD, 'herdr', 'testing.js'))) as { writeLauncher: (file: string, cli: string) => void };
      writeAgentBins(sb.bin, WORLD);
      writeLauncher(path.join(sb.bin, 'herdr'), path.join(WORLD, 'herdr', 'cli.js'));
      fs.writeFileSync(path.join(sb.home, '.profile'), `PATH="${sb.bin}:$PATH"\nexport PATH\n`);
      const child = spawn(path.join(sb.bin, 'herdr'), ['server'], { env: { ...sb.env, HERDR_BIN_PATH: path.join(sb.bin, 'herdr') }, cwd: sb.home, detached: true, stdio: 'ignore' });
      child.unref();
      serverPid = child.pid;
      for (let i = 0; i < 100 && !herdr(['status', 'server', '--json']).stdout.includes('"running":true'); i++) await new Promise((r) => setTimeout(r, 100));
      const ws = JSON.parse(herdr(['workspace', 'create', '--cwd', sb.home, '--no-focus']).stdout) as { result: { root_pane: { pane_id: string } } };
      const pane = ws.result.root_pane.pane_id;
      for (let i = 0; i < 100; i++) {
        const r = herdr(['agent', 'start', 'reviewer', '--kind', 'pi', '--pane', pane]);
        if (r.status === 0) break;
        if (!/not an available shell/.test(r.stderr)) throw new Error(r.stderr);
        await new Promise((res) => setTimeout(res, 100));
      }
    });

    afterAll(async () => {
      if (serverPid) {
        herdr(['server', 'stop']);
        for (let i = 0; i < 50; i++) {
          try {
            process.kill(serverPid, 0);
          } catch {
            break;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        try {
          process.kill(serverPid, 'SIGKILL');
        } catch {
          // stopped
        }
      }
      fs.rmSync(sb.dir, { recursive: true, force: true });
    });

    it('offers the agent names that `list` reports', () => {
      const r = completeCli(sb.env, ['send', '']);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout.split('\n').filter(Boolean)).toEqual(['reviewer']);
      expect(completeCli(sb.env, ['send', 'rev'])).toMatchObject({ stdout: 'reviewer\n' });
      expect(completeCli(sb.env, ['send', 'x'])).toMatchObject({ stdout: '' });
    });

    it('bash: the script registers a completion that fills COMPREPLY', () => {
      const file = path.join(sb.dir, 'agent-handoff.bash');
      fs.writeFileSync(file, completionScript('bash'));
      const shell = spawnSync(
        'bash',
        ['--norc', '--noprofile', '-c', `source ${file}; complete -p agent-handoff; COMP_WORDS=(agent-handoff send ""); COMP_CWORD=2; _agent_handoff; printf "<%s>\\n" "\${COMPREPLY[@]}"; COMP_WORDS=(agent-handoff send reviewer --no-f); COMP_CWORD=3; _agent_handoff; printf "<%s>\\n" "\${COMPREPLY[@]}"`],
        { env: sb.env, encoding: 'utf8' },
      );
      expect(shell.stderr).toBe('');
      expect(shell.stdout).toBe('complete -o default -F _agent_handoff agent-handoff\n<reviewer>\n<--no-focus>\n');
    });
  });
});

describe('agent-handoff completion (the script)', () => {
  it('prints a bash script by default and a zsh one for --shell zsh or a zsh $SHELL', () => {
    const run = (args: string[], shell: string) => spawnSync(process.execPath, [APP, 'completion', ...args], { env: { ...process.env, SHELL: shell }, encoding: 'utf8' });
    const bash = run([], '/bin/bash');
    expect(bash.status).toBe(0);
    expect(bash.stdout).toBe(completionScript('bash'));
    expect(run([], '/usr/bin/zsh').stdout).toBe(completionScript('zsh'));
    expect(run(['--shell', 'zsh'], '/bin/bash').stdout).toBe(completionScript('zsh'));
    const bad = run(['--shell', 'fish'], '/bin/bash');
    expect(bad.status).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, code: 'usage' });
  });

  it('bash accepts the script', () => {
    const r = spawnSync('bash', ['-n'], { input: completionScript('bash'), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });

  it.runIf(fs.existsSync('/usr/bin/zsh'))('zsh loads the script and binds it to agent-handoff', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-compl-zsh-'));
    try {
      const file = path.join(dir, 'agent-handoff.zsh');
      fs.writeFileSync(file, completionScript('zsh'));
      const r = spawnSync('zsh', ['-f', '-c', `source ${file}; print -r -- "$_comps[agent-handoff]"`], { env: { HOME: dir, PATH: process.env.PATH ?? '/usr/bin:/bin', ZDOTDIR: dir }, encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.stdout.trim()).toBe('_agent_handoff');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
