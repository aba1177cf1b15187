// The command table: each command takes parsed args and returns its JSON result and exit code.
import { LocalHost } from '../host/local.js';
import { listAgents } from './list.js';

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
