// The npm package: `npm pack` holds the compiled CLI and nothing of the tests, and the tarball
// installs into an empty prefix (dependencies from the npm cache) and runs there.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; scripts: Record<string, string>; bin: Record<string, string>; dependencies: Record<string, string> };

/** npm's own environment variables (set when the suite runs under `npm test`) would steer the nested npm. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}

function npm(args: string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync('npm', args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout: 180_000 });
}

interface PackEntry {
  filename: string;
  files: { path: string }[];
}

let tmp: string;
let packed: PackEntry;
let tarball: string;

beforeAll(() => {
  expect(fs.existsSync(path.join(ROOT, 'dist', 'src', 'cli.js')), 'run `npm run build` first').toBe(true);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-pack-'));
  // --ignore-scripts: pack what is built; building here would race other work in the checkout.
  const r = npm(['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], ROOT);
  expect(r.status, r.stderr).toBe(0);
  packed = (JSON.parse(r.stdout) as PackEntry[])[0]!;
  tarball = path.join(tmp, packed.filename);
});

afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('npm pack', () => {
  it('builds the compiled code when packed from a checkout (prepare)', () => {
    expect(PKG.scripts.prepare).toMatch(/^tsc -p tsconfig\.build\.json && node scripts\/bundle\.mjs$/);
    expect(PKG.bin['agent-handoff']).toBe('bin/agent-handoff.js');
  });

  it('holds only what the CLI needs: bin, the bundle, dist/src, dist/adapters, README, SKILL, package.json', () => {
    const files = packed.files.map((f) => f.path).sort();
    for (const f of files) {
      expect(/^(bin\/agent-handoff\.js|dist\/cli\.cjs|dist\/src\/.+\.js|dist\/adapters\/.+\.js|README\.md|SKILL\.md|package\.json)$/.test(f), f).toBe(true);
    }
    for (const need of ['bin/agent-handoff.js', 'dist/cli.cjs', 'dist/src/cli.js', 'dist/src/completion.js', 'dist/src/handoff/self.js', 'dist/adapters/index.js', 'README.md', 'SKILL.md', 'package.json']) {
      expect(files, need).toContain(need);
    }
    expect(files.filter((f) => /(^|\/)(test|world|bench)\//.test(f) || f.endsWith('.map') || f.endsWith('.ts'))).toEqual([]);
  });

  it('ships no stale compiled file: every .js has its source', () => {
    const stale = packed.files
      .map((f) => f.path)
      .filter((f) => f.startsWith('dist/') && f.endsWith('.js'))
      .filter((f) => !fs.existsSync(path.join(ROOT, f.slice('dist/'.length).replace(/\.js$/, '.ts'))));
    expect(stale, 'compiled files without a source: rm -rf dist && npm run build').toEqual([]);
  });
});

describe('the tarball installed into an empty prefix', () => {
  let prefix: string;
  let bin: string;
  let home: string;

  beforeAll(() => {
    prefix = path.join(tmp, 'prefix');
    home = path.join(tmp, 'home');
    fs.mkdirSync(home, { recursive: true });
    // Dependencies come from npm's cache. --ignore-scripts: ssh2's optional native speed-ups
    // (cpu-features) would compile C++ here; ssh2 runs without them.
    const common = ['install', '--prefix', prefix, tarball, '--no-audit', '--no-fund', '--ignore-scripts', '--no-save'];
    let r = npm([...common, '--offline'], tmp);
    // A cache without some package: fetch only what is missing.
    if (r.status !== 0) r = npm([...common, '--prefer-offline'], tmp);
    expect(r.status, r.stderr).toBe(0);
    bin = path.join(prefix, 'node_modules', '.bin', 'agent-handoff');
  }, 240_000);

  /** Run the installed CLI with nothing of this checkout around: an empty HOME, a bare PATH. */
  const run = (args: string[]) =>
    spawnSync(bin, args, { cwd: home, encoding: 'utf8', timeout: 60_000, env: { HOME: home, PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, LANG: 'C.UTF-8' } });

  it('installs the runtime dependencies, and no dev dependency', () => {
    const installed = fs.readdirSync(path.join(prefix, 'node_modules'));
    for (const dep of Object.keys(PKG.dependencies)) expect(installed, dep).toContain(dep);
    for (const dev of ['vitest', 'typescript', 'simple-git', 'eslint']) expect(installed).not.toContain(dev);
  });

  it('agent-handoff --version', () => {
    const r = run(['--version']);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, command: 'version', version: PKG.version });
  });

  it('agent-handoff doctor (no herdr here: one JSON object saying so, exit 1)', () => {
    const r = run(['doctor']);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const out = JSON.parse(r.stdout) as { ok: boolean; ready: boolean; problems: { code: string; fix: string }[]; local: { tools: { name: string; ok: boolean }[] } };
    expect(out).toMatchObject({ ok: true, command: 'doctor', ready: false });
    expect(out.problems.map((p) => p.code)).toContain('herdr_not_installed');
    expect(out.local.tools.find((t) => t.name === 'git')?.ok).toBe(true);
    expect(r.status).toBe(1);
  });

  it('agent-handoff completion and schema work from the installed package', () => {
    expect(run(['completion']).stdout).toContain('agent-handoff __complete');
    const schema = JSON.parse(run(['schema']).stdout) as { ok: boolean; schemas: Record<string, unknown> };
    expect(Object.keys(schema.schemas)).toEqual(expect.arrayContaining(['error', 'list', 'doctor', 'send']));
  });

  it("keeps each command's compiled code in the user's cache folder (private), reuses it, and shrugs off a bad one", () => {
    const dir = path.join(home, '.cache', 'agent-handoff');
    fs.rmSync(dir, { recursive: true, force: true });
    const first = run(['schema']);
    expect(first.status, first.stderr).toBe(0);
    const [cache, ...more] = fs.readdirSync(dir);
    expect(more).toEqual([]);
    expect(cache).toMatch(/^cli-[0-9a-f]{32}-schema\.v8$/);
    const file = path.join(dir, cache!);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    // Used as it is by the next run (V8 accepted it: nothing written again).
    const past = new Date('2026-01-01T00:00:00Z');
    fs.utimesSync(file, past, past);
    const again = run(['schema']);
    expect(again.stdout).toBe(first.stdout);
    expect(fs.statSync(file).mtimeMs).toBe(past.getTime());
    // A cache made by another node or damaged: the run is the same, the cache made again.
    fs.writeFileSync(file, 'not V8 code');
    const damaged = run(['schema']);
    expect(damaged.stdout).toBe(first.stdout);
    expect(fs.statSync(file).size).toBeGreaterThan(1000);
    // A cache from another bundle of this command goes when a new one is written.
    const stale = path.join(dir, `cli-${'0'.repeat(32)}-schema.v8`);
    fs.writeFileSync(stale, 'old');
    fs.rmSync(file);
    expect(run(['schema']).stdout).toBe(first.stdout);
    expect(fs.readdirSync(dir)).toEqual([cache]);
    // No cache folder to be had: still the same run.
    fs.rmSync(dir, { recursive: true, force: true });
    fs.writeFileSync(path.join(home, '.cache', 'agent-handoff'), 'a file in the way');
    expect(run(['schema']).stdout).toBe(first.stdout);
    fs.rmSync(path.join(home, '.cache', 'agent-handoff'));
  });

  it('every shipped module loads with only the runtime dependencies', () => {
    const pkgDir = path.join(prefix, 'node_modules', PKG.name);
    // The bundle (what the launcher loads) and every compiled module.
    const modules = packed.files.map((f) => f.path).filter((f) => /\.[mc]?js$/.test(f) && f.startsWith('dist/'));
    expect(modules).toContain('dist/cli.cjs');
    const script = `for (const m of ${JSON.stringify(modules)}) await import(${JSON.stringify(pkgDir + '/')} + m);\nconsole.log('loaded', ${modules.length});`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: home, encoding: 'utf8', timeout: 60_000, env: { HOME: home, PATH: '/usr/bin:/bin' } });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(`loaded ${modules.length}`);
    // --self starts the helper through the package's own launcher, found from the package's folder.
    const launcher = spawnSync(process.execPath, ['--input-type=module', '-e', `const v = await import(${JSON.stringify(pkgDir + '/dist/src/version.js')}); console.log(v.LAUNCHER);`], { cwd: home, encoding: 'utf8', timeout: 60_000 });
    expect(launcher.stdout.trim()).toBe(path.join(pkgDir, 'bin', 'agent-handoff.js'));
  });
});
