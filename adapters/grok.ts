// grok (xAI "Grok Build"): a session is a whole folder, `<root>/sessions/<percent-encoded cwd>/<uuid>/`,
// with `updates.jsonl` the authoritative log. `rewind_points.jsonl` holds file contents: verbatim.
import { HandoffError } from '../src/errors.js';
import type { Host } from '../src/host/host.js';
import {
  ambiguous,
  entryOf,
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

/** Percent-encode every UTF-8 byte outside `A–Z a–z 0–9 - . _ ~` (uppercase hex; unlike encodeURIComponent, also `()!*'`). */
export function grokFolderName(cwd: string): string {
  let out = '';
  for (const b of Buffer.from(cwd, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function grokFolderChecked(cwd: string): string {
  const name = grokFolderName(cwd);
  // Past 255 bytes grok switches to a slug + hash whose algorithm is not documented.
  if (name.length > 255) {
    throw new HandoffError('unsupported_path', `grok stores sessions for a folder path this long (${name.length} bytes encoded) under a name we cannot compute.`, {
      fix: 'Use a shorter checkout path on the target (--dir), or resume the session there by hand.',
    });
  }
  return name;
}

function configRoot(env: Record<string, string | undefined>, home: string, homeReal?: string): string {
  return rootFrom(env, 'GROK_HOME', home, path.join(homeReal ?? home, '.grok'));
}

const rootOf = (ctx: SideCtx) => configRoot(ctx.env, ctx.home, ctx.homeReal);

function refFromDir(dir: string): SessionRef {
  const id = path.basename(dir).toLowerCase();
  const group = path.dirname(dir);
  const sessions = path.dirname(group);
  if (!UUID_RE.test(id) || path.basename(sessions) !== 'sessions') {
    throw new HandoffError('session_not_found', `${dir} is not a grok session folder (<config root>/sessions/<encoded cwd>/<uuid>/).`, {
      fix: 'Pass the session folder, or the full session UUID with --session.',
    });
  }
  const root = path.dirname(sessions);
  return { kind: 'grok', id, configRoot: root, file: path.join(dir, 'updates.jsonl'), dir, folderRel: path.relative(root, group) };
}

/**
 * $1 grok's sessions folder, $2 a session UUID: each project folder in it (hidden ones too) that
 * holds a folder of that id, as "<folder>/<id>" ended by a NUL. One program, where a listing and
 * a stat per project folder would each cost a round trip or more over ssh.
 */
export const GROK_ID_FOLDERS_PROGRAM = `root=$1; id=$2
for d in "$root"/*/ "$root"/.[!.]*/ "$root"/..?*/; do
  if [ -d "$d$id" ]; then printf '%s\\0' "$d$id"; fi
done
exit 0`;

/** The folders named `id` one level below `sessions` (none when it does not exist). */
async function idFolders(host: Host, sessions: string, id: string): Promise<string[]> {
  const r = await host.run(['/bin/sh', '-c', GROK_ID_FOLDERS_PROGRAM, 'sh', sessions, id]);
  if (r.exitCode !== 0) throw new HandoffError('io_failed', `Looking for grok session ${id} under ${sessions} on ${host.label} failed: ${r.stderr.trim().slice(-300)}`, { fix: 'Pass the session folder with --session.' });
  return r.stdout.split('\0').filter((p) => p !== '');
}

async function locate(host: Host, handle: SessionHandle, ctx: SideCtx): Promise<SessionRef> {
  if (handle.kind === 'path' || handle.value.includes('/')) {
    const st = await host.stat(handle.value);
    if (!st) throw notFound('grok', `at ${handle.value}`, 'Check the path, or pass the full session UUID with --session.');
    return refFromDir(st.type === 'dir' ? handle.value.replace(/\/+$/, '') : path.dirname(handle.value));
  }
  const id = handle.value.toLowerCase();
  // grok matches a non-UUID against titles, never as an id prefix.
  if (!UUID_RE.test(id)) throw notFound('grok', `with id ${JSON.stringify(handle.value)}`, 'grok resumes only by full session UUID; pass all 36 characters with --session.');
  const sessions = path.join(rootOf(ctx), 'sessions');
  const hits = await idFolders(host, sessions, id);
  if (hits.length === 0) throw notFound('grok', `with id ${id} under ${sessions}`, 'Check the id, or pass the session folder with --session.');
  if (hits.length > 1) throw ambiguous('grok', `have the id ${id}`, hits);
  return refFromDir(hits[0]!);
}

async function guess(host: Host, input: GuessInput): Promise<SessionRef> {
  const group = path.join(rootOf(input.ctx), 'sessions', grokFolderName(input.cwd));
  const dirs = (await listOrEmpty(host, group)).filter((e) => e.type === 'dir' && UUID_RE.test(e.name)).map((e) => path.join(group, e.name));
  const candidates = (
    await Promise.all(
      dirs.map(async (dir) => {
        const st = (await host.stat(path.join(dir, 'updates.jsonl'))) ?? (await host.stat(dir));
        return st ? [{ path: dir, mtimeMs: st.mtimeMs }] : [];
      }),
    )
  ).flat();
  return refFromDir(pickGuess('grok', input.cwd, candidates, input.startedAtMs).path);
}

function placement(ref: SessionRef, target: SideCtx & { cwd: string }): Placement {
  const root = rootOf(target);
  const folderRel = path.join('sessions', grokFolderChecked(target.cwd));
  // `tool_definitions.json` names the session folder itself, encoded cwd included: rename it too.
  return {
    configRoot: root,
    folderRel,
    file: path.join(root, folderRel, ref.id, 'updates.jsonl'),
    handle: ref.id,
    renames: [{ from: path.join(ref.configRoot, ref.folderRel), to: path.join(root, folderRel) }],
  };
}

const VERBATIM = new Set(['rewind_points.jsonl']);

async function unit(host: Host, ref: SessionRef, place: Placement): Promise<UnitEntry[]> {
  const files = await walkFiles(host, ref.dir);
  if (!files.some((f) => f.path === ref.file)) throw notFound('grok', `at ${ref.dir} (no updates.jsonl)`, 'The session folder is incomplete; check the agent is still where herdr says.');
  return files.map((f) => {
    const name = path.basename(f.path);
    // Empty lock files carry nothing to rewrite; rewind points are file contents.
    const verbatim = VERBATIM.has(name) || name.endsWith('.lock');
    return entryOf(f, relocate(path.relative(ref.configRoot, f.path), ref.folderRel, place.folderRel), verbatim);
  });
}

export const grok: Adapter = {
  kind: 'grok',
  herdrKind: 'grok',
  integration: 'grok',
  configVar: 'GROK_HOME',
  configRoot,
  projectFolderName: (cwd) => grokFolderName(cwd),
  locate,
  guess,
  unit,
  placement,
  resumeArgv: (handle, extra = []) => ['grok', '--resume', handle, ...extra],
  // Ctrl+C only cancels or clears in grok; Ctrl+Q twice within 1 s quits.
  quit: { text: '/quit', pauseMs: 500, fallbackKeys: ['ctrl+q', 'ctrl+q'], fallbackGapMs: 300, mustBeIdle: false },
  classifyScreen: screenClassifier({
    login: [/Login with Grok/],
  }),
};
