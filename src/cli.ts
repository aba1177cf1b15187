// argv → command; prints exactly one result on stdout (progress goes to stderr only): one JSON
// object, or — when stdout is a terminal and --json was not given — the same result for a person.
import os from 'node:os';
import yargs, { type Argv } from 'yargs';
import { VERSION } from './version.js';
import { UsageError } from './errors.js';
import { parseSendOptions } from './handoff/options.js';
import { COMMANDS, type CommandContext } from './commands/index.js';
import { renderForPerson } from './render/index.js';

/** How the result is printed: JSON (the contract), or for a person on a terminal, with or without colour. */
export interface OutputMode {
  human: boolean;
  color: boolean;
}

/** The words before `--` (after it come the agent's own arguments). */
function ownWords(argv: readonly string[]): readonly string[] {
  const dd = argv.indexOf('--');
  return dd < 0 ? argv : argv.slice(0, dd);
}

/** JSON unless stdout is a terminal and --json was not given; colour only then, and never with NO_COLOR. */
export function outputMode(argv: readonly string[], stdout: { isTTY?: boolean }, env: NodeJS.ProcessEnv): OutputMode {
  const human = stdout.isTTY === true && !ownWords(argv).includes('--json');
  return { human, color: human && !env.NO_COLOR };
}

function print(result: unknown, mode: OutputMode): void {
  process.stdout.write(mode.human ? renderForPerson(result, { color: mode.color, home: os.homedir() }) : JSON.stringify(result) + '\n');
}

function sendOptions(y: Argv) {
  return y
    .example('$0 send api-claude vega', 'Move the agent api-claude to the machine vega')
    .example('$0 send api-claude vega --dry-run', 'Plan and check only; change nothing')
    .example('$0 send api-claude --here --new-worktree', 'Move it to a new worktree on this machine')
    .example('$0 send api-claude web-codex vega', 'Move two agents to vega at once (the last word is the target)')
    .example('$0 send --workspace api vega', 'Move every agent of the herdr workspace api')
    .example('$0 send --all vega', 'Move every agent on this machine to vega')
    .example('$0 send --all --from vega', 'Bring every agent on vega back here')
    .positional('agent', {
      type: 'string',
      array: true,
      describe:
        'AGENT… TARGET: the agents (herdr name, pane id, or a unique session id prefix), then the ssh target (user@host, host, ssh://user@host:port or an ~/.ssh/config alias). With --here every word is an agent; with --from a single word is the agent, brought here; with --all or --workspace the only word is the target',
    })
    .option('dry-run', { type: 'boolean', describe: 'Plan and check everything, change nothing' })
    .option('here', { type: 'boolean', describe: 'Move to another checkout (or a new worktree) on this machine; with --from: bring the agents here' })
    .option('new-worktree', { type: 'boolean', describe: 'With --here: always make a new worktree' })
    .option('dir', { type: 'string', describe: 'Use this checkout on the target (must share a remote)' })
    .option('from', { type: 'string', describe: 'The agent runs on HOST; bring it here (or to the target)' })
    .option('all', { type: 'boolean', describe: 'Move every agent on the source (this machine, or HOST with --from)' })
    .option('workspace', { type: 'string', describe: 'Move every agent of this herdr workspace (its id or label)' })
    .option('self', { type: 'boolean', describe: 'Move the agent that runs this command, after its current turn' })
    .option('wait', { type: 'boolean', describe: 'Wait for a busy agent to become idle' })
    .option('wait-timeout', { type: 'number', describe: 'Seconds to wait with --wait/--self (default 1800)' })
    .option('new-branch', { type: 'boolean', describe: 'Put the work on a new handoff/<session> branch on the target (first 8 characters of the session id)' })
    .option('keep-source-changes', { type: 'boolean', describe: 'Do not stash the uncommitted changes at the source' })
    .option('overwrite', { type: 'boolean', describe: 'Replace session files on the target that changed since a handoff left them there (each kept beside it as a backup)' })
    .option('name', { type: 'string', describe: 'herdr agent name on the target' })
    .option('session', { type: 'string', describe: 'Session id or transcript path, when herdr does not know it' })
    // `--no-focus` (workspace) gives false, `--focus TEXT` (hand-off brief) gives the text, absent gives true.
    .option('focus', { type: 'string', default: true, describe: 'Focus the new workspace on the target (--no-focus); --focus TEXT: hand-off brief focus' })
    .option('trust', { type: 'boolean', default: true, describe: "Answer the folder-trust screen and carry the trust of herdr's codex hook (--no-trust: neither)" })
    .option('timeout', { type: 'number', describe: 'Seconds any single step may take (default 120)' })
    .option('brief', { type: 'string', describe: 'First message to the resumed agent (with where it moved from and what came along)' })
    .option('done-when', { type: 'string', describe: 'Hand-off brief: when the work is done' });
}

const HELP_TEXT = 'Show usage (of one command: <command> --help, or help <command>)';

/** One command of the parser: yargs' command line (`send [agent..]`), its description (false: hidden) and its flags. */
export interface CommandDefinition {
  usage: string;
  describe: string | false;
  builder: (y: Argv) => Argv;
}

/** Every command and its flags: the one definition the parser, the help and its tests read. */
export const COMMAND_DEFINITIONS: readonly CommandDefinition[] = [
  {
    usage: 'list',
    describe: 'List the herdr agents on this machine (or --from HOST)',
    builder: (y) =>
      y
        .option('from', { type: 'string', describe: 'List the agents of HOST (over ssh) instead' })
        .example('$0 list', 'The agents on this machine')
        .example('$0 list --from vega', 'The agents on vega'),
  },
  {
    usage: 'doctor [target]',
    describe: 'Check this machine and the target for a handoff',
    builder: (y) =>
      y
        .positional('target', { type: 'string', describe: 'ssh target to check too (user@host, host, ssh://user@host:port or an alias)' })
        .option('from', { type: 'string', describe: 'Check HOST (over ssh) instead of this machine' })
        .option('timeout', { type: 'number', describe: 'Seconds each check may take (default 30)' })
        .example('$0 doctor', 'Check this machine')
        .example('$0 doctor vega', 'Check this machine and vega'),
  },
  { usage: 'send [agent..]', describe: 'Move agents to another machine: send AGENT… TARGET', builder: sendOptions },
  {
    usage: 'recover [id]',
    describe: 'Finish or roll back unfinished handoffs',
    builder: (y) =>
      y
        .positional('id', { type: 'string', describe: 'A handoff id (or a prefix); default: every unfinished handoff' })
        .option('rollback', { type: 'boolean', describe: 'Always roll back and restart the agent at the source' })
        .option('timeout', { type: 'number', describe: 'Seconds each step may take (default 60)' })
        .example('$0 recover', 'Finish or undo every unfinished handoff')
        .example('$0 recover --rollback', 'Undo them and restart the agents at the source'),
  },
  { usage: 'history', describe: 'List the handoffs run from this machine', builder: (y) => y.example('$0 history', 'The handoffs, newest first') },
  {
    usage: 'show <id>',
    describe: 'Show one handoff with its events',
    builder: (y) => y.positional('id', { type: 'string', describe: 'A handoff id, or a unique prefix of one' }).example('$0 show 20261130-191926', 'One handoff with every event'),
  },
  { usage: 'schema', describe: 'Print the JSON Schema of every result', builder: (y) => y.example('$0 schema', 'The schemas of every result and the error codes') },
  {
    usage: 'completion',
    describe: 'Print a bash or zsh completion script (not JSON): source <(agent-handoff completion)',
    builder: (y) =>
      y.option('shell', { type: 'string', choices: ['bash', 'zsh'], describe: 'The shell to write it for (default: from $SHELL)' }).example('source <($0 completion)', 'Load it in your shell'),
  },
  {
    usage: 'help [command]',
    describe: 'Show the usage of a command, with every flag',
    builder: (y) => y.positional('command', { type: 'string', describe: 'The command' }).example('$0 help send', 'Every flag of send'),
  },
  { usage: '__run-deferred <job>', describe: false, builder: (y) => y.positional('job', { type: 'string' }) },
];

/** Every command word a person may type. */
export const COMMAND_NAMES: readonly string[] = COMMAND_DEFINITIONS.filter((c) => c.describe !== false).map((c) => c.usage.split(' ')[0]!);

/** The command a command line names (its first word, when a known command), for `command` in results. */
export function commandNamed(argv: readonly string[]): string | null {
  const word = ownWords(argv).find((w) => !w.startsWith('-'));
  return word && COMMAND_NAMES.includes(word) ? word : null;
}

/**
 * The host a send connects to first, read before the parse when the words make it certain: the
 * source of `send … --from HOST` (its agents are read first; `--from` takes a value, so the word
 * after it is that value), else the target of `send AGENT… TARGET …`: the last of the plain words
 * right after `send` (a word right after a positional is never an option's value), when there
 * are two or more, or the word after a leading `--all`. `--here` (without `--from`), `local`, or
 * anything less certain: null, and the parse decides. Only a head start: the resolution is keyed
 * by the host as typed. bin/agent-handoff.js reads the same words the same way.
 */
export function sendRemoteOf(argv: readonly string[]): string | null {
  const w = ownWords(argv);
  if (w[0] !== 'send') return null;
  const froms = w.flatMap((x, i) => (x === '--from' ? [w[i + 1] ?? ''] : x.startsWith('--from=') ? [x.slice('--from='.length)] : []));
  if (froms.length > 0) {
    const from = froms[0]!;
    return froms.length === 1 && from !== '' && !from.startsWith('-') && from !== 'local' ? from : null;
  }
  if (w.some((x) => x === '--here' || x.startsWith('--here='))) return null;
  const all = w[1] === '--all';
  const rest = w.slice(all ? 2 : 1);
  const end = rest.findIndex((x) => x.startsWith('-'));
  const run = end < 0 ? rest : rest.slice(0, end);
  if (run.length < (all ? 1 : 2) || (all && run.length > 1)) return null;
  const target = run[run.length - 1]!;
  return target === 'local' ? null : target;
}

/** `-h`/`--help` anywhere before `--`, or the `help` command: the usage is printed, nothing runs. */
export function wantsHelp(argv: readonly string[]): boolean {
  const words = ownWords(argv);
  return commandNamed(words) === 'help' || words.some((w) => w === '--help' || /^-[a-zA-Z]*h[a-zA-Z]*$/.test(w));
}

/**
 * The command line as yargs knows it; a fresh parser per call (completion reads its usage).
 * `help: true` is the parser of a help run: yargs' own help option, which skips the argument
 * checks (`send --help` needs no agent) and renders the usage of the command named; its text
 * then comes back from parse's callback. Otherwise --help is a plain flag and nothing is printed.
 */
export function parserFor(argv: string[], opts: { help?: boolean } = {}) {
  const top = yargs(argv)
    .scriptName('agent-handoff')
    .parserConfiguration({ 'populate--': true })
    .version(false)
    .strict()
    .option('version', { alias: 'V', type: 'boolean', describe: 'Print the version' })
    .option('quiet', { alias: 'q', type: 'boolean', describe: 'No progress on stderr' });
  const withHelp = opts.help ? top.help('help', HELP_TEXT).alias('help', 'h') : top.help(false).option('help', { alias: 'h', type: 'boolean', describe: HELP_TEXT });
  let parser = withHelp
    .option('json', { type: 'boolean', describe: 'Print JSON even on a terminal (JSON is the output whenever stdout is not one)' })
    .example('$0 list', 'The agents herdr knows here')
    .example('$0 send api-claude vega', 'Move api-claude to vega')
    .example('$0 help send', 'Every flag of send');
  for (const c of COMMAND_DEFINITIONS) parser = parser.command(c.usage, c.describe as string, c.builder);
  return parser.fail((msg, err) => {
    const named = commandNamed(argv);
    throw err ?? new UsageError(msg, `Run \`agent-handoff ${named && named !== 'help' ? `${named} ` : ''}--help\` for usage.`);
  });
}

/**
 * The usage text a help run prints: `help [command]` is `<command> --help`; a command that needs
 * positionals gets its usage without them. `wrap`: the width (null: unwrapped; default: yargs').
 */
export async function usageText(argv: readonly string[], opts: { wrap?: number | null } = {}): Promise<string> {
  let words = [...ownWords(argv)];
  if (commandNamed(words) === 'help') {
    const named = words.slice(words.indexOf('help') + 1).find((w) => !w.startsWith('-'));
    if (named !== undefined && !COMMAND_NAMES.includes(named)) {
      throw new UsageError(`Unknown command: ${named}.`, `Run \`agent-handoff help\` for the commands: ${COMMAND_NAMES.join(', ')}.`);
    }
    words = named ? [named, '--help'] : ['--help'];
  }
  const parser = parserFor(words, { help: true });
  if (opts.wrap !== undefined) parser.wrap(opts.wrap);
  return new Promise((resolve, reject) => {
    void parser.parse(words, {}, (err, _args, output) => (err ? reject(err) : resolve(output)));
  });
}

/**
 * yargs renders the whole help text each time a command is parsed, to have it at hand should the
 * command's handler fail. Ours have no handler (the command runs after the parse, and usage
 * errors come from .fail), so that render is wasted. A help run never comes here (main answers
 * it with usageText, whose parser keeps the render: it is the text printed), so the render is
 * skipped only where nothing reads it. Guarded: a yargs without these internals renders as before.
 */
function withoutHelpCache<T extends object>(parser: T): T {
  const internals = (parser as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } | undefined } }).getInternalMethods?.();
  const usage = internals?.getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
  return parser;
}

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === '__complete') {
    // Shell completion: candidates one per line, never JSON, never an error.
    await (await import('./completion.js')).printCompletions(argv.slice(1), parserFor, process.env, process.stdout);
    return;
  }
  const mode = outputMode(argv, process.stdout, process.env);
  // A usage error of a known command names it (`send` without an agent is a `send` error).
  let command = commandNamed(argv) ?? 'unknown';
  let exitCode = 0;
  const ctx: CommandContext = { env: process.env, stderr: process.stderr, quiet: false };
  try {
    if (wantsHelp(argv)) {
      command = 'help';
      print({ ok: true, command, usage: await usageText(argv) }, mode);
      return;
    }
    // `send`: the `ssh -G` of the host it connects to first runs in its own process while this one parses and loads.
    const remote = sendRemoteOf(argv);
    if (remote) (await import('./host/ssh-target.js')).resolveEarly(remote);
    // Not a help run: no help text is needed, so yargs' render of it is skipped (see withoutHelpCache).
    const parser = withoutHelpCache(parserFor(argv));
    const args = await parser.parse();
    ctx.quiet = args.quiet === true;
    const word = String(args._[0] ?? '');
    if (args.version) {
      command = 'version';
      print({ ok: true, command, version: VERSION }, mode);
      return;
    }
    if (!word) throw new UsageError('No command given.', 'Run `agent-handoff list`, `agent-handoff doctor` or `agent-handoff send <agent> <target>`.');
    command = word;
    if (word === 'completion') {
      // A shell script on stdout (the one command that does not print JSON on success).
      const { completionScript, shellFor } = await import('./completion.js');
      process.stdout.write(completionScript(shellFor(args.shell, process.env)));
      return;
    }
    if (word === 'schema') {
      // Commands register their result schemas when loaded.
      await import('./commands/send.js').catch(() => undefined);
      await import('./commands/send-batch.js').catch(() => undefined);
      const { ERROR_CODES, resultJsonSchemas } = await import('./result.js');
      print({ ok: true, command, schemas: resultJsonSchemas(), error_codes: ERROR_CODES }, mode);
      return;
    }
    const parsed = word === 'send' ? { ...args, send: parseSendOptions(args as Record<string, unknown>) } : args;
    const run = COMMANDS[word];
    if (!run) throw new UsageError(`Unknown command: ${word}.`, 'Run `agent-handoff --help` for usage.');
    const out = await run(parsed as Record<string, unknown>, ctx);
    print(out.result, mode);
    exitCode = out.exitCode;
  } catch (err) {
    // Loaded only now (zod and the schemas): a `send` starts its ssh handshake before loading them.
    const { errorResult } = await import('./result.js');
    const { result, exitCode: code } = errorResult(command, err);
    print(result, mode);
    exitCode = code;
  } finally {
    process.exitCode = exitCode;
  }
}
