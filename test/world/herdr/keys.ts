// herdr's `send-keys` grammar, mapped onto tmux key names. Every key is parsed before any is sent.

export type KeyAction = { literal: string } | { tmuxKey: string };

const NAMED: Record<string, string> = {
  enter: 'Enter',
  return: 'Enter',
  esc: 'Escape',
  escape: 'Escape',
  tab: 'Tab',
  backspace: 'BSpace',
  bs: 'BSpace',
  space: 'Space',
  left: 'Left',
  right: 'Right',
  up: 'Up',
  down: 'Down',
};
// herdr also accepts f13 and up; tmux has no such keys, so the simulator refuses them (README).
for (let i = 1; i <= 12; i++) NAMED[`f${i}`] = `F${i}`;

const PUNCTUATION: Record<string, string> = {
  minus: '-',
  comma: ',',
  period: '.',
  slash: '/',
  backslash: '\\',
  quote: "'",
  double_quote: '"',
  semicolon: ';',
  colon: ':',
  percent: '%',
  ampersand: '&',
  backtick: '`',
  plus: '+',
};

const MODIFIERS: Record<string, 'C' | 'M' | 'S'> = { ctrl: 'C', control: 'C', alt: 'M', meta: 'M', option: 'M', shift: 'S' };
const IGNORED_MODIFIERS = new Set(['super', 'cmd', 'hyper']);

/** One key → tmux action, or null when herdr would answer `unsupported key`. */
export function parseKey(key: string): KeyAction | null {
  if (key.length === 0) return null;
  // herdr 0.8.2 knows one tmux-style alias, `C-c` (or `c-c`): `C-u`, `C-d`, `C-C` are unsupported.
  const spec = key === 'C-c' || key === 'c-c' ? 'ctrl+c' : key;
  if ([...spec].length === 1) return { literal: spec };
  const parts = spec.split('+');
  const base = parts.pop() ?? '';
  // "ctrl++" is unsupported (herdr wants "ctrl+plus").
  if (base === '') return null;
  const mods = new Set<'C' | 'M' | 'S'>();
  for (const m of parts) {
    const lower = m.toLowerCase();
    // super/cmd/hyper are accepted by herdr; a terminal has no way to send them, nor has tmux.
    if (IGNORED_MODIFIERS.has(lower)) continue;
    const mod = MODIFIERS[lower];
    if (!mod) return null;
    mods.add(mod);
  }
  let name: string | undefined;
  let char: string | undefined;
  const lower = base.toLowerCase();
  if (NAMED[lower]) name = NAMED[lower];
  else if (PUNCTUATION[lower]) char = PUNCTUATION[lower];
  else if ([...base].length === 1) char = base;
  else return null;
  if (char !== undefined) {
    if (/^[A-Z]$/.test(char)) {
      mods.add('S');
      char = char.toLowerCase();
    }
    if (mods.has('S') && /^[a-z]$/.test(char)) {
      mods.delete('S');
      char = char.toUpperCase();
    }
    if (mods.size === 0) return { literal: char };
    if (mods.has('C') && /^[A-Z]$/.test(char)) char = char.toLowerCase();
    name = char;
  }
  if (name === 'Tab' && mods.has('S')) {
    mods.delete('S');
    name = 'BTab';
  }
  const prefix = ['C', 'M', 'S'].filter((m) => mods.has(m as 'C')).map((m) => `${m}-`).join('');
  return { tmuxKey: `${prefix}${name ?? ''}` };
}
