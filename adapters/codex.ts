// Codex: `<root>/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`; no per-project folder (the cwd
// lives only inside the file). The SQLite index is never copied: Codex rebuilds it from rollouts.
import { z } from 'zod';
import { HandoffError } from '../src/errors.js';
import type { Host } from '../src/host/host.js';
import {
  ambiguous,
  filesIn,
  idFromFileName,
  listOrEmpty,
  mainEntryFor,
  notFound,
  pickGuess,
  posix as path,
  readFirstLine,
  screenClassifier,
  UUID_RE,
  type Adapter,
  type GuessInput,
  type Placement,
  type SessionHandle,
  type SessionRef,
  type SideCtx,
} from './adapter.js';
import { codexHookTrust, codexRoot } from './codex-hooks.js';

const ROLLOUT = /^rollout-.+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

const configRoot = codexRoot;

function refFromFile(file: string): SessionRef {
  const name = path.basename(file);
  const id = ROLLOUT.test(name) ? idFromFileName(name) : null;
  const dir = path.dirname(file);
  const parts = dir.split('/');
  const [y, m, d] = parts.slice(-3);
  const sessions = parts.slice(0, -3).join('/');
  if (!id || !/^\d{4}$/.test(y ?? '') || !/^\d{2}$/.test(m ?? '') || !/^\d{2}$/.test(d ?? '') || path.basename(sessions) !== 'sessions') {
    throw new HandoffError('session_not_found', `${file} is not a Codex rollout (<config root>/sessions/YYYY/MM/DD/rollout-…-<uuid>.jsonl).`, {
      fix: 'Pass the rollout path, or the full session UUID with --session.',
    });
  }
  const root = path.dirname(sessions);
  return { kind: 'codex', id, configRoot: root, file, dir, folderRel: path.relative(root, dir) };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Dated folders (`YYYY/MM/DD`) that exist under `sessions`, newest first. */
async function datedFolders(host: Host, sessions: string): Promise<string[]> {
  // Each level's folders listed side by side: over ssh each listing is a round trip.
  const below = async (rel: string, pattern: RegExp): Promise<string[]> =>
    (await listOrEmpty(host, rel ? path.join(sessions, rel) : sessions)).filter((e) => e.type === 'dir' && pattern.test(e.name)).map((e) => (rel ? `${rel}/${e.name}` : e.name));
  const years = await below('', /^\d{4}$/);
  const months = (await Promise.all(years.map((y) => below(y, /^\d{2}$/)))).flat();
  const days = (await Promise.all(months.map((m) => below(m, /^\d{2}$/)))).flat();
  return days.sort().reverse();
}

/** The dated folders a UUIDv7 most likely sits in (its timestamp, ±1 day for time zones). */
function hintedFolders(id: string): string[] {
  if (id[14] !== '7') return [];
  const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16);
  const out = new Set<string>();
  for (const delta of [0, -86_400_000, 86_400_000]) {
    const t = new Date(ms + delta);
    out.add(`${t.getUTCFullYear()}/${pad(t.getUTCMonth() + 1)}/${pad(t.getUTCDate())}`);
  }
  return [...out];
}

async function findById(host: Host, sessions: string, id: string): Promise<string[]> {
  const inFolders = async (folders: string[]) => {
    const listed = await Promise.all(folders.map(async (f) => (await listOrEmpty(host, path.join(sessions, f))).map((e) => ({ f, e }))));
    return listed.flat().flatMap(({ f, e }) => (e.type === 'file' && ROLLOUT.test(e.name) && idFromFileName(e.name) === id ? [path.join(sessions, f, e.name)] : []));
  };
  const hinted = await inFolders(hintedFolders(id));
  if (hinted.length > 0) return hinted;
  return inFolders(await datedFolders(host, sessions));
}

async function locate(host: Host, handle: SessionHandle, ctx: SideCtx): Promise<SessionRef> {
  if (handle.kind === 'path' || handle.value.includes('/')) {
    const st = await host.stat(handle.value);
    if (st?.type !== 'file') throw notFound('codex', `at ${handle.value}`, 'Check the path, or pass the full session UUID with --session.');
    return refFromFile(handle.value);
  }
  const id = handle.value.toLowerCase();
  // `codex exec resume <partial id>` silently starts a new session: never resume by prefix.
  if (!UUID_RE.test(id)) {
    throw notFound('codex', `with id ${JSON.stringify(handle.value)}`, 'Codex resumes only by full session UUID (a prefix would start a new session); pass all 36 characters with --session.');
  }
  const sessions = path.join(configRoot(ctx.env, ctx.home), 'sessions');
  const hits = await findById(host, sessions, id);
  if (hits.length === 0) throw notFound('codex', `with id ${id} under ${sessions}`, 'Check the id, or pass the rollout path with --session.');
  if (hits.length > 1) throw ambiguous('codex', `have the id ${id}`, hits);
  return refFromFile(hits[0]!);
}

const SessionMetaLine = z.looseObject({
  type: z.literal('session_meta'),
  payload: z.looseObject({ id: z.string().optional(), cwd: z.string() }),
});

/** The cwd recorded in a rollout's first line (`session_meta.payload.cwd`), or null. */
export async function rolloutCwd(host: Host, file: string): Promise<string | null> {
  try {
    const parsed = SessionMetaLine.safeParse(JSON.parse(await readFirstLine(host, file)));
    return parsed.success ? parsed.data.payload.cwd : null;
  } catch {
    return null;
  }
}

async function guess(host: Host, input: GuessInput): Promise<SessionRef> {
  const sessions = path.join(configRoot(input.ctx.env, input.ctx.home), 'sessions');
  // Folders are named after the session start (local time): look from the day before the agent started.
  const since = new Date(input.startedAtMs - 86_400_000);
  const first = `${since.getUTCFullYear()}/${pad(since.getUTCMonth() + 1)}/${pad(since.getUTCDate())}`;
  // The recent folders, and the rollouts written since the agent started, read side by side.
  const folders = (await datedFolders(host, sessions)).filter((folder) => folder >= first);
  const files = (await Promise.all(folders.map((folder) => filesIn(host, path.join(sessions, folder), (n) => ROLLOUT.test(n))))).flat().filter((f) => f.stat.mtimeMs >= input.startedAtMs - 2000);
  const cwds = await Promise.all(files.map((f) => rolloutCwd(host, f.path)));
  const candidates = files.flatMap((f, i) => (cwds[i] === input.cwd ? [{ path: f.path, mtimeMs: f.stat.mtimeMs }] : []));
  return refFromFile(pickGuess('codex', input.cwd, candidates, input.startedAtMs).path);
}

function placement(ref: SessionRef, target: SideCtx & { cwd: string }): Placement {
  const root = configRoot(target.env, target.home);
  // The same dated relative path: Codex finds rollouts by scanning these folders.
  const file = path.join(root, ref.folderRel, path.basename(ref.file));
  return { configRoot: root, folderRel: ref.folderRel, file, handle: ref.id, renames: [] };
}

export const codex: Adapter = {
  kind: 'codex',
  herdrKind: 'codex',
  integration: 'codex',
  configVar: 'CODEX_HOME',
  configRoot,
  projectFolderName: () => null,
  locate,
  guess,
  unit: async (host, ref, place) => [await mainEntryFor(host, ref, place)],
  placement,
  resumeArgv: (handle, extra = []) => ['codex', 'resume', handle, ...extra],
  // `/quit` only detaches from Codex's daemon, which keeps a running turn writing: quit when idle only.
  quit: { text: '/quit', pauseMs: 500, fallbackKeys: ['ctrl+c', 'ctrl+c'], fallbackGapMs: 300, mustBeIdle: true },
  classifyScreen: screenClassifier({
    trust: [/Trust this folder\?/, /Trust and continue/],
    trustAccept: 'Trust and continue',
    login: [/Sign in with ChatGPT/, /Welcome to Codex, OpenAI's command-line coding agent/, /Choose how you want to use Codex/],
    // Real codex 0.171: "Hooks need review" (1. Review hooks / 2. Trust all and continue / 3. Continue
    // without trusting), and in its Hooks list "⚠ 1 hook needs review before it can run".
    hook_review: [/Hooks need review/i, /\bhooks? needs? review\b/i],
  }),
  hookTrust: codexHookTrust,
};
