// The POSIX shells a sh program's table test runs under: dash and `bash --posix` where installed
// (busybox sh too, when present), and a way to run a program with its arguments as data.
import { execFileSync } from 'node:child_process';

function has(program: string): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v "$1"', 'sh', program]);
    return true;
  } catch {
    return false;
  }
}

export const POSIX_SHELLS: string[][] = [['dash'], ['bash', '--posix'], ['busybox', 'sh']].filter(([sh]) => has(sh!));

/** `shell -c program sh args…`: stdout as text. */
export function runUnder(shell: readonly string[], program: string, args: readonly string[]): string {
  return execFileSync(shell[0]!, [...shell.slice(1), '-c', program, 'sh', ...args], { encoding: 'utf8' });
}
