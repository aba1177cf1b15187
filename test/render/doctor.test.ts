import { describe, expect, it } from 'vitest';
import { DoctorResult, type SideReport } from '../../src/result.js';
import { renderDoctor } from '../../src/render/doctor.js';

const side = (over: Partial<SideReport> = {}): SideReport => ({
  host: 'local',
  user: 'me',
  hostname: 'laptop',
  platform: 'linux',
  tools: [
    { name: 'git', path: '/usr/bin/git', version: '2.39.5', ok: true, required: true },
    { name: 'claude', path: null, version: null, ok: false, required: false },
  ],
  herdr: { installed: true, version: '0.8.0', server: 'running' },
  integrations: [{ kind: 'claude', status: 'current', version: 3, path: '/home/me/.claude/settings.json' }],
  config_roots: { claude: '/home/me/.claude' },
  ssh: null,
  ...over,
});

describe('renderDoctor', () => {
  it('a ready machine: a checklist and "Ready"', () => {
    const text = renderDoctor(DoctorResult.parse({ ok: true, command: 'doctor', ready: true, local: side(), target: null, problems: [], warnings: [] }), { color: false, home: '/home/me' });
    expect(text).toMatch(/^here: local \(me@laptop, linux\)$/m);
    expect(text).toContain('✓ git 2.39.5 /usr/bin/git');
    expect(text).toContain('- claude (optional) not found');
    expect(text).toContain('✓ herdr 0.8.0, server running');
    expect(text).toContain('✓ claude integration current');
    expect(text.trimEnd().split('\n').pop()).toBe('Ready: a handoff can run.');
  });
  it('problems come with their fix, and the target with its ssh facts', () => {
    const target = side({
      host: 'vega',
      herdr: { installed: false, version: null, server: 'not_installed' },
      ssh: { target: 'vega', host: '127.0.0.1', user: 'vega', port: 2222, auth: 'publickey', host_key: 'verified', proxy_jump: null, connect_ms: 40, round_trip_ms: 3, handshakes: 1 },
    });
    const problems = [{ where: 'target (vega)', code: 'herdr_not_installed', problem: 'herdr is not installed (not on the login PATH).', fix: 'Install herdr ≥ 0.8.0 on vega (e.g. into ~/.local/bin).' }];
    const text = renderDoctor(DoctorResult.parse({ ok: true, command: 'doctor', ready: false, local: side(), target, problems, warnings: ['target: slow link'] }), { color: false, home: '/home/me' });
    expect(text).toMatch(/^target: vega/m);
    expect(text).toContain('✓ ssh vega@127.0.0.1:2222 — publickey, host key verified, 3 ms round trip');
    expect(text).toContain('✗ herdr not installed');
    expect(text).toContain('✗ target (vega): herdr is not installed (not on the login PATH). (herdr_not_installed)');
    expect(text).toContain('    fix: Install herdr ≥ 0.8.0 on vega (e.g. into ~/.local/bin).');
    expect(text).toContain('! target: slow link');
    expect(text.trimEnd().split('\n').pop()).toBe('Not ready: 1 problem to fix first.');
  });
});
