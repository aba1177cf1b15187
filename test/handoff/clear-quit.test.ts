// recover's clean-up after a controller died between typing the quit text and its Enter: only our
// own text at the end of the input line is erased, one Backspace per character, never anything else.
import { describe, expect, it } from 'vitest';
import type { HerdrClient } from '../../src/herdr/client.js';
import { clearTypedQuit } from '../../src/handoff/quit.js';

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
