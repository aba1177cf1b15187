// What every renderer for a person shares: colours that are only there when asked for, aligned
// tables, paths shortened with `~`, sizes and durations in words a person reads at a glance.
// Pure: the caller decides whether colour is wanted (a terminal, and NO_COLOR unset).

/** How a renderer is asked to draw: with or without colour, and the home folder `~` stands for. */
export interface RenderOptions {
  color: boolean;
  home: string;
}

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

const sgr =
  (on: number, off: number) =>
  (s: string): string =>
    `\x1b[${on}m${s}\x1b[${off}m`;
const plain = (s: string): string => s;

export function styleFor(color: boolean): Style {
  if (!color) return { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain };
  return { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39) };
}

const SGR_RE = /\x1b\[[0-9;]*m/g;

/** The width a string takes on a terminal (escape sequences take none). */
export function visibleWidth(s: string): number {
  return [...s.replace(SGR_RE, '')].length;
}

/** Columns padded to their widest cell; the last column is not padded (no trailing blanks). */
export function table(header: string[], rows: string[][], style: Style): string {
  const widths = header.map((h, i) => Math.max(visibleWidth(h), ...rows.map((r) => visibleWidth(r[i] ?? ''))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i]! - visibleWidth(c))))
      .join('  ')
      .trimEnd();
  return [style.bold(line(header)), ...rows.map(line)].join('\n') + '\n';
}

/** `/home/me/src/x` → `~/src/x` (only a whole leading home folder). */
export function tildePath(p: string, home: string): string {
  if (!home || home === '/') return p;
  const h = home.endsWith('/') ? home.slice(0, -1) : home;
  if (p === h) return '~';
  return p.startsWith(`${h}/`) ? `~${p.slice(h.length)}` : p;
}

/** 1907 → "1.9 kB", 462 → "462 B" (decimal units, as disks and links are sold). */
export function bytesText(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = -1;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[u]}`;
}

/** 5123 → "5.1 s", 95_000 → "1 min 35 s". */
export function durationText(ms: number): string {
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

/** "1 file", "2 files". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** `label  value` lines with the labels padded to one width. */
export function fields(rows: [string, string][], style: Style, indent = '  '): string {
  const w = Math.max(0, ...rows.map(([k]) => visibleWidth(k)));
  return rows.map(([k, v]) => `${indent}${style.dim(k.padEnd(w))}  ${v.split('\n').join(`\n${indent}${' '.repeat(w)}  `)}`).join('\n') + (rows.length ? '\n' : '');
}
