// A small private file on any host in one program (one round trip over ssh, where mkdir, write
// and rename through SFTP are four): written beside its place and renamed into it, so a reader
// sees the old text or the new, its folders made private when missing.
import type { Host } from '../host/host.js';

/** $1 the file; stdin its content. */
export const WRITE_PRIVATE = 'umask 077; mkdir -p -- "${1%/*}" && cat >"$1.tmp" && mv -f -- "$1.tmp" "$1" || { rm -f -- "$1.tmp"; exit 1; }';

/** Write `text` to `file` on `host` (mode 0600) atomically; rejects saying what when it cannot. */
export async function writePrivate(host: Host, file: string, text: string, what: string): Promise<void> {
  const r = await host.run(['/bin/sh', '-c', WRITE_PRIVATE, 'sh', file], { stdin: text });
  if (r.exitCode !== 0) throw new Error(`could not write ${what} (${file}) on ${host.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}`);
}
