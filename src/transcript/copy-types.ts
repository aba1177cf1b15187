// The shapes of a session copy: what is asked (entries, request) and what was done (the record a
// failed handoff undoes and a finished one verifies).
import type { Host } from '../host/host.js';
import type { LeftLook } from './left-ledger.js';
import type { ContentFacts } from './arrivals.js';
import type { DestinationLook } from './destinations.js';
import type { RewriteMatcher } from './rewrite-matcher.js';
import type { RewritePlan } from './rewrite-plan.js';

/** One file of a unit (the shape `UnitEntry` of adapters/adapter.ts has). */
export interface CopyEntry {
  /** Absolute path on the source. */
  source: string;
  /** Destination relative to the target config root. */
  dest: string;
  verbatim: boolean;
  padFirstLine?: boolean;
  /** Size on the source when the unit was read (for messages). */
  size?: number;
  mode: number;
  mtimeMs: number;
}

export interface CopyRequest {
  source: Host;
  target: Host;
  entries: readonly CopyEntry[];
  /** Target config root (absolute); every destination must stay below it. */
  targetRoot: string;
  plan: RewritePlan | RewriteMatcher;
  /** Replace target files whose content the source does not continue and that changed since they were left (the old one is kept as a backup). */
  overwrite?: boolean;
  /** The target's ledger of what earlier handoffs left there (left-ledger.ts): a file as it was left is replaced. */
  ledgerDir?: string;
  /** That ledger as read just before (lookLeft, with the files' hashes then): the files it names are not hashed again. */
  left?: LeftLook;
  /** The source's ledger of what handoffs wrote there (arrivals.ts): what it still holds of that need not be sent. */
  arrivalsDir?: string;
  /** Distinguishes this run's temp and backup names (default: random). */
  tag?: string;
  /** The destinations as looked at just before (see lookAtDestinations), so they are not asked again. */
  looked?: Promise<DestinationLook>;
  /** Told the bytes read from the source as they go (progress). */
  onBytes?: (bytes: number) => void;
  /** Small source files read together ahead (read-ahead.ts); the others are streamed. */
  readAhead?: Promise<ReadonlyMap<string, Buffer>>;
  /** Small source files read early, from the unit before the quit (read-ahead.ts: readEarly): kept where the sizes still agree. */
  readEarly?: Promise<ReadonlyMap<string, Buffer>>;
}

/** `replaced`: a file as an earlier handoff left it (backup dropped once verified); `overwritten`: forced by `overwrite` (backup kept). */
export type CopyAction = 'created' | 'appended' | 'unchanged' | 'replaced' | 'overwritten';

export interface CopiedFile {
  /** Absolute path on the target. */
  path: string;
  action: CopyAction;
  /** sha256 (hex) and size of the file as it now is on the target. */
  sha256: string;
  size: number;
  verbatim: boolean;
  /** Size, mode and mtime before we touched it (appended, unchanged, replaced, overwritten). */
  previous: { size: number; mode: number; mtimeMs: number } | null;
  /** Where the replaced file was kept (replaced, overwritten). */
  backup: string | null;
  /** The source file as it left (its own bytes, before the rewrite): what the source's ledger records. */
  source?: { path: string; sha256: string; size: number; mtimeMs: number };
  /** The file as it now is on the target (what the target's arrival ledger records). */
  content?: ContentFacts;
  /** Bytes of this file that crossed from the source (a delta sends only what is new). */
  sent?: number;
  /** Paths replaced by the rewriter (0 for verbatim files). */
  replacements: number;
}

export interface CopyRecord {
  targetRoot: string;
  files: CopiedFile[];
  /** Folders we created, parents first. */
  createdDirs: string[];
}
