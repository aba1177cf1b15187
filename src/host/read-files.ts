// Several small files read by one program (Host.readFiles over ssh): a session's dozen small
// files come back in one round trip on a command shell, where a stream each costs a channel's
// open, its exec request and its close. Each file is first copied (at most one byte more than
// allowed) into a private folder, so a frame's length is that of the bytes that follow it.
//
// Output: `z` (what follows is gzip's stream) or `-` (plain), then per path in order a line — the
// byte count, or `-` when the file is left out (missing, not regular, unreadable, too big) —
// and after a count, that many bytes.
import { gunzipSync } from 'node:zlib';

/** $1 most bytes per file, $2 compressor ('' = none), then the paths. */
export const READ_FILES_SCRIPT = [
  'umask 077',
  'max=$1; z=$2; shift 2',
  't=$(mktemp -d "${TMPDIR:-/tmp}/ah-read.XXXXXX") || exit 70',
  "trap 'rm -rf -- \"$t\"' EXIT",
  'frames() {',
  '  for f do',
  '    n=x',
  '    if [ -f "$f" ] && head -c "$((max + 1))" <"$f" >"$t/c" 2>/dev/null; then n=$(wc -c <"$t/c") || n=x; n=${n##* }; fi',
  '    case $n in',
  '      "" | *[!0-9]*) printf -- "-\\n" ;;',
  '      *) if [ "$n" -le "$max" ]; then printf "%s\\n" "$n"; cat -- "$t/c"; else printf -- "-\\n"; fi ;;',
  '    esac',
  '  done',
  '}',
  'if [ -n "$z" ] && command -v "$z" >/dev/null 2>&1; then printf z; frames "$@" | "$z" -1 -c; else printf -- -; frames "$@"; fi',
].join('\n');

/**
 * READ_FILES_SCRIPT's output → the files it sent, by path. Throws on output that does not frame
 * exactly (the caller then reads the files one by one).
 */
export function parseReadFiles(out: Buffer, paths: readonly string[], maxEach: number): Map<string, Buffer> {
  if (out.length === 0 || (out[0] !== 0x7a && out[0] !== 0x2d)) throw new Error('no frame flag');
  const body = out[0] === 0x7a ? gunzipSync(out.subarray(1)) : out.subarray(1);
  const files = new Map<string, Buffer>();
  let at = 0;
  for (const p of paths) {
    const nl = body.indexOf(0x0a, at);
    if (nl === -1) throw new Error('a frame without its line');
    const line = body.subarray(at, nl).toString('latin1');
    at = nl + 1;
    if (line === '-') continue;
    if (!/^\d+$/.test(line) || Number(line) > maxEach || at + Number(line) > body.length) throw new Error(`a bad frame length: ${JSON.stringify(line)}`);
    files.set(p, Buffer.from(body.subarray(at, at + Number(line))));
    at += Number(line);
  }
  if (at !== body.length) throw new Error('bytes after the last frame');
  return files;
}
