export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Poll `check` every `everyMs` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function pollUntil<T>(check: () => Promise<T | undefined>, opts: { timeoutMs: number; everyMs?: number }): Promise<T | undefined> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() >= deadline) return undefined;
    await sleep(opts.everyMs ?? 150);
  }
}
