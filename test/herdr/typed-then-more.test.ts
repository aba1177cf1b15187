// typedThenMore: the screen rule that tells an agent gone before herdr saw it (src/herdr/start-wait.ts).
import { describe, expect, it } from 'vitest';
import { typedThenMore } from '../../src/herdr/start-wait.js';

const PROMPT = 'vega@vm:~/code/hark$ ';

describe('typedThenMore', () => {
  it.each<[string, string, string[], string, boolean]>([
    ['exited with a message and a new prompt', PROMPT, ['omp'], `${PROMPT}omp\nomp: fatal: could not start\n${PROMPT}\n`, true],
    ['exited silently: only the next prompt', PROMPT, ['pi'], `${PROMPT}pi\n${PROMPT}`, true],
    ['typed, not run yet', PROMPT, ['omp'], `${PROMPT}omp\n`, false],
    ['half typed', PROMPT, ['claude', '--resume', 'abc'], `${PROMPT}claude --res`, false],
    ['nothing typed yet', PROMPT, ['omp'], PROMPT, false],
    ['quoted, wrapped arguments', PROMPT, ['codex', 'resume', 'a b', "it's"], `${PROMPT}codex resume 'a b'\n 'it'\\''s'\nerror\n${PROMPT}`, true],
    ['the prompt changed (not the screen we saw): no verdict', PROMPT, ['omp'], `other$ omp\nfatal\n`, false],
    ['empty screen before: the typed command leads', '', ['omp'], 'omp\nfatal\n$ ', true],
    ['empty screen before, the prompt drawn after it', '', ['omp', '--resume', 'abc'], '$ omp --resume abc\nomp: fatal: could not start\n$ ', true],
    ['half a prompt before, the rest drawn after it', 'vega@vm:~/co', ['omp'], `${PROMPT}omp\nfatal\n${PROMPT}`, true],
    ['echoed before the prompt, shown again after it, not run yet', '', ['omp', '--resume', 'abc'], 'omp --resume abc\n$ omp --resume abc', false],
    ['echoed before the prompt, then run', '', ['omp', '--resume', 'abc'], 'omp --resume abc\n$ omp --resume abc\nfatal\n$ ', true],
    ['the command was on the screen before: only a new copy counts', `${PROMPT}omp\nfatal\n${PROMPT}`, ['omp'], `${PROMPT}omp\nfatal\n${PROMPT}`, false],
    ['nothing at all', '', [], '', false],
    ['an agent drawing its screen over the prompt', PROMPT, ['pi'], ' pi v0.73.1\n cwd: /home/vega\n', false],
  ])('%s', (_what, before, argv, now, want) => {
    expect(typedThenMore(before, argv, now)).toBe(want);
  });
});
