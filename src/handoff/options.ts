// `send` options after parsing, and the usage rules between them (pure; exit 2 on violation).
import { UsageError } from '../errors.js';

export interface SendOptions {
  /** herdr agent name, pane id, or a unique prefix of a session id. */
  agent: string;
  /** ssh target (user@host, host, ssh://…, ~/.ssh/config alias); null with --here or --from alone. */
  target: string | null;
  dryRun: boolean;
  here: boolean;
  newWorktree: boolean;
  dir: string | null;
  from: string | null;
  self: boolean;
  wait: boolean;
  waitTimeoutS: number;
  newBranch: boolean;
  keepSourceChanges: boolean;
  /** Replace session files on the target that changed since a handoff left them there (a backup is kept). */
  overwrite: boolean;
  name: string | null;
  session: string | null;
  focus: boolean;
  trust: boolean;
  /** Bound on any single step, in seconds. */
  timeoutS: number;
  /** Arguments for the agent on the target, after the resume argv (from after `--`). */
  agentArgs: string[];
  /** Hand-off brief: the user's message, or focus and definition of done (off when all null). */
  brief: string | null;
  /** `--focus TEXT` (the brief); a bare --focus/--no-focus is the workspace focus above. */
  briefFocus: string | null;
  doneWhen: string | null;
}

export interface RawSendArgs {
  agent?: unknown;
  target?: unknown;
  dryRun?: unknown;
  here?: unknown;
  newWorktree?: unknown;
  dir?: unknown;
  from?: unknown;
  self?: unknown;
  wait?: unknown;
  waitTimeout?: unknown;
  newBranch?: unknown;
  keepSourceChanges?: unknown;
  overwrite?: unknown;
  name?: unknown;
  session?: unknown;
  focus?: unknown;
  trust?: unknown;
  timeout?: unknown;
  brief?: unknown;
  /** Set directly by the --self job (a bare `focus` there is the workspace flag). */
  briefFocus?: unknown;
  doneWhen?: unknown;
  '--'?: unknown;
}

export const DEFAULT_WAIT_TIMEOUT_S = 1800;
export const DEFAULT_STEP_TIMEOUT_S = 120;

function str(v: unknown): string | null {
  if (v === undefined || v === null || v === '') return null;
  return String(v);
}

function positiveSeconds(v: unknown, flag: string, dflt: number): number {
  if (v === undefined || v === null) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} must be a number of seconds greater than 0 (got ${String(v)}).`, `Pass e.g. ${flag} ${dflt}.`);
  return n;
}

/** Normalise yargs output and enforce the rules between flags. */
export function parseSendOptions(raw: RawSendArgs): SendOptions {
  const agent = str(raw.agent);
  if (!agent) throw new UsageError('Name the agent to move.', 'Run `agent-handoff list` to see the agents, then `agent-handoff send <agent> <target>`.');
  const opts: SendOptions = {
    agent,
    target: str(raw.target),
    dryRun: raw.dryRun === true,
    here: raw.here === true,
    newWorktree: raw.newWorktree === true,
    dir: str(raw.dir),
    from: str(raw.from),
    self: raw.self === true,
    wait: raw.wait === true,
    waitTimeoutS: positiveSeconds(raw.waitTimeout, '--wait-timeout', DEFAULT_WAIT_TIMEOUT_S),
    newBranch: raw.newBranch === true,
    keepSourceChanges: raw.keepSourceChanges === true,
    overwrite: raw.overwrite === true,
    name: str(raw.name),
    session: str(raw.session),
    // `--focus TEXT` is the brief's focus; `--no-focus` keeps the target workspace unfocused.
    focus: raw.focus !== false && raw.focus !== 'false',
    trust: raw.trust !== false,
    timeoutS: positiveSeconds(raw.timeout, '--timeout', DEFAULT_STEP_TIMEOUT_S),
    agentArgs: Array.isArray(raw['--']) ? raw['--'].map(String) : [],
    brief: str(raw.brief),
    briefFocus: str(raw.briefFocus) ?? (typeof raw.focus === 'string' && raw.focus !== '' && raw.focus !== 'true' && raw.focus !== 'false' ? raw.focus : null),
    doneWhen: str(raw.doneWhen),
  };
  if (opts.brief && (opts.briefFocus || opts.doneWhen)) throw new UsageError('--brief replaces --focus and --done-when; give one or the other.', 'Put everything in --brief, or use --focus and --done-when.');
  if (opts.here && opts.target) throw new UsageError('--here moves the agent on this machine; it takes no target.', 'Drop the target, or drop --here.');
  if (opts.here && opts.from) throw new UsageError('--here and --from cannot be combined.', 'Use --here for this machine, or --from HOST to bring an agent from HOST.');
  if (opts.newWorktree && !opts.here) throw new UsageError('--new-worktree only applies with --here.', 'Add --here, or drop --new-worktree.');
  if (!opts.target && !opts.here && !opts.from) throw new UsageError('No target given.', 'Name the machine: `agent-handoff send <agent> <ssh-target>`, or pass --here (this machine) or --from HOST (bring it here).');
  if (opts.from && opts.target && opts.from === opts.target) throw new UsageError(`--from and the target are the same host (${opts.from}).`, 'Name a different target, or drop it to bring the agent to this machine.');
  if (opts.name !== null && !/^[a-z][a-z0-9_-]{0,31}$/.test(opts.name)) {
    throw new UsageError(`--name ${JSON.stringify(opts.name)} is not a valid herdr agent name.`, 'Use a lower-case letter followed by up to 31 of a-z, 0-9, _ or -.');
  }
  return opts;
}
