import { describe, expect, it } from 'vitest';
import { expectedSocket } from '../../src/herdr/socket-path.js';

describe('expectedSocket: where herdr looks for its server', () => {
  const home = '/home/ann';
  it('defaults to the config dir under HOME', () => {
    expect(expectedSocket({}, home)).toBe('/home/ann/.config/herdr/herdr.sock');
  });
  it('follows XDG_CONFIG_HOME when absolute, and ignores a relative one as herdr does', () => {
    expect(expectedSocket({ XDG_CONFIG_HOME: '/cfg' }, home)).toBe('/cfg/herdr/herdr.sock');
    expect(expectedSocket({ XDG_CONFIG_HOME: 'cfg' }, home)).toBe('/home/ann/.config/herdr/herdr.sock');
  });
  it('takes HERDR_SOCKET_PATH before a session name', () => {
    expect(expectedSocket({ HERDR_SOCKET_PATH: '/run/h.sock', HERDR_SESSION: 'work' }, home)).toBe('/run/h.sock');
  });
  it('puts a named session under sessions/, and `default` is the default session', () => {
    expect(expectedSocket({ HERDR_SESSION: 'work' }, home)).toBe('/home/ann/.config/herdr/sessions/work/herdr.sock');
    expect(expectedSocket({ HERDR_SESSION: 'default' }, home)).toBe('/home/ann/.config/herdr/herdr.sock');
  });
  it('gives up on a session name herdr would refuse (its CLI then says why)', () => {
    expect(expectedSocket({ HERDR_SESSION: '../x' }, home)).toBeNull();
    expect(expectedSocket({ HERDR_SESSION: '-x' }, home)).toBeNull();
  });
});
