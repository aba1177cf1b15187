import { describe, expect, it } from 'vitest';
import { buildBrief, wantsBrief } from '../../src/handoff/brief.js';

const facts = {
  sourceHost: 'local',
  sourcePath: '/home/laptop/src/hark',
  targetHost: 'vega@127.0.0.1:2222',
  targetPath: '/home/vega/code/hark.worktrees/feature',
  head: '0123456789abcdef0123',
  branch: 'feature',
  restoredFiles: ['README.md', 'notes/new file ü.txt'],
};

describe('hand-off brief', () => {
  it('says where it moved, HEAD, the restored files, and the user’s focus and done-when — on one line', () => {
    const text = buildBrief({ ...facts, focus: 'finish the parser', doneWhen: 'npm test\npasses' });
    expect(text).not.toMatch(/[\n\r]/);
    expect(text).toContain('from local:/home/laptop/src/hark to vega@127.0.0.1:2222:/home/vega/code/hark.worktrees/feature');
    expect(text).toContain('HEAD is 0123456789ab on branch feature');
    expect(text).toContain('README.md, notes/new file ü.txt');
    expect(text).toContain('Focus: finish the parser');
    expect(text).toContain('Done when: npm test passes');
  });
  it('uses --brief verbatim (cleaned) instead of focus/done-when, and says when nothing was uncommitted', () => {
    const text = buildBrief({ ...facts, restoredFiles: [], branch: null, brief: 'review \u001b[31mthe PR', focus: 'ignored' });
    expect(text).toContain('From the user: review [31mthe PR');
    expect(text).not.toContain('Focus:');
    expect(text).toContain('(detached)');
    expect(text).toContain('no uncommitted changes');
  });
  it('names at most twelve files', () => {
    const many = Array.from({ length: 30 }, (_, i) => `f${i}.ts`);
    expect(buildBrief({ ...facts, restoredFiles: many })).toContain('and 18 more');
  });
  it('is off unless asked for', () => {
    expect(wantsBrief({})).toBe(false);
    expect(wantsBrief({ focus: 'x' })).toBe(true);
  });
});
