// Free space where a session unit will go on the target, and the agent's CLI on its login PATH:
// one program, asked in the plan's look (see target-look.ts) or on its own.
import type { UnitEntry } from '../../adapters/adapter.js';
import { HandoffError } from '../errors.js';
import { FIND_PROGRAM_FN } from '../host/find-program.js';
import type { RunResult } from '../host/host.js';
import type { SideProgram } from '../host/run-side-by-side.js';
import type { Side } from './sides.js';

export interface FreeSpace {
  /** The folder df looked at: the config root, or its nearest existing parent. */
  dir: string;
  /** Free KB there, or null when df could not tell. */
  availKb: number | null;
}

// $1 the config root; $2 a program to look for on the PATH, or '': then its path on a line (empty
// when not found). Then the root's nearest existing folder on a line (df needs one) and its df.
const FREE_SPACE_SCRIPT = [
  FIND_PROGRAM_FN,
  'd=$1; c=$2',
  'if [ -n "$c" ]; then find_program "$c" || echo; fi',
  'while [ ! -d "$d" ]; do d=${d%/*}; [ -n "$d" ] || d=/; done; printf "%s\\n" "$d"; exec df -Pk -- "$d"',
].join('\n');

/** Free space where the session unit will go. One program. */
export async function freeSpace(target: Pick<Side, 'host'>, configRoot: string): Promise<FreeSpace> {
  return (await freeSpaceAndProgram(target, configRoot, '')).free;
}

/** The program of freeSpaceAndProgram (its answer goes to spaceAndProgramOf). */
export function freeSpaceProgram(configRoot: string, program: string): SideProgram {
  return { argv: ['/bin/sh', '-c', FREE_SPACE_SCRIPT, 'sh', configRoot, program] };
}

/**
 * Free space where the session unit will go, and where `program` is on the login PATH (null: not
 * there), in one program: each process start counts on a slow target while the plan is made.
 */
export async function freeSpaceAndProgram(target: Pick<Side, 'host'>, configRoot: string, program: string): Promise<SpaceAndProgram> {
  return spaceAndProgramOf(await target.host.run(freeSpaceProgram(configRoot, program).argv), configRoot, program);
}

export interface SpaceAndProgram {
  free: FreeSpace;
  program: string | null;
}

/** FREE_SPACE_SCRIPT's answer. */
export function spaceAndProgramOf(r: RunResult, configRoot: string, program: string): SpaceAndProgram {
  const lines = r.stdout.split('\n');
  const found = program ? (lines.shift() ?? '') : '';
  const [dir = configRoot, ...rest] = lines;
  const fields = rest.join('\n').trim().split('\n').pop()?.trim().split(/\s+/) ?? [];
  const availKb = Number(fields[3]);
  return { free: { dir, availKb: r.exitCode === 0 && Number.isFinite(availKb) ? availKb : null }, program: found || null };
}

/** Enough free space for the session unit (with a margin)? */
export function requireSpace(target: Pick<Side, 'host'>, free: FreeSpace, unit: UnitEntry[]): void {
  const need = unit.reduce((n, e) => n + e.size, 0);
  if (free.availKb !== null && free.availKb * 1024 < need * 1.1 + 1024 * 1024) {
    throw new HandoffError('target_disk_full', `${target.host.label} has ${Math.round(free.availKb / 1024)} MB free under ${free.dir}; the session needs ${Math.ceil(need / 1024 / 1024)} MB.`, {
      fix: `Free some space on ${target.host.label}.`,
    });
  }
}

/** Enough free space on the target for the session unit (with a margin). */
export async function checkDisk(target: Pick<Side, 'host'>, configRoot: string, unit: UnitEntry[]): Promise<void> {
  requireSpace(target, await freeSpace(target, configRoot), unit);
}
