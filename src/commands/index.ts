// The command table: each command takes parsed args and returns its JSON result and exit code.
// Commands are loaded on first use: `list` should not pay for loading the whole handoff, and
// `send` starts its ssh connection before it loads the rest.
import type { SendOptions } from '../handoff/options.js';
import type { Host } from '../host/host.js';

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
  const { connectHost } = await import('../host/connect.js');
  const host = await connectHost(target, opts);
  try {
    return await fn(host);
  } finally {
    await host.close();
  }
}

/** A command's modules, loaded once zod is set up: their schemas are made as they load (zod-setup.ts). */
async function loaded<T>(load: () => Promise<T>): Promise<T> {
  (await import('../zod-setup.js')).parseWithoutCompiling();
  return load();
}

export const COMMANDS: Record<string, Command> = {
  list: async (args, ctx) => {
    const { listAgents } = await loaded(() => import('./list.js'));
    const from = typeof args.from === 'string' && args.from ? args.from : 'local';
    const thisPane = ctx.env.HERDR_PANE_ID;
    const result = await withHost(from, (host) => listAgents(host, thisPane === undefined ? {} : { thisPane }));
    return { result, exitCode: 0 };
  },
  doctor: async (args, ctx) => (await loaded(() => import('./doctor-command.js'))).doctor(args, ctx),
  send: async (args, ctx) => {
    // Start the ssh handshakes now: their round trips overlap loading the handoff's modules, which
    // waits until the handshakes have begun (loading them first would hold up reading `ssh -G`).
    const { closeUnclaimed, connectEarly, dialed } = await import('../host/connect.js');
    const o = args.send as SendOptions;
    const timeouts = { connectTimeoutMs: o.timeoutS * 1000, commandTimeoutMs: o.timeoutS * 1000 };
    if (o.from) connectEarly(o.from, timeouts);
    if (!o.here && o.target) connectEarly(o.target, timeouts);
    try {
      await dialed();
      return await (await loaded(() => import('./send.js'))).send(args, ctx);
    } finally {
      await closeUnclaimed();
    }
  },
  '__run-deferred': async (args, ctx) => (await loaded(() => import('./run-deferred.js'))).runDeferred(args, ctx),
  recover: async (args, ctx) => (await loaded(() => import('./recover.js'))).recover(args, ctx),
  history: async (_args, ctx) => ({ result: (await loaded(() => import('./history.js'))).historyResult(ctx.env), exitCode: 0 }),
  show: async (args, ctx) => ({ result: (await loaded(() => import('./history.js'))).showResult(ctx.env, String(args.id)), exitCode: 0 }),
};
