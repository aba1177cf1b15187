// Claude Code: `<root>/projects/<sanitised cwd>/<sid>.jsonl` + sibling `<sid>/` + `<root>/file-history/<sid>/`.
import { HandoffError } from '../src/errors.js';
import type { Host } from '../src/host/host.js';
import {
  ambiguous,
  entryOf,
  filesIn,
  idFromFileName,
  listOrEmpty,
  notFound,
  pickGuess,
  posix as path,
  relocate,
  rootFrom,
  screenClassifier,
  UUID_RE,
  walkFiles,
  type Adapter,
  type GuessInput,
  type Placement,
  type SessionHandle,
  type SessionRef,
  type SideCtx,
  type UnitEntry,
} from './adapter.js';

/** Java-style 32-bit string hash over UTF-16 code units. */
function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = ((h << 5) - h + s.charCodeAt(i)) | 0;
  return h;
}

/** Claude's project folder: every UTF-16 code unit outside [A-Za-z0-9] → `-`; long names get a hash suffix. */
export function claudeFolderName(cwd: string): string {
  const s = cwd.replace(/[^A-Za-z0-9]/g, '-');
  if (s.length <= 200) return s;
  return `${s.slice(0, 200)}-${Math.abs(javaHash(cwd)).toString(36)}`;
}

function configRoot(env: Record<string, string | undefined>, home: string): string {
  return rootFrom(env, 'CLAUDE_CONFIG_DIR', home, path.join(home, '.claude'));
}

function refFromFile(file: string): SessionRef {
  const id = idFromFileName(path.basename(file));
  const dir = path.dirname(file);
  const projects = path.dirname(dir);
  if (!id || path.basename(file) !== `${id}.jsonl` || path.basename(projects) !== 'projects') {
    throw new HandoffError('session_not_found', `${file} is not a Claude transcript (<config root>/projects/<folder>/<uuid>.jsonl).`, {
      fix: 'Pass the transcript path, or the full session UUID with --session.',
    });
  }
  const root = path.dirname(projects);
  return { kind: 'claude', id, configRoot: root, file, dir, folderRel: path.relative(root, dir) };
}

async function locate(host: Host, handle: SessionHandle, ctx: SideCtx): Promise<SessionRef> {
  if (handle.kind === 'path' || handle.value.includes('/')) {
    const st = await host.stat(handle.value);
    if (st?.type !== 'file') throw notFound('claude', `at ${handle.value}`, 'Check the path, or pass the full session UUID with --session.');
    return refFromFile(handle.value);
  }
  const id = handle.value.toLowerCase();
  // Claude itself takes only a full UUID (anything else opens its picker), so we do too.
  if (!UUID_RE.test(id)) {
    throw notFound('claude', `with id ${JSON.stringify(handle.value)}`, 'Claude resumes only by full session UUID; pass all 36 characters with --session.');
  }
  const root = configRoot(ctx.env, ctx.home);
  const projects = path.join(root, 'projects');
  // Every project at once: over ssh each stat is a round trip.
  const candidates = (await listOrEmpty(host, projects)).filter((e) => e.type === 'dir').map((e) => path.join(projects, e.name, `${id}.jsonl`));
  const hits = (await Promise.all(candidates.map(async (p) => ((await host.stat(p))?.type === 'file' ? [p] : [])))).flat();
  if (hits.length === 0) throw notFound('claude', `with id ${id} under ${projects}`, 'Check the id (`claude --resume` lists sessions), or pass the transcript path with --session.');
  if (hits.length > 1) throw ambiguous('claude', `have the id ${id}`, hits);
  return refFromFile(hits[0]!);
}

async function guess(host: Host, input: GuessInput): Promise<SessionRef> {
  const root = configRoot(input.ctx.env, input.ctx.home);
  const dir = path.join(root, 'projects', claudeFolderName(input.cwd));
  const files = await filesIn(host, dir, (n) => idFromFileName(n) !== null && n === `${idFromFileName(n)}.jsonl`);
  const pick = pickGuess('claude', input.cwd, files.map((f) => ({ path: f.path, mtimeMs: f.stat.mtimeMs })), input.startedAtMs);
  return refFromFile(pick.path);
}

function placement(ref: SessionRef, target: SideCtx & { cwd: string }): Placement {
  const root = configRoot(target.env, target.home);
  const folderRel = path.join('projects', claudeFolderName(target.cwd));
  return {
    configRoot: root,
    folderRel,
    file: path.join(root, folderRel, `${ref.id}.jsonl`),
    handle: ref.id,
    renames: [{ from: path.join(ref.configRoot, ref.folderRel), to: path.join(root, folderRel) }],
  };
}

async function unit(host: Host, ref: SessionRef, place: Placement): Promise<UnitEntry[]> {
  const rel = (p: string) => relocate(path.relative(ref.configRoot, p), ref.folderRel, place.folderRel);
  // The transcript, its sibling `<sid>/` (subagent transcripts and persisted tool results: they
  // carry paths too) and its file history (the user's file contents at each edit: verbatim,
  // never rewritten), looked at side by side.
  const [main, siblings, history] = await Promise.all([host.stat(ref.file), walkFiles(host, path.join(ref.dir, ref.id)), walkFiles(host, path.join(ref.configRoot, 'file-history', ref.id))]);
  if (main?.type !== 'file') throw notFound('claude', `at ${ref.file}`, 'The transcript vanished; check the agent is still where herdr says.');
  return [
    entryOf({ path: ref.file, stat: main }, rel(ref.file), false),
    ...siblings.map((f) => entryOf(f, rel(f.path), false)),
    ...history.map((f) => entryOf(f, path.relative(ref.configRoot, f.path), true)),
  ];
}

export const claude: Adapter = {
  kind: 'claude',
  herdrKind: 'claude',
  integration: 'claude',
  configVar: 'CLAUDE_CONFIG_DIR',
  configRoot,
  projectFolderName: (cwd) => claudeFolderName(cwd),
  locate,
  guess,
  unit,
  placement,
  resumeArgv: (handle, extra = []) => ['claude', '--resume', handle, ...extra],
  // The slash menu opens while typing `/exit`: an early Enter would pick a menu entry.
  quit: { text: '/exit', pauseMs: 1000, fallbackKeys: ['ctrl+c', 'ctrl+c'], fallbackGapMs: 300, mustBeIdle: false },
  classifyScreen: screenClassifier({
    trust: [/Quick safety check/, /Is this a project you created or one you trust/, /Yes, I trust this folder/],
    trustAccept: 'Yes, I trust this folder',
    first_run_setup: [/Let's get started\./, /Choose the text style/],
    login: [/Select login method:/, /Not logged in \u00B7 Run \/login/, /Do you want to use this API key\?/], // `·`, escaped (see OPTION_LINE)
  }),
};
