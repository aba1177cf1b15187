// The plan's decisions as tables: each rule a pure function of what was read, run here without
// ssh, herdr or root. Names and paths come from the hostile corpus: a rule passes them through as
// data, into messages and answers, and never decides on their shape.
import { describe, expect, it } from 'vitest';
import type { SessionRef } from '../../adapters/adapter.js';
import { HandoffError } from '../../src/errors.js';
import type { DiscoverResult, TargetCheckout } from '../../src/git/discover.js';
import type { HerdrProbe } from '../../src/herdr/probe.js';
import type { AgentInfo, ProcessInfo } from '../../src/herdr/schemas.js';
import type { SendOptions } from '../../src/handoff/options.js';
import { agentFolder, agentProcess, checkoutSearch, chooseCheckout, cwdIn, movableKind, planWarnings, requireHerdr, sourceHandleOf, type CheckoutRuleOptions } from '../../src/handoff/plan-rules.js';
import { hostileArgs } from '../host/hostile-args.js';

const HOSTILE = hostileArgs('/nonexistent/canaries').filter((s) => s.length > 0);

function agent(o: Partial<AgentInfo> = {}): AgentInfo {
  return { terminal_id: 't1', pane_id: 'w1:p1', workspace_id: 'w1', tab_id: 'w1:t1', focused: false, agent_status: 'idle', revision: 1, agent: 'pi', name: 'api-pi', ...o } as AgentInfo;
}

/** The code a rule threw, or what it returned. */
function outcome<T>(rule: () => T): { code: string; error: string; fix: string | undefined } | { value: T } {
  try {
    return { value: rule() };
  } catch (err) {
    if (!(err instanceof HandoffError)) throw err;
    return { code: err.code, error: err.message, fix: err.fix };
  }
}

function codeOf(rule: () => unknown): string | null {
  const o = outcome(rule);
  return 'code' in o ? o.code : null;
}

describe('movableKind', () => {
  type Opts = { self?: boolean; wait?: boolean; dryRun?: boolean };
  const here = { label: 'laptop', isThisMachine: true, callerPane: 'w9:p9' };
  const none = { self: false, wait: false, dryRun: false };
  const rows: [string, Partial<AgentInfo>, Opts, Partial<typeof here>, string][] = [
    ['a supported kind, idle: its kind', {}, {}, {}, 'pi'],
    ['each supported kind', { agent: 'grok' }, {}, {}, 'grok'],
    ['a kind herdr could not tell', { agent: null }, {}, {}, 'unsupported_kind'],
    ['a kind agent-handoff cannot move', { agent: 'gemini' }, {}, {}, 'unsupported_kind'],
    ['the pane running this command', { pane_id: 'w9:p9' }, {}, {}, 'own_pane'],
    ['…with --self', { pane_id: 'w9:p9' }, { self: true }, {}, 'pi'],
    ['the same pane id on another machine is another pane', { pane_id: 'w9:p9' }, {}, { isThisMachine: false }, 'pi'],
    ['without a caller pane (not run in herdr)', { pane_id: 'w9:p9' }, {}, { callerPane: undefined }, 'pi'],
    ['working, without --wait', { agent_status: 'working' }, {}, {}, 'agent_busy'],
    ['blocked, without --wait', { agent_status: 'blocked' }, {}, {}, 'agent_busy'],
    ['working, with --wait', { agent_status: 'working' }, { wait: true }, {}, 'pi'],
    ['working, in a dry run', { agent_status: 'working' }, { dryRun: true }, {}, 'pi'],
    ['working, with --self (it moves after this turn)', { agent_status: 'working', pane_id: 'w9:p9' }, { self: true }, {}, 'pi'],
    ['done and unknown are not busy', { agent_status: 'done' }, {}, {}, 'pi'],
    ['an unsupported kind is said before it is the own pane', { agent: 'gemini', pane_id: 'w9:p9' }, {}, {}, 'unsupported_kind'],
    ['the own pane is said before it is busy', { agent_status: 'working', pane_id: 'w9:p9' }, {}, {}, 'own_pane'],
  ];
  for (const [what, a, o, where, expected] of rows) {
    it(what, () => {
      const opts = { ...none, ...o };
      const o2 = outcome(() => movableKind(agent(a), opts, { ...here, ...where }));
      expect('value' in o2 ? o2.value : o2.code).toBe(expected);
    });
  }

  it('a busy agent is told how to go on: answer it, or --wait', () => {
    const blocked = outcome(() => movableKind(agent({ agent_status: 'blocked' }), none, here));
    const working = outcome(() => movableKind(agent({ agent_status: 'working' }), none, here));
    expect('fix' in blocked && blocked.fix).toMatch(/Answer what it is asking first, or pass --wait/);
    expect('fix' in working && working.fix).toMatch(/Pass --wait/);
  });

  it('hostile kinds and names are refused as data, said as they are', () => {
    for (const kind of HOSTILE) {
      const o = outcome(() => movableKind(agent({ agent: kind }), none, here));
      expect(o).toMatchObject({ code: 'unsupported_kind' });
      expect('error' in o && o.error).toContain(`a ${kind} agent`);
    }
    for (const name of HOSTILE) {
      const o = outcome(() => movableKind(agent({ name, agent_status: 'working' }), none, here));
      expect('error' in o && o.error).toBe(`The agent ${name} is working.`);
    }
  });
});

describe('agentProcess and agentFolder', () => {
  const proc = (cwd: string | null, pid = 42) => ({ pid, argv: ['pi'], cwd }) as unknown as ProcessInfo;

  it("the pane's first foreground program is the agent's", () => {
    expect(agentProcess({ foreground_processes: [proc('/a', 1), proc('/b', 2)] }, 'w1:p1', 'laptop').pid).toBe(1);
  });

  it('a pane running no program: agent_not_found, told to list again', () => {
    const o = outcome(() => agentProcess({ foreground_processes: [] }, 'w1:p1', 'laptop'));
    expect(o).toMatchObject({ code: 'agent_not_found', fix: 'Run `agent-handoff list` again.' });
  });

  const rows: [string, Partial<AgentInfo>, ProcessInfo | null, string][] = [
    ["herdr's foreground cwd first", { foreground_cwd: '/fg', cwd: '/pane' }, proc('/proc'), '/fg'],
    ["else the program's", { cwd: '/pane' }, proc('/proc'), '/proc'],
    ["else the pane's", { cwd: '/pane' }, proc(null), '/pane'],
    ["the pane's when the program was not asked", { cwd: '/pane' }, null, '/pane'],
    ['none known: agent_cwd_unknown', {}, proc(null), 'agent_cwd_unknown'],
  ];
  for (const [what, a, p, expected] of rows) {
    it(what, () => {
      const o = outcome(() => agentFolder(agent(a), p));
      expect('value' in o ? o.value : o.code).toBe(expected);
    });
  }

  it('hostile folders come back as they are', () => {
    for (const cwd of HOSTILE) expect(agentFolder(agent({ foreground_cwd: cwd }), null)).toBe(cwd);
  });
});

describe('requireHerdr', () => {
  const running: HerdrProbe = { path: '/usr/bin/herdr', version: { version: '0.8.2', ok: true }, server: 'running', serverStatus: { status: 'running', running: true, compatible: true } };
  const rows: [string, Partial<HerdrProbe>, string | null][] = [
    ['installed, new enough, running, one protocol: takes part', {}, null],
    ["a version it could not read is a warning, not a refusal", { version: { version: 'unknown', ok: true, warning: 'herdr --version said nothing' } }, null],
    ['no status from the server (the quick probe): takes part', { serverStatus: null, version: null }, null],
    ['not on the login PATH', { server: 'not_installed', path: null, version: null, serverStatus: null }, 'herdr_not_installed'],
    ['older than 0.8.0', { version: { version: '0.7.9', ok: false } }, 'herdr_too_old'],
    ['its server is not running', { server: 'not_running', serverStatus: { status: 'not_running', running: false } }, 'server_not_running'],
    ['its CLI and server speak other protocols', { serverStatus: { status: 'running', running: true, compatible: false } }, 'protocol_mismatch'],
    ['its CLI uses another socket than the one that answered', { socketMismatch: { pinged: '/run/a.sock', cli: '/run/b.sock' } }, 'herdr_socket_mismatch'],
    ['not installed is said before anything else', { server: 'not_installed', version: { version: '0.7.0', ok: false } }, 'herdr_not_installed'],
    ['too old is said before a stopped server', { server: 'not_running', version: { version: '0.7.0', ok: false } }, 'herdr_too_old'],
  ];
  for (const [what, p, expected] of rows) {
    it(what, () => expect(codeOf(() => requireHerdr({ ...running, ...p }, 'vega'))).toBe(expected));
  }

  it('each refusal names the machine in its error and its fix', () => {
    for (const [, p, expected] of rows) {
      if (!expected) continue;
      for (const label of ['vega', ...HOSTILE.slice(0, 8)]) {
        const o = outcome(() => requireHerdr({ ...running, ...p }, label));
        expect(o).toMatchObject({ code: expected });
        if (!('code' in o)) continue;
        expect(o.error).toContain(label);
        expect(o.fix).toContain(label);
      }
    }
  });
});

describe('checkoutSearch and chooseCheckout', () => {
  const source = { repoRoot: '/home/u/src/app', realRoot: '/data/src/app' };
  const base: CheckoutRuleOptions = { here: false, dir: null, newWorktree: false, newBranch: false };

  const searchRows: [string, Partial<SendOptions>, number, string | null, string][] = [
    ['to another machine: search', {}, 1, null, 'required'],
    ['to another machine, --dir: search (it checks the folder)', { dir: '/x' }, 1, null, 'required'],
    ['to another machine without a remote: no_remote', {}, 0, null, 'no_remote'],
    ['--here: look for another checkout, else a new worktree', { here: true }, 1, null, 'optional'],
    ['--here --dir: the named checkout must be one', { here: true, dir: '/other' }, 1, '/other', 'required'],
    ['--here --new-worktree: no search', { here: true, newWorktree: true }, 1, null, 'none'],
    ['--here without a remote: a new worktree', { here: true }, 0, null, 'none'],
    ["--here --dir naming the agent's own checkout (by its real path)", { here: true, dir: '/home/u/src/app' }, 1, '/data/src/app', 'dir_is_source'],
    ["--here --dir naming it, without a remote: still said", { here: true, dir: '/data/src/app' }, 0, '/data/src/app', 'dir_is_source'],
  ];
  for (const [what, o, remotes, dirReal, expected] of searchRows) {
    it(what, () => {
      const r = outcome(() => checkoutSearch({ ...base, ...o }, source, remotes, dirReal));
      expect('value' in r ? r.value : r.code).toBe(expected);
    });
  }

  const checkout = (path: string, worktrees: string[] = []): TargetCheckout => ({ path, worktrees: [path, ...worktrees].map((p) => ({ path: p, branch: 'main', head: 'a'.repeat(40) })) as TargetCheckout['worktrees'], remote: 'example/app', branchWorktree: null, lastUsedMs: 0 });
  const found = (...checkouts: TargetCheckout[]): DiscoverResult => ({ checkout: checkouts[0]!, checkouts, via: 'scan', cache: 'miss', roots: [], saved: Promise.resolve() });

  type Choice = { targetRepo: string; otherCheckouts: string[]; newBranch: boolean; discovered: boolean } | string;
  const chooseRows: [string, Partial<SendOptions>, DiscoverResult | null, Choice][] = [
    ['to another machine: the best checkout found, the others listed', {}, found(checkout('/t/a'), checkout('/t/b'), checkout('/t/c')), { targetRepo: '/t/a', otherCheckouts: ['/t/b', '/t/c'], newBranch: false, discovered: true }],
    ['to another machine, --new-branch', { newBranch: true }, found(checkout('/t/a')), { targetRepo: '/t/a', otherCheckouts: [], newBranch: true, discovered: true }],
    ['--here: another checkout of the repository', { here: true }, found(checkout('/home/u/src/app'), checkout('/t/other')), { targetRepo: '/t/other', otherCheckouts: [], newBranch: false, discovered: true }],
    ["--here: the agent's own checkout is never chosen, found as a linked worktree either", { here: true }, found(checkout('/t/main', ['/home/u/src/app']), checkout('/t/b')), { targetRepo: '/t/b', otherCheckouts: [], newBranch: false, discovered: true }],
    ['--here, nothing else found: a new worktree of its own on a new branch', { here: true }, found(checkout('/home/u/src/app')), { targetRepo: '/home/u/src/app', otherCheckouts: [], newBranch: true, discovered: false }],
    ['--here, no search: a new worktree on a new branch', { here: true, newWorktree: true }, null, { targetRepo: '/home/u/src/app', otherCheckouts: [], newBranch: true, discovered: false }],
    ["--here --dir inside the agent's own repository: dir_is_source", { here: true, dir: '/home/u/src/app/sub' }, found(checkout('/home/u/src/app')), 'dir_is_source'],
    ['--here --dir naming another checkout', { here: true, dir: '/t/other' }, found(checkout('/t/other')), { targetRepo: '/t/other', otherCheckouts: [], newBranch: false, discovered: true }],
  ];
  for (const [what, o, f, expected] of chooseRows) {
    it(what, () => {
      const r = outcome(() => chooseCheckout({ ...base, ...o }, source, f));
      if ('code' in r) return expect(r.code).toBe(expected);
      const { targetRepo, otherCheckouts, newBranch, discovery } = r.value;
      expect({ targetRepo, otherCheckouts, newBranch, discovered: discovery !== null }).toEqual(expected);
    });
  }

  it('hostile checkout paths are chosen and listed as they are', () => {
    const paths = HOSTILE.map((p) => `/t/${p}`);
    const choice = chooseCheckout(base, source, found(...paths.map((p) => checkout(p))));
    expect([choice.targetRepo, ...choice.otherCheckouts]).toEqual(paths);
    const here = chooseCheckout({ ...base, here: true }, { repoRoot: paths[0]!, realRoot: paths[0]! }, found(...paths.map((p) => checkout(p))));
    expect([here.targetRepo, ...here.otherCheckouts]).toEqual(paths.slice(1));
  });

  it('the refusals tell what to do with flags that exist', () => {
    const noRemote = outcome(() => checkoutSearch(base, source, 0, null));
    expect(noRemote).toMatchObject({ code: 'no_remote', fix: expect.stringContaining('--here') });
    const own = outcome(() => checkoutSearch({ ...base, here: true, dir: '/data/src/app' }, source, 1, '/data/src/app'));
    expect(own).toMatchObject({ code: 'dir_is_source', fix: expect.stringContaining('drop --dir') });
  });
});

describe('planWarnings, sourceHandleOf, cwdIn', () => {
  const probe = (warning?: string): HerdrProbe => ({ path: '/h', version: { version: '0.8.2', ok: true, ...(warning ? { warning } : {}) }, server: 'running', serverStatus: null });

  it("an agent CLI missing on the target's login PATH is a warning", () => {
    expect(planWarnings('codex', 'vega', null, [probe()])).toEqual(['The codex CLI is not on the login PATH of vega; the agent will not start there.']);
    expect(planWarnings('codex', 'vega', '/usr/bin/codex', [probe()])).toEqual([]);
  });

  it("herdr's version warnings, once when both sides are one probe", () => {
    const same = probe('herdr version unreadable');
    expect(planWarnings('pi', 'vega', '/bin/pi', [same, same])).toEqual(['herdr version unreadable']);
    expect(planWarnings('pi', 'vega', '/bin/pi', [probe('a'), probe('b')])).toEqual(['a', 'b']);
  });

  const sessions: [string, Partial<AgentInfo>, SessionRef, string][] = [
    ["herdr's recorded handle first", { agent_session: { kind: 'id', value: 'herdr-said' } } as Partial<AgentInfo>, { kind: 'claude', id: 'found' } as SessionRef, 'herdr-said'],
    ['else the file of a pi session', {}, { kind: 'pi', id: 'x', file: '/s/x.jsonl' } as SessionRef, '/s/x.jsonl'],
    ['else the file of an omp session', {}, { kind: 'omp', id: 'x', file: '/s/o.jsonl' } as SessionRef, '/s/o.jsonl'],
    ['else the id (codex, claude, grok)', {}, { kind: 'codex', id: 'abc' } as SessionRef, 'abc'],
  ];
  for (const [what, a, session, expected] of sessions) it(what, () => expect(sourceHandleOf(agent(a), session)).toBe(expected));

  it("the agent's cwd in a worktree: the relative cwd below it, or the worktree itself", () => {
    expect(cwdIn('/t/app', '')).toBe('/t/app');
    expect(cwdIn('/t/app', 'packages/web')).toBe('/t/app/packages/web');
    for (const rel of HOSTILE.filter((h) => !h.startsWith('/'))) expect(cwdIn('/t/app', rel)).toBe(`/t/app/${rel}`);
  });
});
