// argv → command; prints exactly one JSON object on stdout, progress on stderr only.
import yargs from 'yargs';
import { VERSION } from './version.js';
import { HandoffError, UsageError } from './errors.js';

function print(result: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(result) + '\n');
}

export async function main(argv: string[]): Promise<void> {
  let exitCode = 0;
  try {
    const parser = yargs(argv)
      .scriptName('agent-handoff')
      .version(false)
      .option('version', { alias: 'V', type: 'boolean', describe: 'Print the version' })
      .strict()
      .fail((msg, err) => {
        throw err ?? new UsageError(msg, 'Run `agent-handoff --help` for usage.');
      })
      .help(false);
    const args = await parser.parse();
    if (args.version) {
      print({ ok: true, command: 'version', version: VERSION });
    } else {
      throw new UsageError('No command given.', 'Run `agent-handoff list`, `agent-handoff doctor` or `agent-handoff send`.');
    }
  } catch (err) {
    const e = err instanceof HandoffError ? err : new HandoffError('internal', err instanceof Error ? err.message : String(err));
    exitCode = e instanceof UsageError ? 2 : 1;
    print({ ok: false, code: e.code, error: e.message, ...(e.fix ? { fix: e.fix } : {}) });
  }
  process.exitCode = exitCode;
}
