// argv → command; prints exactly one JSON object on stdout (progress goes to stderr only).
import yargs, { type Argv } from 'yargs';
import { VERSION } from './version.js';
import { UsageError } from './errors.js';
import { parseSendOptions } from './handoff/options.js';
import { COMMANDS, type CommandContext } from './commands/index.js';

function print(result: unknown): void {
  process.stdout.write(JSON.stringify(result) + '\n');
}

function sendOptions(y: Argv) {
  return y
    .positional('agent', { type: 'string', describe: 'herdr agent name, pane id, or a unique session id prefix' })
    .positional('target', { type: 'string', describe: 'ssh target: user@host, host, ssh://user@host:port or an ~/.ssh/config alias' })
    .option('dry-run', { type: 'boolean', describe: 'Plan and check everything, change nothing' })
    .option('here', { type: 'boolean', describe: 'Move to another checkout (or a new worktree) on this machine' })
    .option('new-worktree', { type: 'boolean', describe: 'With --here: always make a new worktree' })
    .option('dir', { type: 'string', describe: 'Use this checkout on the target (must share a remote)' })
    .option('from', { type: 'string', describe: 'The agent runs on HOST; bring it here (or to the target)' })
    .option('self', { type: 'boolean', describe: 'Move the agent that runs this command, after its current turn' })
    .option('wait', { type: 'boolean', describe: 'Wait for a busy agent to become idle' })
    .option('wait-timeout', { type: 'number', describe: 'Seconds to wait with --wait/--self (default 1800)' })
    .option('new-branch', { type: 'boolean', describe: 'Put the work on a new handoff/<id> branch on the target' })
    .option('keep-source-changes', { type: 'boolean', describe: 'Do not stash the uncommitted changes at the source' })
    .option('overwrite', { type: 'boolean', describe: 'Replace session files on the target that changed since a handoff left them there (each kept beside it as a backup)' })
    .option('name', { type: 'string', describe: 'herdr agent name on the target' })
    .option('session', { type: 'string', describe: 'Session id or transcript path, when herdr does not know it' })
    // `--no-focus` (workspace) gives false, `--focus TEXT` (hand-off brief) gives the text, absent gives true.
    .option('focus', { type: 'string', default: true, describe: 'Focus the new workspace on the target (--no-focus); --focus TEXT: hand-off brief focus' })
    .option('trust', { type: 'boolean', default: true, describe: 'Answer the folder-trust screen (--no-trust)' })
    .option('timeout', { type: 'number', describe: 'Seconds any single step may take (default 120)' })
    .option('brief', { type: 'string', describe: 'First message to the resumed agent (with where it moved from and what came along)' })
    .option('done-when', { type: 'string', describe: 'Hand-off brief: when the work is done' });
}

/** The command line as yargs knows it; a fresh parser per call (completion reads its usage). */
export function parserFor(argv: string[]) {
  return yargs(argv)
    .scriptName('agent-handoff')
    .parserConfiguration({ 'populate--': true })
    .version(false)
    .help(false)
    .strict()
    .option('version', { alias: 'V', type: 'boolean', describe: 'Print the version' })
    .option('quiet', { alias: 'q', type: 'boolean', describe: 'No progress on stderr' })
    .option('help', { alias: 'h', type: 'boolean', describe: 'Show usage (as JSON: {usage})' })
    .command('list', 'List the herdr agents on this machine (or --from HOST)', (y) => y.option('from', { type: 'string' }))
    .command('doctor [target]', 'Check this machine and the target for a handoff', (y) =>
      y.positional('target', { type: 'string' }).option('from', { type: 'string' }).option('timeout', { type: 'number' }),
    )
    .command('send <agent> [target]', 'Move an agent to another machine', sendOptions)
    .command('recover [id]', 'Finish or roll back unfinished handoffs', (y) =>
      y.positional('id', { type: 'string' }).option('rollback', { type: 'boolean', describe: 'Always roll back and restart the agent at the source' }).option('timeout', { type: 'number' }),
    )
    .command('history', 'List the handoffs run from this machine')
    .command('show <id>', 'Show one handoff with its events', (y) => y.positional('id', { type: 'string' }))
    .command('schema', 'Print the JSON Schema of every result')
    .command('completion', 'Print a bash or zsh completion script (not JSON): source <(agent-handoff completion)', (y) =>
      y.option('shell', { type: 'string', choices: ['bash', 'zsh'], describe: 'The shell to write it for (default: from $SHELL)' }),
    )
    .command('__run-deferred <job>', false, (y) => y.positional('job', { type: 'string' }))
    .fail((msg, err) => {
      throw err ?? new UsageError(msg, 'Run `agent-handoff --help` for usage.');
    });
}

/**
 * yargs renders the whole help text each time a command is parsed, to have it at hand should the
 * command's handler fail. Ours have no handler (the command runs after the parse, and usage
 * errors come from .fail), so that render is wasted: about a tenth of a second of every start.
 * Guarded: a yargs without these internals simply renders as before.
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
  let command = 'unknown';
  let exitCode = 0;
  const ctx: CommandContext = { env: process.env, stderr: process.stderr, quiet: false };
  try {
    const parser = withoutHelpCache(parserFor(argv));
    const args = await parser.parse();
    ctx.quiet = args.quiet === true;
    const word = String(args._[0] ?? '');
    if (args.help) {
      command = 'help';
      print({ ok: true, command, usage: await parser.getHelp() });
      return;
    }
    if (args.version) {
      command = 'version';
      print({ ok: true, command, version: VERSION });
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
      const { ERROR_CODES, resultJsonSchemas } = await import('./result.js');
      print({ ok: true, command, schemas: resultJsonSchemas(), error_codes: ERROR_CODES });
      return;
    }
    const parsed = word === 'send' ? { ...args, send: parseSendOptions(args as Record<string, unknown>) } : args;
    const run = COMMANDS[word];
    if (!run) throw new UsageError(`Unknown command: ${word}.`, 'Run `agent-handoff --help` for usage.');
    const out = await run(parsed as Record<string, unknown>, ctx);
    print(out.result);
    exitCode = out.exitCode;
  } catch (err) {
    // Loaded only now (zod and the schemas): a `send` starts its ssh handshake before loading them.
    const { errorResult } = await import('./result.js');
    const { result, exitCode: code } = errorResult(command, err);
    print(result);
    exitCode = code;
  } finally {
    process.exitCode = exitCode;
  }
}
