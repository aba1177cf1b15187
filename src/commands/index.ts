// The command table: each command takes parsed args and returns its JSON result and exit code.
import { LocalHost } from '../host/local.js';
import { listAgents } from './list.js';
import { historyResult, showResult } from './history.js';

export interface CommandContext {
  env: NodeJS.ProcessEnv;
  stderr: NodeJS.WritableStream;
  quiet: boolean;
}

export interface CommandOutput {
  result: unknown;
  exitCode: number;
}

export type Command = (args: Record<string, unknown>, ctx: CommandContext) => Promise<CommandOutput>;

export const COMMANDS: Record<string, Command> = {
  history: async (_args, ctx) => ({ result: historyResult(ctx.env), exitCode: 0 }),
  show: async (args, ctx) => ({ result: showResult(ctx.env, String(args.id)), exitCode: 0 }),
  list: async (_args, ctx) => {
    const host = new LocalHost();
    try {
      const thisPane = ctx.env.HERDR_PANE_ID;
      return { result: await listAgents(host, thisPane === undefined ? {} : { thisPane }), exitCode: 0 };
    } finally {
      await host.close();
    }
  },
};
