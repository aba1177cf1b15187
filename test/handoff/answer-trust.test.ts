// answerTrust (src/handoff/screens.ts): the folder-trust screen answered from the screen the
// caller just read when that shows the options whole (no read of herdr before the keys: over ssh
// each is a round trip and a wait for herdr's next read), read again when it does not; the cursor
// moved to "yes" when it is elsewhere; the answer taken only once a screen without it is seen,
// and that screen handed back (start.ts classifies it instead of reading once more).
import { describe, expect, it } from 'vitest';
import { claude } from '../../adapters/index.js';
import { answerTrust } from '../../src/handoff/screens.js';
import type { HerdrClient } from '../../src/herdr/client.js';

const QUESTION = 'Quick safety check: Is this a project you created or one you trust?';
const ON_YES = `${QUESTION}\n❯ 1. Yes, I trust this folder\n  2. No, exit\n`;
const ON_NO = `${QUESTION}\n  1. Yes, I trust this folder\n❯ 2. No, exit\n`;
const HALF_DRAWN = `${QUESTION}\n`;
const PROMPT = ' Claude Code\n > ';

/** herdr whose pane shows `screens` one read after another (the last stays); every ask in order. */
function herdrShowing(screens: string[]) {
  const asked: string[] = [];
  const stub = {
    read: (_pane: string) => {
      asked.push('read');
      return Promise.resolve(screens.length > 1 ? screens.shift()! : screens[0]!);
    },
    sendKeys: (_pane: string, keys: string[]) => {
      asked.push(`keys ${keys.join(' ')}`);
      return Promise.resolve();
    },
  };
  return { herdr: stub as unknown as HerdrClient, asked };
}

const classify = claude.classifyScreen;

describe('answerTrust', () => {
  it('answers from the screen just read when it shows the options whole, and hands back the one after', async () => {
    const { herdr, asked } = herdrShowing([PROMPT]);
    const answer = await answerTrust(herdr, 'w1:p1', classify, { timeoutMs: 5_000, shown: classify(ON_YES) });
    expect(answer).toEqual({ outcome: 'answered', after: PROMPT });
    expect(asked).toEqual(['keys enter', 'read']);
  });

  it('reads the screen first when the caller has none, or one not yet drawn whole', async () => {
    for (const shown of [undefined, classify(HALF_DRAWN)]) {
      const { herdr, asked } = herdrShowing([ON_YES, PROMPT]);
      const answer = await answerTrust(herdr, 'w1:p1', classify, { timeoutMs: 5_000, ...(shown ? { shown } : {}) });
      expect(answer).toEqual({ outcome: 'answered', after: PROMPT });
      expect(asked).toEqual(['read', 'keys enter', 'read']);
    }
  });

  it('moves the cursor to "yes" first, and checks it is there before confirming', async () => {
    const { herdr, asked } = herdrShowing([ON_YES, PROMPT]);
    const answer = await answerTrust(herdr, 'w1:p1', classify, { timeoutMs: 5_000, shown: classify(ON_NO) });
    expect(answer.outcome).toBe('answered');
    expect(asked).toEqual(['keys up', 'read', 'keys enter', 'read']);
  });

  it('says not_shown for another screen, and failed while the trust screen stays after confirming', async () => {
    const other = herdrShowing([PROMPT]);
    expect(await answerTrust(other.herdr, 'w1:p1', classify, { timeoutMs: 5_000, shown: classify(PROMPT) })).toEqual({ outcome: 'not_shown' });
    expect(other.asked).toEqual(['read']);
    const stuck = herdrShowing([ON_YES]);
    const answer = await answerTrust(stuck.herdr, 'w1:p1', classify, { timeoutMs: 450, shown: classify(ON_YES) });
    expect(answer.outcome).toBe('failed');
    expect(stuck.asked[0]).toBe('keys enter');
  });
});
