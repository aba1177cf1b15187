// A desk of its own in the shared test world: herdr servers in a named session (HERDR_SESSION)
// for laptop and vega, and an sshd with the world's host key whose sessions get that session in
// their login environment. `send --all` there sees only the agents started on this desk, while
// other test files' agents run in the world's default sessions beside it.
import fs from 'node:fs';
import path from 'node:path';
import { startSessionHerdr, startSshd, type SshdHandle, type World } from '../world/machines.js';

export interface Desk {
  /** The environment that points herdr (ours and the product's on laptop) at the desk. */
  env: Record<string, string>;
  /** The desk's sshd (vega's login environment there names the session). */
  sshd: SshdHandle;
  close(): void;
}

export async function openDesk(world: World, name: string): Promise<Desk> {
  const session = `${name}${Math.random().toString(36).slice(2, 6)}`;
  const closing: (() => void)[] = [];
  const close = () => {
    for (const c of closing.splice(0).reverse()) {
      try {
        c();
      } catch {
        // already gone
      }
    }
  };
  try {
    closing.push(await startSessionHerdr(world, world.users.laptop!, session));
    closing.push(await startSessionHerdr(world, world.users.vega!, session));
    const dir = fs.mkdtempSync(path.join(world.dir, 'desk-sshd-'));
    for (const f of ['host_ed25519', 'host_ed25519.pub']) fs.copyFileSync(path.join(path.dirname(world.sshd.config), f), path.join(dir, f));
    const sshd = await startSshd(dir, { users: ['laptop', 'vega'], extra: [`SetEnv HERDR_SESSION=${session}`] });
    closing.push(() => {
      process.kill(sshd.pid, 'SIGTERM');
      fs.rmSync(dir, { recursive: true, force: true });
    });
    return { env: { HERDR_SESSION: session }, sshd, close };
  } catch (err) {
    close();
    throw err;
  }
}
