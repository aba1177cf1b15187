// `send` options after parsing, and the usage rules between them (pure; exit 2 on violation).
import { UsageError } from '../errors.js';

export interface SendOptions {
  /** herdr agent name, pane id, or a unique prefix of a session id (the first of `agents`; '' with --all/--workspace). */
  agent: string;
  /** Every agent named (several make a batch). */
  agents: string[];
  /** --all: every agent on the source's herdr. */
  all: boolean;
  /** --workspace: every agent of this herdr workspace (id or label). */
  workspace: string | null;
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
  /** One agent, or the words of `send WORD…` (yargs' variadic positional): the agents, then the target (see `wordsOf`). */
  agent?: unknown;
  target?: unknown;
  all?: unknown;
  workspace?: unknown;
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

/**
 * The words of `send` split into agents and target. The last word is the target, except:
 * with --here every word is an agent (the target is this machine); with --from a single word is
 * the agent (brought here); with --all or --workspace the one word allowed is the target.
 */
export function wordsOf(raw: RawSendArgs): { agents: string[]; target: string | null } {
  // One agent and its target given apart (the --self job, callers in code): taken as they are.
  if (!Array.isArray(raw.agent) && raw.all !== true && str(raw.workspace) === null) {
    const agent = str(raw.agent);
    if (!agent) throw new UsageError('Name the agent to move.', 'Run `agent-handoff list` to see the agents, then `agent-handoff send <agent> <target>` (see `agent-handoff send --help`).');
    return { agents: [agent], target: str(raw.target) };
  }
  const words = (Array.isArray(raw.agent) ? raw.agent : [raw.agent, raw.target]).map(str).filter((w): w is string => w !== null);
  if (raw.all === true || str(raw.workspace) !== null) {
    const flag = raw.all === true ? '--all' : '--workspace';
    if (words.length > 1) throw new UsageError(`${flag} chooses the agents itself; the only word it takes is the target (got ${words.map((w) => JSON.stringify(w)).join(' ')}).`, `Drop the agent names, or drop ${flag} and name the agents.`);
    if (raw.here === true && words.length > 0) throw new UsageError(`--here moves the agents on this machine; it takes no target (got ${JSON.stringify(words[0])}).`, 'Drop the target, or drop --here.');
    return { agents: [], target: words[0] ?? null };
  }
  if (words.length === 0) throw new UsageError('Name the agent to move.', 'Run `agent-handoff list` to see the agents, then `agent-handoff send <agent> <target>` (see `agent-handoff send --help`).');
  if (raw.here === true || words.length === 1) return { agents: words, target: null };
  return { agents: words.slice(0, -1), target: words[words.length - 1]! };
}

/** Several agents, a workspace or all of them: one handoff of many (commands/send-batch.ts). */
export function isBatch(opts: SendOptions): boolean {
  return opts.all || opts.workspace !== null || opts.agents.length > 1;
}

/** Normalise yargs output and enforce the rules between flags. */
export function parseSendOptions(raw: RawSendArgs): SendOptions {
  const { agents, target } = wordsOf(raw);
  // --here with --from: the agents come to this machine (every word is an agent).
  const hereFrom = raw.here === true && str(raw.from) !== null;
  const opts: SendOptions = {
    agent: agents[0] ?? '',
    agents: [...new Set(agents)],
    all: raw.all === true,
    workspace: str(raw.workspace),
    target,
    dryRun: raw.dryRun === true,
    here: raw.here === true && !hereFrom,
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
  if (opts.all && opts.workspace) throw new UsageError('--all and --workspace both choose the agents; give one.', 'Use --all for every agent, or --workspace W for those of one workspace.');
  if (hereFrom && raw.newWorktree === true) throw new UsageError('--new-worktree moves an agent within this machine; it cannot be combined with --from.', 'Drop --new-worktree.');
  if (opts.newWorktree && !opts.here) throw new UsageError('--new-worktree only applies with --here.', 'Add --here, or drop --new-worktree.');
  if (!opts.target && !opts.here && !opts.from) throw new UsageError('No target given.', 'Name the machine: `agent-handoff send <agent> <ssh-target>`, or pass --here (this machine) or --from HOST (bring it here).');
  if (opts.from && opts.target && opts.from === opts.target) throw new UsageError(`--from and the target are the same host (${opts.from}).`, 'Name a different target, or drop it to bring the agent to this machine.');
  if (isBatch(opts) && opts.name !== null) throw new UsageError('--name names one agent; this send moves several.', 'Drop --name (each agent keeps its own name), or move the agents one at a time.');
  if (isBatch(opts) && opts.session !== null) throw new UsageError('--session names the session of one agent; this send moves several.', 'Drop --session, or move that agent on its own.');
  if (opts.name !== null && !/^[a-z][a-z0-9_-]{0,31}$/.test(opts.name)) {
    throw new UsageError(`--name ${JSON.stringify(opts.name)} is not a valid herdr agent name.`, 'Use a lower-case letter followed by up to 31 of a-z, 0-9, _ or -.');
  }
  return opts;
}
