// zod-setup.ts: zod told not to compile its object schemas' fast paths (this test fails if zod's
// switch for that moves or stops working), and parsing still gives the same answers and errors.
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseWithoutCompiling } from '../src/zod-setup.js';

/** zod reads the switch when a schema is made: each case makes its own. */
const makeSchema = () => z.object({ id: z.string(), n: z.number().int(), inner: z.object({ ok: z.boolean() }) });
const good = { id: 'a', n: 3, inner: { ok: true }, extra: 1 };
const bad = { id: 'a', n: 1.5, inner: { ok: 'yes' } };

/** How many functions were made from source text (zod's compiled fast path is one) while `fn` ran. */
function functionsMadeDuring(fn: () => void): number {
  const real = globalThis.Function;
  let made = 0;
  globalThis.Function = new Proxy(real, {
    construct(target, args: string[]) {
      made++;
      return Reflect.construct(target, args) as object;
    },
  });
  try {
    fn();
  } finally {
    globalThis.Function = real;
  }
  return made;
}

function parseBoth(schema: ReturnType<typeof makeSchema>) {
  return { good: schema.parse(good), bad: schema.safeParse(bad).error?.issues.map((i) => i.path.join('.')) };
}

describe('zod without compiled fast paths', () => {
  afterEach(() => {
    z.config({ jitless: false });
  });

  it('makes no function at the first parse, where zod otherwise compiles one', () => {
    z.config({ jitless: false });
    const compiling = makeSchema();
    expect(functionsMadeDuring(() => compiling.parse(good))).toBeGreaterThan(0);
    parseWithoutCompiling();
    expect(z.config().jitless).toBe(true);
    const interpreted = makeSchema();
    expect(functionsMadeDuring(() => interpreted.parse(good))).toBe(0);
  });

  it('parses as before: extra keys dropped, wrong types refused with the same paths', () => {
    z.config({ jitless: false });
    const compiled = parseBoth(makeSchema());
    parseWithoutCompiling();
    const interpreted = parseBoth(makeSchema());
    expect(interpreted).toEqual(compiled);
    expect(interpreted.good).toEqual({ id: 'a', n: 3, inner: { ok: true } });
    expect(interpreted.bad).toEqual(['n', 'inner.ok']);
  });
});
