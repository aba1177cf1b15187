// A handoff's id names its journal, its refs (refs/handoff/<id>/…), its branch (handoff/<id>) and
// its lock owner. Time-ordered so `history` sorts naturally; 64 bits of randomness so two
// handoffs never collide, even from two controllers in the same second.
import { randomBytes } from 'node:crypto';

export const HANDOFF_ID_RE = /^[0-9a-z][0-9a-z-]{7,63}$/;

export function newHandoffId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${stamp}-${randomBytes(8).toString('hex')}`;
}
