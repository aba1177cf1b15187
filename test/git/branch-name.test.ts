import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { branchPart, handoffBranchName } from '../../src/git/branch-name.js';

const ID = '20261201-201721-20d31c39f8677e06';

/** git itself judges the name: `git check-ref-format --branch` exits 0 for a valid branch name. */
function validBranch(name: string): boolean {
  try {
    execFileSync('git', ['check-ref-format', '--branch', name], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

describe('handoffBranchName', () => {
  // session id, taken branches on the target → the branch
  const table: [string, string, string[], string][] = [
    ['claude/codex uuid', '0199f3c2-5d1e-7a40-9b11-2f6c0c7d8e01', [], 'handoff/0199f3c2'],
    ['taken once', '0199f3c2-5d1e-7a40-9b11-2f6c0c7d8e01', ['handoff/0199f3c2'], 'handoff/0199f3c2-2'],
    ['taken twice', '0199f3c2-5d1e-7a40-9b11-2f6c0c7d8e01', ['handoff/0199f3c2', 'handoff/0199f3c2-2', 'main'], 'handoff/0199f3c2-3'],
    ['a folder of that name in the ref store', '0199f3c2-5d1e', ['handoff/0199f3c2/old'], 'handoff/0199f3c2-2'],
    ['a branch named handoff', '0199f3c2-5d1e', ['handoff'], 'handoff-0199f3c2'],
    ['a branch named handoff, that name taken', '0199f3c2-5d1e', ['handoff', 'handoff-0199f3c2'], 'handoff-0199f3c2-2'],
    ['short id', 'abcd', [], 'handoff/abcd'],
    ['slashes', 'a/b/c/d/e', [], 'handoff/abcde'],
    ['dots and ..', '../../etc/passwd', [], 'handoff/etcpassw'],
    ['only ..', '..', [], 'handoff/20d31c39'],
    ['spaces', 'my session id', [], 'handoff/mysessio'],
    ['leading -', '--force-push', [], 'handoff/forcepus'],
    ['unicode', 'séance-üñï-42', [], 'handoff/sance42'],
    ['only unicode', 'ünïcödé', [], 'handoff/20d31c39'],
    ['empty', '', [], 'handoff/20d31c39'],
    ['empty, fallback taken', '', ['handoff/20d31c39'], 'handoff/20d31c39-2'],
    ['git specials', '@{-1}~^:?*[\\.lock', [], 'handoff/1lock'],
    ['control characters', '\u0000\u0007\t\nab\u007fcd', [], 'handoff/abcd'],
    ['pi file name', '2026-12-01T20-17-21-123Z_0199f3c2-5d1e', [], 'handoff/20261201'],
  ];
  it.each(table)('%s: %j → its branch', (_what, session, taken, want) => {
    const name = handoffBranchName(session, ID, new Set(taken));
    expect(name).toBe(want);
    expect(validBranch(name), name).toBe(true);
    expect(taken).not.toContain(name);
  });

  it('is valid for hostile ids whatever the handoff id', () => {
    const hostile = ['', '-', '.', '..', '/', '//', 'a..b', '.hidden', 'x.lock', ' ', '\u00a0', '🙂🙂🙂🙂🙂', '-rf /', 'HEAD', '@', 'a@{b}'];
    for (const session of hostile) {
      for (const id of [ID, '', '..', '-x-']) {
        const name = handoffBranchName(session, id, new Set());
        expect(validBranch(name), `${JSON.stringify(session)} / ${JSON.stringify(id)} → ${name}`).toBe(true);
        expect(name.length).toBeLessThanOrEqual('handoff/'.length + 8);
      }
    }
  });

  it('is a pure function of its inputs (the plan and the placement agree)', () => {
    const taken = new Set(['handoff/0199f3c2']);
    expect(handoffBranchName('0199f3c2-aaaa', ID, taken)).toBe(handoffBranchName('0199f3c2-aaaa', ID, new Set(taken)));
  });

  it('keeps letters and digits, at most 8, at least 4', () => {
    expect(branchPart('0199f3c2-5d1e')).toBe('0199f3c2');
    expect(branchPart('a-b-c')).toBe('');
    expect(branchPart('ABCDefgh1234')).toBe('ABCDefgh');
  });
});
