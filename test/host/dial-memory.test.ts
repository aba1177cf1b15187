// Where a target's first TCP connect went, kept for the launcher's early dial: read back as
// written, private, rewritten only when the address changed, bounded, and a foreign or broken
// file is no memory (never an error).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { dialMemoryFile, recallDial, rememberDial } from '../../src/host/dial-memory.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tempDir = tempDirs('ah-dial-memory-');

describe('dial memory', () => {
  it('reads back what it remembered, per target as typed, in a private file in a private folder', async () => {
    const file = path.join(tempDir(), 'cache', 'agent-handoff', 'dial.json');
    expect(recallDial('vega', file)).toBeNull();
    await rememberDial('vega', { host: '10.0.0.5', port: 22 }, file);
    await rememberDial('me@box', { host: 'box.example', port: 2222 }, file);
    expect(recallDial('vega', file)).toEqual({ host: '10.0.0.5', port: 22 });
    expect(recallDial('me@box', file)).toEqual({ host: 'box.example', port: 2222 });
    expect(recallDial('box', file)).toBeNull();
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['dial.json']);
  });

  it('writes only when the address changed', async () => {
    const file = path.join(tempDir(), 'dial.json');
    await rememberDial('vega', { host: '10.0.0.5', port: 22 }, file);
    // A whole second: a time with a fraction may come back from the file system a microsecond off.
    const past = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000);
    fs.utimesSync(file, past, past);
    await rememberDial('vega', { host: '10.0.0.5', port: 22 }, file);
    expect(fs.statSync(file).mtimeMs).toBe(past.getTime());
    await rememberDial('vega', { host: '10.0.0.5', port: 2200 }, file);
    expect(recallDial('vega', file)).toEqual({ host: '10.0.0.5', port: 2200 });
  });

  it('keeps the 32 targets changed last', async () => {
    const file = path.join(tempDir(), 'dial.json');
    for (let i = 0; i < 40; i++) await rememberDial(`h${i}`, { host: `10.0.0.${i}`, port: 22 }, file);
    expect(recallDial('h7', file)).toBeNull();
    expect(recallDial('h8', file)).toEqual({ host: '10.0.0.8', port: 22 });
    expect(recallDial('h39', file)).toEqual({ host: '10.0.0.39', port: 22 });
  });

  it('a broken or foreign file is no memory, and is replaced by the next write', async () => {
    const file = path.join(tempDir(), 'dial.json');
    for (const text of ['{', '[]', '{"version":2,"targets":{}}', '{"version":1,"targets":{"vega":{"host":"x","port":70000}}}']) {
      fs.writeFileSync(file, text);
      expect(recallDial('vega', file)).toBeNull();
    }
    await rememberDial('vega', { host: '10.0.0.5', port: 22 }, file);
    expect(recallDial('vega', file)).toEqual({ host: '10.0.0.5', port: 22 });
  });

  it('a file that cannot be written is not an error', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'not-a-folder'), '');
    await expect(rememberDial('vega', { host: '10.0.0.5', port: 22 }, path.join(dir, 'not-a-folder', 'dial.json'))).resolves.toBeUndefined();
  });

  it('lives in the cache folder the launcher reads (XDG_CACHE_HOME when absolute)', async () => {
    expect(dialMemoryFile({ XDG_CACHE_HOME: '/c' })).toBe('/c/agent-handoff/dial.json');
    expect(dialMemoryFile({ XDG_CACHE_HOME: 'relative' })).toMatch(/\/\.cache\/agent-handoff\/dial\.json$/);
  });
});
