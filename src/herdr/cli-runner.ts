// herdr's CLI on a Host: `herdr <words…>` run by argv, its JSON envelope parsed with zod, its
// failures turned into HerdrErrors with herdr's own code (usage errors and crashes get ours).
import type { z } from 'zod';
import type { Host, RunResult } from '../host/host.js';
import { ErrorEnvelope } from './schemas.js';
import { envelopeError, FIXES, HerdrError } from './herdr-error.js';

export class HerdrCli {
  private binPromise: Promise<string | null> | undefined;

  constructor(
    private readonly host: Host,
    /** Bound on a single herdr call; waits add their own timeout on top. */
    readonly timeoutMs: number,
    /** A herdr binary to use instead of looking it up on the login PATH. */
    private readonly fixedBin: string | undefined,
  ) {}

  /** The herdr binary on the host's login PATH (cached), or null. */
  bin(): Promise<string | null> {
    this.binPromise ??= this.fixedBin ? Promise.resolve(this.fixedBin) : this.host.which('herdr');
    return this.binPromise;
  }

  /** Whether the binary was looked up (or learned) already: until then, calls may name herdr bare. */
  get binLookupStarted(): boolean {
    return this.binPromise !== undefined;
  }

  /** The binary as a probe found it (null: not installed), unless a lookup came first. */
  learnBin(path: string | null): void {
    this.binPromise ??= Promise.resolve(path);
  }

  async requireBin(): Promise<string> {
    const bin = await this.bin();
    if (!bin) throw new HerdrError('herdr_not_installed', 'herdr is not installed (not found on the login PATH)', this.host.label, FIXES.herdr_not_installed);
    return bin;
  }

  /** Run herdr with argv; returns the raw result (no interpretation). */
  async raw(args: readonly string[], extraTimeoutMs = 0): Promise<RunResult> {
    const bin = await this.requireBin();
    return this.host.run([bin, ...args], { timeoutMs: this.timeoutMs + extraTimeoutMs });
  }

  /** Throw what a failed run says: herdr's error envelope on stderr, else its exit and output. */
  fail(r: RunResult, args: readonly string[]): never {
    const line = r.stderr.trim().split('\n').find((l) => l.startsWith('{'));
    if (line) {
      try {
        throw envelopeError(ErrorEnvelope.parse(JSON.parse(line)).error, this.host.label);
      } catch (err) {
        if (err instanceof HerdrError) throw err;
      }
    }
    const code = r.exitCode === 2 ? 'herdr_usage' : 'herdr_failed';
    const detail = (r.stderr || r.stdout).trim().split('\n').slice(0, 3).join(' / ');
    throw new HerdrError(code, `\`herdr ${args.join(' ')}\` exited ${r.exitCode}: ${detail || 'no output'}`, this.host.label);
  }

  /** Run a JSON command and parse its success envelope. */
  async json<S extends z.ZodTypeAny>(args: readonly string[], schema: S, extraTimeoutMs = 0): Promise<z.infer<S>> {
    const r = await this.raw(args, extraTimeoutMs);
    if (r.exitCode !== 0) this.fail(r, args);
    const line = r.stdout.trim().split('\n').pop() ?? '';
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new HerdrError('herdr_bad_output', `\`herdr ${args.join(' ')}\` printed no JSON: ${line.slice(0, 200)}`, this.host.label);
    }
    const res = schema.safeParse(parsed);
    if (!res.success) {
      throw new HerdrError('herdr_bad_output', `\`herdr ${args.join(' ')}\` printed unexpected JSON: ${res.error.message.slice(0, 300)}`, this.host.label);
    }
    return res.data;
  }

  /** Run an ok-only command (prints nothing on success). */
  async ok(args: readonly string[]): Promise<void> {
    const r = await this.raw(args);
    if (r.exitCode !== 0) this.fail(r, args);
  }
}
