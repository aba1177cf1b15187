// Quitting the agent: the text, then the fallback keys, and a refusal reported with the screen that
// says why. And recover's clean-up after a controller died between typing the quit text and its
// Enter: only our own text at the end of the input line is erased, one Backspace per character,
// never anything else.
import { describe, expect, it } from 'vitest';
import type { HerdrClient } from '../../src/herdr/client.js';
import { HandoffError } from '../../src/errors.js';
import { clearTypedQuit, quitAgent } from '../../src/handoff/quit.js';

/** A pane whose input line is `prefix + input + suffix`; Backspace removes the input's last character. */
function pane(render: (input: string) => string, input: string, opts: { deaf?: boolean } = {}) {
  const state = { input, keys: [] as string[] };
  const herdr = {
    read: async () => render(state.input),
    sendKeys: async (_pane: string, keys: readonly string[]) => {
      state.keys.push(...keys);
      if (opts.deaf) return;
      for (const k of keys) if (k === 'backspace') state.input = [...state.input].slice(0, -1).join('');
    },
  } as unknown as HerdrClient;
  return { herdr, state };
}

const claudeBox = (input: string) => ['  ⏺ Done. Type /quit', '', '╭──────────────────────────╮', `│ ❯ ${input.padEnd(22)} │`, '╰──────────────────────────╯', '  ? for shortcuts'].join('\n');
const piLine = (input: string) => ['assistant: ok', '> earlier message /quit', '', `> ${input}`, '~/src/app (main)'].join('\n');

describe('clearTypedQuit', () => {
  it('erases the quit text at the end of a boxed input line, and only it', async () => {
    const { herdr, state } = pane(claudeBox, '/quit');
    expect(await clearTypedQuit(herdr, 'w1:p1', '/quit')).toBe('cleared');
    expect(state.keys).toEqual(Array(5).fill('backspace'));
    expect(state.input).toBe('');
  });

  it('keeps a draft the person typed before it', async () => {
    const { herdr, state } = pane(piLine, 'fix the parser/quit');
    expect(await clearTypedQuit(herdr, 'w1:p1', '/quit')).toBe('cleared');
    expect(state.input).toBe('fix the parser');
  });

  it('sends nothing when the input is empty, even if a transcript line above ends with the text', async () => {
    const { herdr, state } = pane(piLine, '');
    expect(await clearTypedQuit(herdr, 'w1:p1', '/quit')).toBe('not_typed');
    expect(state.keys).toEqual([]);
  });

  it('sends nothing when the person typed on after it', async () => {
    const { herdr, state } = pane(claudeBox, '/quit and then some');
    expect(await clearTypedQuit(herdr, 'w1:p1', '/quit')).toBe('not_typed');
    expect(state.keys).toEqual([]);
  });

  it('says so when the text does not go away', async () => {
    const { herdr } = pane(piLine, '/quit', { deaf: true });
    expect(await clearTypedQuit(herdr, 'w1:p1', '/quit')).toBe('still_typed');
  }, 10_000);
});

/** An agent that quits on its quit text, on the fallback keys or never, showing `answer` / `afterKeys`. */
function agent(opts: { quitsOn: 'text' | 'keys' | 'never'; answer: string; afterKeys: string }) {
  const state = { atShell: false, screen: 'working', sent: [] as string[] };
  const herdr = {
    read: async () => state.screen,
    processInfo: async () => ({ shell_pid: 10, foreground_process_group_id: state.atShell ? 10 : 11 }),
    sendText: async (_pane: string, text: string) => {
      state.sent.push(`text:${text}`);
    },
    sendKeys: async (_pane: string, keys: readonly string[]) => {
      for (const k of keys) {
        state.sent.push(k);
        if (k === 'enter') {
          if (opts.quitsOn === 'text') state.atShell = true;
          else state.screen = opts.answer;
        } else {
          if (opts.quitsOn === 'keys') state.atShell = true;
          else state.screen = opts.afterKeys;
        }
      }
    },
  } as unknown as HerdrClient;
  return { herdr, state };
}

const plan = { text: '/quit', pauseMs: 0, fallbackKeys: ['ctrl+c', 'ctrl+c'], fallbackGapMs: 0 };
const noScreen = () => ({ screen: null, options: [], selectedIndex: -1, acceptIndex: -1 });

describe('quitAgent', () => {
  it('quits on the text', async () => {
    const { herdr, state } = agent({ quitsOn: 'text', answer: '', afterKeys: '' });
    expect(await quitAgent(herdr, 'w1:p1', 'omp', plan, noScreen, { timeoutMs: 1_000 })).toMatchObject({ method: 'quit_text' });
    expect(state.sent).toEqual(['text:/quit', 'enter']);
  });

  it('quits on the fallback keys when the text did not do it', async () => {
    const { herdr, state } = agent({ quitsOn: 'keys', answer: 'a menu', afterKeys: '' });
    expect(await quitAgent(herdr, 'w1:p1', 'omp', plan, noScreen, { timeoutMs: 500 })).toMatchObject({ method: 'fallback_keys' });
    expect(state.sent).toEqual(['text:/quit', 'enter', 'ctrl+c', 'ctrl+c']);
  });

  it("reports the agent's answer to the quit text, not the keys' own prompt that replaced it", async () => {
    const { herdr } = agent({ quitsOn: 'never', answer: 'Cannot quit: a background task is still running', afterKeys: 'Press Ctrl-C again to exit' });
    const err = await quitAgent(herdr, 'w1:p1', 'omp', plan, noScreen, { timeoutMs: 300 }).catch((e: unknown) => e as HandoffError);
    expect(err).toBeInstanceOf(HandoffError);
    expect(err).toMatchObject({ code: 'quit_failed', details: { screen: 'Cannot quit: a background task is still running', last_screen: 'Press Ctrl-C again to exit' } });
    expect((err as HandoffError).message).toContain('background task is still running');
  });
});
