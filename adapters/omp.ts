// oh-my-pi: pi's file layout with its own folder names (relative to HOME, or `-tmp-…` under the
// temp folder), a fixed-width line 1, a sibling artifacts folder and global content-addressed blobs.
import type { Host } from '../src/host/host.js';
import {
  entryOf,
  mainEntryFor,
  isUnder,
  posix as path,
  relocate,
  rootFrom,
  screenClassifier,
  walkFiles,
  type Adapter,
  type Placement,
  type SessionRef,
  type SideCtx,
  type UnitEntry,
} from './adapter.js';
import { piFamilyGuess, piFamilyLocate, piFamilyPlacement, piFolderName } from './pi.js';

const seps = (s: string) => s.replace(/[/\\:]/g, '-');

/** omp's folder: `-<path below HOME>` (HOME itself `-`), else `-tmp-<path below tmpdir>`, else pi's form. */
export function ompFolderName(cwd: string, ctx: Pick<SideCtx, 'home' | 'homeReal' | 'tmpdir'>): string {
  for (const home of new Set([ctx.homeReal ?? ctx.home, ctx.home])) {
    if (home !== '/' && isUnder(cwd, home)) return `-${seps(path.relative(home, cwd))}`;
  }
  if (ctx.tmpdir && ctx.tmpdir !== '/' && isUnder(cwd, ctx.tmpdir)) {
    const rel = path.relative(ctx.tmpdir, cwd);
    return rel === '' ? '-tmp' : `-tmp-${seps(rel)}`;
  }
  return piFolderName(cwd);
}

function configRoot(env: Record<string, string | undefined>, home: string): string {
  const profile = env.OMP_PROFILE || env.PI_PROFILE;
  const fallback = profile ? path.join(home, '.omp', 'profiles', profile, 'agent') : path.join(home, env.PI_CONFIG_DIR || '.omp', 'agent');
  return rootFrom(env, 'PI_CODING_AGENT_DIR', home, fallback);
}

const BLOB_REF = /blob:sha256:([0-9a-f]{64})/g;

/** The blob hashes a transcript refers to (streamed; refs may straddle chunk boundaries). */
async function blobRefs(host: Host, file: string): Promise<Set<string>> {
  const found = new Set<string>();
  const stream = await host.readStream(file);
  let tail = '';
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const text = tail + chunk.toString('latin1');
    for (const m of text.matchAll(BLOB_REF)) found.add(m[1]!);
    tail = text.slice(-(12 + 64));
  }
  return found;
}

async function unit(host: Host, ref: SessionRef, place: Placement): Promise<UnitEntry[]> {
  const rel = (p: string) => relocate(path.relative(ref.configRoot, p), ref.folderRel, place.folderRel);
  // Line 1 is a fixed-width title record omp rewrites in place: keep its length.
  const [main, sidecar, refs] = await Promise.all([mainEntryFor(host, ref, place, { padFirstLine: true }), walkFiles(host, ref.file.replace(/\.jsonl$/, '')), blobRefs(host, ref.file)]);
  // Blobs are images and other user content, addressed by their hash: verbatim.
  const blobs = await Promise.all(
    [...refs].sort().map(async (sha) => {
      const p = path.join(ref.configRoot, 'blobs', sha);
      const st = await host.stat(p);
      return st?.type === 'file' ? [entryOf({ path: p, stat: st }, path.join('blobs', sha), true)] : [];
    }),
  );
  return [main, ...sidecar.map((f) => entryOf(f, rel(f.path), false)), ...blobs.flat()];
}

export const omp: Adapter = {
  kind: 'omp',
  herdrKind: 'omp',
  integration: 'omp',
  configVar: 'PI_CODING_AGENT_DIR',
  configRoot,
  projectFolderName: (cwd, ctx) => ompFolderName(cwd, ctx),
  locate: (host, handle, ctx) => piFamilyLocate('omp', host, handle, configRoot(ctx.env, ctx.home)),
  guess: (host, input) => piFamilyGuess('omp', host, input, configRoot(input.ctx.env, input.ctx.home), ompFolderName(input.cwd, input.ctx)),
  unit,
  placement: (ref, target) => piFamilyPlacement(ref, configRoot(target.env, target.home), ompFolderName(target.cwd, target)),
  resumeArgv: (handle, extra = []) => ['omp', '--resume', handle, ...extra],
  quit: { text: '/quit', pauseMs: 500, fallbackKeys: ['ctrl+c', 'ctrl+c'], fallbackGapMs: 200, mustBeIdle: false },
  classifyScreen: screenClassifier({
    first_run_setup: [/Setup step \d+ of \d+/, /Set up your providers/],
  }),
};
