// Entry point of the fake agent executables: `bin/<kind>` imports this module and calls run().
import { runAgent, type AgentDefinition } from './agent.js';
import { claude } from './claude.js';
import { codex, codexRoot } from './codex.js';
import { appServer } from './codex-app-server.js';
import { grok } from './grok.js';
import { omp } from './omp.js';
import { pi } from './pi.js';

export const AGENT_KINDS = ['claude', 'codex', 'pi', 'omp', 'grok'] as const;

const DEFINITIONS: Record<string, AgentDefinition> = { claude, codex, pi, omp, grok };

export async function run(kind: string, argv: string[]): Promise<void> {
  const def = DEFINITIONS[kind];
  if (!def) {
    process.stderr.write(`fake agent: unknown kind ${JSON.stringify(kind)}\n`);
    process.exit(2);
  }
  // `codex app-server` speaks JSON-RPC on stdio, no TUI (agent-handoff asks it about hooks).
  if (kind === 'codex' && argv[0] === 'app-server') {
    await appServer(codexRoot());
    process.exit(0);
  }
  await runAgent(def, argv);
}
