// Help that works: `--help`, `<command> --help` (with or without its positionals) and
// `help [command]` print that command's usage with every flag the parser defines for it, and a
// usage error of a known command names the command. The expected flags are read from the parser's
// own definition (COMMAND_DEFINITIONS), never from a list kept here.
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import type { Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import { COMMAND_DEFINITIONS, commandNamed, usageText, wantsHelp } from '../src/cli.js';

const bin = fileURLToPath(new URL('../bin/agent-handoff.js', import.meta.url));

/** The options (and positionals) a command's builder defines, recorded without yargs. */
function definedBy(builder: (y: Argv) => Argv): { options: { name: string; type?: string; default?: unknown }[]; positionals: string[]; examples: number } {
  const options: { name: string; type?: string; default?: unknown }[] = [];
  const positionals: string[] = [];
  let examples = 0;
  const recorder: Argv = new Proxy({} as Argv, {
    get(_t, prop) {
      return (...args: unknown[]) => {
        const o = (args[1] ?? {}) as { type?: string; default?: unknown };
        if (prop === 'option' || prop === 'options') options.push({ name: String(args[0]), ...(o.type ? { type: o.type } : {}), ...('default' in o ? { default: o.default } : {}) });
        if (prop === 'positional') positionals.push(String(args[0]));
        if (prop === 'example') examples++;
        return recorder;
      };
    },
  });
  builder(recorder);
  return { options, positionals, examples };
}

const COMMANDS = COMMAND_DEFINITIONS.filter((c) => c.describe !== false).map((c) => {
  const words = c.usage.split(' ');
  return { name: words[0]!, required: words.filter((w) => w.startsWith('<')).length, ...definedBy(c.builder) };
});

/** `--flag` spellings a person types for an option (a boolean on by default is turned off with --no-flag). */
function spellings(o: { name: string; type?: string; default?: unknown }): string[] {
  return o.default === true ? [`--${o.name}`, `--no-${o.name}`] : [`--${o.name}`];
}

async function cli(args: string[]): Promise<{ code: number; json: Record<string, unknown> }> {
  const r = await execa(process.execPath, [bin, ...args], { reject: false });
  return { code: r.exitCode ?? -1, json: JSON.parse(r.stdout) as Record<string, unknown> };
}

describe('help', () => {
  it('reads the commands from the parser definition', () => {
    expect(COMMANDS.map((c) => c.name)).toEqual(expect.arrayContaining(['list', 'doctor', 'send', 'recover', 'history', 'show', 'schema', 'completion', 'help']));
    expect(COMMANDS.find((c) => c.name === 'send')!.options.length).toBeGreaterThan(15);
  });

  for (const c of COMMANDS) {
    const forms = [[c.name, '--help'], [c.name, '-h'], ['help', c.name], ...(c.required > 0 ? [[c.name, ...Array.from({ length: c.required }, () => 'x'), '--help']] : c.name === 'help' ? [] : [[c.name, 'x', '--help']])];
    it(`${c.name}: ${forms.map((f) => f.join(' ')).join(' | ')} list every flag, and an example`, async () => {
      for (const form of forms) {
        expect(wantsHelp(form), form.join(' ')).toBe(true);
        const usage = await usageText(form, { wrap: null });
        expect(usage, form.join(' ')).toContain(`agent-handoff ${c.name}`);
        for (const o of c.options) for (const f of spellings(o)) expect(usage.includes(f) || (f.startsWith('--no-') && usage.includes(`--${o.name}`)), `${form.join(' ')}: ${f}`).toBe(true);
        for (const p of c.positionals) expect(usage, `${form.join(' ')}: <${p}>`).toMatch(new RegExp(`[<[]${p}(\\.\\.)?[>\\]]`));
        for (const g of ['--version', '--quiet', '--help', '--json']) expect(usage, g).toContain(g);
        expect(usage, `${form.join(' ')}: examples`).toMatch(/^Examples:$/m);
      }
      expect(c.examples, `${c.name} has an example`).toBeGreaterThan(0);
    });
  }

  it('the top-level help lists every command and the global flags', async () => {
    for (const form of [['--help'], ['-h'], ['help']]) {
      const usage = await usageText(form, { wrap: null });
      for (const c of COMMANDS) expect(usage, `${form.join(' ')}: ${c.name}`).toMatch(new RegExp(`^\\s+agent-handoff ${c.name}\\b`, 'm'));
      expect(usage).toContain('--json');
    }
  });

  it('a help run is not a usage error, as the real CLI prints it (JSON when piped)', async () => {
    for (const form of [['send', '--help'], ['send', 'x', '--help'], ['help', 'send'], ['help'], ['--help'], ['show', '--help']]) {
      const r = await cli(form);
      expect(r.code, form.join(' ')).toBe(0);
      expect(r.json, form.join(' ')).toMatchObject({ ok: true, command: 'help' });
      if (form.includes('send')) for (const o of COMMANDS.find((c) => c.name === 'send')!.options) expect(String(r.json.usage), o.name).toContain(`--${o.name}`);
    }
  });

  it('help of an unknown command is a usage error', async () => {
    const r = await cli(['help', 'frobnicate']);
    expect(r.code).toBe(2);
    expect(r.json).toMatchObject({ ok: false, command: 'help', code: 'usage' });
  });

  it('the words after -- are the agent’s: --help there asks nothing of agent-handoff', () => {
    expect(wantsHelp(['send', 'a', 'vega', '--', '--help'])).toBe(false);
    expect(wantsHelp(['send', 'a', 'vega', '--dry-run'])).toBe(false);
  });
});

describe('a usage error names its command', () => {
  it('knows the command from the command line alone', () => {
    expect(commandNamed(['send'])).toBe('send');
    expect(commandNamed(['-q', 'doctor', 'vega'])).toBe('doctor');
    expect(commandNamed(['frobnicate'])).toBeNull();
    expect(commandNamed([])).toBeNull();
  });

  const cases: [string[], string][] = [
    [['send'], 'send'],
    [['send', 'a', 'vega', '--bogus'], 'send'],
    [['show'], 'show'],
    [['list', 'extra'], 'list'],
    [['doctor', 'a', 'b'], 'doctor'],
    [['frobnicate'], 'unknown'],
  ];
  for (const [argv, command] of cases) {
    it(`agent-handoff ${argv.join(' ')} → "command":"${command}"`, async () => {
      const r = await cli(argv);
      expect(r.code).toBe(2);
      expect(r.json).toMatchObject({ ok: false, command, code: 'usage' });
      if (command !== 'unknown') expect(String(r.json.fix)).toContain(`agent-handoff ${command} --help`);
    });
  }
});
