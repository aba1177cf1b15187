// The real pi 0.73.1 moved with `agent-handoff send` (laptop → vega → laptop → vega); see round-trip.ts.
// Offline: PI_OFFLINE=1 (no tool downloads, no version check), the only provider is this machine's
// mock, pinned as the default model (real-agents.md §4.3 and the addendum).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeAs } from '../helpers/e2e.js';
import { entries, roundTrip, type Machine, type RealKind } from './round-trip.js';

const piDir = (m: Machine) => path.join(m.user.home, '.pi', 'agent');
const folderOf = (m: Machine) => path.join(piDir(m), 'sessions', `--${m.checkout.slice(1).replace(/\//g, '-')}--`);

const pi: RealKind = {
  kind: 'pi',
  version: '0.73.1',
  bin: 'node_modules/.bin/pi',
  env: () => ({ PI_OFFLINE: '1', PI_SKIP_VERSION_CHECK: '1' }),
  configure(m) {
    const dir = piDir(m);
    const models = { providers: { mock: { baseUrl: `${m.mock.origin}/v1`, api: 'openai-completions', apiKey: 'mock-not-a-key', compat: { supportsDeveloperRole: false, supportsReasoningEffort: false }, models: [{ id: 'mock-model' }] } } };
    writeAs(m.user, path.join(dir, 'models.json'), JSON.stringify(models, null, 2) + '\n');
    writeAs(m.user, path.join(dir, 'settings.json'), JSON.stringify({ defaultProvider: 'mock', defaultModel: 'mock-model', lastChangelogVersion: '0.73.1' }, null, 2) + '\n');
    return () => {
      for (const f of ['models.json', 'settings.json', 'auth.json']) fs.rmSync(path.join(dir, f), { force: true });
    };
  },
  rewrittenFiles: (file) => [file],
  unitsBeside: (file) => entries(path.dirname(file), (n) => n.endsWith('.jsonl')),
  cleanup: (m) => fs.rmSync(folderOf(m), { recursive: true, force: true }),
};

describe('real pi, moved with agent-handoff send', () => {
  it('laptop → vega, back with --from vega, and to vega again', async () => {
    const timings = await roundTrip(pi);
    console.log(`real pi send timings: ${timings.map((t) => `${t.leg} ${(t.ms / 1000).toFixed(1)} s`).join('; ')}`);
    expect(timings).toHaveLength(3);
  }, 420_000);
});
