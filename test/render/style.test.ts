import { describe, expect, it } from 'vitest';
import { bytesText, durationText, styleFor, table, tildePath, visibleWidth } from '../../src/render/style.js';

describe('render style', () => {
  it('tildePath shortens only a whole leading home', () => {
    expect(tildePath('/home/me/src/x', '/home/me')).toBe('~/src/x');
    expect(tildePath('/home/me', '/home/me/')).toBe('~');
    expect(tildePath('/home/meow/x', '/home/me')).toBe('/home/meow/x');
    expect(tildePath('/x', '/')).toBe('/x');
  });
  it('sizes and durations', () => {
    expect(bytesText(462)).toBe('462 B');
    expect(bytesText(1907)).toBe('1.9 kB');
    expect(bytesText(12_300_000)).toBe('12 MB');
    expect(durationText(2900)).toBe('2.9 s');
    expect(durationText(95_000)).toBe('1 min 35 s');
  });
  it('a table pads by visible width and leaves no trailing blanks', () => {
    const s = styleFor(true);
    const text = table(['A', 'B'], [[s.red('xx'), 'y'], ['z', '']], s);
    expect(text.split('\n').map((l) => l.replace(/\x1b\[[0-9;]*m/g, ''))).toEqual(['A   B', 'xx  y', 'z', '']);
    expect(visibleWidth(s.bold('abc'))).toBe(3);
  });
  it('no colour: no escapes', () => {
    const s = styleFor(false);
    expect(s.red(s.bold('x'))).toBe('x');
  });
});
