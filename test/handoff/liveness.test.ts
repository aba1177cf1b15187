// A controller is alive when its pid runs and, when its start time was recorded, that pid still
// belongs to the process that started then (pids are reused). Old records keep the pid-only rule.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HandoffError } from '../../src/errors.js';
import { failedOutcome } from '../../src/commands/send.js';
import { HandoffFailed } from '../../src/handoff/rollback.js';
import { Journal, listJournals, newHandoffId } from '../../src/handoff/journal.js';
import { LockOwner, localLiveness } from '../../src/handoff/lock.js';
import { parseStartTicks, pidAlive, processStartId } from '../../src/handoff/process-age.js';
import { controllerOf, recoverOne, stillRunning } from '../../src/handoff/recover.js';

const linux = process.platform === 'linux';
const DEAD = 2 ** 22 + 12345; // above every pid_max: never alive

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-live-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('process start time', () => {
  it('reads field 22 even when the command name holds spaces and parentheses', () => {
    const rest = Array.from({ length: 30 }, (_, i) => String(i + 3)).join(' ');
    expect(parseStartTicks(`4242 (a) b (c) ${rest}`)).toBe('22');
    expect(parseStartTicks('4242 (x) S 1')).toBeNull();
    expect(parseStartTicks('garbage')).toBeNull();
  });

  it.runIf(linux)('identifies this process by boot id and start ticks, the same every time', () => {
    const me = processStartId(process.pid);
    expect(me).toMatch(/^[0-9a-f-]{36}:\d+$/);
    expect(processStartId(process.pid)).toBe(me);
    expect(me?.split(':')[0]).toBe(fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
    expect(processStartId(DEAD)).toBeNull();
  });

  it.runIf(linux)('a child started later has another start; once it exits it is dead whatever was recorded', async () => {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    const start = processStartId(child.pid!);
    expect(start).not.toBeNull();
    expect(pidAlive(child.pid!, start)).toBe(true);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    expect(pidAlive(child.pid!, start)).toBe(false);
    expect(pidAlive(child.pid!)).toBe(false);
  });
});

describe('liveness', () => {
  const me = () => processStartId(process.pid);

  it.runIf(linux)('a live pid with its recorded start is alive', () => {
    expect(pidAlive(process.pid, me())).toBe(true);
  });
  it.runIf(linux)('a live pid recorded with another start time is dead (the pid was reused)', () => {
    const [boot, ticks] = me()!.split(':');
    expect(pidAlive(process.pid, `${boot}:${Number(ticks) + 1}`)).toBe(false);
    // The same ticks in another boot: a process from before a reboot.
    expect(pidAlive(process.pid, `00000000-0000-0000-0000-000000000000:${ticks}`)).toBe(false);
  });
  it('without a recorded start the pid alone decides (old records)', () => {
    expect(pidAlive(process.pid)).toBe(true);
    expect(pidAlive(process.pid, null)).toBe(true);
    expect(pidAlive(DEAD)).toBe(false);
    // 0 and negative pids name process groups.
    expect(pidAlive(0)).toBe(false);
    expect(pidAlive(-1)).toBe(false);
  });
  it.runIf(linux)('lock holders: other controllers cannot be answered; ours by pid and start', () => {
    const live = localLiveness(os.hostname());
    expect(live({ controller: 'elsewhere', pid: process.pid, pid_start: me() })).toBeNull();
    expect(live({ controller: os.hostname(), pid: process.pid, pid_start: me() })).toBe(true);
    expect(live({ controller: os.hostname(), pid: process.pid, pid_start: 'x:1' })).toBe(false);
    expect(live({ controller: os.hostname(), pid: process.pid })).toBe(true);
    expect(live({ controller: os.hostname(), pid: DEAD })).toBe(false);
  });
  it('an owner file written before start times were recorded still parses', () => {
    const old = { handoff: 'h', controller: 'c', pid: 12, started: '2025-01-01T00:00:00Z' };
    expect(LockOwner.parse(old)).toEqual(old);
  });
});

describe('journal controller', () => {
  const header = (controller?: Record<string, unknown>) => ({ agent: 'a', kind: 'pi', pane: 'w1:p1', session: 's', source_spec: 'local', target_spec: 'local', ...(controller ? { controller } : {}) });

  it.runIf(linux)('running while the recorded controller lives; dead when its pid now has another start', () => {
    const live = Journal.create(dir, newHandoffId(), header({ host: os.hostname(), pid: process.pid, pid_start: processStartId(process.pid) }));
    live.record('controller', { kind: 'controller', host: os.hostname(), pid: process.pid });
    expect(stillRunning(live.events())?.pid).toBe(process.pid);
    const reused = Journal.create(dir, newHandoffId(), header({ host: os.hostname(), pid: process.pid, pid_start: 'boot:1' }));
    reused.record('controller', { kind: 'controller', host: os.hostname(), pid: process.pid });
    expect(controllerOf(reused.events())).toMatchObject({ pid: process.pid, pid_start: 'boot:1' });
    expect(stillRunning(reused.events())).toBeNull();
  });
  it('an old journal (controller record only) keeps the pid-only rule', () => {
    const old = Journal.create(dir, newHandoffId(), header());
    old.record('controller', { kind: 'controller', host: os.hostname(), pid: process.pid });
    expect(controllerOf(old.events())).toEqual({ host: os.hostname(), pid: process.pid });
    expect(stillRunning(old.events())?.pid).toBe(process.pid);
    const gone = Journal.create(dir, newHandoffId(), header());
    gone.record('controller', { kind: 'controller', host: os.hostname(), pid: DEAD });
    expect(stillRunning(gone.events())).toBeNull();
  });
  it('killed before its first record: the header still names the controller', () => {
    const j = Journal.create(dir, newHandoffId(), header({ host: os.hostname(), pid: process.pid, pid_start: processStartId(process.pid) }));
    expect(stillRunning(j.events())?.pid).toBe(process.pid);
    j.outcome('failed');
    expect(stillRunning(j.events())).toBeNull();
  });
  it('one recovery of a journal at a time: a second one beside it is told it is running', async () => {
    const id = newHandoffId();
    const j = Journal.create(dir, id, { ...header({ host: os.hostname(), pid: DEAD }), pane: `no-such-pane-${id}`, session: `no-such-session-${id}` });
    j.record('controller', { kind: 'controller', host: os.hostname(), pid: DEAD });
    const [a, b] = await Promise.all([recoverOne(dir, id, { forceRollback: false, timeoutS: 10 }), recoverOne(dir, id, { forceRollback: false, timeoutS: 10 })]);
    expect([a.action, b.action].sort()).toEqual(['nothing_to_do', 'still_running']);
    // The claim is gone afterwards, and a stale one (dead process) is taken over.
    expect(fs.readdirSync(path.join(dir, 'handoffs')).filter((f) => !f.endsWith('.jsonl'))).toEqual([]);
    const id2 = newHandoffId();
    Journal.create(dir, id2, header()).record('controller', { kind: 'controller', host: os.hostname(), pid: DEAD });
    fs.writeFileSync(path.join(dir, 'handoffs', `${id2}.recovering`), JSON.stringify({ pid: DEAD }));
    expect((await recoverOne(dir, id2, { forceRollback: false, timeoutS: 10 })).action).toBe('nothing_to_do');
  });
});

describe('outcome of a failed handoff', () => {
  const failed = (errors: { what: string; error: string }[]) => new HandoffFailed(new HandoffError('transfer_failed', 'cut'), 'transfer', { undone: ['x'], errors, restart: null });

  it('a rollback with undo errors is recorded as rollback_incomplete, one without as rolled_back', () => {
    expect(failedOutcome(failed([{ what: 'refs', error: 'unreachable' }]))).toBe('rollback_incomplete');
    expect(failedOutcome(failed([]))).toBe('rolled_back');
    expect(failedOutcome(new HandoffError('agent_busy', 'busy'))).toBe('failed');
  });
  it('history shows rollback_incomplete for new journals, and still corrects old ones', () => {
    const now = Journal.create(dir, newHandoffId(), {});
    now.append({ type: 'undone', data: { undone: [], errors: [{ what: 'refs', error: 'unreachable' }] } });
    now.outcome('rollback_incomplete');
    const old = Journal.create(dir, newHandoffId(), {});
    old.append({ type: 'undone', data: { undone: [], errors: [{ what: 'refs', error: 'unreachable' }] } });
    old.outcome('rolled_back');
    const byId = new Map(listJournals(dir).map((j) => [j.id, j.outcome]));
    expect(byId.get(now.id)).toBe('rollback_incomplete');
    expect(byId.get(old.id)).toBe('rollback_incomplete');
  });
});
