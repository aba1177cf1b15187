// What the real herdr integrations do: when their hook/extension file is installed and the agent
// runs inside a herdr pane, call `$HERDR_BIN_PATH pane report-agent-session …` (all kinds) and,
// for the full-lifecycle reporters (pi, omp), `pane report-agent … --state`. Calls run one after
// another in the background (so a slow herdr never freezes the TUI) and failures are ignored,
// like the real hooks.
import { spawn } from 'node:child_process';
import fs from 'node:fs';

export class HerdrReporter {
  private chain: Promise<void> = Promise.resolve();
  private readonly bin: string | undefined;
  private readonly pane: string | undefined;

  constructor(
    private readonly kind: string,
    integrationFile: string,
  ) {
    const env = process.env;
    const inHerdr = env.HERDR_ENV === '1' && !!env.HERDR_PANE_ID && !!env.HERDR_BIN_PATH;
    const installed = fs.existsSync(integrationFile);
    this.bin = inHerdr && installed ? env.HERDR_BIN_PATH : undefined;
    this.pane = env.HERDR_PANE_ID;
  }

  get active(): boolean {
    return this.bin !== undefined;
  }

  /** `pane report-agent-session`; pi/omp pass the session file path, the others the id. */
  session(ref: { id?: string; path?: string }, start: 'startup' | 'resume'): void {
    const args = ['pane', 'report-agent-session', this.pane ?? '', '--source', `herdr:${this.kind}`, '--agent', this.kind];
    if (ref.path) args.push('--agent-session-path', ref.path);
    else if (ref.id) args.push('--agent-session-id', ref.id);
    args.push('--session-start-source', start);
    this.call(args);
  }

  /** `pane report-agent --state` (full-lifecycle reporters only). */
  state(state: 'working' | 'idle' | 'blocked'): void {
    this.call(['pane', 'report-agent', this.pane ?? '', '--source', `herdr:${this.kind}`, '--agent', this.kind, '--state', state]);
  }

  private call(args: string[]): void {
    const bin = this.bin;
    if (!bin) return;
    this.chain = this.chain.then(
      () =>
        new Promise<void>((resolve) => {
          let child;
          try {
            child = spawn(bin, args, { stdio: 'ignore' });
          } catch {
            resolve();
            return;
          }
          const timer = setTimeout(() => {
            child.kill('SIGKILL');
            resolve();
          }, 5000);
          timer.unref();
          child.on('error', () => {
            clearTimeout(timer);
            resolve();
          });
          child.on('close', () => {
            clearTimeout(timer);
            resolve();
          });
        }),
    );
  }

  /** Wait for queued calls, but never longer than `ms` (quitting must stay quick). */
  async flush(ms: number): Promise<void> {
    await Promise.race([this.chain, new Promise((r) => setTimeout(r, ms).unref())]);
  }
}
