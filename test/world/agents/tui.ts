// The terminal side of a fake agent: raw keys in, whole-screen redraws out, and the modal
// screens (menus, [y/N] questions) that block an agent until its user answers.
export type KeyName = 'char' | 'enter' | 'up' | 'down' | 'left' | 'right' | 'esc' | 'backspace' | 'tab' | 'ctrl-c' | 'ctrl-d' | 'ctrl-q' | 'other';

export interface Key {
  name: KeyName;
  ch?: string;
  /** When the chunk carrying this key arrived (ms); keys pasted in one chunk share it. */
  at: number;
}

const CSI = /^\x1b\[[0-9;?<>=]*[ -/]*[@-~]/;

/** Split one chunk of terminal input into keys. Unknown escape sequences are dropped. */
export function parseKeys(chunk: string, at: number): Key[] {
  const keys: Key[] = [];
  let i = 0;
  while (i < chunk.length) {
    const rest = chunk.slice(i);
    const c = rest[0]!;
    if (c === '\x1b') {
      if (rest.length === 1) {
        keys.push({ name: 'esc', at });
        i += 1;
        continue;
      }
      const ss3 = /^\x1bO([A-D])/.exec(rest);
      const csi = CSI.exec(rest);
      const seq = ss3?.[0] ?? csi?.[0];
      if (seq) {
        const last = seq[seq.length - 1];
        const arrows: Record<string, KeyName> = { A: 'up', B: 'down', C: 'right', D: 'left' };
        if (last && arrows[last] && (ss3 || /^\x1b\[(1;1)?[A-D]$/.test(seq))) keys.push({ name: arrows[last], at });
        else if (seq === '\x1b[13u' || seq === '\x1b[27;1;13~') keys.push({ name: 'enter', at });
        // other sequences (bracketed paste markers, focus events, modified keys) are ignored
        i += seq.length;
        continue;
      }
      if (rest[1] === '\x1b') {
        keys.push({ name: 'esc', at });
        i += 1;
        continue;
      }
      i += 2; // alt+key: not used by the fakes
      continue;
    }
    const cp = chunk.codePointAt(i)!;
    const ch = String.fromCodePoint(cp);
    i += ch.length;
    if (ch === '\r' || ch === '\n') keys.push({ name: 'enter', at });
    else if (ch === '\x7f' || ch === '\b') keys.push({ name: 'backspace', at });
    else if (ch === '\t') keys.push({ name: 'tab', at });
    else if (ch === '\x03') keys.push({ name: 'ctrl-c', at });
    else if (ch === '\x04') keys.push({ name: 'ctrl-d', at });
    else if (ch === '\x11') keys.push({ name: 'ctrl-q', at });
    else if (cp < 0x20) keys.push({ name: 'other', ch, at });
    else keys.push({ name: 'char', ch, at });
  }
  return keys;
}

export interface Frame {
  header: string[];
  body: string[];
  footer: string[];
}

export interface MenuOptions {
  /** Text above the options. */
  lines: string[];
  options: string[];
  /** Highlight marker of the agent (`❯`, `›`, `→`). */
  marker: string;
  /** `1. Yes …` numbering, and digits select directly (claude, codex). */
  numbered: boolean;
  initial?: number;
  footer?: string[];
  /** Single keys that end the menu (grok login `l`/`q`); reported back as `{ key }`. */
  hotkeys?: string[];
}

export type MenuResult = { index: number } | { key: 'esc' | 'ctrl-c' | string };

export class Tui {
  private queue: Key[] = [];
  private waiters: ((k: Key) => void)[] = [];
  private lastFrame: Frame | undefined;
  private readonly onData = (d: Buffer | string) => this.push(parseKeys(d.toString(), Date.now()));
  private readonly onResize = () => {
    if (this.lastFrame) this.draw(this.lastFrame);
  };
  private started = false;

  start(): void {
    if (this.started) return;
    this.started = true;
    if (process.stdin.isTTY) process.stdin.setRawMode(true);
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', this.onData);
    process.stdin.resume();
    process.stdout.on('resize', this.onResize);
  }

  stop(): void {
    if (!this.started) return;
    this.started = false;
    process.stdin.off('data', this.onData);
    process.stdout.off('resize', this.onResize);
    if (process.stdin.isTTY) process.stdin.setRawMode(false);
    process.stdin.pause();
  }

  private push(keys: Key[]): void {
    for (const k of keys) {
      const w = this.waiters.shift();
      if (w) w(k);
      else this.queue.push(k);
    }
  }

  /** The next key, in arrival order. */
  key(): Promise<Key> {
    const k = this.queue.shift();
    if (k) return Promise.resolve(k);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Clear and draw the whole screen; the body is cut from the top so header and footer stay visible. */
  draw(frame: Frame): void {
    this.lastFrame = frame;
    const rows = process.stdout.rows || 40;
    const cols = process.stdout.columns || 120;
    const height = (l: string) => Math.max(1, Math.ceil([...l].length / cols));
    let room = rows - frame.header.reduce((n, l) => n + height(l), 0) - frame.footer.reduce((n, l) => n + height(l), 0) - 1;
    const body: string[] = [];
    for (let i = frame.body.length - 1; i >= 0 && room > 0; i--) {
      const l = frame.body[i]!;
      room -= height(l);
      if (room >= 0) body.unshift(l);
    }
    const text = [...frame.header, ...body, ...frame.footer].join('\r\n');
    process.stdout.write('\x1b[H\x1b[2J\x1b[3J' + text);
  }

  /** A blocking menu: arrows move the marker, Enter (or a digit) picks. */
  async menu(o: MenuOptions): Promise<MenuResult> {
    let sel = o.initial ?? 0;
    for (;;) {
      const opts = o.options.map((t, i) => `${i === sel ? o.marker : ' '} ${o.numbered ? `${i + 1}. ` : ''}${t}`);
      this.draw({ header: [], body: [...o.lines, '', ...opts], footer: o.footer ? ['', ...o.footer] : [] });
      const k = await this.key();
      if (k.name === 'up') sel = Math.max(0, sel - 1);
      else if (k.name === 'down') sel = Math.min(o.options.length - 1, sel + 1);
      else if (k.name === 'enter') return { index: sel };
      else if (k.name === 'esc' || k.name === 'ctrl-c') return { key: k.name };
      else if (k.name === 'char' && k.ch) {
        const n = Number(k.ch);
        if (o.numbered && Number.isInteger(n) && n >= 1 && n <= o.options.length) return { index: n - 1 };
        if (o.hotkeys?.includes(k.ch)) return { key: k.ch };
      }
    }
  }

  /** A readline-style question (`… [y/N] `): the typed line, on Enter. */
  async ask(lines: string[], question: string): Promise<string> {
    let answer = '';
    for (;;) {
      this.draw({ header: [], body: [...lines, question + answer], footer: [] });
      const k = await this.key();
      if (k.name === 'enter') return answer;
      if (k.name === 'ctrl-c') return '';
      if (k.name === 'backspace') answer = [...answer].slice(0, -1).join('');
      else if (k.name === 'char' && k.ch) answer += k.ch;
    }
  }
}
