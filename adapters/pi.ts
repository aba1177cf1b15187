// pi: `<root>/sessions/--<enc cwd>--/<ts>_<uuid>.jsonl`, one file per session; resumed by absolute path.
// omp shares the file layout (not the folder names), so the layout helpers here serve both.
import { HandoffError } from '../src/errors.js';
import type { Host } from '../src/host/host.js';
import {
  ambiguous,
  mainEntryFor,
  filesIn,
  idFromFileName,
  listOrEmpty,
  looksLikePath,
  notFound,
  pickGuess,
  posix as path,
  rootFrom,
  screenClassifier,
  type Adapter,
  type AgentKind,
  type GuessInput,
  type Placement,
  type SessionHandle,
  type SessionRef,
} from './adapter.js';

/** pi's folder: strip one leading `/` or `\`, then `/`, `\`, `:` → `-`, wrapped in `--…--`. */
export function piFolderName(cwd: string): string {
  const s = cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-');
  return `--${s}--`;
}

const SESSION_FILE = /^.+_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

/** `<root>/sessions/<folder>/<ts>_<uuid>.jsonl` → its SessionRef. */
export function piFamilyRef(kind: AgentKind, file: string): SessionRef {
  const name = path.basename(file);
  const id = idFromFileName(name);
  const dir = path.dirname(file);
  const sessions = path.dirname(dir);
  if (!id || !SESSION_FILE.test(name) || path.basename(sessions) !== 'sessions') {
    throw new HandoffError('session_not_found', `${file} is not a ${kind} session file (<config root>/sessions/<folder>/<timestamp>_<uuid>.jsonl).`, {
      fix: 'Pass the session file path, or the session id with --session.',
    });
  }
  const root = path.dirname(sessions);
  return { kind, id, configRoot: root, file, dir, folderRel: path.relative(root, dir) };
}

/** Find by path, full id or unique id prefix (pi and omp both accept a prefix). */
export async function piFamilyLocate(kind: AgentKind, host: Host, handle: SessionHandle, root: string): Promise<SessionRef> {
  if (handle.kind === 'path' || looksLikePath(handle.value)) {
    const st = await host.stat(handle.value);
    if (st?.type !== 'file') throw notFound(kind, `at ${handle.value}`, 'Check the path, or pass the session id with --session.');
    return piFamilyRef(kind, handle.value);
  }
  const want = handle.value.toLowerCase();
  if (!/^[0-9a-f-]{4,36}$/.test(want)) {
    throw notFound(kind, `with id ${JSON.stringify(handle.value)}`, 'Pass the session UUID (or at least its first 4 characters) or the file path with --session.');
  }
  const sessions = path.join(root, 'sessions');
  // Every project folder listed at once: over ssh each listing is a round trip.
  const folders = (await listOrEmpty(host, sessions)).filter((d) => d.type === 'dir').map((d) => path.join(sessions, d.name));
  const listed = await Promise.all(folders.map(async (dir) => (await listOrEmpty(host, dir)).map((f) => ({ dir, f }))));
  const hits = listed.flat().flatMap(({ dir, f }) => {
    const id = f.type === 'file' && SESSION_FILE.test(f.name) ? idFromFileName(f.name) : null;
    return id && id.startsWith(want) ? [path.join(dir, f.name)] : [];
  });
  if (hits.length === 0) throw notFound(kind, `with an id starting ${want} under ${sessions}`, 'Check the id, or pass the session file path with --session.');
  if (hits.length > 1) throw ambiguous(kind, `have ids starting ${want}`, hits);
  return piFamilyRef(kind, hits[0]!);
}

export async function piFamilyGuess(kind: AgentKind, host: Host, input: GuessInput, root: string, folder: string): Promise<SessionRef> {
  const files = await filesIn(host, path.join(root, 'sessions', folder), (n) => SESSION_FILE.test(n));
  const pick = pickGuess(kind, input.cwd, files.map((f) => ({ path: f.path, mtimeMs: f.stat.mtimeMs })), input.startedAtMs);
  return piFamilyRef(kind, pick.path);
}

export function piFamilyPlacement(ref: SessionRef, root: string, folder: string): Placement {
  const folderRel = path.join('sessions', folder);
  const file = path.join(root, folderRel, path.basename(ref.file));
  return { configRoot: root, folderRel, file, handle: file, renames: [{ from: path.join(ref.configRoot, ref.folderRel), to: path.join(root, folderRel) }] };
}

function configRoot(env: Record<string, string | undefined>, home: string): string {
  return rootFrom(env, 'PI_CODING_AGENT_DIR', home, path.join(home, '.pi', 'agent'));
}

export const pi: Adapter = {
  kind: 'pi',
  herdrKind: 'pi',
  integration: 'pi',
  configVar: 'PI_CODING_AGENT_DIR',
  configRoot,
  projectFolderName: (cwd) => piFolderName(cwd),
  locate: (host, handle, ctx) => piFamilyLocate('pi', host, handle, configRoot(ctx.env, ctx.home)),
  guess: (host, input) => piFamilyGuess('pi', host, input, configRoot(input.ctx.env, input.ctx.home), piFolderName(input.cwd)),
  // pi keeps no files beside the transcript (a bash `fullOutputPath` points into $TMPDIR and is not moved).
  unit: async (host, ref, place) => [await mainEntryFor(host, ref, place)],
  placement: (ref, target) => piFamilyPlacement(ref, configRoot(target.env, target.home), piFolderName(target.cwd)),
  resumeArgv: (handle, extra = []) => ['pi', '--session', handle, ...extra],
  // `/exit` is not a pi command: pi would send it to the model as a prompt.
  quit: { text: '/quit', pauseMs: 500, fallbackKeys: ['ctrl+c', 'ctrl+c'], fallbackGapMs: 200, mustBeIdle: false },
  classifyScreen: screenClassifier({}),
};

