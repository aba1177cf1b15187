// Fake pi: sessions in <root>/sessions/--<cwd>--/<ts>_<uuidv7>.jsonl; `pi --session <path or id
// prefix>` runs in the header's cwd; `/quit` quits and `/exit` is just a prompt; full-lifecycle
// herdr reporting (state + session path).
import fs from 'node:fs';
import path from 'node:path';
import { splitArgs, type AgentDefinition, type Launch, type LaunchContext } from './agent.js';
import { AgentExit, home, iso, realpathOr, str, uuidv7, writePrivate } from './files.js';
import { findByIdPrefix, headerOf, newestSession, newPiSession, PiSession, piDirName, idOfFile, sessionFileName } from './pi-format.js';

const VERSION = '0.73.1';

export function piRoot(): string {
  const dir = process.env.PI_CODING_AGENT_DIR;
  if (dir) return dir === '~' || dir.startsWith('~/') ? path.join(home(), dir.slice(1)) : dir;
  return path.join(home(), '.pi', 'agent');
}

/** `--session <value>`: a path when it has a separator or ends in .jsonl, else an id prefix. */
export function looksLikePath(v: string): boolean {
  return /[/\\]/.test(v) || v.endsWith('.jsonl');
}

function isHeaderLine(line: string): boolean {
  try {
    return (JSON.parse(line) as { type?: unknown }).type === 'session';
  } catch {
    return false;
  }
}

/** `y` to "Fork this session into current directory?": a new id in this project, pointing at its parent. */
function fork(file: string, dir: string, cwd: string): PiSession {
  const now = new Date();
  const id = uuidv7(now.getTime());
  const target = path.join(dir, sessionFileName(now, id));
  const header = { type: 'session', version: 3, id, timestamp: iso(now), cwd, parentSession: file };
  const rest = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !isHeaderLine(l));
  writePrivate(target, [JSON.stringify(header), ...rest].join('\n') + '\n');
  return new PiSession('pi', id, target, cwd);
}

async function launch(ctx: LaunchContext): Promise<Launch> {
  const { tui, root } = ctx;
  const args = splitArgs(ctx.argv, ['--session'], ['--continue', '-c', '--offline', '--no-session', '--verbose', '--fork']);
  const here = realpathOr(process.cwd());
  const sessionsRoot = path.join(root, 'sessions');
  const localDir = path.join(sessionsRoot, piDirName(here));
  let cwd = here;
  let session: PiSession;
  let resumed = true;

  let file: string | undefined;
  if (args.resume !== undefined) {
    const v = args.resume;
    if (!v) throw new AgentExit(1, ['Error: --session needs a session file path or id'], true);
    if (looksLikePath(v)) {
      file = path.resolve(v);
      if (!fs.existsSync(file)) throw new AgentExit(1, [`Error: session file not found: ${file}`], true);
    } else {
      const hit = findByIdPrefix(sessionsRoot, localDir, v);
      if (!hit) throw new AgentExit(1, [`Error: no session found matching '${v}'`], true);
      if (!hit.local) {
        const other = str(headerOf(hit.file)?.cwd) ?? '?';
        const answer = await tui.ask([`Session found in different project: ${other}`], 'Fork this session into current directory? [y/N] ');
        if (answer.trim().toLowerCase() !== 'y') throw new AgentExit(0, ['Aborted.']);
        session = fork(hit.file, localDir, here);
        return { session, cwd: here, resumed: true, prompt: args.positionals[0], extraArgs: [...args.extra, ...args.positionals.slice(1)], notices: [] };
      }
      file = hit.file;
    }
  } else if (args.flags.has('--continue') || args.flags.has('-c')) {
    file = newestSession(localDir);
  }

  if (file) {
    const recorded = str(headerOf(file)?.cwd);
    if (recorded && !fs.existsSync(recorded)) {
      const r = await tui.menu({
        lines: [`cwd from session file does not exist: ${recorded}`, `continue in current cwd (${here})?`],
        options: ['Continue', 'Cancel'],
        marker: '→',
        numbered: false,
      });
      if (!('index' in r) || r.index !== 0) throw new AgentExit(0);
    } else if (recorded) {
      cwd = recorded;
      process.chdir(cwd);
    }
    session = new PiSession('pi', idOfFile(file), file, cwd);
  } else {
    session = newPiSession('pi', localDir, cwd);
    resumed = false;
  }
  return { session, cwd, resumed, prompt: args.positionals[0], extraArgs: [...args.extra, ...args.positionals.slice(1)], notices: [] };
}

export const pi: AgentDefinition = {
  kind: 'pi',
  banner: [` pi v${VERSION}`, ' escape interrupt · ctrl+c/ctrl+d clear/exit · / commands · ! bash'],
  promptChar: '>',
  placeholder: '',
  footer: ['fake-model'],
  quitWords: ['/quit'],
  slashMenu: false,
  ctrlC: 'double',
  doubleMs: 1000,
  ctrlDQuits: true,
  fullLifecycle: true,
  refuseQuitWhileWorking: false,
  configRoot: piRoot,
  integrationFile: (root) => path.join(root, 'extensions', 'herdr-agent-state.ts'),
  launch,
  quitLines: () => [],
};
