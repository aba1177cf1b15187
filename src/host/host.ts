// The Host seam: everything a handoff step may do on one machine.
//
// Every step of a handoff is written against this interface, never against "this machine",
// so `--here` (local → local), plain `send` (local → ssh) and `--from` (ssh → local or ssh)
// run the same code. Two implementations pass the same contract tests: `LocalHost`
// (execa + node:fs) and `SshHost` (ssh2, one connection, every operation a channel on it).
// Nothing above `src/host/` imports ssh2 or knows which implementation it holds.
import type { Duplex, Readable, Writable } from 'node:stream';

export interface RunOptions {
  /** Absolute working directory. The program is not started if it does not exist (exit 126 with a message on stderr). */
  cwd?: string;
  /** Added to the host's login environment (see `HostInfo.loginEnv`); these win. */
  env?: Record<string, string>;
  /**
   * The login environment the caller takes the host to have, used in place of the one the host
   * learns (over ssh the program then does not wait for the login probe). For programs that only
   * read, sent before the host's facts are known; the caller keeps their answers only when
   * `info()` turns out to be what it took.
   */
  loginEnv?: Record<string, string>;
  /** Bytes for the program's stdin. Without it stdin is empty (EOF at once), never inherited. */
  stdin?: string | Buffer | Readable;
  /** When given, stdout is piped here instead of being collected; `RunResult.stdout` is then empty. */
  stdout?: Writable;
  /**
   * Bound on the whole run. On expiry the program is killed (local: process group; ssh: channel
   * closed and signalled) and `run` rejects with `HostError` code `command_timeout`.
   * Defaults to the host's per-command timeout.
   */
  timeoutMs?: number;
}

export interface RunResult {
  /** Exit code; a program killed by a signal reports 128 + signal number. */
  exitCode: number;
  stdout: string;
  stderr: string;
  durationMs: number;
}

export type FileType = 'file' | 'dir' | 'symlink' | 'other';

export interface FileStat {
  type: FileType;
  size: number;
  /** Permission bits only (e.g. 0o600). */
  mode: number;
  mtimeMs: number;
}

export interface DirEntry {
  name: string;
  type: FileType;
}

/** Agent config variables learned from the login environment (unset ones are absent). */
export const AGENT_CONFIG_VARS = ['CLAUDE_CONFIG_DIR', 'CODEX_HOME', 'PI_CODING_AGENT_DIR', 'GROK_HOME'] as const;

/**
 * Every variable `HostInfo.loginEnv` may carry (when set): PATH, HOME, the agent config
 * variables, where herdr's socket lives, XDG base folders and TMPDIR.
 */
export const LOGIN_ENV_VARS = [
  'PATH',
  'HOME',
  ...AGENT_CONFIG_VARS,
  'HERDR_SOCKET_PATH',
  'HERDR_SESSION',
  'XDG_CONFIG_HOME',
  'XDG_STATE_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_RUNTIME_DIR',
  'TMPDIR',
  // Where `discover` looks for checkouts (src/git/discover.ts), when the user sets it in a profile.
  'AGENT_HANDOFF_ROOTS',
] as const;

export interface HostInfo {
  home: string;
  user: string;
  hostname: string;
  /** `process.platform` spelling: 'linux', 'darwin', … */
  platform: string;
  /** The user's login shell (from the passwd entry or $SHELL). */
  shell: string;
  /** Temporary directory as the host's programs see it (TMPDIR, else /tmp), realpath'd. */
  tmpdir: string;
  /**
   * What an interactive login would see: PATH (login shell's, plus ~/.local/bin,
   * /opt/homebrew/bin, /usr/local/bin), HOME, and the other `LOGIN_ENV_VARS` when set.
   */
  loginEnv: Record<string, string>;
  /** The real path of `home` (links resolved), when the host told it with its facts; else ask `realpath`. */
  homeReal?: string;
}

export interface WriteOptions {
  /** Permission bits for a created file (default 0o600: session files are private). */
  mode?: number;
  /**
   * The bytes are worth compressing (text): a host across a link may send them compressed when
   * the other end can undo it (ssh: gzip there), else plain. The file gets exactly the bytes written.
   */
  compress?: boolean;
}

export interface ReadOptions {
  /** As WriteOptions.compress: the stream still yields the file's own bytes. */
  compress?: boolean;
}

/** Part of a file: from byte `start` (0-based), `length` bytes (absent: to the end). */
export interface ByteRange {
  start: number;
  length?: number;
}

/** A regular file found by Host.walk. */
export interface WalkedFile {
  path: string;
  stat: FileStat;
}

export interface Host {
  /**
   * True for the machine this process runs on: its panes can be the caller's own, and herdr there
   * needs no `--remote` to attach. (What a step may ask; never which implementation it holds.)
   */
  readonly isThisMachine: boolean;
  /**
   * True when opening a socket connection costs a round trip (forwarded over ssh), so a client
   * that will ask again opens its next connection ahead.
   */
  readonly socketsCostARoundTrip: boolean;
  /**
   * Human label for messages, progress and stash messages: 'local', or the target as the user
   * typed it (the ssh alias `vega`, `user@host`, `ssh://user@host:port`).
   */
  readonly label: string;
  /** Where it really is: 'local', or the resolved `user@host[:port]` (for details and records). */
  readonly address: string;

  /**
   * Run a program by argv — never through a shell on this side; on ssh the argv is encoded so
   * that no login shell (sh, bash, zsh, fish) and no character in it can change its meaning.
   * argv[0] is looked up in the login PATH. Resolves with the exit code whatever it is;
   * rejects only for transport failures and timeouts (`HostError`).
   */
  run(argv: readonly string[], opts?: RunOptions): Promise<RunResult>;

  /**
   * Stream a file's bytes (from byte `range.start`, at most `range.length` of them). Rejects with
   * `HostError` code `not_found` when it does not exist.
   */
  readStream(path: string, range?: ByteRange, opts?: ReadOptions): Promise<Readable>;
  /** Whole small file. */
  readFile(path: string): Promise<Buffer>;
  /**
   * Several small files whole, in one exchange (over ssh one program, not a channel each): each
   * path that is a regular file of at most `maxEach` bytes, by path. The others (missing, not
   * regular, larger, unreadable) are left out, for readStream.
   */
  readFiles(paths: readonly string[], maxEach: number): Promise<Map<string, Buffer>>;
  /**
   * A stream that writes `path` (created or truncated, with `opts.mode`). The returned promise
   * `done` settles when all bytes are on the host (after `end()`), rejecting on any error; a
   * failure before the end (a lost connection) also destroys the stream with that error, so a
   * writer waiting for 'drain' is not left waiting (see StreamWriter, stream-writer.ts).
   */
  writeStream(path: string, opts?: WriteOptions): Promise<{ stream: Writable; done: Promise<void> }>;
  /** Whole small file (not atomic; use writeStream to a temp name + rename for atomic writes). */
  writeFile(path: string, data: string | Buffer, opts?: WriteOptions): Promise<void>;
  /** lstat; null when the path does not exist. */
  stat(path: string): Promise<FileStat | null>;
  /** Entries of a folder (no '.'/'..'), unsorted. Rejects `not_found` if missing. */
  list(dir: string): Promise<DirEntry[]>;
  /**
   * Every regular file below `dir`, with its stat, in no set order; symlinks are neither
   * followed nor listed. Empty when `dir` is missing or not a folder (a symlink to one included).
   */
  walk(dir: string): Promise<WalkedFile[]>;
  /** mkdir -p; `mode` applies to folders it creates. */
  mkdirp(path: string, mode?: number): Promise<void>;
  /**
   * One folder (not its parents), made atomically (0700) with one private file `name` in it
   * holding `text` and a line end: true when this call made it, false when it exists or its
   * parent does not (a lock: of many callers exactly one gets true). A folder made whose file
   * cannot be written is removed again, and that rejects.
   */
  makeFolderWith(dir: string, name: string, text: string): Promise<boolean>;
  /** Atomic rename within one filesystem; replaces an existing file at `to`. */
  rename(from: string, to: string): Promise<void>;
  /** rm (-r when recursive); missing path is not an error. */
  remove(path: string, opts?: { recursive?: boolean }): Promise<void>;
  realpath(path: string): Promise<string>;
  chmod(path: string, mode: number): Promise<void>;
  /** Set access and modification times (ms since epoch). */
  utimes(path: string, atimeMs: number, mtimeMs: number): Promise<void>;

  /**
   * A byte stream to a Unix-domain socket on the host (local: a connection; ssh: an OpenSSH
   * streamlocal channel on the same connection). Rejects when it cannot be opened. `first`: what
   * to say first, sent with the connection itself where the host can (on this machine it waits
   * for the server before the server first reads: see unix-socket.ts; over ssh it follows the
   * channel's opening).
   */
  connectSocket(path: string, opts?: { first?: string }): Promise<Duplex>;

  /** Facts about the host, learned once per connection and cached. */
  info(): Promise<HostInfo>;
  /** Absolute path of a program in the login PATH, or null. */
  which(program: string): Promise<string | null>;

  /** Release the connection; safe to call twice. */
  close(): Promise<void>;
}
