/** A promise whose rejection is handled where it is awaited, not reported as unhandled meanwhile. */
export function quiet<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}
