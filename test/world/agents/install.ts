// Writes the fake agent executables. Each is a tiny CommonJS-compatible node script, so the
// process shows as `node <binDir>/<kind> …` and herdr's detection unwraps it to `<kind>`, as with
// the real npm-installed CLIs.
import fs from 'node:fs';
import path from 'node:path';
import { AGENT_KINDS } from './main.js';

export function agentBinText(kind: string, libDir: string): string {
  const main = path.join(libDir, 'agents', 'main.js');
  return [
    '#!/usr/bin/env node',
    `// fake ${kind} (agent-handoff test world)`,
    `import(${JSON.stringify(main)}).then((m) => m.run(${JSON.stringify(kind)}, process.argv.slice(2))).catch((e) => { console.error(e); process.exit(1); });`,
    '',
  ].join('\n');
}

export function writeAgentBins(binDir: string, libDir: string): void {
  fs.mkdirSync(binDir, { recursive: true });
  for (const kind of AGENT_KINDS) {
    const file = path.join(binDir, kind);
    fs.writeFileSync(file, agentBinText(kind, libDir), { mode: 0o755 });
    fs.chmodSync(file, 0o755);
  }
}
