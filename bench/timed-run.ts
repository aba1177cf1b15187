// Run a program as a world user and note when each output line arrived, so the steps a variant
// announces can be laid over the link's connects and round trips.
import { spawn } from 'node:child_process';
import { userEnv, type WorldUser } from '../test/world/machines.js';

export interface TimedLine {
  at: number;
  stream: 'stdout' | 'stderr';
  text: string;
}

export interface TimedRun {
  code: number;
  startedAt: number;
  endedAt: number;
  lines: TimedLine[];
  stdout: string;
  stderr: string;
}

export function runTimed(user: WorldUser, argv: string[], opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<TimedRun> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    const lines: TimedLine[] = [];
    const all = { stdout: '', stderr: '' };
    const startedAt = Date.now();
    const child = spawn(file!, args, { uid: user.uid, gid: user.gid, cwd: opts.cwd ?? user.home, env: userEnv(user, opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
    for (const stream of ['stdout', 'stderr'] as const) {
      let partial = '';
      child[stream].on('data', (d: Buffer) => {
        const at = Date.now();
        const text = d.toString();
        all[stream] += text;
        const parts = (partial + text).split('\n');
        partial = parts.pop() ?? '';
        for (const t of parts) lines.push({ at, stream, text: t });
      });
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 180_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, startedAt, endedAt: Date.now(), lines, stdout: all.stdout, stderr: all.stderr });
    });
  });
}
