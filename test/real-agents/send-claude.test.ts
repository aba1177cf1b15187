// The real Claude Code 2.1.197 moved with `agent-handoff send` (laptop → vega → laptop → vega); see
// round-trip.ts. Offline: ANTHROPIC_BASE_URL is this machine's mock, DISABLE_AUTOUPDATER=1 (else it
// installs a newer version in the background) and no nonessential traffic; ~/.claude.json has
// onboarding done and the mock key approved. Folder trust is not pre-written: the test answers it
// on laptop, the product on the target (real-agents.md §4.1).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeAs } from '../helpers/e2e.js';
import { entries, roundTrip, type Machine, type RealKind } from './round-trip.js';

const KEY = 'mock-not-a-key';
const stateFile = (m: Machine) => path.join(m.user.home, '.claude.json');
const projectDir = (m: Machine) => path.join(m.user.home, '.claude', 'projects', m.checkout.replace(/[^A-Za-z0-9]/g, '-'));

function readState(m: Machine): Record<string, unknown> {
  try {
    return JSON.parse(fs.readFileSync(stateFile(m), 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const claude: RealKind = {
  kind: 'claude',
  version: '2.1.197',
  bin: 'node_modules/.bin/claude',
  env: (m) => ({ ANTHROPIC_BASE_URL: m.mock.origin, ANTHROPIC_API_KEY: KEY, DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_TELEMETRY: '1' }),
  configure(m) {
    // Merged into the file the fake claude of other tests also reads (it looks at trust only).
    const state = readState(m);
    const approved = (state.customApiKeyResponses as { approved?: string[] } | undefined)?.approved ?? [];
    state.hasCompletedOnboarding = true;
    state.customApiKeyResponses = { approved: [...new Set([...approved, KEY])], rejected: [] };
    const tmp = `${stateFile(m)}.${process.pid}.tmp`;
    writeAs(m.user, tmp, JSON.stringify(state, null, 2) + '\n');
    fs.chmodSync(tmp, 0o600);
    fs.renameSync(tmp, stateFile(m));
    return () => {
      const now = readState(m);
      const projects = (now.projects ?? {}) as Record<string, unknown>;
      if (!(m.checkout in projects)) return;
      delete projects[m.checkout];
      const t = `${stateFile(m)}.${process.pid}.tmp`;
      writeAs(m.user, t, JSON.stringify(now, null, 2) + '\n');
      fs.chmodSync(t, 0o600);
      fs.renameSync(t, stateFile(m));
    };
  },
  folderTrust: {
    remove: (m) => {
      const now = readState(m);
      const projects = (now.projects ?? {}) as Record<string, unknown>;
      delete projects[m.checkout];
      now.projects = projects;
      const t = `${stateFile(m)}.${process.pid}.tmp`;
      writeAs(m.user, t, JSON.stringify(now, null, 2) + '\n');
      fs.chmodSync(t, 0o600);
      fs.renameSync(t, stateFile(m));
    },
    covers: (m) => ((readState(m).projects ?? {}) as Record<string, { hasTrustDialogAccepted?: boolean }>)[m.checkout]?.hasTrustDialogAccepted === true,
  },
  // The transcript and its sibling folder (subagents, tool results); file-history is verbatim.
  rewrittenFiles: (file) => [file, ...walk(file.replace(/\.jsonl$/, ''))],
  unitsBeside: (file) => entries(path.dirname(file), (n) => n.endsWith('.jsonl')),
  cleanup: (m) => fs.rmSync(projectDir(m), { recursive: true, force: true }),
};

describe('real claude, moved with agent-handoff send', () => {
  it('laptop → vega, back with --from vega, to vega again, and back to a laptop whose folder trust was removed', async () => {
    const timings = await roundTrip(claude);
    console.log(`real claude send timings: ${timings.map((t) => `${t.leg} ${(t.ms / 1000).toFixed(1)} s`).join('; ')}`);
    expect(timings).toHaveLength(4);
  }, 420_000);
});
