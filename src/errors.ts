// Errors carry a stable code, a sentence, and the fix. One place (src/result.ts) turns them into JSON.

export class HandoffError extends Error {
  readonly code: string;
  /** What the user (or the calling agent) should do about it. */
  readonly fix: string | undefined;
  /** Extra machine-readable facts for the JSON result. */
  readonly details: Record<string, unknown> | undefined;

  constructor(code: string, message: string, opts: { fix?: string; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'HandoffError';
    this.code = code;
    this.fix = opts.fix;
    this.details = opts.details;
  }
}

/** Transport-level failures of a Host (connect, auth, host key, timeout, missing file). */
export class HostError extends HandoffError {
  constructor(code: string, message: string, opts: { fix?: string; details?: Record<string, unknown>; cause?: unknown } = {}) {
    super(code, message, opts);
    this.name = 'HostError';
  }
}

/** Bad command-line input: exit code 2. */
export class UsageError extends HandoffError {
  constructor(message: string, fix?: string) {
    super('usage', message, fix === undefined ? {} : { fix });
    this.name = 'UsageError';
  }
}
