// findSession (src/handoff/find-session.ts): a session herdr (or --session) names is located
// without the agent's folder, so the plan locates it beside the checkout's read; only a guess
// waits for the folder, and gets it with its links resolved.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Adapter, SessionRef } from '../../adapters/adapter.js';
import { findSession } from '../../src/handoff/find-session.js';
import type { SendOptions } from '../../src/handoff/options.js';
import type { Side } from '../../src/handoff/sides.js';
import type { AgentInfo } from '../../src/herdr/schemas.js';
import { LocalHost } from '../../src/host/local.js';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-find-session-'));
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const host = new LocalHost();
const side = { host, info: { home, loginEnv: {} }, herdr: {} } as unknown as Side;
const agent = (o: Partial<AgentInfo> = {}) => ({ pane_id: 'w1:p1', agent: 'codex', agent_status: 'idle', ...o }) as AgentInfo;
const opts = (session: string | null) => ({ session }) as SendOptions;

/** An adapter that records what it was asked: a handle located, or a guess from a folder. */
function adapter(): { adapter: Adapter; asked: string[] } {
  const asked: string[] = [];
  const a = {
    kind: 'codex',
    locate: (_h: unknown, handle: { kind: string; value: string }) => {
      asked.push(`locate ${handle.kind} ${handle.value}`);
      return Promise.resolve({ kind: 'codex', id: handle.value } as SessionRef);
    },
    guess: (_h: unknown, input: { cwd: string }) => {
      asked.push(`guess ${input.cwd}`);
      return Promise.resolve({ kind: 'codex', id: 'guessed' } as SessionRef);
    },
  } as unknown as Adapter;
  return { adapter: a, asked };
}

const never = new Promise<string>(() => undefined);
const noIntegration = () => Promise.resolve(null);
const ctx = { home, configRoot: path.join(home, '.codex') } as never;

describe('findSession', () => {
  it("locates herdr's handle without waiting for the folder", async () => {
    const { adapter: a, asked } = adapter();
    const found = await findSession(side, a, agent({ agent_session: { kind: 'id', value: 'from-herdr' } } as Partial<AgentInfo>), opts(null), ctx, never, () => Promise.resolve(Date.now()), noIntegration);
    expect(found).toEqual({ ref: { kind: 'codex', id: 'from-herdr' }, via: 'herdr' });
    expect(asked).toEqual(['locate id from-herdr']);
  });

  it('locates --session without waiting for the folder, paths and ids told apart', async () => {
    const { adapter: a, asked } = adapter();
    expect((await findSession(side, a, agent(), opts('abc'), ctx, never, () => Promise.resolve(0), noIntegration)).via).toBe('option');
    await findSession(side, a, agent(), opts('/s/x.jsonl'), ctx, never, () => Promise.resolve(0), noIntegration);
    expect(asked).toEqual(['locate id abc', 'locate path /s/x.jsonl']);
  });

  it('guesses only once the folder is read, from that folder', async () => {
    const { adapter: a, asked } = adapter();
    let give: (cwd: string) => void = () => undefined;
    const cwd = new Promise<string>((resolve) => (give = resolve));
    const finding = findSession(side, a, agent(), opts(null), ctx, cwd, () => Promise.resolve(Date.now() - 60_000), noIntegration);
    await new Promise((r) => setTimeout(r, 20));
    expect(asked).toEqual([]);
    give('/real/folder');
    expect(await finding).toEqual({ ref: { kind: 'codex', id: 'guessed' }, via: 'guess' });
    expect(asked).toEqual(['guess /real/folder']);
  });
});
