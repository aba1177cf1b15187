// The send summary for a person, from a real result: the JSON a `npm run demo` handoff printed
// (paths moved under /home/me), checked against the send schema so it stays a result the CLI can print.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SendResult } from '../../src/commands/send-result.js';
import { renderSend, type SendView } from '../../src/render/send.js';

const REAL: SendView = SendResult.parse(JSON.parse(fs.readFileSync(new URL('./send-result.json', import.meta.url), 'utf8')));
const opts = { color: false, home: '/home/me' };

describe('renderSend', () => {
  it('says where the agent runs now, what moved, what was verified and how to attach', () => {
    const text = renderSend(REAL, opts);
    expect(text).toMatch(/^✓ Moved demo-pi \(pi\) local → local/);
    expect(text).toContain('demo-pi in pane w2:p1 (workspace w2) on local');
    expect(text).toContain('handoff/20261201-230234-fdac0445e6e2dca3 (new worktree)');
    expect(text).toContain('~/src/greeter.worktrees/handoff-20261201-230234-fdac0445e6e2dca3');
    expect(text).toContain('HEAD a867472, 462 B of commits sent');
    expect(text).toContain('2 uncommitted files applied (NOTES.md, src/greet.js)');
    expect(text).toContain('session 01a233d8 (1 file, 1.9 kB)');
    expect(text).toContain('changes stashed as a54bda4 — `git stash pop` in ~/src/greeter brings them back');
    expect(text).toContain('w1:p1 is back at its shell');
    for (const v of REAL.verified!) expect(text).toContain(`✓ ${v}`);
    expect(text).toMatch(/attach\s+herdr \(on this machine; pane w2:p1\)/);
    expect(text).not.toContain('Waiting for you');
    expect(text).not.toContain('/home/me/');
    expect(text).not.toContain('\x1b[');
  });

  it('names the screens that wait for the user, and the attach command for a remote target', () => {
    const text = renderSend({ ...REAL, attach: 'herdr --remote vega', waiting_for_user: ['trust', 'login'] }, opts);
    expect(text).toMatch(/attach\s+herdr --remote vega/);
    expect(text).toContain('Waiting for you:');
    expect(text).toContain('folder-trust question (trust) — attach (herdr --remote vega) and answer it');
    expect(text).toContain('(login)');
  });

  it('codex: what came of herdr\'s hook trust, and the keys that answer its review', () => {
    const steps = ['codex on vega shows "Hooks need review" (1 hook is new or changed). Attach there, … press t to trust that one hook; then Esc, Esc.'];
    const left = SendResult.parse({ ...REAL, hook_trust: { status: 'left_for_user', detail: "herdr's codex hook was left for you to review on vega: the agent on local does not trust herdr's hook (untrusted)." }, waiting_for_user: ['hook_review'], next_steps: steps });
    const text = renderSend(left, opts);
    expect(text).toMatch(/hooks\s+herdr's codex hook was left for you to review on vega/);
    expect(text).toContain('a review of new hooks or settings (hook_review)');
    expect(text).toContain(`    ${steps[0]}`);
    const carried = renderSend(SendResult.parse({ ...REAL, hook_trust: { status: 'carried', detail: "herdr's codex hook is trusted on vega as on local." } }), opts);
    expect(carried).toMatch(/hooks\s+herdr's codex hook is trusted on vega as on local\./);
    expect(carried).not.toContain('Waiting for you');
  });

  it('a dry run says what would happen and that nothing changed', () => {
    const dry = SendResult.parse({ ok: true, command: 'send', dry_run: true, deferred: false, plan: REAL.plan });
    const text = renderSend(dry, opts);
    expect(text).toMatch(/^Dry run: demo-pi \(pi\) can move local → local; nothing was changed\./);
    expect(text).toContain('2 uncommitted files (NOTES.md, src/greet.js)');
    expect(text).toMatch(/resume\s+pi --session ~?\/home\/me\/\.pi|resume\s+pi --session/);
  });

  it('--self: says the agent moves after its turn, and where the helper runs', () => {
    const text = renderSend(SendResult.parse({ ok: true, command: 'send', dry_run: false, deferred: true, plan: REAL.plan, helper: { workspace: 'w3', pane: 'w3:p1', job: 'j1' } }), opts);
    expect(text).toContain('will move local → local once its current turn ends');
    expect(text).toContain('workspace w3, pane w3:p1');
  });

  it('colours only when asked', () => {
    expect(renderSend(REAL, { ...opts, color: true })).toContain('\x1b[32m');
  });
});
