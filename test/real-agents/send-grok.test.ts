// The real grok 1.0.41 (xAI's Grok Build) moved with `agent-handoff send` (laptop → vega → laptop →
// vega); see round-trip.ts. Offline: a custom model with a key (no login screen) served by this
// machine's mock, no self-update (else a detached update check outlives grok and hangs offline)
// (real-agents.md §4.5 and the addendum). grok rewrites the JSON files of its session folder in
// place (prompt_context.json each turn), so the hand-back needs the session copy to accept a source
// copy that is exactly what the earlier handoff left.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeAs } from '../helpers/e2e.js';
import { entries, roundTrip, type Machine, type RealKind } from './round-trip.js';

const grokHome = (m: Machine) => path.join(m.user.home, '.grok');
const pct = (s: string) => s.replace(/[^A-Za-z0-9\-._~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const grok: RealKind = {
  kind: 'grok',
  version: '1.0.41',
  bin: 'node_modules/.bin/grok',
  env: () => ({}),
  configure(m) {
    const config = [
      '[models]',
      'default = "mock"',
      '',
      '[model.mock]',
      'model = "mock-model"',
      `base_url = "${m.mock.origin}/v1"`,
      'name = "Mock"',
      'api_key = "mock-not-a-key"',
      'api_backend = "chat_completions"',
      'context_window = 128000',
      '',
      '[cli]',
      'auto_update = false',
      '',
    ].join('\n');
    writeAs(m.user, path.join(grokHome(m), 'config.toml'), config);
    return () => fs.rmSync(path.join(grokHome(m), 'config.toml'), { force: true });
  },
  // Every text file of the session folder but rewind_points.jsonl (file contents, verbatim).
  rewrittenFiles: (file) => walk(path.dirname(file)).filter((f) => !f.endsWith('rewind_points.jsonl') && /\.(jsonl?|txt)$/.test(f)),
  // The session folders of the cwd group (prompt_history.jsonl beside them is the group's).
  unitsBeside: (file) => entries(path.dirname(path.dirname(file))).filter((f) => fs.statSync(f).isDirectory()),
  cleanup: (m) => fs.rmSync(path.join(grokHome(m), 'sessions', pct(m.checkout)), { recursive: true, force: true }),
};

describe('real grok, moved with agent-handoff send', () => {
  it('laptop → vega, back with --from vega, and to vega again', async () => {
    const timings = await roundTrip(grok);
    console.log(`real grok send timings: ${timings.map((t) => `${t.leg} ${(t.ms / 1000).toFixed(1)} s`).join('; ')}`);
    expect(timings).toHaveLength(3);
  }, 420_000);
});
