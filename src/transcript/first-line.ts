// omp's session file starts with a `title` record padded with spaces (`"pad":"   "`) that omp
// rewrites in place, at the line's length (it cuts a title to fit, never letting line 1 grow).
// Should the path rewriter make that line longer, omp's next title write runs into line 2 and
// corrupts the session; so the rewritten line keeps exactly the byte length it had. The padding
// gives or takes the difference first; if it is not enough the title is shortened, only where a
// cut leaves valid JSON and UTF-8 and never inside a path. When nothing fits, the line stays as
// it was (a stale path in a title is harmless; a broken session is not).
//
// Lines are handled as latin1 strings: one character per byte, so lengths are byte lengths.

/** A JSON string value in a line: its body (between the quotes) and where that body lies. */
interface StringValue {
  start: number;
  end: number;
  text: string;
}

/** The first string value of `key` in the line (omp's title record is one flat object). */
function stringValue(line: string, key: string): StringValue | null {
  // A `"` inside a JSON string is escaped, so `"key":"` can only be a key and its value's start.
  const m = new RegExp(`"${key}"\\s*:\\s*"((?:[^"\\\\]|\\\\[\\s\\S])*)"`).exec(line);
  if (!m) return null;
  const start = m.index + m[0].length - 1 - m[1]!.length;
  return { start, end: start + m[1]!.length, text: m[1]! };
}

/** One character of a JSON string body: an escape, a UTF-8 sequence or a byte; `space` for whitespace. */
interface Unit {
  start: number;
  end: number;
  space: boolean;
}

const isContinuation = (c: number) => c >= 0x80 && c <= 0xbf;

function unitsOf(body: string): Unit[] {
  const out: Unit[] = [];
  for (let i = 0; i < body.length; ) {
    let end = i + 1;
    if (body[i] === '\\') {
      end = body[i + 1] === 'u' ? i + 6 : i + 2;
      // A surrogate pair written as two escapes is one character: never split it.
      if (/^\\u[dD][89abAB]/.test(body.slice(i, i + 4)) && /^\\u[dD][c-fC-F]/.test(body.slice(end, end + 4))) end += 6;
    } else if (body.charCodeAt(i) >= 0xc0) {
      while (end < body.length && isContinuation(body.charCodeAt(end))) end++;
    }
    const text = body.slice(i, end);
    out.push({ start: i, end: Math.min(end, body.length), space: text === ' ' || text === '\\n' || text === '\\t' || text === '\\r' });
    i = end;
  }
  return out;
}

/**
 * The longest start of a title's JSON body at least `need` bytes shorter, cut between characters,
 * never inside a path (a word with a `/`, or any of `paths` where it appears), trailing
 * whitespace dropped; null when even an empty title is not short enough.
 */
export function shortenTitle(body: string, need: number, paths: readonly string[] = []): string | null {
  if (need > body.length) return null;
  const units = unitsOf(body);
  const inside: [number, number][] = [];
  for (let i = 0; i < units.length; ) {
    if (units[i]!.space) {
      i++;
      continue;
    }
    let j = i;
    while (j < units.length && !units[j]!.space) j++;
    const word = body.slice(units[i]!.start, units[j - 1]!.end);
    if (word.includes('/')) inside.push([units[i]!.start, units[j - 1]!.end]);
    i = j;
  }
  for (const p of paths) {
    if (p.length === 0) continue;
    for (let at = body.indexOf(p); at >= 0; at = body.indexOf(p, at + 1)) inside.push([at, at + p.length]);
  }
  const cuttable = (b: number) => !inside.some(([s, e]) => s < b && b < e);
  const limit = body.length - need;
  let keep = 0;
  for (const u of units) if (u.start <= limit && cuttable(u.start)) keep = u.start;
  if (body.length <= limit) keep = body.length;
  for (let k = units.length - 1; k >= 0; k--) {
    const u = units[k]!;
    if (u.end === keep && u.space) keep = u.start;
  }
  return body.slice(0, keep);
}

/** Is `line` (bytes as latin1) valid UTF-8 holding one JSON object, with an optional newline? */
function isJsonObjectLine(line: string): boolean {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(line, 'latin1'));
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

/** `line` made `excess` bytes shorter (longer when negative) by its padding and title; null if it cannot be. */
function refit(line: string, excess: number, paths: readonly string[]): string | null {
  const padValue = stringValue(line, 'pad');
  const pad = padValue && /^ *$/.test(padValue.text) ? padValue : null;
  const title = stringValue(line, 'title');
  const fromPad = pad ? Math.min(pad.text.length, Math.max(0, excess)) : 0;
  let still = excess - fromPad;
  const edits: { start: number; end: number; text: string }[] = [];
  if (still > 0) {
    if (!title) return null;
    const kept = shortenTitle(title.text, still, paths);
    if (kept === null) return null;
    edits.push({ start: title.start, end: title.end, text: kept });
    still -= title.text.length - kept.length;
  }
  // `still` ≤ 0 now: that many spaces are given back, to the padding, else as JSON whitespace
  // after the title's value or before the object's closing brace.
  const spaces = ' '.repeat(-still);
  if (pad) edits.push({ start: pad.start, end: pad.end, text: ' '.repeat(pad.text.length - fromPad) + spaces });
  else if (spaces) {
    const at = title ? title.end + 1 : line.lastIndexOf('}');
    if (at < 0) return null;
    edits.push({ start: at, end: at, text: spaces });
  }
  let out = line;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/**
 * Line 1 as rewritten, brought back to the byte length of the original line (see above).
 * `paths` are the rewriter's target spellings: a title is never cut inside one.
 */
export function fitFirstLine(original: Buffer, rewritten: Buffer, paths: readonly Buffer[] = []): Buffer {
  if (rewritten.length === original.length) return rewritten;
  const newline = rewritten[rewritten.length - 1] === 0x0a ? '\n' : '';
  const line = rewritten.subarray(0, rewritten.length - newline.length).toString('latin1');
  const fitted = refit(line, rewritten.length - original.length, paths.map((p) => p.toString('latin1')));
  if (fitted === null || fitted.length + newline.length !== original.length || !isJsonObjectLine(fitted)) return original;
  return Buffer.from(fitted + newline, 'latin1');
}
