import { describe, expect, it } from 'vitest';
import { checkHerdrVersion } from '../../src/herdr/version.js';
import { parseIntegrationStatus } from '../../src/herdr/integration.js';

describe('herdr version gate', () => {
  it('accepts 0.8.0 and later, previews included', () => {
    expect(checkHerdrVersion('herdr 0.8.0\n')).toEqual({ version: '0.8.0', ok: true });
    expect(checkHerdrVersion('herdr 0.8.0-preview.12\n').ok).toBe(true);
    expect(checkHerdrVersion('herdr 1.2.3').ok).toBe(true);
    expect(checkHerdrVersion('herdr 0.10.0').ok).toBe(true);
  });
  it('refuses older versions', () => {
    expect(checkHerdrVersion('herdr 0.7.5').ok).toBe(false);
    expect(checkHerdrVersion('herdr 0.0.9').ok).toBe(false);
  });
  it('tolerates an unreadable version with a warning', () => {
    const v = checkHerdrVersion('garbage');
    expect(v).toMatchObject({ version: 'unknown', ok: true });
    expect(v.warning).toMatch(/Could not read/);
  });
});

describe('herdr integration status', () => {
  it('parses every status form', () => {
    const text = [
      'pi: current (v8) (/home/v/.pi/agent/extensions/herdr-agent-state.ts)',
      'omp: not installed (/home/v/.omp/agent/extensions/herdr-omp-agent-state.ts)',
      'claude: outdated (v5 < v7) (/home/v/.claude/hooks/herdr-agent-state.sh)',
      'codex: legacy (/home/v/.codex/herdr-agent-state.sh)',
      '',
    ].join('\n');
    expect(parseIntegrationStatus(text)).toEqual([
      { target: 'pi', status: 'current', version: 8, path: '/home/v/.pi/agent/extensions/herdr-agent-state.ts' },
      { target: 'omp', status: 'not_installed', version: null, path: '/home/v/.omp/agent/extensions/herdr-omp-agent-state.ts' },
      { target: 'claude', status: 'outdated', version: 5, path: '/home/v/.claude/hooks/herdr-agent-state.sh' },
      { target: 'codex', status: 'legacy', version: null, path: '/home/v/.codex/herdr-agent-state.sh' },
    ]);
  });
});
