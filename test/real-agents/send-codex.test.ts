// The real Codex CLI 0.171.0 moved with `agent-handoff send` (laptop → vega → laptop → vega); see
// round-trip.ts. Offline: the model provider is this machine's mock over plain HTTP (Responses API,
// no WebSocket, no OpenAI login), no app-server daemon (else /quit only detaches), analytics off
// (else it waits ≈ 5 s at exit), all given as `-c` overrides by the launcher, so the shared
// ~/.codex/config.toml only gets the trust entries (the test answers the folder-trust screen on
// laptop, the product on the target). real-agents.md §4.2 and the addendum.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { untrustCodexHooks, withCodexHooks } from '../helpers/codex-hooks.js';
import { waitFor } from '../helpers/e2e.js';
import { entries, realBinary, roundTrip, type Machine, type RealKind } from './round-trip.js';
import { UserTmux } from './tmux.js';

const codexHome = (m: Machine) => path.join(m.user.home, '.codex');

function rollouts(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }) : []) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...rollouts(p));
    else if (/^rollout-.*\.jsonl$/.test(e.name)) out.push(p);
  }
  return out;
}

const mentions = (file: string, checkout: string) => {
  try {
    return fs.readFileSync(file, 'utf8').includes(JSON.stringify(checkout));
  } catch {
    return false;
  }
};

/** Remove `[projects."<checkout>"]` and its keys from config.toml (codex wrote them on trust). */
function untrust(m: Machine): void {
  const file = path.join(codexHome(m), 'config.toml');
  if (!fs.existsSync(file)) return;
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const out: string[] = [];
  let skipping = false;
  for (const line of lines) {
    if (/^\s*\[/.test(line)) skipping = line.trim() === `[projects.${JSON.stringify(m.checkout)}]`;
    if (!skipping) out.push(line);
  }
  fs.writeFileSync(file, out.join('\n'));
}

const codex: RealKind = {
  kind: 'codex',
  version: '0.171.0',
  bin: 'node_modules/.bin/codex',
  env: () => ({}),
  args: (m) => [
    '-c', 'model="mock-model"',
    '-c', 'model_provider="mock"',
    '-c', `model_providers.mock={ name = "Mock", base_url = "${m.mock.origin}/v1", wire_api = "responses", requires_openai_auth = false, supports_websockets = false }`,
    '-c', 'features.daemon_auto_start=false',
    '-c', 'analytics.enabled=false',
    '-c', 'tui.screen_reader_detection_done=true',
    '-c', 'approval_policy="never"',
    '-c', 'sandbox_mode="danger-full-access"',
  ],
  configure: (m) => () => untrust(m),
  // herdr's codex integration is a SessionStart hook in ~/.codex/hooks.json, and codex 0.171 asks
  // "Hooks need review" for a hook it has not seen (its trust is a hash of the hook, saved in
  // config.toml per hooks.json path). On laptop, as its user would have: start codex in the
  // checkout, trust the folder and the hook, quit. vega has never trusted it: the handoff carries
  // laptop's trust there.
  async prepare(m) {
    if (m.user.name === 'vega') {
      untrustCodexHooks(m.user);
      trustFolder(m);
      return;
    }
    const t = new UserTmux(m.user, path.join(m.user.home, '.ah-real-agents', 'codex-prime.sock'));
    const status = path.join(m.user.home, '.ah-real-agents', 'codex-prime.status');
    fs.rmSync(status, { force: true });
    t.start();
    try {
      t.run('codex', m.checkout, {}, [realBinary(codex), ...codex.args!(m)], status);
      let last = '';
      const hooksKey = `[hooks.state."${path.join(codexHome(m), 'hooks.json')}:session_start:0:0"]`;
      await waitFor(`codex on ${m.user.name} to save the trust of herdr's hook`, async () => {
        last = t.capture('codex');
        // One key per screen, then time for the next screen to draw (an extra Enter would pick
        // "Review hooks").
        const settle = () => new Promise((r) => setTimeout(r, 2000));
        if (last.includes('Hooks need review')) {
          t.tmux(['send-keys', '-t', 'ah:codex', '2']);
          await new Promise((r) => setTimeout(r, 300));
          t.tmux(['send-keys', '-t', 'ah:codex', 'Enter']);
          await settle();
        } else if (last.includes('Trust this folder?')) {
          t.tmux(['send-keys', '-t', 'ah:codex', 'Enter']);
          await settle();
        }
        return fs.readFileSync(path.join(codexHome(m), 'config.toml'), 'utf8').includes(hooksKey);
      }, 60_000).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}; screen:\n${last}`, { cause: err });
      });
      // The hook's trust is in config.toml now; the prime's codex ends with its tmux server.
    } finally {
      t.stop();
      fs.rmSync(status, { force: true });
      fs.rmSync(t.socket, { force: true });
    }
    // The folder's trust is made sure of too, once the prime is gone (seen missing once after it,
    // and then, on a loaded machine, codex drew its trust screen after the product's start had
    // looked, so the resumed agent sat at it).
    trustFolder(m);
  },
  afterLeg(leg, result) {
    // The first leg carries laptop's trust of herdr's hook to vega; afterwards both trust it.
    expect(result.hook_trust, leg).toMatchObject({ status: leg === 'send laptop → vega' ? 'carried' : 'already_trusted' });
    expect(result.waiting_for_user, leg).not.toContain('hook_review');
  },
  folderTrust: {
    remove: untrust,
    covers: (m) => {
      const text = fs.existsSync(path.join(codexHome(m), 'config.toml')) ? fs.readFileSync(path.join(codexHome(m), 'config.toml'), 'utf8') : '';
      const at = text.indexOf(`[projects.${JSON.stringify(m.checkout)}]`);
      return at >= 0 && /^trust_level\s*=\s*"trusted"/m.test(text.slice(at).split(/\n(?=\[)/)[0] ?? '');
    },
  },
  rewrittenFiles: (file) => [file],
  unitsBeside: (file, checkout) => entries(path.dirname(file), (n) => /^rollout-.*\.jsonl$/.test(n)).filter((f) => mentions(f, checkout)),
  cleanup(m) {
    for (const f of rollouts(path.join(codexHome(m), 'sessions'))) if (mentions(f, m.checkout)) fs.rmSync(f, { force: true });
  },
};

/** The checkout trusted in config.toml (the handoff answers the folder-trust screen too, but see prepare). */
function trustFolder(m: Machine): void {
  const config = path.join(codexHome(m), 'config.toml');
  const section = `[projects.${JSON.stringify(m.checkout)}]`;
  const text = fs.existsSync(config) ? fs.readFileSync(config, 'utf8') : '';
  if (!text.includes(section)) fs.appendFileSync(config, `\n${section}\ntrust_level = "trusted"\n`);
}

describe('real codex, moved with agent-handoff send', () => {
  it('laptop → vega, back with --from vega, to vega again, and back to a laptop whose folder trust was removed', async () => {
    // vega's hook trust is taken away for this test: no other test may rely on it meanwhile.
    const timings = await withCodexHooks(() => roundTrip(codex));
    console.log(`real codex send timings: ${timings.map((t) => `${t.leg} ${(t.ms / 1000).toFixed(1)} s`).join('; ')}`);
    expect(timings).toHaveLength(4);
  }, 420_000);
});
