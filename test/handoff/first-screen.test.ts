// Has the agent drawn yet? herdr calls an agent ready on time alone, so the start looks at the
// pane until it shows more than the command herdr typed.
import { describe, expect, it } from 'vitest';
import { stillLaunching } from '../../src/handoff/start.js';

const ID = '3f1c2a9e-7b4d-4e0a-9c1b-2d3e4f5a6b7c';
const typed = ['claude', '--resume', ID, '--', '--model', 'a b'];

describe('stillLaunching', () => {
  it('is true for an empty pane (an agent that switched screens and has not drawn)', () => {
    expect(stillLaunching('', typed)).toBe(true);
    expect(stillLaunching('\n\n   \n', typed)).toBe(true);
  });

  it('is true while the pane ends with the typed command, quoted and wrapped by the terminal', () => {
    expect(stillLaunching(`vega@box:~/code/x$ claude --resume ${ID} -- --model 'a b'\n\n`, typed)).toBe(true);
    const wrapped = `vega@box:~/code/x$ claude --resume ${ID.slice(0, 20)}\n${ID.slice(20)} -- --model "a b"\n`;
    expect(stillLaunching(wrapped, typed)).toBe(true);
  });

  it('is false once the agent has drawn anything after the command', () => {
    expect(stillLaunching(`$ claude --resume ${ID} -- --model 'a b'\nQuick safety check: Is this a project you created or one you trust?\n❯ 1. Yes, I trust this folder\n  2. No, exit`, typed)).toBe(false);
    expect(stillLaunching(` ✻ Claude Code\n  resumed session ${ID}\n────\n❯ \n────\n? for shortcuts`, typed)).toBe(false);
    // It exited at once: the shell's next prompt follows the command.
    expect(stillLaunching(`$ claude --resume ${ID} -- --model 'a b'\nNo conversation found with session ID: ${ID}\n$ `, typed)).toBe(false);
  });

  it('knows nothing of the command when herdr did not say what it typed: only an empty pane waits', () => {
    expect(stillLaunching('$ claude --resume x', [])).toBe(false);
    expect(stillLaunching('', [])).toBe(true);
  });
});
