// The incoming marker: a small file on the target (`<state>/incoming/<id>.json`, 0600) that says a
// handoff from another controller is placing work here. It lives from before the first change on
// the target until the handoff ends, so `recover` run on the target (or anywhere that can read
// it) finds a handoff whose controller died, even though its journal is on another machine.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { FirstFile } from '../git/transfer.js';
import { stateDir } from './journal.js';

export const IncomingMarker = z.object({
  id: z.string(),
  controller: z.string(),
  pid: z.number().int(),
  from: z.string(),
  to: z.string(),
  agent: z.string(),
  kind: z.string(),
  started: z.string(),
  repo: z.string(),
  branch: z.string(),
  worktree: z.string(),
});
export type IncomingMarker = z.infer<typeof IncomingMarker>;

/** The state folder of a host from its home and login environment. */
export function hostStateDir(info: { home: string; loginEnv: Record<string, string | undefined> }): string {
  return stateDir({ HOME: info.home, ...(info.loginEnv.XDG_STATE_HOME ? { XDG_STATE_HOME: info.loginEnv.XDG_STATE_HOME } : {}) });
}

export function markerPath(dir: string, id: string): string {
  return `${dir}/incoming/${id}.json`;
}

/**
 * `user@host` of this process: the marker is read on the target, where "local" or a bare host name
 * (the same on two accounts of one machine) would not say where to run `recover`.
 */
export function controllerName(host = os.hostname()): string {
  if (host.includes('@')) return host;
  let user: string;
  try {
    user = os.userInfo().username;
  } catch {
    return host;
  }
  return `${user}@${host}`;
}

/**
 * Where the marker goes on the target and its text, one line of JSON (the transfer writes it
 * before anything else arrives). Written by the controller (this process), so "local" and the
 * controller are this account.
 */
export function markerWrite(dir: string, marker: IncomingMarker): FirstFile {
  const controller = controllerName(marker.controller);
  const named = { ...marker, controller, from: marker.from === 'local' ? controller : marker.from };
  return { dir: `${dir}/incoming`, file: markerPath(dir, marker.id), text: JSON.stringify(IncomingMarker.parse(named)) };
}

/** Markers on this machine (`recover` reports them: handoffs into here that never finished). */
export function localMarkers(dir: string): { file: string; marker: IncomingMarker | null }[] {
  const folder = path.join(dir, 'incoming');
  if (!fs.existsSync(folder)) return [];
  return fs
    .readdirSync(folder)
    .filter((f) => f.endsWith('.json'))
    .map((f) => {
      const file = path.join(folder, f);
      try {
        const parsed = IncomingMarker.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
        return { file, marker: parsed.success ? parsed.data : null };
      } catch {
        return { file, marker: null };
      }
    });
}
