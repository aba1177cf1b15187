// The line verify adds for the session files: a count with its noun in number (one file is "file").
import { describe, expect, it } from 'vitest';
import { sessionFilesChecked } from '../../src/handoff/verify.js';

describe('the session check in verified', () => {
  it.each([
    [1, '1 session file in place, hashes match, no source path left'],
    [2, '2 session files in place, hashes match, no source path left'],
    [16, '16 session files in place, hashes match, no source path left'],
  ])('%i file(s): %s', (count, line) => {
    expect(sessionFilesChecked(count)).toBe(line);
  });
});
