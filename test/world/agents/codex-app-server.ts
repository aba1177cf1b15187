// The fake `codex app-server`: JSON-RPC lines on stdio, as real codex 0.171 speaks them, for the
// two requests agent-handoff sends (initialize, hooks/list); a notification comes first, as the
// real one sends several; other requests get a method-not-found error. It ends when stdin closes.
import readline from 'node:readline';
import { listHooks } from './codex-hooks.js';
import { obj, str } from './files.js';

function send(message: unknown): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

export async function appServer(root: string): Promise<void> {
  const lines = readline.createInterface({ input: process.stdin });
  send({ method: 'remoteControl/status/changed', params: { status: 'disabled' } });
  for await (const line of lines) {
    let msg: Record<string, unknown>;
    try {
      msg = obj(JSON.parse(line));
    } catch {
      continue;
    }
    const id = msg.id;
    if (id === undefined) continue; // a notification (`initialized`)
    const method = str(msg.method);
    if (method === 'initialize') {
      send({ id, result: { userAgent: 'codex (fake)', codexHome: root, platformFamily: 'unix', platformOs: process.platform } });
    } else if (method === 'hooks/list') {
      const cwds = (obj(msg.params).cwds as unknown[] | undefined)?.filter((c): c is string => typeof c === 'string') ?? [];
      const hooks = listHooks(root).map((h, displayOrder) => ({
        key: h.key,
        eventName: h.eventName,
        handlerType: 'command',
        command: h.command,
        async: h.async,
        matcher: h.matcher,
        timeoutSec: h.timeoutSec,
        statusMessage: h.statusMessage,
        sourcePath: h.sourcePath,
        source: 'user',
        pluginId: null,
        displayOrder,
        enabled: h.enabled,
        isManaged: false,
        currentHash: h.currentHash,
        trustStatus: h.trust,
      }));
      send({ id, result: { data: cwds.map((cwd) => ({ cwd, hooks, warnings: [], errors: [] })) } });
    } else {
      send({ id, error: { code: -32601, message: `method not found: ${method ?? '?'}` } });
    }
  }
}
