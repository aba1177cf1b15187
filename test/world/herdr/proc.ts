// Linux /proc reading: the terminal foreground process group of a pane's shell and its members.
import * as fs from 'node:fs';

export interface ProcEntry {
  pid: number;
  ppid: number;
  pgrp: number;
  tpgid: number;
  comm: string;
  /**
   * Minor faults of the children this process has waited for (cminflt). It grows whenever the
   * process reaps a child, however short-lived: how a shell's "it ran something that ended" shows.
   */
  reapedFaults: number;
}

/** Parse /proc/<pid>/stat; fields after the last ')' because comm may contain spaces and parens. */
export function readStat(pid: number): ProcEntry | null {
  let text: string;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < 0) return null;
  const rest = text.slice(close + 2).split(' ');
  // rest: state ppid pgrp session tty_nr tpgid flags minflt cminflt …
  return { pid, comm: text.slice(open + 1, close), ppid: Number(rest[1]), pgrp: Number(rest[2]), tpgid: Number(rest[5]), reapedFaults: Number(rest[8]) };
}

export function processTable(): Map<number, ProcEntry> {
  const table = new Map<number, ProcEntry>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const e = readStat(Number(name));
    if (e) table.set(e.pid, e);
  }
  return table;
}

export function readArgv(pid: number): string[] | null {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    const parts = raw.split('\0');
    if (parts[parts.length - 1] === '') parts.pop();
    return parts;
  } catch {
    return null;
  }
}

export function readCwd(pid: number): string | null {
  try {
    return fs.readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

export function readEnvVar(pid: number, name: string): string | undefined {
  try {
    const prefix = `${name}=`;
    const hit = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').find((e) => e.startsWith(prefix));
    return hit?.slice(prefix.length);
  } catch {
    return undefined;
  }
}

export interface ForegroundProcess {
  pid: number;
  name: string;
  argv?: string[];
  cmdline?: string;
  cwd?: string;
}

export interface Foreground {
  shellPid: number;
  pgid: number | null;
  /** Leader first, then by pid. Only processes of the pane's own tree. */
  members: ForegroundProcess[];
}

function inTree(pid: number, root: number, table: Map<number, ProcEntry>): boolean {
  let cur: number | undefined = pid;
  for (let hops = 0; cur !== undefined && cur > 1 && hops < 64; hops++) {
    if (cur === root) return true;
    cur = table.get(cur)?.ppid;
  }
  return false;
}

export function describe(pid: number, comm: string): ForegroundProcess {
  const p: ForegroundProcess = { pid, name: comm };
  const argv = readArgv(pid);
  if (argv && argv.length > 0) {
    p.argv = argv;
    p.cmdline = argv.join(' ');
  }
  const cwd = readCwd(pid);
  if (cwd) p.cwd = cwd;
  return p;
}

/** The shell's terminal foreground group (tpgid, field 8) and its members within the pane's tree. */
export function foregroundOf(shellPid: number, table: Map<number, ProcEntry> = processTable()): Foreground {
  const shell = table.get(shellPid) ?? readStat(shellPid);
  if (!shell || shell.tpgid <= 0) return { shellPid, pgid: null, members: [] };
  const pgid = shell.tpgid;
  const pids = [...table.values()].filter((e) => e.pgrp === pgid && inTree(e.pid, shellPid, table)).map((e) => e.pid);
  if (pgid === shellPid && !pids.includes(shellPid)) pids.push(shellPid);
  pids.sort((a, b) => (a === pgid ? -1 : b === pgid ? 1 : a - b));
  const members = pids.map((pid) => describe(pid, table.get(pid)?.comm ?? '?'));
  return { shellPid, pgid, members };
}
