import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HandoffError } from '../../src/errors.js';
import { LocalHost } from '../../src/host/local.js';
import { ADAPTERS, adapterFor, claude, claudeFolderName, codex, grok, grokFolderName, omp, ompFolderName, pi, piFolderName, type Adapter, type SideCtx } from '../../adapters/index.js';
import { copyUnit } from '../../src/transcript/copy.js';
import { buildRewritePlan } from '../../src/transcript/rewrite-plan.js';

const FIX = '/work/shared/fixtures/sessions';
const temps: string[] = [];
afterAll(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-adapt-'));
  temps.push(d);
  return fs.realpathSync(d);
}

/** A temp HOME holding a copy of a fixture home, files 0600 / folders 0700, mtimes set. */
function homeFrom(fixtureHome: string, mtimeMs = Date.UTC(2026, 10, 30, 16)): { home: string; host: LocalHost; ctx: SideCtx } {
  const home = tempDir();
  fs.cpSync(path.join(FIX, fixtureHome), home, { recursive: true });
  for (const rel of fs.readdirSync(home, { recursive: true }).map(String)) {
    const p = path.join(home, rel);
    const st = fs.statSync(p);
    fs.chmodSync(p, st.isDirectory() ? 0o700 : 0o600);
    if (st.isFile()) fs.utimesSync(p, mtimeMs / 1000, mtimeMs / 1000);
  }
  fs.chmodSync(home, 0o700);
  const host = new LocalHost({ env: { ...process.env, HOME: home } });
  return { home, host, ctx: { home, homeReal: home, env: { HOME: home }, tmpdir: '/tmp' } };
}

const codeOf = (p: Promise<unknown>) => p.then(() => 'resolved', (e: unknown) => (e instanceof HandoffError ? e.code : String(e)));

// Java's String.hashCode, written independently with BigInt (s[0]*31^(n-1) + … mod 2^32, signed).
function javaHashRef(s: string): number {
  let h = 0n;
  for (let i = 0; i < s.length; i++) h = (h * 31n + BigInt(s.charCodeAt(i))) % 2n ** 32n;
  return Number(BigInt.asIntN(32, h));
}

describe('per-project folder names (four different transforms)', () => {
  it('claude: every UTF-16 code unit outside [A-Za-z0-9] → -, hash suffix past 200', () => {
    expect(claudeFolderName('/home/vega/code/hark')).toBe('-home-vega-code-hark');
    expect(claudeFolderName('/Users/a/github.com/o/my_repo')).toBe('-Users-a-github-com-o-my-repo');
    expect(claudeFolderName('/tmp/é😀')).toBe('-tmp----'); // é one code unit, the emoji two
    const long = '/srv/' + 'x'.repeat(250);
    const name = claudeFolderName(long);
    expect(name).toBe(`${long.replace(/[^A-Za-z0-9]/g, '-').slice(0, 200)}-${Math.abs(javaHashRef(long)).toString(36)}`);
    expect(claudeFolderName('/' + 'y'.repeat(199))).toBe('-' + 'y'.repeat(199)); // exactly 200: no suffix
  });

  it('pi: strip one leading /, then / \\ : → -, wrapped in --…-- (the fixture folders)', () => {
    expect(piFolderName('/home/vega/code/hark')).toBe('--home-vega-code-hark--');
    expect(piFolderName('/tmp/fh/work/we ird+c@d~e_f.g(h)')).toBe('--tmp-fh-work-we ird+c@d~e_f.g(h)--');
    expect(fs.existsSync(path.join(FIX, 'pi/original/.pi/agent/sessions', piFolderName('/tmp/fh/work/we ird+c@d~e_f.g(h)')))).toBe(true);
    expect(piFolderName('C:\\Users\\a')).toBe('--C--Users-a--');
  });

  it('omp: relative to the target HOME, else -tmp- under the temp folder, else pi form', () => {
    const ctx = { home: '/home/vega', tmpdir: '/tmp' };
    expect(ompFolderName('/home/vega/code/hark', ctx)).toBe('-code-hark');
    expect(ompFolderName('/home/vega', ctx)).toBe('-');
    expect(ompFolderName('/tmp/fh/work/hark', { home: '/tmp/fh/omp', tmpdir: '/tmp' })).toBe('-tmp-fh-work-hark');
    expect(fs.existsSync(path.join(FIX, 'omp/original/.omp/agent/sessions/-tmp-fh-work-hark'))).toBe(true);
    expect(ompFolderName('/srv/x', ctx)).toBe('--srv-x--');
    expect(ompFolderName('/home/vegan/x', ctx)).toBe('--home-vegan-x--');
    expect(ompFolderName('/data/home/vega/x', { home: '/home/vega', homeReal: '/data/home/vega', tmpdir: '/tmp' })).toBe('-x');
  });

  it('grok: percent-encode all but A–Z a–z 0–9 - . _ ~ (also ()!*\'), uppercase hex over UTF-8', () => {
    expect(grokFolderName('/home/vega/code/hark')).toBe('%2Fhome%2Fvega%2Fcode%2Fhark');
    expect(grokFolderName('/tmp/fh/work/we ird+c@d~e_f.g(h)')).toBe('%2Ftmp%2Ffh%2Fwork%2Fwe%20ird%2Bc%40d~e_f.g%28h%29');
    expect(fs.existsSync(path.join(FIX, 'grok/original/.grok/sessions', grokFolderName('/tmp/fh/work/we ird+c@d~e_f.g(h)')))).toBe(true);
    expect(grokFolderName("/a!*'é")).toBe('%2Fa%21%2A%27%C3%A9');
  });

  it('codex has no per-project folder', () => {
    expect(codex.projectFolderName('/x', { home: '/h', env: {}, tmpdir: '/tmp' })).toBeNull();
  });
});

describe('config roots', () => {
  it('env var else default, on either side; pi and omp share PI_CODING_AGENT_DIR', () => {
    expect(claude.configRoot({}, '/h')).toBe('/h/.claude');
    expect(claude.configRoot({ CLAUDE_CONFIG_DIR: '/c/' }, '/h')).toBe('/c');
    expect(codex.configRoot({}, '/h')).toBe('/h/.codex');
    expect(codex.configRoot({ CODEX_HOME: '~/cx' }, '/h')).toBe('/h/cx');
    expect(pi.configRoot({}, '/h')).toBe('/h/.pi/agent');
    expect(omp.configRoot({}, '/h')).toBe('/h/.omp/agent');
    expect(pi.configRoot({ PI_CODING_AGENT_DIR: '/p' }, '/h')).toBe('/p');
    expect(omp.configRoot({ PI_CODING_AGENT_DIR: '/p' }, '/h')).toBe('/p');
    expect(pi.configVar).toBe(omp.configVar);
    expect(omp.configRoot({ OMP_PROFILE: 'work' }, '/h')).toBe('/h/.omp/profiles/work/agent');
    expect(grok.configRoot({}, '/h', '/real/h')).toBe('/real/h/.grok');
    expect(grok.configRoot({ GROK_HOME: '/g' }, '/h', '/real/h')).toBe('/g');
    expect(claude.configRoot({ CLAUDE_CONFIG_DIR: '' }, '/h')).toBe('/h/.claude');
  });
});

describe('resume argv, quit plans, registry', () => {
  it('resumes by full UUID (pi/omp: absolute path), extra args last', () => {
    const id = '01a22d33-c051-7ea2-a252-c1225946b72d';
    expect(claude.resumeArgv(id, ['--model', 'x'])).toEqual(['claude', '--resume', id, '--model', 'x']);
    expect(codex.resumeArgv(id)).toEqual(['codex', 'resume', id]);
    expect(pi.resumeArgv('/h/.pi/agent/sessions/--x--/a.jsonl')).toEqual(['pi', '--session', '/h/.pi/agent/sessions/--x--/a.jsonl']);
    expect(omp.resumeArgv('/h/a.jsonl')).toEqual(['omp', '--resume', '/h/a.jsonl']);
    expect(grok.resumeArgv(id)).toEqual(['grok', '--resume', id]);
  });

  it('quits each agent its own way', () => {
    expect(pi.quit.text).toBe('/quit'); // `/exit` would be sent to pi's model as a prompt
    expect(claude.quit).toMatchObject({ text: '/exit', fallbackKeys: ['ctrl+c', 'ctrl+c'] });
    expect(claude.quit.pauseMs).toBeGreaterThanOrEqual(800); // the slash menu needs a pause before Enter
    expect(codex.quit).toMatchObject({ text: '/quit', mustBeIdle: true });
    expect(grok.quit).toMatchObject({ text: '/quit', fallbackKeys: ['ctrl+q', 'ctrl+q'] }); // Ctrl+C does not quit grok
    for (const a of Object.values(ADAPTERS)) if (a.kind !== 'codex') expect(a.quit.mustBeIdle).toBe(false);
  });

  it('maps herdr kinds (and aliases) to adapters, refusing others', () => {
    expect(adapterFor('claude').kind).toBe('claude');
    expect(adapterFor('claude-code').kind).toBe('claude');
    expect(adapterFor('grok-build').kind).toBe('grok');
    expect(() => adapterFor('gemini')).toThrow(/cannot move a gemini agent/);
    expect(() => adapterFor(null)).toThrow(HandoffError);
    for (const [k, a] of Object.entries(ADAPTERS)) expect([a.kind, a.herdrKind, a.integration]).toEqual([k, k, k]);
  });
});

describe('screens', () => {
  const claudeTrust = ['Accessing workspace:', '', ' /home/vega/code/hark', '', ' Quick safety check: Is this a project you created or one you trust?', '', ' ❯ 1. Yes, I trust this folder', '   2. No, exit', '', ' Enter to confirm · Esc to cancel'].join('\n');
  const codexTrust = ['  Folder access', '  /tmp/x/work/hark', '  Trust this folder? Codex can read, edit, and run files here, …', '› 1. Trust and continue', '  2. Back to Agent Command Center', '  enter continue · esc back'].join('\n');

  it('recognises trust and which option accepts it', () => {
    expect(claude.classifyScreen(claudeTrust)).toEqual({ screen: 'trust', options: ['Yes, I trust this folder', 'No, exit'], selectedIndex: 0, acceptIndex: 0 });
    expect(codex.classifyScreen(codexTrust)).toEqual({ screen: 'trust', options: ['Trust and continue', 'Back to Agent Command Center'], selectedIndex: 0, acceptIndex: 0 });
    const moved = codexTrust.replace('› 1.', '  1.').replace('  2. Back', '› 2. Back');
    expect(codex.classifyScreen(moved)).toMatchObject({ selectedIndex: 1, acceptIndex: 0 });
  });

  it('recognises first run, login and hook review screens', () => {
    expect(claude.classifyScreen("Welcome to Claude Code v2.1.197\n\nLet's get started.\n\nChoose the text style that looks best").screen).toBe('first_run_setup');
    expect(claude.classifyScreen('Select login method:\n❯ 1. Claude account\n  2. Console').screen).toBe('login');
    expect(codex.classifyScreen(">_ Welcome to Codex, OpenAI's command-line coding agent\n\nChoose how you want to use Codex.\n› 1. Sign in with ChatGPT").screen).toBe('login');
    expect(codex.classifyScreen('Hooks need review').screen).toBe('hook_review');
    expect(omp.classifyScreen('Setup step 1 of 5\nSet up your providers … Press Esc when you are done.').screen).toBe('first_run_setup');
    expect(grok.classifyScreen('auth.x.ai unreachable\n  Login with Grok  l\n  Quit  q').screen).toBe('login');
  });

  it('reads an ordinary idle screen as nothing waiting', () => {
    for (const a of Object.values(ADAPTERS)) {
      expect(a.classifyScreen('❯ please read README.md\n● Mock reply: I read the file.\n❯ \n? for shortcuts').screen).toBeNull();
    }
    expect(pi.classifyScreen(claudeTrust).screen).toBeNull(); // pi has no trust screen
  });
});

// ---------------------------------------------------------------------------------------------
// Against real session trees

const target = (cwd: string, home = '/home/vega'): SideCtx & { cwd: string } => ({ cwd, home, homeReal: home, env: { HOME: home }, tmpdir: '/tmp' });

/**
 * Place, list and copy a unit to a fresh target HOME. `recordedHome`: the HOME the fixture was
 * written under (its files name that one, not the temp copy we read them from).
 */
async function placeAndCopy(a: Adapter, src: { host: LocalHost; ctx: SideCtx }, ref: Awaited<ReturnType<Adapter['locate']>>, srcCwd: string, dstCwd: string, recordedHome?: string) {
  const dstHome = tempDir();
  const dstHost = new LocalHost({ env: { ...process.env, HOME: dstHome } });
  const place = a.placement(ref, target(dstCwd, dstHome));
  const entries = await a.unit(src.host, ref, place);
  const recordedRoot = recordedHome === undefined ? undefined : ref.configRoot.replace(src.ctx.home, recordedHome);
  const plan = buildRewritePlan({
    renames: [...place.renames, ...(recordedRoot ? place.renames.map((r) => ({ from: r.from.replace(ref.configRoot, recordedRoot), to: r.to })) : [])],
    repo: { source: [srcCwd], target: dstCwd },
    configRoot: { source: [ref.configRoot, ...(recordedRoot ? [recordedRoot] : [])], target: place.configRoot },
    home: { source: [src.ctx.home, ...(recordedHome ? [recordedHome] : [])], target: dstHome },
  });
  const record = await copyUnit({ source: src.host, target: dstHost, entries, targetRoot: place.configRoot, plan });
  return { dstHome, place, entries, record };
}

describe.runIf(fs.existsSync(FIX))('claude sessions', () => {
  const SID = 'd3827ecf-68f8-4ce0-b777-7e7810eb8d41';

  it('locates by full id or path, never by prefix', async () => {
    const s = homeFrom('claude/original-file-history');
    const ref = await claude.locate(s.host, { kind: 'id', value: SID }, s.ctx);
    expect(ref).toMatchObject({ id: SID, configRoot: `${s.home}/.claude`, folderRel: 'projects/-tmp-fixcheck-work-hark' });
    expect((await claude.locate(s.host, { kind: 'path', value: ref.file }, s.ctx)).id).toBe(SID);
    expect(await codeOf(claude.locate(s.host, { kind: 'id', value: SID.slice(0, 8) }, s.ctx))).toBe('session_not_found');
    expect(await codeOf(claude.locate(s.host, { kind: 'id', value: '00000000-0000-4000-8000-000000000000' }, s.ctx))).toBe('session_not_found');
    // the same id in two project folders (a copy left behind by an earlier move) is ambiguous
    fs.mkdirSync(`${s.home}/.claude/projects/-elsewhere`);
    fs.copyFileSync(ref.file, `${s.home}/.claude/projects/-elsewhere/${SID}.jsonl`);
    expect(await codeOf(claude.locate(s.host, { kind: 'id', value: SID }, s.ctx))).toBe('session_ambiguous');
  });

  it('copies the whole unit (transcript, sibling folder, file history verbatim) into the target cwd folder, never global state', async () => {
    const s = homeFrom('claude/original-file-history');
    fs.writeFileSync(`${s.home}/.claude.json`, '{"secret":1}');
    fs.writeFileSync(`${s.home}/.claude/history.jsonl`, '{}\n');
    fs.mkdirSync(`${s.home}/.claude/projects/-tmp-fixcheck-work-hark/${SID}/subagents`, { recursive: true });
    fs.writeFileSync(`${s.home}/.claude/projects/-tmp-fixcheck-work-hark/${SID}/subagents/agent-a1.jsonl`, '{"cwd":"/tmp/fixcheck/work/hark"}\n');
    fs.mkdirSync(`${s.home}/.claude/projects/-tmp-fixcheck-work-hark/memory`);
    fs.writeFileSync(`${s.home}/.claude/projects/-tmp-fixcheck-work-hark/memory/notes.md`, 'x');
    const ref = await claude.locate(s.host, { kind: 'id', value: SID }, s.ctx);
    const { dstHome, place, entries, record } = await placeAndCopy(claude, s, ref, '/tmp/fixcheck/work/hark', '/tmp/fixcheck/work2/hark');
    expect(place.handle).toBe(SID);
    expect(place.file).toBe(`${dstHome}/.claude/projects/-tmp-fixcheck-work2-hark/${SID}.jsonl`);
    expect(entries.map((e) => [e.dest, e.verbatim]).sort()).toEqual([
      [`file-history/${SID}/0ca05dce0b0853a5@v1`, true],
      [`file-history/${SID}/0ca05dce0b0853a5@v2`, true],
      [`projects/-tmp-fixcheck-work2-hark/${SID}.jsonl`, false],
      [`projects/-tmp-fixcheck-work2-hark/${SID}/subagents/agent-a1.jsonl`, false],
    ]);
    expect(record.files.every((f) => f.action === 'created')).toBe(true);
    // what Claude resumed after the real move: the first 19 lines byte for byte
    const moved = fs.readFileSync(path.join(FIX, `claude/moved-file-history/.claude/projects/-tmp-fixcheck-work2-hark/${SID}.jsonl`), 'utf8').split('\n');
    const ours = fs.readFileSync(place.file, 'utf8').split('\n');
    expect(ours.slice(0, 19)).toEqual(moved.slice(0, 19));
    for (const v of ['v1', 'v2']) {
      expect(fs.readFileSync(`${dstHome}/.claude/file-history/${SID}/0ca05dce0b0853a5@${v}`)).toEqual(fs.readFileSync(path.join(FIX, `claude/moved-file-history/.claude/file-history/${SID}/0ca05dce0b0853a5@${v}`)));
    }
    expect(fs.statSync(place.file).mode & 0o777).toBe(0o600);
    expect(fs.existsSync(`${dstHome}/.claude.json`)).toBe(false);
  });

  it('guesses the newest transcript written since the agent started in that cwd, or asks', async () => {
    const s = homeFrom('claude/original');
    const started = Date.now() - 10_000;
    expect(await codeOf(claude.guess(s.host, { cwd: '/tmp/fh/work/hark', startedAtMs: started, ctx: s.ctx }))).toBe('session_not_found');
    const file = `${s.home}/.claude/projects/-tmp-fh-work-hark/7529c0d9-ed0d-4e45-a4e1-413fe4ba5257.jsonl`;
    fs.utimesSync(file, new Date(), new Date());
    expect((await claude.guess(s.host, { cwd: '/tmp/fh/work/hark', startedAtMs: started, ctx: s.ctx })).file).toBe(file);
    fs.writeFileSync(`${s.home}/.claude/projects/-tmp-fh-work-hark/968b7fc6-0000-4000-8000-000000000000.jsonl`, '{}\n');
    expect(await codeOf(claude.guess(s.host, { cwd: '/tmp/fh/work/hark', startedAtMs: started, ctx: s.ctx }))).toBe('session_ambiguous');
  });
});

describe.runIf(fs.existsSync(FIX))('codex sessions', () => {
  const ID = '01a22d33-c051-7ea2-a252-c1225946b72d';
  const REL = `sessions/2026/11/30/rollout-2026-11-30T16-04-56-${ID}.jsonl`;

  it('locates by full UUID only (a prefix would start a new session) and keeps the dated path', async () => {
    const s = homeFrom('codex/original');
    const ref = await codex.locate(s.host, { kind: 'id', value: ID }, s.ctx);
    expect(ref.file).toBe(`${s.home}/.codex/${REL}`);
    expect(await codeOf(codex.locate(s.host, { kind: 'id', value: ID.slice(0, 13) }, s.ctx))).toBe('session_not_found');
    // found by a full walk too when the UUID's date hint misses (moved to another day's folder)
    fs.mkdirSync(`${s.home}/.codex/sessions/2025/01/02`, { recursive: true });
    fs.renameSync(ref.file, `${s.home}/.codex/sessions/2025/01/02/${path.basename(ref.file)}`);
    expect((await codex.locate(s.host, { kind: 'id', value: ID }, s.ctx)).folderRel).toBe('sessions/2025/01/02');
  });

  it('guesses by the cwd in session_meta, and copies the rollout alone (no SQLite, no auth)', async () => {
    const s = homeFrom('codex/original');
    fs.writeFileSync(`${s.home}/.codex/auth.json`, '{}');
    fs.writeFileSync(`${s.home}/.codex/state_5.sqlite`, 'x');
    const file = `${s.home}/.codex/${REL}`;
    const started = Date.now() - 5000;
    fs.utimesSync(file, new Date(), new Date());
    expect(await codeOf(codex.guess(s.host, { cwd: '/tmp/fh/work/other', startedAtMs: Date.UTC(2026, 10, 30, 16), ctx: s.ctx }))).toBe('session_not_found');
    const ref = await codex.guess(s.host, { cwd: '/tmp/fh/work/hark', startedAtMs: Math.min(started, Date.UTC(2026, 10, 30, 16)), ctx: s.ctx });
    expect(ref.id).toBe(ID);
    const { dstHome, place, entries } = await placeAndCopy(codex, s, ref, '/tmp/fh/work/hark', '/tmp/fh/work2/hark', '/tmp/fh/codex');
    expect(entries.map((e) => e.dest)).toEqual([REL]);
    expect(place).toMatchObject({ handle: ID, file: `${dstHome}/.codex/${REL}` });
    const ours = fs.readFileSync(place.file, 'utf8').split('\n');
    expect(JSON.parse(ours[0]!).payload.cwd).toBe('/tmp/fh/work2/hark');
    expect(ours.map((l) => (l ? JSON.parse(l).ordinal : null)).slice(0, 19)).toEqual([...Array(19).keys()]);
    expect(fs.readFileSync(place.file, 'utf8')).toContain(`${dstHome}/.codex/skills/.system`);
  });
});

describe.runIf(fs.existsSync(FIX))('pi and omp sessions', () => {
  it('pi: locates by path, id or unique prefix; resumes by the absolute path in the target folder', async () => {
    const s = homeFrom('pi/original');
    const ref = await pi.locate(s.host, { kind: 'id', value: '01a22d2d' }, s.ctx);
    expect(ref.id).toBe('01a22d2d-a2a2-772f-b24e-f647591d4c9e');
    expect(await codeOf(pi.locate(s.host, { kind: 'id', value: '01a22d' }, s.ctx))).toBe('session_ambiguous');
    expect((await pi.locate(s.host, { kind: 'path', value: ref.file }, s.ctx)).id).toBe(ref.id);
    const { dstHome, place, entries } = await placeAndCopy(pi, s, ref, '/tmp/fh/work/hark', '/tmp/fh/work2/hark');
    expect(entries).toHaveLength(1);
    expect(place.handle).toBe(`${dstHome}/.pi/agent/sessions/--tmp-fh-work2-hark--/${path.basename(ref.file)}`);
    expect(place.file).toBe(place.handle);
    const moved = fs.readFileSync(path.join(FIX, 'pi/moved/.pi/agent/sessions/--tmp-fh-work2-hark--', path.basename(ref.file)), 'utf8').split('\n');
    expect(fs.readFileSync(place.file, 'utf8').split('\n').slice(0, 7)).toEqual(moved.slice(0, 7));
  });

  it('omp: copies the file (line 1 length kept), its artifacts folder and referenced blobs verbatim, never agent.db', async () => {
    const s = homeFrom('omp/original');
    const root = `${s.home}/.omp/agent`;
    const folder = `${root}/sessions/-tmp-fh-work-hark`;
    const base = '2026-11-30T15-59-58-654Z_01a22d2f-36be-72b5-9eb7-c8e21c97385c';
    const blob = 'a'.repeat(64);
    fs.appendFileSync(`${folder}/${base}.jsonl`, `{"type":"message","content":[{"type":"image","data":"blob:sha256:${blob}"}]}\n`);
    fs.mkdirSync(`${root}/blobs`);
    fs.writeFileSync(`${root}/blobs/${blob}`, Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    fs.writeFileSync(`${root}/blobs/${'b'.repeat(64)}`, 'unreferenced');
    fs.writeFileSync(`${root}/agent.db`, 'credentials');
    fs.mkdirSync(`${folder}/${base}`);
    fs.writeFileSync(`${folder}/${base}/out-1.txt`, 'ran in /tmp/fh/work/hark\n');
    const ref = await omp.locate(s.host, { kind: 'id', value: '01a22d2f' }, s.ctx);
    const { dstHome, place, entries } = await placeAndCopy(omp, s, ref, '/tmp/fh/work/hark', '/srv/work2/hark');
    // target cwd outside the target HOME and tmp: pi's form
    expect(place.folderRel).toBe('sessions/--srv-work2-hark--');
    expect(entries.map((e) => [e.dest, e.verbatim, e.padFirstLine ?? false]).sort()).toEqual([
      [`blobs/${blob}`, true, false],
      [`sessions/--srv-work2-hark--/${base}.jsonl`, false, true],
      [`sessions/--srv-work2-hark--/${base}/out-1.txt`, false, false],
    ]);
    const orig = fs.readFileSync(`${folder}/${base}.jsonl`, 'utf8').split('\n');
    const ours = fs.readFileSync(place.file, 'utf8').split('\n');
    expect(ours[0]!.length).toBe(orig[0]!.length);
    expect(JSON.parse(ours[1]!).cwd).toBe('/srv/work2/hark');
    expect(fs.readFileSync(`${dstHome}/.omp/agent/sessions/--srv-work2-hark--/${base}/out-1.txt`, 'utf8')).toBe('ran in /srv/work2/hark\n');
    expect(fs.existsSync(`${dstHome}/.omp/agent/agent.db`)).toBe(false);
    expect(omp.placement(ref, target('/home/vega/code/hark')).folderRel).toBe('sessions/-code-hark');
  });
});

describe.runIf(fs.existsSync(FIX))('grok sessions', () => {
  const ID = '01a22d34-c620-7363-bf2c-0f080d340223';

  it('copies the whole session folder into the encoded target group; rewind points verbatim', async () => {
    const s = homeFrom('grok/original');
    fs.writeFileSync(`${s.home}/.grok/active_sessions.json`, '{}');
    fs.writeFileSync(`${s.home}/.grok/auth.json`, '{}');
    fs.writeFileSync(`${s.home}/.grok/sessions/%2Ftmp%2Ffh%2Fwork%2Fhark/prompt_history.jsonl`, '{}\n');
    const ref = await grok.locate(s.host, { kind: 'id', value: ID }, s.ctx);
    expect(ref.folderRel).toBe('sessions/%2Ftmp%2Ffh%2Fwork%2Fhark');
    expect(await codeOf(grok.locate(s.host, { kind: 'id', value: ID.slice(0, 8) }, s.ctx))).toBe('session_not_found');
    expect((await grok.locate(s.host, { kind: 'path', value: ref.dir }, s.ctx)).id).toBe(ID);
    const { dstHome, place, entries } = await placeAndCopy(grok, s, ref, '/tmp/fh/work/hark', '/tmp/fh/work2/hark', '/tmp/fh/grok');
    expect(place.handle).toBe(ID);
    const group = 'sessions/%2Ftmp%2Ffh%2Fwork2%2Fhark';
    expect(entries.every((e) => e.dest.startsWith(`${group}/${ID}/`))).toBe(true);
    expect(entries).toHaveLength(fs.readdirSync(ref.dir).length);
    expect(entries.filter((e) => e.verbatim && !e.dest.endsWith('.lock')).map((e) => path.basename(e.dest))).toEqual(['rewind_points.jsonl']);
    const dst = `${dstHome}/.grok/${group}/${ID}`;
    expect(fs.readFileSync(`${dst}/rewind_points.jsonl`)).toEqual(fs.readFileSync(`${ref.dir}/rewind_points.jsonl`));
    const summary = JSON.parse(fs.readFileSync(`${dst}/summary.json`, 'utf8')) as { info: { cwd: string }; git_root_dir: string; grok_home: string };
    expect(summary).toMatchObject({ info: { cwd: '/tmp/fh/work2/hark' }, git_root_dir: '/tmp/fh/work2/hark/', grok_home: `${dstHome}/.grok` });
    expect(fs.readFileSync(`${dst}/tool_definitions.json`, 'utf8')).toContain(`${dstHome}/.grok/${group}/${ID}/feedback_drafts.json`);
    for (const f of ['active_sessions.json', 'auth.json']) expect(fs.existsSync(`${dstHome}/.grok/${f}`)).toBe(false);
    expect(fs.existsSync(`${dstHome}/.grok/${group}/prompt_history.jsonl`)).toBe(false);
  });

  it('guesses by the session folder of the cwd group', async () => {
    const s = homeFrom('grok/original');
    const cwd = '/tmp/fh/work/we ird+c@d~e_f.g(h)';
    const dir = `${s.home}/.grok/sessions/${grokFolderName(cwd)}/01a22d35-4d7a-7042-a445-8725bbf9b3f9`;
    fs.utimesSync(`${dir}/updates.jsonl`, new Date(), new Date());
    expect((await grok.guess(s.host, { cwd, startedAtMs: Date.now() - 5000, ctx: s.ctx })).dir).toBe(dir);
    // past 255 encoded bytes grok uses a slug + hash we cannot reproduce: refuse rather than misplace
    const ref = { kind: 'grok' as const, id: '01a22d35-4d7a-7042-a445-8725bbf9b3f9', configRoot: '/r', file: '/r/f', dir: '/r', folderRel: 'sessions/x' };
    expect(() => grok.placement(ref, target('/' + 'z'.repeat(300)))).toThrow(/cannot compute/);
  });
});
