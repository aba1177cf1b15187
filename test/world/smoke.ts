// The world's smoke scenario: prove both machines, ssh between them and the herdr simulators work.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { World } from './machines.js';
import { runAsSync } from './machines.js';

export async function runSmoke(world: World): Promise<number> {
  const laptop = world.users.laptop!;
  const steps: { step: string; ok: boolean; detail: string }[] = [];
  const ssh = runAsSync(laptop, ['ssh', '-o', 'BatchMode=yes', 'vega', 'sh -lc \'echo "$(whoami) $(command -v herdr)"\'']);
  steps.push({ step: 'laptop → vega over ssh (host key checked)', ok: ssh.status === 0, detail: (ssh.stdout || ssh.stderr).trim() });
  const herdr = runAsSync(laptop, ['ssh', '-o', 'BatchMode=yes', 'vega', "sh -lc 'herdr status server --json'"]);
  steps.push({ step: 'herdr simulator running on vega', ok: herdr.status === 0 && herdr.stdout.includes('"running":true'), detail: herdr.stdout.trim() });
  const git = spawnSync('git', ['-C', world.repos.vega, 'log', '--oneline', '-1'], { encoding: 'utf8' });
  steps.push({ step: `vega checkout at ${world.repos.vega}`, ok: git.status === 0 || git.stderr.includes('dubious'), detail: path.basename(world.repos.vega) });
  for (const s of steps) process.stdout.write(`${s.ok ? 'ok  ' : 'FAIL'} ${s.step}: ${s.detail}\n`);
  return steps.every((s) => s.ok) ? 0 : 1;
}
