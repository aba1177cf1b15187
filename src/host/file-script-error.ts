// What a failed file helper script (cat, mv, rm, touch on the remote) means for the caller.
import { HostError } from '../errors.js';

/** The helper scripts exit with this when the file is not there. */
export const NOT_FOUND_EXIT = 66;

export function fileScriptError(label: string, op: string, p: string, stderr: Buffer | string, exitCode?: number): HostError {
  const msg = stderr.toString().trim();
  if (exitCode === NOT_FOUND_EXIT || /No such file|nonexistent|not found/i.test(msg)) {
    return new HostError('not_found', `No such file or folder on ${label}: ${p}`);
  }
  return new HostError('io_failed', `${op} ${p} on ${label} failed${msg ? `: ${msg}` : ''}.`);
}
