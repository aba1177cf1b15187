// How one path may appear in the bytes of a session file, and a plan's byte-level replacements
// in every such spelling.
import type { RewritePlan } from './rewrite-plan.js';

/** JSON string body with minimal escaping (as JSON.stringify / serde write it). */
const jsonMin = (s: string) => JSON.stringify(s).slice(1, -1);
/** JSON string body with non-ASCII as `\uXXXX` (Python's default). */
const jsonAscii = (s: string) => jsonMin(s).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** `/` written as `\/` (allowed by JSON, used by some writers). */
const slashEsc = (s: string) => s.replace(/\//g, '\\/');

/** A file URL's path: percent-encode bytes outside the URL path set (Rust `url`/WHATWG rules), keep `/`. */
export function fileUrlPath(p: string): string {
  let out = '';
  for (const b of Buffer.from(p, 'utf8')) {
    const keep = b > 0x20 && b < 0x7f && !'"#<>`?{}%'.includes(String.fromCharCode(b));
    out += keep ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

type Spelling = (s: string) => string;

/** Every spelling: plain and `file://` URL, each raw, JSON-escaped, and JSON-in-JSON escaped. */
const SPELLINGS: Spelling[] = (() => {
  const base: Spelling[] = [(s) => s, (s) => `file://${fileUrlPath(s)}`];
  const level1: Spelling[] = [jsonMin, jsonAscii, (s) => slashEsc(jsonMin(s)), (s) => slashEsc(jsonAscii(s))];
  const level2: Spelling[] = [jsonMin, jsonAscii];
  const out: Spelling[] = [];
  for (const b of base) {
    out.push(b);
    for (const l1 of level1) {
      out.push((s) => l1(b(s)));
      for (const l2 of level2) out.push((s) => l2(l1(b(s))));
    }
  }
  return out;
})();

const toBytes = (s: string) => Buffer.from(s, 'utf8').toString('latin1');

export interface Replacement {
  /** Source spelling as a latin1 string of its UTF-8 bytes. */
  from: string;
  to: string;
}

/** All byte-level replacements of a plan, longest first, each source spelling once. */
export function replacementsOf(plan: RewritePlan): Replacement[] {
  const seen = new Map<string, string>();
  for (const m of plan.mappings) {
    for (const spell of SPELLINGS) {
      const from = toBytes(spell(m.from));
      if (!seen.has(from)) seen.set(from, toBytes(spell(m.to)));
    }
  }
  return [...seen].filter(([f, t]) => f !== t).map(([from, to]) => ({ from, to })).sort((a, b) => b.from.length - a.from.length || (a.from < b.from ? -1 : 1));
}
