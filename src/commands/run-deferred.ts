// `__run-deferred JOB`: the --self helper, running in its own herdr workspace on the source.
// It runs the handoff the agent asked for once the agent's turn has ended; on success it closes
// its workspace, on failure it stays open showing the error (the agent was restarted if quit).
import fs from 'node:fs';
import { HerdrClient } from '../herdr/client.js';
import { LocalHost } from '../host/local.js';
import { DeferredJob } from '../handoff/self.js';
import { parseSendOptions } from '../handoff/options.js';
import type { CommandContext, CommandOutput } from './index.js';
import { send } from './send.js';

export async function runDeferred(args: Record<string, unknown>, ctx: CommandContext): Promise<CommandOutput> {
  const jobFile = String(args.job);
  const job = DeferredJob.parse(JSON.parse(fs.readFileSync(jobFile, 'utf8')));
  fs.rmSync(jobFile, { force: true });
  const opts = parseSendOptions(job.opts);
  const out = await send({ send: opts, expect: job.expect }, ctx);
  const workspace = ctx.env.HERDR_WORKSPACE_ID;
  if (out.exitCode === 0 && workspace) {
    // Done: the helper's workspace goes away (this process goes with it).
    process.stdout.write(JSON.stringify(out.result) + '\n');
    await new HerdrClient(new LocalHost()).workspaceClose(workspace).catch(() => undefined);
  }
  return out;
}
