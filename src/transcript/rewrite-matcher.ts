// The matcher: works on Buffers (no string conversion per chunk). Candidates are found with
// Buffer#indexOf on an "anchor" — the longest run of name characters in a source spelling, so
// `/home/a`, `\/home\/a` and `file:///home/a` share the anchor `home` — then checked in full.
//
// Matching rules (tested in test/transcript/rewrite.test.ts):
// - All sources (every spelling, every escaping level) are matched together in one scan: at each
//   position the longest source whose boundaries hold wins, matches never overlap, and the scan
//   continues after the replaced text, so output is never rewritten twice.
// - A source matches only at path-component boundaries:
//   before it: start of stream, or any character that cannot end a path component — i.e. NOT
//     `A–Z a–z 0–9 . _ ~ + % # $ ! / -` and not a byte ≥ 0x80 — or a JSON escape `\n \r \t \b \f`
//     (a path right after an escaped newline in a JSON string);
//   after it: end of stream, `/`, or any character that cannot continue a path component — i.e.
//     NOT `A–Z a–z 0–9 _ ~ + % # $ ! @ -`, a byte ≥ 0x80, or `.` followed by one of those
//     (a sentence's full stop is a boundary; `/x/repo.old` is another file) — and not a JSON
//     `\uXXXX` escape (an escaped non-ASCII character continuing the name).
// - It works on raw bytes; anything that is not a match is copied as is (binary included).
import type { RewritePlan } from './rewrite-plan.js';
import { replacementsOf, type Replacement } from './path-spellings.js';

/** Byte classes: 1 = may end a path component (before a source), 2 = may continue one (after). */
const ENDS_COMPONENT = 1;
const CONTINUES_COMPONENT = 2;
const CLASS = (() => {
  const t = new Uint8Array(256);
  const set = (chars: string, bit: number) => {
    for (const c of chars) t[c.charCodeAt(0)]! |= bit;
  };
  const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  set(alnum + '._~+%#$!/-', ENDS_COMPONENT);
  set(alnum + '_~+%#$!@-', CONTINUES_COMPONENT);
  for (let b = 0x80; b < 0x100; b++) t[b]! |= ENDS_COMPONENT | CONTINUES_COMPONENT;
  return t;
})();
const isJsonEscapeLetter = (c: number) => c === 0x6e || c === 0x72 || c === 0x74 || c === 0x62 || c === 0x66; // n r t b f
const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
/** How many bytes past a match the boundary check may inspect (`\\\\\\\\u00e9`). */
export const LOOKAHEAD = 16;

/** The longest run of [A-Za-z0-9._-] in a spelling (whole spelling when it has no run of 3). */
function anchorOf(s: string): { anchor: string; offset: number } {
  let best = { anchor: '', offset: 0 };
  for (const m of s.matchAll(/[A-Za-z0-9._-]+/g)) if (m[0].length > best.anchor.length) best = { anchor: m[0], offset: m.index };
  return best.anchor.length >= 3 ? best : { anchor: s, offset: 0 };
}

interface AnchorGroup {
  anchor: Buffer;
  members: { src: number; offset: number }[];
  maxOffset: number;
}

export interface Match {
  at: number;
  /** Index into `RewriteMatcher.sources`. */
  src: number;
}

export class RewriteMatcher {
  /** Source spellings, longest first, and their targets. */
  readonly sources: Buffer[];
  readonly targets: Buffer[];
  readonly groups: AnchorGroup[];
  readonly maxLen: number;

  constructor(replacements: readonly Replacement[]) {
    const reps = [...replacements].sort((a, b) => b.from.length - a.from.length);
    this.sources = reps.map((r) => Buffer.from(r.from, 'latin1'));
    this.targets = reps.map((r) => Buffer.from(r.to, 'latin1'));
    this.maxLen = this.sources.reduce((n, s) => Math.max(n, s.length), 0);
    const byAnchor = new Map<string, AnchorGroup>();
    reps.forEach((r, src) => {
      const { anchor, offset } = anchorOf(r.from);
      let g = byAnchor.get(anchor);
      if (!g) byAnchor.set(anchor, (g = { anchor: Buffer.from(anchor, 'latin1'), members: [], maxOffset: 0 }));
      g.members.push({ src, offset });
      g.maxOffset = Math.max(g.maxOffset, offset);
    });
    this.groups = [...byAnchor.values()];
  }

  /** May a source start at `i`? (`atStart`: `i` is the start of the stream.) */
  boundaryBefore(buf: Buffer, i: number, atStart: boolean): boolean {
    if (i === 0) return atStart;
    const prev = buf[i - 1]!;
    if (!(CLASS[prev]! & ENDS_COMPONENT)) return true;
    // right after a JSON escape such as `\n` (a path starting a new line inside a JSON string)
    return i >= 2 && buf[i - 2] === 0x5c && isJsonEscapeLetter(prev);
  }

  /** May a source end at `j`? (`buf` ends at the end of the stream or ≥ LOOKAHEAD past `j`.) */
  boundaryAfter(buf: Buffer, j: number): boolean {
    if (j >= buf.length) return true;
    const c = buf[j]!;
    if (c === 0x2e) {
      // `.`: a full stop ends the path; `.old` continues it
      return j + 1 >= buf.length || !(CLASS[buf[j + 1]!]! & CONTINUES_COMPONENT);
    }
    if (c === 0x5c) {
      // `\uXXXX` (at any escaping level): an escaped non-ASCII character continuing the name
      let k = j;
      while (k < buf.length && k - j < 8 && buf[k] === 0x5c) k++;
      if (buf[k] !== 0x75) return true;
      for (let h = 1; h <= 4; h++) if (!isHex(buf[k + h] ?? 0)) return true;
      return false;
    }
    return !(CLASS[c]! & CONTINUES_COMPONENT);
  }

  /**
   * Matches starting in [from, cut) of `buf`, left to right, longest first at each position,
   * never overlapping. Every match lies inside `buf`, and its boundaries are decided.
   */
  scan(buf: Buffer, from: number, cut: number, atStart: boolean): Match[] {
    const cands: Match[] = [];
    for (const g of this.groups) {
      const limit = cut + g.maxOffset;
      for (let q = buf.indexOf(g.anchor, from); q >= 0 && q < limit; q = buf.indexOf(g.anchor, q + 1)) {
        for (const mem of g.members) {
          const at = q - mem.offset;
          if (at < from || at >= cut) continue;
          const s = this.sources[mem.src]!;
          if (at + s.length <= buf.length && buf.compare(s, 0, s.length, at, at + s.length) === 0) cands.push({ at, src: mem.src });
        }
      }
    }
    if (cands.length === 0) return cands;
    // sources are sorted longest first, so a lower index is a longer source
    cands.sort((a, b) => a.at - b.at || a.src - b.src);
    const out: Match[] = [];
    let pos = from;
    let checkedBefore = -1;
    let beforeOk = false;
    for (const c of cands) {
      if (c.at < pos) continue;
      if (c.at !== checkedBefore) {
        checkedBefore = c.at;
        beforeOk = this.boundaryBefore(buf, c.at, atStart && c.at === 0);
      }
      if (!beforeOk) continue;
      const end = c.at + this.sources[c.src]!.length;
      if (!this.boundaryAfter(buf, end)) continue;
      out.push(c);
      pos = end;
    }
    return out;
  }
}

/** The matcher for a plan (build once, share across the files of a unit). */
export function matcherFor(plan: RewritePlan): RewriteMatcher {
  return new RewriteMatcher(replacementsOf(plan));
}
