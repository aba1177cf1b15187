// The command table: each command takes parsed args and returns its JSON result and exit code.
import { connectHost } from '../host/connect.js';
import type { Host } from '../host/host.js';
import { listAgents } from './list.js';
import { historyResult, showResult } from './history.js';
import { doctor } from './doctor-command.js';
import { send } from './send.js';
import { runDeferred } from './run-deferred.js';
import { recover } from './recover.js';

export interface CommandContext {
  env: NodeJS.ProcessEnv;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  quiet: boolean;
}

export interface CommandOutput {
  result: unknown;
  exitCode: number;
}

export type Command = (args: Record<string, unknown>, ctx: CommandContext) => Promise<CommandOutput>;

/** Open a host for the duration of `fn` and close it on every path. */
export async function withHost<T>(target: string, fn: (host: Host) => Promise<T>, opts: { commandTimeoutMs?: number } = {}): Promise<T> {
  const host = await connectHost(target, opts);
  try {
    return await fn(host);
  } finally {
    await host.close();
  }
}

export const COMMANDS: Record<string, Command> = {
  list: async (args, ctx) => {
    const from = typeof args.from === 'string' && args.from ? args.from : 'local';
    const thisPane = ctx.env.HERDR_PANE_ID;
    const result = await withHost(from, (host) => listAgents(host, thisPane === undefined ? {} : { thisPane }));
    return { result, exitCode: 0 };
  },
  doctor: (args, ctx) => doctor(args, ctx),
  send: (args, ctx) => send(args, ctx),
  '__run-deferred': (args, ctx) => runDeferred(args, ctx),
  recover: (args, ctx) => recover(args, ctx),
  history: async (_args, ctx) => ({ result: historyResult(ctx.env), exitCode: 0 }),
  show: async (args, ctx) => ({ result: showResult(ctx.env, String(args.id)), exitCode: 0 }),
};
