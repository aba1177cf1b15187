// Test hooks of the simulator: the call log every CLI run appends to, and injected failures.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { faultsPath } from './paths.js';

export interface CallRecord {
  /** Epoch ms when the call finished. */
  t: number;
  argv: string[];
  exit: number;
}

export interface Fault {
  /** Leading command words, e.g. "workspace create" or "agent start". */
  command: string;
  code: string;
  message: string;
  /** How many matching calls fail (default 1). */
  times?: number;
}

/** Calls logged in `<configDir>/herdr-sim-calls.jsonl` (or the file given). */
export function readCallLog(configDirOrFile: string): CallRecord[] {
  const file = configDirOrFile.endsWith('.jsonl') ? configDirOrFile : path.join(configDirOrFile, 'herdr-sim-calls.jsonl');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as CallRecord);
}

/** Make the next `times` calls of `command` fail with `code`/`message` (exit 1). */
export function injectFault(configDir: string, fault: Fault): void {
  fs.mkdirSync(configDir, { recursive: true });
  const file = faultsPath(configDir);
  const list = readFaults(file);
  list.push({ times: 1, ...fault });
  fs.writeFileSync(file, JSON.stringify(list));
}

export function clearFaults(configDir: string): void {
  fs.rmSync(faultsPath(configDir), { force: true });
}

export function readFaults(file: string): Fault[] {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
    return Array.isArray(v) ? (v as Fault[]) : [];
  } catch {
    return [];
  }
}

/** Take the first matching fault (decrementing it) under a mkdir lock; null when none applies. */
export function takeFault(configDir: string, words: readonly string[]): Fault | null {
  const file = faultsPath(configDir);
  if (!fs.existsSync(file)) return null;
  const lock = `${file}.lock`;
  const until = Date.now() + 2000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > until) fs.rmSync(lock, { recursive: true, force: true });
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
  try {
    const list = readFaults(file);
    const i = list.findIndex((f) => {
      const want = f.command.trim().split(/\s+/);
      return (f.times ?? 1) > 0 && want.every((w, k) => words[k] === w);
    });
    const hit = list[i];
    if (!hit) return null;
    hit.times = (hit.times ?? 1) - 1;
    const rest = list.filter((f) => (f.times ?? 1) > 0);
    // No fault left: no file, so the world's herdr gate goes straight to herdr again (a file,
    // even an empty list, makes every herdr call start the node gate first).
    if (rest.length === 0) fs.rmSync(file, { force: true });
    else {
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(rest));
      fs.renameSync(tmp, file);
    }
    return hit;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** Write an executable `herdr` launcher (like the world's bin/herdr) that runs the compiled CLI. */
export function writeLauncher(file: string, cliJs: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const body = `#!/usr/bin/env node\n// herdr simulator launcher\nimport(${JSON.stringify(cliJs)}).then(async (m) => { process.exitCode = await m.main(process.argv.slice(2)); });\n`;
  fs.writeFileSync(file, body, { mode: 0o755 });
}
