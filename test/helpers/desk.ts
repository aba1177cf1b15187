// A desk of its own in the shared test world: herdr servers in a named session (HERDR_SESSION)
// for laptop and vega, state folders of its own (XDG_STATE_HOME: journals, locks, ledgers,
// markers), and an sshd with the world's host key whose sessions get both in their login
// environment. `send --all` there sees only the agents started on this desk, while other test
// files' agents run in the world's default sessions beside it, and `history` and the ledgers
// there hold only the desk's handoffs.
import fs from 'node:fs';
import path from 'node:path';
import { startSessionHerdr, startSshd, type SshdHandle, type World } from '../world/machines.js';

export interface Desk {
  /** The environment that points herdr (ours and the product's on laptop) and agent-handoff's state at the desk. */
  env: Record<string, string>;
  /** agent-handoff's state folder of each machine user on this desk. */
  state: { laptop: string; vega: string };
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
    const dir = fs.mkdtempSync(path.join(world.dir, 'desk-'));
    fs.chmodSync(dir, 0o755);
    closing.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const state = { laptop: path.join(dir, 'state-laptop'), vega: path.join(dir, 'state-vega') };
    for (const [name, folder] of Object.entries(state)) {
      const user = world.users[name]!;
      fs.mkdirSync(folder, { mode: 0o700 });
      fs.chownSync(folder, user.uid, user.gid);
    }
    // A --self helper runs in a pane of the desk's herdr: it gets the desk's state folder from there.
    closing.push(await startSessionHerdr(world, world.users.laptop!, session, { XDG_STATE_HOME: state.laptop }));
    closing.push(await startSessionHerdr(world, world.users.vega!, session, { XDG_STATE_HOME: state.vega }));
    const sshdDir = path.join(dir, 'sshd');
    fs.mkdirSync(sshdDir);
    for (const f of ['host_ed25519', 'host_ed25519.pub']) fs.copyFileSync(path.join(path.dirname(world.sshd.config), f), path.join(sshdDir, f));
    // This sshd serves vega only as the desk's vega: its state folder and herdr session.
    const sshd = await startSshd(sshdDir, { users: ['laptop', 'vega'], extra: [`SetEnv HERDR_SESSION=${session} XDG_STATE_HOME=${state.vega}`] });
    closing.push(() => process.kill(sshd.pid, 'SIGTERM'));
    return { env: { HERDR_SESSION: session, XDG_STATE_HOME: state.laptop }, state, sshd, close };
  } catch (err) {
    close();
    throw err;
  }
}
