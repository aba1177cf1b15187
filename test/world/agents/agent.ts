// The part every fake agent shares: start-up order (control file, launch screens, session),
// the prompt loop (type, Enter, "work", append a turn, show the reply), interrupts and quitting.
// A kind module (claude.ts, codex.ts, …) supplies the facts that differ in an AgentDefinition.
import fs from 'node:fs';
import path from 'node:path';
import { AgentExit, readControl, realpathOr, turnMs, type ControlFile } from './files.js';
import { HerdrReporter } from './herdr-report.js';
import { Tui, type Key } from './tui.js';

export interface Message {
  role: 'user' | 'tool' | 'assistant';
  text: string;
}

export interface Turn {
  prompt: string;
  reply: string;
  /** Absolute path the fake tool call reads (or edits), inside the cwd. */
  toolPath: string;
  /** The prompt asked for an edit (`EDIT` in it): claude keeps a file-history backup. */
  edit: boolean;
  cwd: string;
  startedAt: Date;
  endedAt: Date;
}

/** An open session in the agent's own format; every turn is appended to the same unit. */
export interface SessionUnit {
  id: string;
  /** The transcript file (grok: the session directory). */
  path: string;
  /** What the session already holds, oldest first (shown after a resume). */
  history: Message[];
  appendTurn(turn: Turn): void;
  /** Bookkeeping on quit (omp's `session_exit`). */
  close?(): void;
}

export interface Launch {
  session: SessionUnit;
  /** The directory the agent works in (process cwd, or the session's for pi/omp/grok/codex). */
  cwd: string;
  resumed: boolean;
  /** Positional prompt from the command line, run at once. */
  prompt?: string;
  /** Arguments the fake does not interpret, shown as `args: …`. */
  extraArgs: string[];
  /** Lines shown above the conversation (e.g. grok's "found locally" notice). */
  notices: string[];
  /** Whether herdr's hook runs (codex: only once trusted), asked when the session would be reported. */
  herdrHookRuns?: () => boolean;
  /** The session starts, and its hooks run, with the first prompt (codex), not at launch. */
  reportAtFirstTurn?: boolean;
}

export interface LaunchContext {
  argv: string[];
  root: string;
  control: ControlFile;
  tui: Tui;
}

export interface AgentDefinition {
  kind: string;
  /** First header lines (name and version). */
  banner: string[];
  promptChar: string;
  /** Grey text of the empty input line. */
  placeholder: string;
  footer: string[];
  /** Typed text that quits, e.g. `/exit`. */
  quitWords: string[];
  /** A slash menu opens while typing `/…`: an Enter within SLASH_MENU_MS of the last key only picks from it. */
  slashMenu: boolean;
  /** `double`: Ctrl+C twice within doubleMs quits; `clear`: Ctrl+C only clears (grok quits on Ctrl+Q twice). */
  ctrlC: 'double' | 'clear';
  doubleMs: number;
  ctrlDQuits: boolean;
  /** pi/omp report working/idle themselves (herdr skips screen detection for them). */
  fullLifecycle: boolean;
  /**
   * The terminal title (OSC 2) while working and while idle, where the real agent sets one that
   * herdr reads its state from (claude: a braille spinner, then ✳).
   */
  terminalTitle?: (working: boolean) => string;
  /** codex: /quit while a turn runs would only detach from a daemon that keeps writing; the fake refuses instead. */
  refuseQuitWhileWorking: boolean;
  configRoot(): string;
  integrationFile(root: string): string;
  launch(ctx: LaunchContext): Promise<Launch>;
  /** Printed after the TUI is gone (the resume hint). */
  quitLines(launch: Launch, via: 'command' | 'keys'): string[];
}

/** How long after the last typed key an Enter still lands in claude's slash menu. */
export const SLASH_MENU_MS = 150;

export async function runAgent(def: AgentDefinition, argv: string[]): Promise<void> {
  const root = def.configRoot();
  const control = readControl(root, realpathOr(process.cwd()));
  if (control.crashOnStart) {
    process.stderr.write(`${def.kind}: fatal: could not start (crashOnStart in ${path.join(root, 'fake-agent.json')})\n`);
    process.exit(1);
  }
  if (control.slowStartMs) await new Promise((r) => setTimeout(r, control.slowStartMs));
  const tui = new Tui();
  tui.start();
  let code = 0;
  let lines: string[];
  let toStderr = false;
  let reporter: HerdrReporter | undefined;
  try {
    const launch = await def.launch({ argv, root, control, tui });
    const herdr = new HerdrReporter(def.kind, def.integrationFile(root));
    reporter = herdr;
    const start = launch.resumed ? 'resume' : 'startup';
    const reportSession = () => {
      if (launch.herdrHookRuns && !launch.herdrHookRuns()) return;
      if (def.fullLifecycle) herdr.session({ path: launch.session.path }, start);
      else herdr.session({ id: launch.session.id }, start);
    };
    if (def.fullLifecycle) herdr.state('idle');
    if (!launch.reportAtFirstTurn) reportSession();
    lines = await new Conversation(def, launch, tui, herdr, launch.reportAtFirstTurn ? reportSession : undefined).run();
  } catch (e) {
    if (e instanceof AgentExit) {
      code = e.code;
      lines = e.lines;
      toStderr = e.toStderr;
    } else {
      code = 1;
      lines = [String(e instanceof Error ? (e.stack ?? e.message) : e)];
      toStderr = true;
    }
  }
  tui.stop();
  process.stdout.write('\r\n');
  if (lines.length) (toStderr ? process.stderr : process.stdout).write(lines.join('\n') + '\n');
  await reporter?.flush(1000);
  process.exit(code);
}

class Conversation {
  private messages: Message[];
  private input = '';
  private lastTypedAt = 0;
  private status = '';
  private statusTimer: NodeJS.Timeout | undefined;
  private working: { prompt: string; startedAt: Date; timer: NodeJS.Timeout } | undefined;
  private queued: string[] = [];
  private lastInterruptKey: { name: string; at: number } | undefined;
  private done: ((lines: string[]) => void) | undefined;

  constructor(
    private readonly def: AgentDefinition,
    private readonly launch: Launch,
    private readonly tui: Tui,
    private readonly reporter: HerdrReporter,
    /** Called as the first turn starts (the session's start hooks, codex). */
    private onFirstTurn?: () => void,
  ) {
    this.messages = [...launch.session.history];
  }

  async run(): Promise<string[]> {
    const finished = new Promise<string[]>((resolve) => (this.done = resolve));
    if (this.launch.prompt) this.submit(this.launch.prompt);
    this.draw();
    void this.readKeys();
    return finished;
  }

  private async readKeys(): Promise<void> {
    for (;;) {
      const k = await this.tui.key();
      if (!this.done) return;
      this.onKey(k);
    }
  }

  private draw(): void {
    const d = this.def;
    const header = [...d.banner, `  cwd: ${this.launch.cwd}`];
    if (this.launch.extraArgs.length) header.push(`  args: ${this.launch.extraArgs.join(' ')}`);
    if (this.launch.resumed) header.push(`  resumed session ${this.launch.session.id}`);
    header.push(...this.launch.notices, '');
    const body: string[] = [];
    for (const m of this.messages) {
      if (m.role === 'user') body.push(`${d.promptChar} ${m.text}`);
      else if (m.role === 'tool') body.push(`  ⎿ ${m.text}`);
      else body.push(`● ${m.text}`, '');
    }
    if (this.working) body.push(`✻ Working… (esc to interrupt)`);
    for (const q of this.queued) body.push(`  queued: ${q}`);
    const rule = '─'.repeat(Math.min(process.stdout.columns || 80, 100));
    const footer = [rule, `${d.promptChar} ${this.input || ''}`, rule, this.status || d.footer.join(' · ')];
    if (!this.input && d.placeholder) footer[1] = `${d.promptChar} ${d.placeholder}`;
    this.showTitle();
    this.tui.draw({ header, body, footer });
  }

  private shownTitle: string | undefined;

  private showTitle(): void {
    const title = this.def.terminalTitle?.(this.working !== undefined);
    if (title === undefined || title === this.shownTitle) return;
    this.shownTitle = title;
    process.stdout.write(`\x1b]2;${title}\x07`);
  }

  private setStatus(text: string, ms = 0): void {
    this.status = text;
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.statusTimer = undefined;
    if (ms > 0) {
      this.statusTimer = setTimeout(() => {
        this.status = '';
        this.draw();
      }, ms);
    }
  }

  private onKey(k: Key): void {
    const d = this.def;
    switch (k.name) {
      case 'char':
        this.input += k.ch ?? '';
        this.lastTypedAt = k.at;
        break;
      case 'backspace':
        this.input = [...this.input].slice(0, -1).join('');
        this.lastTypedAt = k.at;
        break;
      case 'enter':
        this.onEnter(k);
        break;
      case 'esc':
        if (this.working) this.interrupt();
        break;
      case 'ctrl-c':
        if (d.ctrlC === 'clear') {
          this.input = '';
          if (this.working) this.interrupt();
        } else if (this.pressedTwice('ctrl-c', k.at)) {
          return this.quit('keys');
        } else {
          this.input = '';
          if (this.working) this.interrupt();
          this.setStatus('Press Ctrl-C again to exit', d.doubleMs);
        }
        break;
      case 'ctrl-q':
        if (d.ctrlC === 'clear') {
          if (this.pressedTwice('ctrl-q', k.at)) return this.quit('keys');
          this.setStatus('Press Ctrl+Q again to quit', d.doubleMs);
        }
        break;
      case 'ctrl-d':
        if (d.ctrlDQuits && this.input === '') return this.quit('keys');
        break;
      default:
        break;
    }
    this.draw();
  }

  private pressedTwice(name: string, at: number): boolean {
    const prev = this.lastInterruptKey;
    this.lastInterruptKey = { name, at };
    if (prev && prev.name === name && at - prev.at <= this.def.doubleMs) {
      this.lastInterruptKey = undefined;
      return true;
    }
    return false;
  }

  private onEnter(k: Key): void {
    const text = this.input.trim();
    // Enter right after typing `/…` picks the highlighted menu entry instead of submitting.
    if (this.def.slashMenu && this.input.startsWith('/') && k.at - this.lastTypedAt < SLASH_MENU_MS) return;
    if (!text) return;
    this.input = '';
    if (this.def.quitWords.includes(text)) {
      if (this.working && this.def.refuseQuitWhileWorking) {
        this.setStatus('A turn is still running; /quit is refused until it finishes (esc to interrupt it first).', 3000);
        return;
      }
      return this.quit('command');
    }
    this.submit(text);
  }

  private submit(prompt: string): void {
    if (this.working) {
      this.queued.push(prompt);
      return;
    }
    this.messages.push({ role: 'user', text: prompt });
    const first = this.onFirstTurn;
    this.onFirstTurn = undefined;
    first?.();
    const startedAt = new Date();
    const timer = setTimeout(() => this.finishTurn(), turnMs(prompt));
    this.working = { prompt, startedAt, timer };
    if (this.def.fullLifecycle) this.reporter.state('working');
  }

  private finishTurn(): void {
    const w = this.working;
    if (!w) return;
    this.working = undefined;
    const toolPath = path.join(this.launch.cwd, 'README.md');
    const reply = `Fake reply: ${w.prompt}`;
    this.launch.session.appendTurn({
      prompt: w.prompt,
      reply,
      toolPath,
      edit: w.prompt.includes('EDIT'),
      cwd: this.launch.cwd,
      startedAt: w.startedAt,
      endedAt: new Date(),
    });
    this.messages.push({ role: 'tool', text: `${w.prompt.includes('EDIT') ? 'Edit' : 'Read'} ${toolPath}` }, { role: 'assistant', text: reply });
    if (this.def.fullLifecycle) this.reporter.state('idle');
    const next = this.queued.shift();
    if (next !== undefined) this.submit(next);
    this.draw();
  }

  /** Stop the running turn; nothing of it is written (the fake keeps transcripts to whole turns). */
  private interrupt(): void {
    const w = this.working;
    if (!w) return;
    clearTimeout(w.timer);
    this.working = undefined;
    this.queued = [];
    this.messages.push({ role: 'assistant', text: 'Interrupted by user' });
    if (this.def.fullLifecycle) this.reporter.state('idle');
  }

  private quit(via: 'command' | 'keys'): void {
    const control = readControl(this.def.configRoot(), this.launch.cwd);
    if (control.holdQuit) {
      this.setStatus(`Cannot quit: a background task is still running (holdQuit in fake-agent.json).`);
      this.draw();
      return;
    }
    if (control.writeOnQuit) fs.appendFileSync(path.join(this.launch.cwd, control.writeOnQuit), `written by ${this.def.kind} as it quit\n`);
    if (this.working) clearTimeout(this.working.timer);
    this.working = undefined;
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.launch.session.close?.();
    const done = this.done;
    this.done = undefined;
    done?.(this.def.quitLines(this.launch, via));
  }
}

/** argv split into the resume option, flags (kept to show as `args: …`) and positional words. */
export interface ArgSplit {
  /** The resume option's value; '' when given without one (the real agents open a picker). */
  resume?: string;
  positionals: string[];
  /** Flags and their values, as typed. */
  extra: string[];
  flags: Set<string>;
}

/**
 * Split argv into the resume option (`resumeNames`, also as `--name=value`), boolean flags, other
 * `--flag value` pairs and positional words (the first one is the prompt).
 */
export function splitArgs(argv: string[], resumeNames: string[], booleanFlags: string[]): ArgSplit {
  const out: ArgSplit = { positionals: [], extra: [], flags: new Set() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 0 ? a.slice(0, eq) : a;
    if (resumeNames.includes(name)) {
      if (name !== a) out.resume = a.slice(eq + 1);
      else if (i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) out.resume = argv[++i]!;
      else out.resume = '';
      continue;
    }
    if (a === '--') {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('-') && a.length > 1) {
      out.extra.push(a);
      out.flags.add(name);
      if (!booleanFlags.includes(name) && name === a && i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) out.extra.push(argv[++i]!);
      continue;
    }
    out.positionals.push(a);
  }
  return out;
}
