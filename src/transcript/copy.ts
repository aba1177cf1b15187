// Copy a session unit from a source Host to a target Host through the path rewriter.
//
// Bytes flow source read stream → rewriter (unless verbatim) → target write stream; the Host
// implementations carry them (over the one ssh connection when remote). Every destination is
// computed under the target config root and checked to stay there (no `..`, no symlinked parent
// leading out). Files are written to a temp name and renamed into place, with the source's mode
// and mtime (pickers sort by mtime). A file the target already has is only extended — when the
// rewritten source continues it (a session coming back) — after comparing a hash of the prefix
// computed on the target itself (`head -c N | sha256sum`; the target has no node). A file that is
// byte-identical to what an earlier handoff left there (its ledger, left-ledger.ts) is replaced
// whole, with a private backup until the handoff is verified: agents that rewrite their files in
// place make that the usual case of a session coming back. Anything else the target holds is a
// conflict unless `overwrite` is set (its backup is kept). The returned record lists every file
// written, so a failed handoff can undo it and a finished one can verify it.
import { randomBytes } from 'node:crypto';
import path from 'node:path/posix';
import { HandoffError } from '../errors.js';
import type { Host } from '../host/host.js';
import { arrivalVerdicts, describeFile, worthAnArrival } from './arrivals.js';
import type { CopiedFile, CopyAction, CopyEntry, CopyRecord, CopyRequest } from './copy-types.js';
import { checkFolders, destinationUnder, makeCheckedFolders } from './destinations.js';
import { bundleFolder, bundleMembers, installBundle } from './file-bundle.js';
import { delta, extend, writeWhole } from './file-copy.js';
import { isAsLeft, readLeft, type LeftState } from './left-ledger.js';
import { readAhead } from './read-ahead.js';
import { matcherFor, RewriteMatcher } from './rewrite-matcher.js';
import { INSTALL_SCRIPT, installArgs, remotePrefixHash, runOk } from './target-files.js';

export type { CopiedFile, CopyAction, CopyEntry, CopyRecord, CopyRequest } from './copy-types.js';

export interface ConflictFacts {
  file: string;
  there: { size: number; mtimeMs: number };
  sending: { size: number; mtimeMs: number };
  left: LeftState['left'];
}

const when = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** A session file on the target that an agent-handoff copy cannot take over: someone wrote it there. */
export function sessionConflict(host: Host, facts: ConflictFacts, reason: string): HandoffError {
  const { file, there, sending, left } = facts;
  const history = left
    ? ` It changed since handoff ${left.handoff} took the session to ${left.to} at ${left.at} (then ${left.size} bytes), so the session was resumed there too.`
    : ' No handoff recorded leaving it there, so it may hold work of its own.';
  return new HandoffError(
    'session_conflict',
    `${file} already exists on ${host.label} (${there.size} bytes, modified ${when(there.mtimeMs)}) and ${reason}; the session being sent is ${sending.size} bytes, modified ${when(sending.mtimeMs)}.${history}`,
    {
      fix: `Move ${file} aside on ${host.label} and run the handoff again, or pass --overwrite to replace it (the copy there is kept beside it as a backup).`,
      details: { file, there, sending, left },
    },
  );
}

/** The ledger's state of each held file: as `req.left` says for those it names (the same ledger), read now for the rest. */
async function leftStatesOf(target: Host, req: CopyRequest, held: readonly string[]): Promise<Map<string, LeftState>> {
  if (!req.ledgerDir) return new Map();
  const given = req.left?.dir === req.ledgerDir ? req.left.states : new Map<string, LeftState>();
  const unknown = held.filter((f) => !given.has(f));
  const read = await readLeft(target, req.ledgerDir, unknown);
  const states = new Map(unknown.map((f, i) => [f, read[i]!]));
  for (const f of held) if (given.has(f)) states.set(f, given.get(f)!);
  return states;
}

export async function copyUnit(given: CopyRequest): Promise<CopyRecord> {
  const { target } = given;
  const tag = given.tag ?? randomBytes(4).toString('hex');
  const matcher = given.plan instanceof RewriteMatcher ? given.plan : matcherFor(given.plan);
  const record: CopyRecord = { targetRoot: given.targetRoot, files: [], createdDirs: [] };

  // Validate every destination before writing anything.
  const dests = given.entries.map((e) => destinationUnder(given.targetRoot, e.dest));
  const folders = await checkFolders(target, given.targetRoot, dests, record, given.looked);
  const existingOf = folders.stats;
  const ahead = readAhead(given.source, given.entries, existingOf, given.readEarly);
  ahead.catch(() => undefined);
  const req: CopyRequest = { ...given, readAhead: ahead };
  // New files small enough to hold go in one program (file-bundle.ts). When they are the whole
  // unit, that program makes the folders too: one program for a session's first arrival.
  const fresh = req.entries.flatMap((entry, i) => (existingOf[i] === null ? [{ entry, file: dests[i]!, i }] : []));
  const whole = fresh.length === req.entries.length ? bundleMembers(fresh, 1) : [];
  const bundled = whole.length === req.entries.length ? whole : bundleMembers(fresh);
  const bundleMakesFolders = folders.toMake && bundled.length === req.entries.length;
  if (!bundleMakesFolders) await makeCheckedFolders(target, req.targetRoot, folders);
  // What earlier handoffs left where this one finds files: one program for them all.
  const held = dests.filter((_, i) => existingOf[i]?.type === 'file' && existingOf[i]!.size > 0);
  const leftOf = await leftStatesOf(target, req, held);
  // Files the target holds as they were left: does the source still hold what arrived there
  // (plus a tail, or with a new first line)? Asked of the source, which hashes its own bytes.
  // A file too small for an entry when it arrived (worthAnArrival) is not asked about.
  const asLeftEntries = req.entries.filter((e, i) => {
    const st = existingOf[i];
    return st?.type === 'file' && st.size > 0 && worthAnArrival(e.size ?? Infinity) && isAsLeft(leftOf.get(dests[i]!) ?? { left: null, sha256Now: null }, st.size);
  });
  const verdicts = req.arrivalsDir && asLeftEntries.length > 0 ? await arrivalVerdicts(req.source, req.arrivalsDir, asLeftEntries.map((e) => e.source)) : [];
  const verdictOf = new Map(asLeftEntries.map((e, i) => [e, verdicts[i]!]));

  // The files side by side: each is its own, and one at a time would cost a round trip or two each.
  const copyOne = async (e: CopyEntry, i: number): Promise<CopiedFile> => {
    const file = dests[i]!;
    const dir = path.dirname(file);
    const existing = existingOf[i] ?? null;
    if (existing && existing.type !== 'file') {
      throw new HandoffError('unsafe_destination', `${file} on ${target.label} exists and is not a regular file (${existing.type}).`, { fix: `Move ${file} out of the way, then run the handoff again.` });
    }
    const mode = e.mode & 0o7777;
    // Mode and times, then (when `to` is given) the atomic rename into place: one program.
    const finish = async (p: string, to = '') => {
      await runOk(target, ['/bin/sh', '-c', INSTALL_SCRIPT, 'sh', ...installArgs({ mode, mtimeMs: e.mtimeMs, to }, p)], `Installing ${file}`);
    };

    if (existing && existing.size > 0) {
      const previous = { size: existing.size, mode: existing.mode, mtimeMs: existing.mtimeMs };
      const v = verdictOf.get(e);
      if (v && v.kind !== 'none' && v.arrived.endsWithNewline) {
        const source = { path: e.source, sha256: v.sha256Now, size: v.sizeNow, mtimeMs: e.mtimeMs };
        if (v.kind === 'append' && v.sizeNow === v.arrived.size) {
          // The source holds just what arrived there and the target what left it: the same
          // session, nothing to send (extending by nothing would only reinstall the file).
          const content = await describeFile(target, file);
          return { path: file, action: 'unchanged', sha256: content.sha256, size: content.size, verbatim: e.verbatim, previous, backup: null, replacements: 0, source, content, sent: 0 };
        }
        const d = await delta(req, matcher, e, file, v, tag);
        if (v.kind === 'append') {
          await finish(d.built, file);
          const content = await describeFile(target, file);
          return { path: file, action: 'appended', sha256: content.sha256, size: content.size, verbatim: e.verbatim, previous, backup: null, replacements: d.replacements, source, content, sent: d.read };
        }
        const backup = backupName(file, tag);
        await finish(d.built);
        await target.rename(file, backup);
        await target.rename(d.built, file);
        const content = await describeFile(target, file);
        return { path: file, action: 'replaced', sha256: content.sha256, size: content.size, verbatim: e.verbatim, previous, backup, replacements: d.replacements, source, content, sent: d.read };
      }
      // A file as it was left was hashed whole with the ledger: that hash is its prefix's.
      const state = leftOf.get(file);
      const ext = await extend(req, matcher, e, file, existing.size, tag, state?.sha256Now && isAsLeft(state, existing.size) ? state.sha256Now : undefined);
      if (ext.kind === 'unchanged') {
        return { path: file, action: 'unchanged', sha256: ext.sha256, size: ext.size, verbatim: e.verbatim, previous, backup: null, replacements: ext.replacements, source: ext.source, content: ext.content, sent: ext.source.size };
      }
      if (ext.kind === 'appended') {
        // Build the extended file beside it from the target's own bytes + the tail, then swap it in.
        const tmp = path.join(dir, `.${path.basename(file)}.ah-${tag}.tmp`);
        try {
          await runOk(target, ['sh', '-c', 'cat -- "$1" "$2" > "$3"', 'sh', file, ext.tail, tmp], `Extending ${file}`);
          await finish(tmp, file);
        } finally {
          await target.remove(ext.tail);
          await target.remove(tmp);
        }
        return { path: file, action: 'appended', sha256: ext.sha256, size: ext.size, verbatim: e.verbatim, previous, backup: null, replacements: ext.replacements, source: ext.source, content: ext.content, sent: ext.source.size };
      }
      const asLeft = isAsLeft(leftOf.get(file) ?? { left: null, sha256Now: null }, existing.size);
      if (!asLeft && !req.overwrite) {
        const size = e.size ?? (await req.source.stat(e.source))?.size ?? 0;
        throw sessionConflict(target, { file, there: existing, sending: { size, mtimeMs: e.mtimeMs }, left: leftOf.get(file)?.left ?? null }, ext.reason);
      }
      // Built beside it, then swapped in: the old file is the backup until the handoff is verified
      // (kept for good when it was forced: someone else's writes).
      const w = await writeWhole(req, matcher, e, file, tag);
      const backup = backupName(file, tag);
      await finish(w.tmp);
      await target.rename(file, backup);
      await target.rename(w.tmp, file);
      return { path: file, action: asLeft ? 'replaced' : 'overwritten', sha256: w.sha256, size: w.size, verbatim: e.verbatim, previous, backup, replacements: w.replacements, source: w.source, content: w.content, sent: w.source.size };
    }

    // An empty file there (grok's `*.lock`) stays as it is when the source's is empty too.
    const w = await writeWhole(req, matcher, e, file, tag, { mode, mtimeMs: e.mtimeMs, to: file }, existing !== null);
    if (w.written && !w.installed) await finish(w.tmp, file);
    const previous = existing ? { size: 0, mode: existing.mode, mtimeMs: existing.mtimeMs } : null;
    const action: CopyAction = !existing ? 'created' : w.written ? 'overwritten' : 'unchanged';
    return { path: file, action, sha256: w.sha256, size: w.size, verbatim: e.verbatim, previous, backup: null, replacements: w.replacements, source: w.source, content: w.content, sent: w.source.size };
  };
  // The bundle, and the rest each in its own program beside it.
  const copyBundled = async (): Promise<PromiseSettledResult<CopiedFile>[]> => {
    const outcome = await installBundle(req, matcher, bundled, bundleFolder(path.dirname(bundled[0]!.file), tag), bundleMakesFolders ? folders.dirs : []);
    // A target without tar: one by one after all.
    if (outcome.kind === 'no_tools') {
      if (bundleMakesFolders) await makeCheckedFolders(target, req.targetRoot, folders);
      return Promise.allSettled(bundled.map((m) => copyOne(m.entry, m.i)));
    }
    const placed = new Map(outcome.files.map((f) => [f.path, f]));
    return bundled.map((m) => {
      const f = placed.get(m.file);
      return f ? { status: 'fulfilled', value: f } : { status: 'rejected', reason: outcome.error };
    });
  };
  const settled: PromiseSettledResult<CopiedFile>[] = [];
  const inBundle = new Set(bundled.map((m) => m.i));
  await Promise.all([
    bundled.length === 0
      ? null
      : copyBundled().then(
          (rs) => rs.forEach((r, k) => (settled[bundled[k]!.i] = r)),
          (err: unknown) => bundled.forEach((m) => (settled[m.i] = { status: 'rejected', reason: err })),
        ),
    ...req.entries.map((e, i) => (inBundle.has(i) ? null : Promise.allSettled([copyOne(e, i)]).then(([r]) => (settled[i] = r!)))),
  ]);
  // Every file settled before a failure is reported, so the undo never races a write.
  for (const c of settled) if (c.status === 'fulfilled') record.files.push(c.value);
  const failed = settled.find((c): c is PromiseRejectedResult => c.status === 'rejected');
  if (failed) throw failed.reason;
  return record;
}

/** Check every written file on the target against the recorded hash and size (hashed there). */
export async function verifyCopy(target: Host, record: CopyRecord): Promise<{ ok: boolean; mismatches: string[] }> {
  const mismatches: string[] = [];
  for (const f of record.files) {
    const st = await target.stat(f.path);
    if (st?.type !== 'file' || st.size !== f.size || (await remotePrefixHash(target, f.path, f.size)) !== f.sha256) mismatches.push(f.path);
  }
  return { ok: mismatches.length === 0, mismatches };
}

/** Put the target back as it was before `copyUnit` (a failed handoff). Safe to call twice. */
export async function undoCopy(target: Host, record: CopyRecord): Promise<void> {
  for (const f of [...record.files].reverse()) {
    if (f.action === 'created') {
      await target.remove(f.path);
    } else if (f.action === 'appended' && f.previous) {
      if ((await target.stat(f.path))?.size === f.previous.size) continue;
      const tmp = `${f.path}.ah-undo.tmp`;
      await runOk(target, ['sh', '-c', 'head -c "$1" < "$2" > "$3"', 'sh', String(f.previous.size), f.path, tmp], `Restoring ${f.path}`);
      await target.chmod(tmp, f.previous.mode);
      await target.utimes(tmp, f.previous.mtimeMs, f.previous.mtimeMs);
      await target.rename(tmp, f.path);
    } else if (f.action === 'overwritten' || f.action === 'replaced') {
      if (f.backup && (await target.stat(f.backup))) await target.rename(f.backup, f.path);
      else if (f.previous?.size === 0) {
        await target.writeFile(f.path, Buffer.alloc(0), { mode: f.previous.mode });
        await target.utimes(f.path, f.previous.mtimeMs, f.previous.mtimeMs);
      }
    }
  }
  // Folders we made, deepest first; `rmdir` leaves any that something else has filled meanwhile.
  for (const d of [...record.createdDirs].reverse()) await target.run(['rmdir', '--', d]).catch(() => undefined);
}

/** Where a replaced file is kept until the handoff is verified (`tag`: the copy's). */
export function backupName(file: string, tag: string): string {
  return `${file}.ah-backup-${tag}`;
}

/** After a verified handoff: drop the backups of files as an earlier handoff left them (forced ones stay). Returns those kept. */
export async function discardBackups(target: Host, record: CopyRecord): Promise<string[]> {
  const replaced = record.files.filter((f) => f.action === 'replaced' && f.backup);
  if (replaced.length > 0) await target.run(['rm', '-f', '--', ...replaced.map((f) => f.backup!)]);
  return record.files.filter((f) => f.action === 'overwritten' && f.backup).map((f) => f.backup!);
}
