// Fake oh-my-pi: pi's format plus the padded line-1 title; directory named relative to HOME, else
// `-tmp-…` under os.tmpdir(), else pi's form; `omp --resume <path or id prefix>` runs in the
// header's cwd; `/exit` or `/quit`; Ctrl+C twice within 500 ms; the 5-step first-run wizard.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { splitArgs, type AgentDefinition, type Launch, type LaunchContext } from './agent.js';
import { AgentExit, home, realpathOr, str } from './files.js';
import { findByIdPrefix, headerOf, idOfFile, newestSession, newPiSession, PiSession, piDirName } from './pi-format.js';
import { looksLikePath } from './pi.js';

const VERSION = '18.2.3';

export function ompRoot(): string {
  return process.env.PI_CODING_AGENT_DIR || path.join(home(), process.env.PI_CONFIG_DIR || '.omp', 'agent');
}

function inside(dir: string, p: string): string | undefined {
  const rel = path.relative(dir, p);
  if (rel === '') return '';
  return rel.startsWith('..') || path.isAbsolute(rel) ? undefined : rel;
}

/** omp's directory name for a cwd (all three canonicalised first). */
export function ompDirName(cwd: string, homeDir = home(), tmp = os.tmpdir()): string {
  const c = realpathOr(cwd);
  const enc = (rel: string) => rel.replace(/[/\\:]/g, '-');
  const inHome = inside(realpathOr(homeDir), c);
  if (inHome !== undefined) return `-${enc(inHome)}`;
  const inTmp = inside(realpathOr(tmp), c);
  if (inTmp !== undefined) return inTmp ? `-tmp-${enc(inTmp)}` : '-tmp';
  return piDirName(c);
}

const STEPS = ['Set up your providers', 'Choose your default model', 'Pick a theme', 'Configure the status line', 'Review your settings'];

async function setupWizard(ctx: LaunchContext): Promise<void> {
  for (let i = 0; i < STEPS.length; i++) {
    const r = await ctx.tui.menu({
      lines: [`Setup step ${i + 1} of ${STEPS.length}`, '', `${STEPS[i]} …  Press Esc when you're done.`],
      options: ['Skip this step'],
      marker: '❯',
      numbered: false,
      footer: ['esc skip · ctrl+c exit setup'],
    });
    if ('key' in r && r.key === 'ctrl-c') return;
  }
}

async function launch(ctx: LaunchContext): Promise<Launch> {
  const { tui, root, control } = ctx;
  const args = splitArgs(ctx.argv, ['--resume', '-r'], ['--continue', '-c', '--verbose']);
  const here = realpathOr(process.cwd());
  const sessionsRoot = path.join(root, 'sessions');
  const localDir = path.join(sessionsRoot, ompDirName(here));
  if (control.firstRun) await setupWizard(ctx);

  let file: string | undefined;
  let byPath = false;
  if (args.resume !== undefined) {
    const v = args.resume;
    if (!v) throw new AgentExit(1, ['omp (fake): the session picker is not modelled; pass a session path or id'], true);
    if (looksLikePath(v)) {
      file = path.resolve(v);
      byPath = true;
      if (!fs.existsSync(file)) throw new AgentExit(1, [`Session not found: ${file}`], true);
    } else {
      file = findByIdPrefix(sessionsRoot, localDir, v)?.file;
      if (!file) throw new AgentExit(1, [`No session found matching "${v}"`], true);
    }
  } else if (args.flags.has('--continue') || args.flags.has('-c')) {
    file = newestSession(localDir);
  }

  let cwd = here;
  let session: PiSession;
  if (file) {
    const recorded = str(headerOf(file)?.cwd);
    if (recorded && fs.existsSync(recorded)) {
      cwd = recorded;
      process.chdir(cwd);
    } else if (recorded && !byPath) {
      // Resumed by id with a missing cwd, omp offers to move the session here (the fake keeps the file where it is).
      const answer = await tui.ask([`Session directory ${recorded} no longer exists.`], 'Move this session to the current directory? [y/N] ');
      if (answer.trim().toLowerCase() !== 'y') throw new AgentExit(0);
    }
    session = new PiSession('omp', idOfFile(file), file, cwd);
  } else {
    session = newPiSession('omp', localDir, cwd);
  }
  return { session, cwd, resumed: !!file, prompt: args.positionals[0], extraArgs: [...args.extra, ...args.positionals.slice(1)], notices: [] };
}

export const omp: AgentDefinition = {
  kind: 'omp',
  banner: [` omp v${VERSION}`, ' Welcome back!  fake-model · fake'],
  promptChar: '❯',
  placeholder: '',
  footer: ['π > ⬢ fake-model'],
  quitWords: ['/exit', '/quit'],
  slashMenu: true,
  ctrlC: 'double',
  doubleMs: 500,
  ctrlDQuits: true,
  fullLifecycle: true,
  refuseQuitWhileWorking: false,
  configRoot: ompRoot,
  integrationFile: (root) => path.join(root, 'extensions', 'herdr-omp-agent-state.ts'),
  launch,
  quitLines: (l, via) => [...(via === 'command' ? ['Closing session…'] : []), `Resume this session with omp --resume ${l.session.id}`],
};
