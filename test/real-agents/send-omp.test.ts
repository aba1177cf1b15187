// The real oh-my-pi (omp) 18.2.3 on bun 1.4.5 moved with `agent-handoff send` (laptop → vega →
// laptop → vega); see round-trip.ts. Offline: the first-run wizard marked done, no update check,
// the mock as the only provider and pinned as the default role (else an ANTHROPIC_API_KEY in the
// environment would pick a real model), bun first on PATH (real-agents.md §4.4 and the addendum).
// omp rewrites its session file in place (the padded line-1 title), so the hand-back needs the
// session copy to accept a source copy that is exactly what the earlier handoff left.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeAs } from '../helpers/e2e.js';
import { entries, roundTrip, type Machine, type RealKind } from './round-trip.js';

const ompDir = (m: Machine) => path.join(m.user.home, '.omp', 'agent');
/** omp names a folder inside HOME by its relative path: `-src-real-omp`. */
const folderOf = (m: Machine) => path.join(ompDir(m), 'sessions', `-${path.relative(m.user.home, m.checkout).replace(/\//g, '-')}`);

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const omp: RealKind = {
  kind: 'omp',
  version: '18.2.3',
  bin: 'node_modules/.bin/omp',
  env: (_m, prefix) => ({ PATH: path.join(prefix, 'node_modules', '@oven', 'bun-linux-x64', 'bin'), PI_OFFLINE: '1' }),
  configure(m) {
    const dir = ompDir(m);
    const models = ['providers:', '  mock:', `    baseUrl: ${m.mock.origin}/v1`, '    api: openai-completions', '    apiKey: mock-not-a-key', '    models:', '      - id: mock-model', ''].join('\n');
    const config = ['setupVersion: 2', 'startup:', '  checkUpdate: false', 'modelRoles:', '  default: mock/mock-model', ''].join('\n');
    writeAs(m.user, path.join(dir, 'models.yml'), models);
    writeAs(m.user, path.join(dir, 'config.yml'), config);
    return () => {
      for (const f of ['models.yml', 'config.yml']) fs.rmSync(path.join(dir, f), { force: true });
    };
  },
  // The transcript and its artifacts folder.
  rewrittenFiles: (file) => [file, ...walk(file.replace(/\.jsonl$/, ''))],
  unitsBeside: (file) => entries(path.dirname(file), (n) => n.endsWith('.jsonl')),
  cleanup: (m) => fs.rmSync(folderOf(m), { recursive: true, force: true }),
};

describe('real omp, moved with agent-handoff send', () => {
  it('laptop → vega, back with --from vega, and to vega again', async () => {
    const timings = await roundTrip(omp);
    console.log(`real omp send timings: ${timings.map((t) => `${t.leg} ${(t.ms / 1000).toFixed(1)} s`).join('; ')}`);
    expect(timings).toHaveLength(3);
  }, 420_000);
});
