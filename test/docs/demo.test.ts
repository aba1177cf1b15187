// `npm run demo` as the README promises: run by an ordinary user (the test world's `laptop`, not
// root), with nothing else set up for it, it performs a real handoff and cleans up after itself.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { runAs } from '../helpers/e2e.js';
import { appRoot, pidsOfUser, type World } from '../world/machines.js';

let world: World;

beforeAll(async () => {
  world = await useWorld();
});

/** The user's processes whose command line names a demo sandbox. */
function demoProcesses(uid: number): string[] {
  return pidsOfUser(uid)
    .map((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      } catch {
        return '';
      }
    })
    .filter((cmd) => cmd.includes('ah-demo-'));
}

describe('npm run demo', () => {
  it('moves a pi agent to a new worktree as a non-root user, and removes its sandbox', async () => {
    const laptop = world.users.laptop!;
    const tmp = fs.mkdtempSync(path.join('/tmp', 'ah-demo-test-'));
    fs.chownSync(tmp, laptop.uid, laptop.gid);
    try {
      // A TMPDIR of its own, so the sandbox it makes (and removes) can be checked for. Run in the
      // package laptop can read: the checkout, or the world's copy of it when the checkout is private.
      const r = await runAs(laptop, ['npm', 'run', '--silent', 'demo'], { cwd: appRoot(world), env: { HOME: laptop.home, TMPDIR: tmp }, timeoutMs: 240_000 });
      expect(r.stdout, r.stderr).toContain('The demo handoff worked.');
      expect(r.code, r.stdout + r.stderr).toBe(0);
      // Plain words, the product's progress on stderr, and its JSON.
      expect(r.stdout).toContain('$ agent-handoff send demo-pi --here --new-worktree --no-focus');
      expect(r.stdout).toMatch(/✓ the moved pi shows the earlier conversation/);
      expect(r.stderr).toMatch(/starting pi on local done/);
      const json = r.stdout.slice(r.stdout.indexOf('JSON printed by agent-handoff:\n') + 'JSON printed by agent-handoff:\n'.length, r.stdout.lastIndexOf('\n\nThe demo handoff worked.'));
      expect(JSON.parse(json)).toMatchObject({ ok: true, command: 'send', changes_applied: true, worktree_created: true, source_pane_at_shell: true });
      // Cleaned up: no sandbox left, no server or agent still running.
      expect(fs.readdirSync(tmp).filter((f) => f.startsWith('ah-demo-'))).toEqual([]);
      expect(demoProcesses(laptop.uid)).toEqual([]);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }, 180_000);
});
