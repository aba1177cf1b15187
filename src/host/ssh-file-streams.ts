// File contents over the connection: streams and small files through `cat` on an exec channel
// (pipelined by the 2 MB channel window, so they stay fast over real latency and use constant
// memory), optionally gzip-compressed when the remote has the compressor.
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import type { HostError } from '../errors.js';
import { fileScriptError } from './file-script-error.js';
import { parseReadFiles, READ_FILES_SCRIPT } from './read-files.js';
import { GzipBlocks } from './gzip-blocks.js';
import type { ByteRange, ReadOptions, WriteOptions } from './host.js';
import { StartMarkFilter } from './remote-command.js';
import { exitStatusOf } from './ssh-channel-end.js';
import type { ExecRunner } from './ssh-exec.js';
import type { SshLink } from './ssh-link.js';
import { SHELL_STDIN_MAX } from './ssh-shell.js';

// Scripts run by /bin/sh through the header with positional arguments, never interpolated.
// The start mark ("$2" / "$3") goes out once the file is open: what follows is the file. File
// streams may cross compressed: given a compressor (gzip's flags) that the remote has, the mark
// is followed by `z` and the bytes are its stream; else by `-` and the plain bytes.
const HAS_Z = '[ -n "$z" ] && command -v "$z" >/dev/null 2>&1';
/** $1 file, $2 mark, $3 compressor ('' = none). */
const READ_SCRIPT = `[ -e "$1" ] || exit 66; exec 3<"$1" || exit 67; z=$3; if ${HAS_Z}; then printf %sz "$2"; exec "$z" -1 -c <&3 3<&-; fi; printf %s- "$2"; exec cat <&3 3<&-`;
/** READ_SCRIPT for part of the file: $3 the first byte (1-based, for tail), $4 how many ('' = to the end), $5 compressor. */
const READ_RANGE_SCRIPT = [
  '[ -e "$1" ] || exit 66; exec 3<"$1" || exit 67; z=$5',
  `if ${HAS_Z}; then printf %sz "$2"; out() { "$z" -1 -c; }; else z=; printf %s- "$2"; out() { cat; }; fi`,
  'if [ -z "$4" ]; then tail -c "+$3" <&3 3<&- | out; else tail -c "+$3" <&3 3<&- | head -c "$4" | out; fi',
].join('\n');
/** $1 file, $2 mode, $3 mark, $4 compressor. */
const WRITE_SCRIPT = `umask 077; : >"$1" || exit 67; chmod -- "$2" "$1" || exit 67; z=$4; if ${HAS_Z}; then printf %sz "$3"; exec "$z" -dc >"$1"; fi; printf %s- "$3"; exec cat >"$1"`;
/** readFile: too big for one answer, or not a regular file: stream it instead. */
const CAT_FALLBACK_EXIT = 65;
const CAT_SCRIPT = `[ -e "$1" ] || exit 66; [ -f "$1" ] || exit 65; [ "$(wc -c <"$1")" -le ${8 * 1024 * 1024} ] || exit 65; exec cat -- "$1"`;
const SMALL_WRITE_SCRIPT = 'umask 077; : >"$1" || exit 67; chmod -- "$2" "$1" || exit 67; exec cat >"$1"';

export class FileStreams {
  /** `compressor`: the remote program for `compress` (gzip's flags); '' = never compress. */
  constructor(
    private readonly link: SshLink,
    private readonly exec: ExecRunner,
    private readonly compressor: string,
    private readonly commandTimeoutMs: number,
  ) {}

  async readStream(p: string, range?: ByteRange, opts: ReadOptions = {}): Promise<Readable> {
    const mark = this.exec.mark;
    const z = opts.compress ? this.compressor : '';
    const argv = range ? ['/bin/sh', '-c', READ_RANGE_SCRIPT, 'sh', p, mark, String(range.start + 1), range.length === undefined ? '' : String(range.length), z] : ['/bin/sh', '-c', READ_SCRIPT, 'sh', p, mark, z];
    const ch = await this.link.openExec({ argv });
    ch.end();
    return new Promise<Readable>((resolve, reject) => {
      const errOut: Buffer[] = [];
      let started = false;
      const pass = new PassThrough();
      ch.stderr.on('data', (d: Buffer) => errOut.push(d));
      const onLost = (e: HostError): void => {
        if (started) pass.destroy(e);
        else reject(e);
      };
      this.link.onLost.add(onLost);
      const filter = new StartMarkFilter(mark);
      // Compressed (`z` after the mark): gunzip here; it ends when the channel does, and the
      // stream after it once the exit status says the whole file was read.
      let gunzip: Gunzip | undefined;
      let gunzipEnded = false;
      const onData = (d: Buffer): void => {
        let rest = filter.feed(d);
        if (started || !filter.found || rest.length === 0) return;
        const flag = rest[0];
        rest = rest.subarray(1);
        started = true;
        ch.removeListener('data', onData);
        if (flag === 0x7a) {
          gunzip = createGunzip();
          gunzip.on('end', () => (gunzipEnded = true));
          gunzip.on('error', (err) => pass.destroy(this.error('Reading', p, `corrupt compressed stream: ${err.message}`)));
          gunzip.pipe(pass, { end: false });
        }
        const sink = gunzip ?? pass;
        if (rest.length) sink.write(rest);
        ch.pipe(sink, { end: sink === gunzip });
        resolve(pass);
      };
      ch.on('data', onData);
      // A consumer that stops early must not leave the channel (and its slot) open.
      pass.on('close', () => {
        gunzip?.destroy();
        ch.close();
      });
      ch.on('close', () => {
        this.link.onLost.delete(onLost);
        const exitCode = exitStatusOf(ch);
        if (!started) {
          reject(this.link.lost ?? this.error('Reading', p, Buffer.concat(errOut), exitCode));
          return;
        }
        if (exitCode !== 0) pass.destroy(this.link.lost ?? this.error('Reading', p, Buffer.concat(errOut), exitCode));
        else if (!gunzip || gunzipEnded) pass.end();
        else gunzip.once('end', () => pass.end());
      });
    });
  }

  async readFile(p: string): Promise<Buffer> {
    // Small files: one round trip on a command shell.
    const r = await this.exec.script(CAT_SCRIPT, [p], 'cat');
    if (r.exitCode === 0) return r.stdout;
    if (r.exitCode !== CAT_FALLBACK_EXIT) throw this.error('Reading', p, r.stderr, r.exitCode);
    const chunks: Buffer[] = [];
    for await (const chunk of await this.readStream(p)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  /** One program for them all (read-files.ts); what it cannot frame is left to readStream. */
  async readFiles(paths: readonly string[], maxEach: number): Promise<Map<string, Buffer>> {
    if (paths.length === 0) return new Map();
    const r = await this.exec.script(READ_FILES_SCRIPT, [String(maxEach), this.compressor, ...paths], 'read files');
    if (r.exitCode !== 0) return new Map();
    try {
      return parseReadFiles(r.stdout, paths, maxEach);
    } catch {
      return new Map();
    }
  }

  async writeStream(p: string, opts: WriteOptions = {}): Promise<{ stream: Writable; done: Promise<void> }> {
    const mark = this.exec.mark;
    const mode = (opts.mode ?? 0o600).toString(8);
    const ch = await this.link.openExec({ argv: ['/bin/sh', '-c', WRITE_SCRIPT, 'sh', p, mode, mark, opts.compress ? this.compressor : ''] });
    const errOut: Buffer[] = [];
    let ready = false;
    ch.stderr.on('data', (d: Buffer) => errOut.push(d));
    let onLost: (e: HostError) => void = () => undefined;
    const done = new Promise<void>((resolve, reject) => {
      onLost = reject;
      this.link.onLost.add(onLost);
      ch.on('error', reject);
      ch.on('close', () => {
        this.link.onLost.delete(onLost);
        const exitCode = exitStatusOf(ch);
        if (this.link.lost && exitCode === undefined) reject(this.link.lost);
        else if (exitCode === 0 && ready) resolve();
        else reject(this.error('Writing', p, Buffer.concat(errOut), exitCode));
      });
    });
    // Wait for the file to be open (the mark), so a missing folder fails here, as it does locally;
    // the byte after it says whether the remote decompresses (`z`).
    const filter = new StartMarkFilter(mark);
    const compressed = await new Promise<boolean>((resolve, reject) => {
      ch.on('data', (d: Buffer) => {
        const rest = filter.feed(d);
        if (!ready && filter.found && rest.length > 0) {
          ready = true;
          resolve(rest[0] === 0x7a);
        }
      });
      done.then(() => reject(this.error('Writing', p, '')), reject);
    });
    // The caller writes into a stream of ours, not the channel: ssh2 never calls back a write
    // that waits for window on a channel that is gone (no 'drain', no error), so a writer held by
    // backpressure would hang. Once `done` fails, this stream fails with the same error.
    const sink: Writable = compressed ? new GzipBlocks() : new PassThrough();
    sink.pipe(ch);
    // Reported by `done`; a writer not waiting on the stream just then must not crash on it.
    sink.on('error', () => undefined);
    done.catch((err: unknown) => sink.destroy(err instanceof Error ? err : new Error(String(err))));
    // Stopped before its end (an abort): the remote sees a cut stream (compressed: it fails, and
    // `done` says so).
    sink.on('close', () => {
      if (!sink.writableFinished) ch.destroy();
    });
    return { stream: sink, done };
  }

  async writeFile(p: string, data: string | Buffer, opts: WriteOptions = {}): Promise<void> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (bytes.length <= SHELL_STDIN_MAX) {
      const r = await this.exec.header({ argv: ['/bin/sh', '-c', SMALL_WRITE_SCRIPT, 'sh', p, (opts.mode ?? 0o600).toString(8)] }, { stdin: bytes, timeoutMs: this.commandTimeoutMs, what: 'write' });
      if (r.exitCode !== 0) throw this.error('Writing', p, r.stderr, r.exitCode);
      return;
    }
    const { stream, done } = await this.writeStream(p, opts);
    stream.end(data);
    await done;
  }

  private error(op: string, p: string, stderr: Buffer | string, exitCode?: number): HostError {
    return fileScriptError(this.link.label, op, p, stderr, exitCode);
  }
}
