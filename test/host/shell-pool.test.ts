// How many command shells a connection opens (ssh-shell-pool.ts): each keeps a channel slot for
// good, so they leave one for SFTP and one for streams and other commands. Where sshd allows few
// sessions, an SFTP channel waiting behind shells that never give theirs back would wait for ever.
import { describe, expect, it } from 'vitest';
import type { SshLink } from '../../src/host/ssh-link.js';
import { ShellPool } from '../../src/host/ssh-shell-pool.js';

/** A link whose exec channels never open: the pool's shells stay "opening", as many as it asked for. */
function linkOf(channelLimit: number): { link: SshLink; asked: () => number } {
  let asked = 0;
  const link = {
    channelLimit,
    lost: undefined,
    label: 'test',
    counts: { commands: 0 },
    onLost: new Set(),
    openExec: () => {
      asked++;
      return new Promise(() => undefined);
    },
  } as unknown as SshLink;
  return { link, asked: () => asked };
}

describe('ShellPool.openBeside', () => {
  const rows: [number, number][] = [
    [2, 1], // one shell and SFTP: as before the warm-up opened two
    [3, 1],
    [4, 2],
    [5, 3],
    [8, 3], // the default: at most three
    [20, 3],
  ];
  for (const [limit, shells] of rows) {
    it(`opens at most ${shells} shell(s) where ${limit} channels may be open`, () => {
      const { link, asked } = linkOf(limit);
      const pool = new ShellPool(link);
      for (let i = 0; i < 6; i++) pool.openBeside();
      expect(asked()).toBe(shells);
    });
  }
});
