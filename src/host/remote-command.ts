// Shell-agnostic remote command encoding.
//
// sshd runs every exec request as `$LOGIN_SHELL -c <command string>`, and the login shell may be
// sh, bash, zsh, fish, tcsh… whose quoting rules disagree. So the command string we send means
// the same thing in every one of those shells, and starts /bin/sh with our program (the
// "header", written for POSIX sh only) in one of two ways:
//   - carried (execCommandCarrying): the header is a printf format in single quotes, made of
//     characters every login shell keeps there; /bin/sh evals what printf makes of it. The
//     program starts with the exec request. Only for headers without a caller's own variables:
//     a command line is visible to other users (ps), a process's environment is not, and of the
//     environment only the login one, which is paths (LOGIN_ENV_VARS), may be seen there.
//   - on stdin (EXEC_COMMAND): one fixed text whose /bin/sh reads ONE line from stdin and evals
//     it; `read` consumes exactly that line (shells read a pipe byte by byte), so the program's
//     real stdin follows unchanged. The program starts a round trip later: sshd widens a session
//     channel's window for stdin only once its program runs.
//
// In the header a value is a bare word when nothing in it needs quoting, else single-quoted for
// sh ('…'\''…'). A value containing a newline would break the one-line rule, so there such values
// are written as printf octal escapes instead: `v=$(printf '\101\012x'); v=${v%x}` (the trailing x
// keeps trailing newlines); a carried header keeps them inside the quotes.
import { HostError } from '../errors.js';

/** The exec request string for a header sent first on stdin; identical for every login shell. */
export const EXEC_COMMAND = `exec /bin/sh -c 'IFS= read -r h && eval "$h"'`;

/** Longest exec request that carries its header (one argument to the login shell; Linux caps one at 128 KiB). */
const CARRYING_MAX = 32 * 1024;

/**
 * The exec request string that carries `header` itself, identical for every login shell, or
 * null when it would be too long. The program then starts with the request, a round trip sooner
 * than a header on stdin: sshd opens a session channel with an empty window and widens it only
 * once the program runs. Not for headers that export a caller's own variables (see above).
 */
export function execCommandCarrying(header: string): string | null {
  const format = printfOctalBytes(Buffer.from(header, 'utf8'), { anyShell: true });
  const command = `exec /bin/sh -c 'eval "$(printf "$1")"' sh '${format}'`;
  return command.length <= CARRYING_MAX ? command : null;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Exit code when the requested working folder cannot be entered (as LocalHost). */
export const CWD_MISSING_EXIT = 126;

function assertNoNul(value: string, what: string): void {
  if (value.includes('\0')) throw new HostError('bad_command', `${what} contains a NUL byte, which no program can receive.`);
}

/** POSIX sh single-quoted word (it may span lines; the header's one line needs `assign` for those). */
export function singleQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** Characters a word may hold unquoted: sh gives none of them a meaning there, in an assignment neither. */
const BARE_WORD = /^[A-Za-z0-9_/.,:=+@-]+$/;

/** What `text` costs in a carried header: its length once escaped as execCommandCarrying escapes it. */
function carriedCost(text: string): number {
  return printfOctalBytes(Buffer.from(text, 'utf8'), { anyShell: true }).length;
}

/**
 * One sh word holding `value`: bare when nothing in it needs quoting, else single-quoted; in a
 * header carried in the exec request, double-quoted when that costs less there (each single
 * quote inside costs 16 bytes carried, as `'\''` escaped; a `$` in double quotes 5).
 */
function shellWord(value: string, carried: boolean): string {
  if (BARE_WORD.test(value)) return value;
  const single = singleQuote(value);
  if (!carried || !value.includes("'")) return single;
  const double = `"${value.replace(/[$`"\\]/g, '\\$&')}"`;
  return carriedCost(double) < carriedCost(single) ? double : single;
}

/** An argument cut at the named folders: literal text, or the index of the folder named there. */
type Piece = string | number;

/** A folder named in a header: a path ending in `/`, or one that continues an earlier named folder (`base`). */
interface NamedFolder {
  base: number | null;
  text: string;
}

/** The variables that hold the named folders, in the order they are chosen. */
const FOLDER_VARS = ['_p', '_q', '_r', '_s'] as const;

/** `pieces` with each occurrence of `folder` (named `index`) cut out and named; `pieces` itself when it has none. */
function cutAt(pieces: readonly Piece[], folder: NamedFolder, index: number): readonly Piece[] {
  const out: Piece[] = [];
  let cut = false;
  for (const [k, piece] of pieces.entries()) {
    if (typeof piece === 'number') {
      out.push(piece);
      continue;
    }
    let text = piece;
    if (folder.base !== null && pieces[k - 1] === folder.base && text.startsWith(folder.text)) {
      out[out.length - 1] = index;
      text = text.slice(folder.text.length);
      cut = true;
    }
    if (folder.base === null && text.includes(folder.text)) {
      for (const [i, part] of text.split(folder.text).entries()) {
        if (i > 0) out.push(index);
        if (part !== '') out.push(part);
      }
      cut = true;
    } else if (text !== '') {
      out.push(text);
    }
  }
  return cut ? out : pieces;
}

/** One sh word from an argument's pieces, each named folder as `"$_x"` (which holds it). */
function wordOfPieces(pieces: readonly Piece[], carried: boolean): string {
  if (pieces.length === 0) return "''";
  return pieces.map((piece) => (typeof piece === 'number' ? `"$${FOLDER_VARS[piece]}"` : shellWord(piece, carried))).join('');
}

/** The statement that names folder `index` (one line unless `keepLineEnds`). */
function nameFolder(folder: NamedFolder, index: number, keepLineEnds: boolean): string {
  const name = FOLDER_VARS[index]!;
  return folder.base === null ? assign(name, folder.text, keepLineEnds) : `${name}="$${FOLDER_VARS[folder.base]}"${shellWord(folder.text, keepLineEnds)}`;
}

/** Shortest folder path worth naming once in a header. */
const SHARED_FOLDER_MIN = 16;

/**
 * The folder that occurs most profitably in the literal pieces, or null. Candidates start where
 * an absolute path starts in a piece, or where a piece continues a named folder, and end at one
 * of the piece's slashes; each is counted in one pass. Each use saves the folder less `"$_p"`
 * and a quote pair around it; naming it costs the folder once more.
 */
function likeliestFolder(args: readonly (readonly Piece[])[]): NamedFolder | null {
  const seen = new Map<string, { folder: NamedFolder; n: number }>();
  const count = (folder: NamedFolder): void => {
    const key = `${folder.base ?? '-'}\0${folder.text}`;
    const was = seen.get(key);
    if (was) was.n++;
    else seen.set(key, { folder, n: 1 });
  };
  for (const pieces of args) {
    for (const [k, text] of pieces.entries()) {
      if (typeof text === 'number') continue;
      const before = pieces[k - 1];
      if (typeof before === 'number') {
        for (let j = text.indexOf('/'); j !== -1 && !/[\n\r]/.test(text.slice(0, j)); j = text.indexOf('/', j + 1)) count({ base: before, text: text.slice(0, j + 1) });
      }
      for (let i = text.indexOf('/'); i !== -1; i = text.indexOf('/', i + 1)) {
        if (i > 0 && /[^\s"'=:]/.test(text[i - 1]!)) continue;
        for (let j = text.indexOf('/', i + SHARED_FOLDER_MIN - 1); j !== -1; j = text.indexOf('/', j + 1)) {
          const folder = text.slice(i, j + 1);
          if (/[\n\r]/.test(folder)) break;
          count({ base: null, text: folder });
        }
      }
    }
  }
  let likeliest: NamedFolder | null = null;
  let most = 0;
  for (const { folder, n } of seen.values()) {
    const saved = n * (folder.text.length - 7) - (folder.text.length + 8);
    if (saved > most) [likeliest, most] = [folder, saved];
  }
  return likeliest;
}

/**
 * Up to four folders to name once each in a header, chosen one after another while each
 * shortens it; a later one may continue an earlier one. Session files, their ledger entries and
 * checks name the same long folders over and over (grok's sixteen files, each under a
 * percent-encoded copy of the repo's path, for two candidate checkouts). Arguments with a line
 * end are left whole: they are programs, not paths (and on a one-line header they go through a
 * variable of their own). Only the arguments a folder cuts are measured again: the look's header
 * is built on the critical path, and measuring every program's text for each folder took most
 * of its 10 ms in a cold process.
 */
function namedFolders(argv: readonly string[], oneLine: boolean): { folders: NamedFolder[]; pieces: (readonly Piece[])[] } {
  const open = argv.map((a) => !/[\n\r]/.test(a));
  let pieces: (readonly Piece[])[] = argv.map((a) => (a === '' ? [] : [a]));
  const length = (p: readonly Piece[]): number => wordOfPieces(p, !oneLine).length;
  let lengths = pieces.map((p, i) => (open[i] ? length(p) : 0));
  const folders: NamedFolder[] = [];
  while (folders.length < FOLDER_VARS.length) {
    const folder = likeliestFolder(pieces.filter((_, i) => open[i]));
    if (!folder) break;
    // What naming it costs, then what each argument it cuts saves.
    let change = nameFolder(folder, folders.length, !oneLine).length + 2;
    const cutPieces = [...pieces];
    const cutLengths = [...lengths];
    for (const [i, p] of pieces.entries()) {
      if (!open[i]) continue;
      const cut = cutAt(p, folder, folders.length);
      if (cut === p) continue;
      cutPieces[i] = cut;
      cutLengths[i] = length(cut);
      change += cutLengths[i]! - lengths[i]!;
    }
    if (change >= 0) break;
    pieces = cutPieces;
    lengths = cutLengths;
    folders.push(folder);
  }
  return { folders, pieces };
}

/** printf format that reproduces `value`'s bytes exactly (see printfOctalBytes). */
export function printfOctal(value: string): string {
  return printfOctalBytes(Buffer.from(value, 'utf8'));
}

/**
 * printf format, for inside single quotes on the one header line, that reproduces these bytes
 * exactly. Printable ASCII stays as it is (what the header sends is mostly sh programs and JSON:
 * escaping all of it made it two to three times longer); escaped are the quote, backslash (`\\`),
 * percent (`%%`), line ends, other control bytes and bytes above 127 (the line is sent as UTF-8),
 * and a leading dash (bash's printf would take it for an option). `anyShell`: for inside single
 * quotes that any login shell parses, so also what fish reads there (a backslash: octal instead)
 * and csh (`!`).
 */
export function printfOctalBytes(bytes: Buffer, opts: { anyShell?: boolean } = {}): string {
  // One character per byte, and one regular expression for what needs escaping: a loop over the
  // bytes cost the look's header (4 KB, escaped several times over) milliseconds in a cold process.
  const text = bytes.toString('latin1');
  return text.replace(opts.anyShell ? ESCAPED_ANY_SHELL : ESCAPED, (ch, at: number) => {
    if (ch === '%') return '%%';
    if (ch === '\\' && !opts.anyShell) return '\\\\';
    const next = at + 1 < text.length ? text.charCodeAt(at + 1) : undefined;
    return `\\${octalEscapeDigits(ch.charCodeAt(0), next)}`;
  });
}

/** What printfOctalBytes escapes: a leading dash, the quote, backslash, percent, and every byte outside printable ASCII. */
const ESCAPED = /^-|[^\x20-\x7e]|[%'\\]/g;
/** The same, and `!` (csh). */
const ESCAPED_ANY_SHELL = /^-|[^\x20-\x7e]|[%'\\!]/g;

/**
 * The octal digits of an escape: as few as the value needs (printf reads one to three), all three
 * when a digit follows, which printf would otherwise read as part of the escape.
 */
function octalEscapeDigits(byte: number, next: number | undefined): string {
  const digits = byte.toString(8);
  return next !== undefined && next >= 0x30 && next <= 0x39 ? digits.padStart(3, '0') : digits;
}

/**
 * Statements that leave `value` in shell variable `name`.
 * One line whatever `value` holds; no fork unless the value has a newline.
 */
function assign(name: string, value: string, keepLineEnds = false): string {
  if (keepLineEnds || !/[\n\r]/.test(value)) return `${name}=${shellWord(value, keepLineEnds)}`;
  return `${name}=$(printf '${printfOctal(value)}x'); ${name}=\${${name}%x}`;
}

export interface HeaderSpec {
  argv: readonly string[];
  /**
   * Printed on stdout just before exec. Shell start-up files that sshd's `$SHELL -c` reads
   * (.bashrc, .zshenv, config.fish) may print; everything before the mark is theirs.
   */
  startMark?: string;
  /** The host's login environment, exported before `env` (a command shell exports it once: see exportsLine). */
  baseEnv?: Record<string, string>;
  /** Exported before exec; wins over `baseEnv`. */
  env?: Record<string, string>;
  cwd?: string;
}

/**
 * The one-line POSIX sh script that sets the environment, enters `cwd` and execs `argv`.
 * argv[0] is looked up in the PATH the header exports (or the remote default PATH).
 * `oneLine: false`: values keep their line ends inside their quotes, for a header carried in the
 * exec request (execCommandCarrying escapes a line end once; a one-line header escapes it twice).
 */
export function buildHeader(spec: HeaderSpec, opts: { oneLine?: boolean } = {}): string {
  const oneLine = opts.oneLine !== false;
  const [file] = spec.argv;
  if (file === undefined || file === '') throw new HostError('bad_command', 'Empty command line.');
  const parts: string[] = [];
  const exported = exportsLine({ ...spec.baseEnv, ...spec.env }, [], !oneLine);
  if (exported) parts.push(exported);
  if (spec.cwd !== undefined) {
    assertNoNul(spec.cwd, 'The working folder');
    // CDPATH could redirect a relative cd and make it print; `--` keeps a leading dash a path.
    parts.push(`unset CDPATH; ${assign('_ah', spec.cwd, !oneLine)}`);
    parts.push(`cd -- "$_ah" 2>/dev/null || { printf 'cannot change to folder: %s\\n' "$_ah" >&2; exit ${CWD_MISSING_EXIT}; }`);
  }
  // Arguments on one line go as single-quoted words, several to a `set`; one with a line end
  // goes through a variable (assign). A folder that several arguments repeat is named once.
  for (const arg of spec.argv) assertNoNul(arg, 'An argument');
  const { folders, pieces } = namedFolders(spec.argv, oneLine);
  for (const [i, folder] of folders.entries()) parts.push(nameFolder(folder, i, !oneLine));
  parts.push('set --');
  let words: string[] = [];
  const setWords = (): void => {
    if (words.length > 0) parts.push(`set -- "$@" ${words.join(' ')}`);
    words = [];
  };
  for (const [i, arg] of spec.argv.entries()) {
    if (!oneLine || !/[\n\r]/.test(arg)) {
      words.push(wordOfPieces(pieces[i]!, !oneLine));
      continue;
    }
    setWords();
    parts.push(`${assign('_ah', arg)}; set -- "$@" "$_ah"`);
  }
  setWords();
  if (spec.startMark !== undefined) {
    if (!/^[A-Za-z0-9]+$/.test(spec.startMark)) throw new Error('internal: start mark must be alphanumeric');
    parts.push(`printf '%s' ${spec.startMark}`);
  }
  parts.push(`unset _ah ${FOLDER_VARS.join(' ')} h; exec "$@"`);
  const header = parts.join('; ');
  if (oneLine && (header.includes('\n') || header.includes('\r'))) throw new Error('internal: header must be one line');
  return header;
}

/** Statements that export each variable of `env` (empty for none), on one line. */
export function exportsLine(env: Record<string, string>, unset: readonly string[] = [], keepLineEnds = false): string {
  const parts: string[] = [];
  for (const name of unset) {
    if (!ENV_NAME.test(name)) throw new HostError('bad_command', `Not a valid environment variable name: ${JSON.stringify(name)}`);
    parts.push(`unset ${name}`);
  }
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME.test(name)) throw new HostError('bad_command', `Not a valid environment variable name: ${JSON.stringify(name)}`);
    assertNoNul(value, `Environment variable ${name}`);
    parts.push(`${assign(name, value, keepLineEnds)}; export ${name}`);
  }
  return parts.join('; ');
}

/**
 * Finds the start mark in a stdout stream and passes on only what follows it, in constant
 * memory (it keeps at most mark.length - 1 bytes while searching).
 */
export class StartMarkFilter {
  private readonly mark: Buffer;
  private tail = Buffer.alloc(0);
  found = false;

  constructor(mark: string) {
    this.mark = Buffer.from(mark, 'latin1');
  }

  /** Bytes of the program's stdout in `chunk` (empty while the mark has not been seen). */
  feed(chunk: Buffer): Buffer {
    if (this.found) return chunk;
    const buf = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    const i = buf.indexOf(this.mark);
    if (i < 0) {
      this.tail = Buffer.from(buf.subarray(Math.max(0, buf.length - (this.mark.length - 1))));
      return Buffer.alloc(0);
    }
    this.found = true;
    this.tail = Buffer.alloc(0);
    return buf.subarray(i + this.mark.length);
  }
}
