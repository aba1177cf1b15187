// The world users' codex hook trust, as e2e tests set it up: a person who runs codex with herdr
// trusted herdr's hook once (its `[hooks.state."<key>"]` entry in ~/.codex/config.toml, with
// codex's own hash: the fake's and the real CLI's agree). The homes are shared by the test files
// running side by side, so tests that change this trust, or depend on it, run one at a time
// (withCodexHooks).
import fs from 'node:fs';
import path from 'node:path';
import { listHooks, trustHooks } from '../world/agents/codex-hooks.js';
import { alive, WORLD_DIR, type WorldUser } from '../world/machines.js';

export const codexRootOf = (user: WorldUser) => path.join(user.home, '.codex');

const herdrScript = (user: WorldUser) => path.join(codexRootOf(user), 'herdr-agent-state.sh');

function chownConfig(user: WorldUser): void {
  const file = path.join(codexRootOf(user), 'config.toml');
  if (fs.existsSync(file)) fs.chownSync(file, user.uid, user.gid);
}

/** Trust herdr's hook in the user's codex, as they would have once (a no-op without the integration). */
export function trustHerdrCodexHook(user: WorldUser): void {
  const root = codexRootOf(user);
  const mine = listHooks(root).filter((h) => h.command.includes(herdrScript(user)) && h.trust !== 'trusted');
  if (mine.length === 0) return;
  trustHooks(root, mine);
  chownConfig(user);
}

/** Take every trust entry of the user's ~/.codex/hooks.json out of their config.toml. */
export function untrustCodexHooks(user: WorldUser): void {
  const root = codexRootOf(user);
  const file = path.join(root, 'config.toml');
  if (!fs.existsSync(file)) return;
  const prefix = `[hooks.state.${JSON.stringify(`${path.join(root, 'hooks.json')}:`).slice(0, -1)}`;
  const out: string[] = [];
  let skipping = false;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*\[/.test(line)) skipping = line.trim().startsWith(prefix);
    if (!skipping) out.push(line);
  }
  fs.writeFileSync(file, out.join('\n').replace(/\n{3,}/g, '\n\n'));
  chownConfig(user);
}

/** Is herdr's hook trusted in the user's codex? */
export function herdrCodexHookTrusted(user: WorldUser): boolean {
  return listHooks(codexRootOf(user)).some((h) => h.command.includes(herdrScript(user)) && h.trust === 'trusted');
}

/** Run `fn` while no other test process changes or relies on the world users' codex hook trust. */
export async function withCodexHooks<T>(fn: () => Promise<T>, timeoutMs = 600_000): Promise<T> {
  const locks = path.join(WORLD_DIR, 'locks');
  fs.mkdirSync(locks, { recursive: true });
  const lock = path.join(locks, 'codex-hooks');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder = NaN;
      try {
        holder = Number(fs.readFileSync(path.join(lock, 'pid'), 'utf8'));
      } catch {
        // being taken right now (or left without its pid file by a killed test: old then)
      }
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if ((Number.isInteger(holder) && holder > 0 && !alive(holder)) || (Number.isNaN(holder) && age > 10_000)) fs.rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for the world's codex-hooks lock (${lock})`, { cause: err });
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
