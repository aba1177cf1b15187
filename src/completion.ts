// Shell completion: `agent-handoff completion` prints a bash or zsh script; the script calls
// `agent-handoff __complete <words…>`, which prints one candidate per line and nothing else.
// Commands and flags come from the CLI's own usage text (one source of truth); agent names come
// from the local herdr, ssh hosts from ~/.ssh/config, handoff ids from the journal folder.
// Completion must never print an error or hang a shell: every failure yields no candidates.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Argv } from 'yargs';
import { stateDir } from './handoff/journal.js';

/** What a positional argument names, so the right candidates are offered for it. */
type PositionalKind = 'agent' | 'host' | 'handoff' | 'command' | 'other';

export interface CommandSpec {
  name: string;
  /** Positional names in order (from `doctor [target]`); a variadic one ends in `..` (`send [agent..]`). */
  positionals: string[];
  /** Flags with whether they take a value; flags that default to true also get `--no-<flag>`. */
  flags: { name: string; takesValue: boolean; negatable: boolean }[];
}

export interface CompletionData {
  commands: CommandSpec[];
  globalFlags: CommandSpec['flags'];
  agents(): Promise<string[]>;
  hosts(): string[];
  handoffs(): string[];
}

/** The parser factory of src/cli.ts: a fresh yargs instance for the given argv. */
export type ParserFactory = (argv: string[]) => Argv;

const POSITIONAL_KINDS: Record<string, PositionalKind> = { agent: 'agent', target: 'host', id: 'handoff', command: 'command' };
const VALUE_FLAG_KINDS: Record<string, PositionalKind> = { from: 'host' };

/** Options section of a usage text (unwrapped) → flags. */
export function flagsFromUsage(usage: string): CommandSpec['flags'] {
  const flags: CommandSpec['flags'] = [];
  const section = usage.split(/^Options:$/m)[1] ?? '';
  for (const line of section.split('\n')) {
    const m = /^\s+(?:-\w, )?--([a-z][a-z0-9-]*)\b(.*)$/.exec(line);
    if (!m) continue;
    const rest = m[2] ?? '';
    const type = /\[(boolean|string|number|array|count)\]/.exec(rest)?.[1] ?? 'boolean';
    flags.push({ name: m[1]!, takesValue: type !== 'boolean' && type !== 'count', negatable: /\[default: true\]/.test(rest) });
  }
  return flags;
}

/** `agent-handoff doctor [target]   Check …` lines of the top-level usage → names and positionals. */
export function commandsFromUsage(usage: string): { name: string; positionals: string[]; required: number }[] {
  const section = (usage.split(/^Commands:$/m)[1] ?? '').split(/^\S/m)[0] ?? '';
  const out: { name: string; positionals: string[]; required: number }[] = [];
  for (const line of section.split('\n')) {
    const m = /^\s+\S+\s+([a-z][a-z0-9-]*)((?:\s+[<[][a-z0-9.-]+[>\]])*)/.exec(line);
    if (!m) continue;
    const args = [...(m[2] ?? '').matchAll(/([<[])([a-z0-9-]+)(\.\.)?[>\]]/g)];
    out.push({ name: m[1]!, positionals: args.map((a) => a[2]! + (a[3] ?? '')), required: args.filter((a) => a[1] === '<').length });
  }
  return out;
}

async function usageOf(makeParser: ParserFactory, argv: string[]): Promise<string> {
  const parser = makeParser([...argv, '--help']).wrap(null);
  await parser.parse();
  return parser.getHelp();
}

/** Commands and flags as the CLI itself defines them. */
export async function commandSpecs(makeParser: ParserFactory): Promise<{ commands: CommandSpec[]; globalFlags: CommandSpec['flags'] }> {
  const top = await usageOf(makeParser, []);
  const globalFlags = flagsFromUsage(top);
  const commands: CommandSpec[] = [];
  for (const c of commandsFromUsage(top)) {
    // Required positionals must be present for the command's own usage to print.
    const usage = await usageOf(makeParser, [c.name, ...Array.from({ length: c.required }, () => 'x')]).catch(() => '');
    commands.push({ name: c.name, positionals: c.positionals, flags: flagsFromUsage(usage) });
  }
  return { commands, globalFlags };
}

/** Candidates for the last word of `words` (the words after the program name). */
export async function complete(words: string[], data: CompletionData): Promise<string[]> {
  const cur = words.length > 0 ? words[words.length - 1]! : '';
  const before = words.slice(0, -1);
  if (before.includes('--')) return []; // agent arguments: the shell completes files
  const byPrefix = (list: string[]) => [...new Set(list)].filter((c) => c.startsWith(cur));
  const commandIndex = before.findIndex((w) => !w.startsWith('-'));
  const command = commandIndex >= 0 ? data.commands.find((c) => c.name === before[commandIndex]) : undefined;
  const flagWords = (flags: CommandSpec['flags']) =>
    flags.flatMap((f) => [`--${f.name}`, ...(f.negatable ? [`--no-${f.name}`] : [])]).filter((f) => !before.includes(f));
  if (commandIndex < 0) {
    return cur.startsWith('-') ? byPrefix(flagWords(data.globalFlags)) : byPrefix(data.commands.map((c) => c.name));
  }
  if (!command) return [];
  const flags = [...data.globalFlags, ...command.flags];
  if (cur.startsWith('-')) return byPrefix(flagWords(flags).filter((f, i, all) => all.indexOf(f) === i));
  // The value of a flag?
  const prev = before[before.length - 1] ?? '';
  if (prev.startsWith('--')) {
    const flag = flags.find((f) => `--${f.name}` === prev);
    if (flag?.takesValue) return byPrefix(await candidates(VALUE_FLAG_KINDS[flag.name] ?? 'other', data));
  }
  // Which positional is this? Count the plain words after the command, skipping flag values.
  let position = 0;
  for (let i = commandIndex + 1; i < before.length; i++) {
    const w = before[i]!;
    if (w.startsWith('-')) {
      const flag = flags.find((f) => `--${f.name}` === w);
      if (flag?.takesValue && !w.includes('=')) i++;
      continue;
    }
    position++;
  }
  // A variadic last positional (`send [agent..]`) takes every further word.
  const last = command.positionals[command.positionals.length - 1];
  const positional = command.positionals[position] ?? (last?.endsWith('..') ? last : undefined);
  if (!positional) return [];
  if (positional === 'agent..') {
    // send's words: agents, then the target (or the target alone after --all/--workspace).
    const typed = new Set(before.slice(commandIndex + 1));
    if (before.includes('--all') || before.includes('--workspace')) return position === 0 ? byPrefix(data.hosts()) : [];
    const agents = (await data.agents()).filter((a) => !typed.has(a));
    return byPrefix(position === 0 ? agents : [...data.hosts().filter((h) => !typed.has(h)), ...agents]);
  }
  return byPrefix(await candidates(POSITIONAL_KINDS[positional.replace(/\.\.$/, '')] ?? 'other', data));
}

async function candidates(kind: PositionalKind, data: CompletionData): Promise<string[]> {
  if (kind === 'agent') return data.agents();
  if (kind === 'host') return data.hosts();
  if (kind === 'handoff') return data.handoffs();
  if (kind === 'command') return data.commands.map((c) => c.name); // `help <command>`
  return [];
}

/** `Host` aliases of ~/.ssh/config without wildcards (read only; Include files are not followed). */
export function sshConfigHosts(home: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(home, '.ssh', 'config'), 'utf8');
  } catch {
    return [];
  }
  const hosts: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*Host\s+(.+)$/i.exec(line);
    if (!m) continue;
    for (const h of m[1]!.trim().split(/\s+/)) if (!/[*?!]/.test(h)) hosts.push(h);
  }
  return hosts;
}

/** Handoff ids from the journal folder (file names only: fast). */
export function handoffIds(env: NodeJS.ProcessEnv): string[] {
  try {
    return fs
      .readdirSync(path.join(stateDir(env), 'handoffs'))
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => f.slice(0, -'.jsonl'.length))
      .sort()
      .reverse();
  } catch {
    return [];
  }
}

/** `target` of each agent the local herdr knows; none when herdr is missing, stopped or slow. */
export async function localAgentTargets(env: NodeJS.ProcessEnv, timeoutMs = 2000): Promise<string[]> {
  try {
    const [{ LocalHost }, { HerdrClient }, { describeAgent }] = await Promise.all([import('./host/local.js'), import('./herdr/client.js'), import('./commands/list.js')]);
    const host = new LocalHost({ env, commandTimeoutMs: timeoutMs });
    try {
      const agents = await new HerdrClient(host, { timeoutMs }).agentList();
      return agents.map((a) => describeAgent(a, undefined).target);
    } finally {
      await host.close();
    }
  } catch {
    return [];
  }
}

/** `agent-handoff __complete <words…>`: print candidates one per line; never anything else. */
export async function printCompletions(words: string[], makeParser: ParserFactory, env: NodeJS.ProcessEnv, out: NodeJS.WritableStream): Promise<void> {
  let found: string[];
  try {
    const specs = await commandSpecs(makeParser);
    found = await complete(words, {
      ...specs,
      agents: () => localAgentTargets(env),
      hosts: () => sshConfigHosts(env.HOME || os.homedir()),
      handoffs: () => handoffIds(env),
    });
  } catch {
    found = [];
  }
  if (found.length > 0) out.write(found.join('\n') + '\n');
}

export type Shell = 'bash' | 'zsh';

/** The shell to write a script for: --shell, else the login shell ($SHELL), else bash. */
export function shellFor(requested: unknown, env: NodeJS.ProcessEnv): Shell {
  if (requested === 'bash' || requested === 'zsh') return requested;
  return /zsh$/.test(env.SHELL ?? '') ? 'zsh' : 'bash';
}

/** The completion script for a shell; it runs `agent-handoff` from the PATH. */
export function completionScript(shell: Shell): string {
  if (shell === 'zsh') {
    return [
      '#compdef agent-handoff',
      '# agent-handoff completion for zsh. Load it from ~/.zshrc:  source <(agent-handoff completion --shell zsh)',
      '_agent_handoff() {',
      '  local -a found',
      '  found=("${(@f)$(agent-handoff __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")',
      '  found=(${found:#})',
      '  if (( ${#found} )); then compadd -a found; else _files; fi',
      '}',
      '(( $+functions[compdef] )) || { autoload -Uz compinit && compinit -i; }',
      'compdef _agent_handoff agent-handoff',
      '',
    ].join('\n');
  }
  return [
    '# agent-handoff completion for bash. Load it from ~/.bashrc:  source <(agent-handoff completion --shell bash)',
    '_agent_handoff() {',
    '  local IFS=$\'\\n\'',
    '  COMPREPLY=($(agent-handoff __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))',
    '}',
    'complete -o default -F _agent_handoff agent-handoff',
    '',
  ].join('\n');
}
