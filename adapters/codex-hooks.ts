// Codex's side of carrying herdr's hook trust (see hook-trust.ts). Codex 0.171 lists its hooks,
// with the hash it would trust and the trust it has, over `codex app-server` (JSON-RPC lines on
// stdio: initialize, initialized, hooks/list); a trusted hook is a `[hooks.state."<key>"]` table
// with `trusted_hash` in config.toml. The hash covers the hook's definition (its absolute script
// path included), not the script's bytes: those are compared here. Three sh programs, all data
// positional: look (script hash + the app-server's answer), write (append the one entry, then
// look again), undo (remove exactly those lines).
import { z } from 'zod';
import type { Host } from '../src/host/host.js';
import { HASH_FN, MISSING_HASH_TOOL } from '../src/transcript/left-ledger.js';
import { VERSION } from '../src/version.js';
import { posix as path, rootFrom, type SideCtx } from './adapter.js';
import { planHookTrust, runsScript, type HerdrHook, type HookLook, type HookTrust, type HookTrustOutcome, type HookTrustRequest, type HookTrustWrite } from './hook-trust.js';

/** The script `herdr integration install codex` writes into the codex home. */
export const HERDR_HOOK_SCRIPT = 'herdr-agent-state.sh';

const MISSING_CODEX = 70;

/** The request id of hooks/list: the program waits for the answer with this id. */
const LIST_ID = 2;

/** The three lines the app-server is sent: its handshake, then hooks/list for the cwd. */
export function appServerRequests(cwd: string): string[] {
  return [
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { clientInfo: { name: 'agent-handoff', version: VERSION } } }),
    JSON.stringify({ jsonrpc: '2.0', method: 'initialized' }),
    JSON.stringify({ jsonrpc: '2.0', id: LIST_ID, method: 'hooks/list', params: { cwds: [cwd] } }),
  ];
}

/**
 * sh: `list_hooks <script> <request>…` prints the script's sha256 (or `-`), then every line
 * `codex app-server` wrote. Its stdin is a fifo in a private temp folder, held open until the
 * hooks/list answer is there (it exits as soon as stdin closes), bounded; then closed and reaped.
 */
const LIST_HOOKS_FN = [
  HASH_FN,
  'list_hooks() {',
  '  if [ -f "$1" ]; then h <"$1"; else echo -; fi',
  '  shift',
  `  command -v codex >/dev/null 2>&1 || exit ${MISSING_CODEX}`,
  '  d=$(mktemp -d "${TMPDIR:-/tmp}/agent-handoff-codex.XXXXXX") || exit 1',
  '  trap \'rm -rf -- "$d"\' EXIT',
  '  mkfifo -- "$d/in" || exit 1',
  '  codex app-server <"$d/in" >"$d/out" 2>/dev/null &',
  '  p=$!',
  // A codex that exits early must not take this shell down with SIGPIPE (set after its start: it would inherit it).
  "  trap '' PIPE",
  '  exec 3>"$d/in"',
  '  for l in "$@"; do printf "%s\\n" "$l" >&3 2>/dev/null || break; done',
  '  i=0',
  `  while [ "$i" -lt 300 ] && ! grep -q '"id":${LIST_ID}[,}]' "$d/out" 2>/dev/null && kill -0 "$p" 2>/dev/null; do sleep 0.05 2>/dev/null || sleep 1; i=$((i + 1)); done`,
  '  exec 3>&-',
  '  i=0',
  '  while [ "$i" -lt 40 ] && kill -0 "$p" 2>/dev/null; do sleep 0.05 2>/dev/null || sleep 1; i=$((i + 1)); done',
  '  kill "$p" 2>/dev/null; wait "$p" 2>/dev/null',
  '  cat -- "$d/out"',
  '}',
].join('\n');

/** $1 herdr's hook script, then the app-server request lines. */
export const CODEX_HOOKS_LOOK_PROGRAM = [LIST_HOOKS_FN, 'list_hooks "$@"'].join('\n');

/**
 * $1 config.toml, $2 the temp file beside it, $3 the table header, $4 the trusted_hash line, $5
 * and $6 the key as written raw and as TOML spells it; then list_hooks' arguments. Exits 3 when
 * the key already appears in the file (it is left as it is), 4 when the config is not a regular
 * file (a symlink is not replaced by a copy). Otherwise the file is copied privately, the two
 * lines appended (after a newline if the last line lacks one), renamed into place, and the hooks
 * listed again.
 */
export const CODEX_HOOK_TRUST_WRITE_PROGRAM = [
  LIST_HOOKS_FN,
  'f=$1; t=$2',
  'if [ -L "$f" ] || { [ -e "$f" ] && [ ! -f "$f" ]; }; then exit 4; fi',
  'if [ -f "$f" ] && grep -F -q -e "$5" -e "$6" -- "$f"; then exit 3; fi',
  'umask 077',
  'if [ -f "$f" ]; then cp -- "$f" "$t" || { rm -f -- "$t"; exit 1; }; else : >"$t" || exit 1; fi',
  'if [ -s "$t" ] && [ -n "$(tail -c 1 -- "$t")" ]; then printf "\\n" >>"$t"; fi',
  'printf "\\n%s\\n%s\\n" "$3" "$4" >>"$t" && mv -f -- "$t" "$f" || { rm -f -- "$t"; exit 1; }',
  'shift 6',
  'list_hooks "$@"',
].join('\n');

/**
 * $1 config.toml, $2 the temp file beside it, $3 the table header, $4 the trusted_hash line:
 * every header line followed at once by that value line goes, with one empty line just before
 * it; the rest stays as it is. A file without the header is left untouched; the temp is removed.
 */
export const CODEX_HOOK_TRUST_UNDO_PROGRAM = [
  'f=$1; t=$2',
  'rm -f -- "$t"',
  'if [ -L "$f" ] || [ ! -f "$f" ] || ! grep -F -x -q -e "$3" -- "$f"; then exit 0; fi',
  'umask 077',
  `AH_H=$3 AH_V=$4 awk 'BEGIN { h = ENVIRON["AH_H"]; v = ENVIRON["AH_V"] } { l[NR] = $0 } END { for (i = 1; i < NR; i++) if (l[i] == h && l[i + 1] == v) { s[i] = 1; s[i + 1] = 1; if (i > 1 && l[i - 1] == "") s[i - 1] = 1 } for (i = 1; i <= NR; i++) if (!(i in s)) print l[i] }' "$f" >"$t" && mv -f -- "$t" "$f" || { rm -f -- "$t"; exit 1; }`,
].join('\n');

/** A TOML basic string: quotes, backslashes and control characters escaped. */
export function tomlString(s: string): string {
  return `"${s.replace(/[\\"\u0000-\u001f\u007f]/g, (c) => (c === '"' ? '\\"' : c === '\\' ? '\\\\' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))}"`;
}

/**
 * How the key may already appear in config.toml: as TOML spells it, and raw (a literal string).
 * grep -e takes a newline as two patterns, so a raw key with one is left to its escaped form.
 */
export function keyNeedles(key: string): [string, string] {
  const escaped = tomlString(key).slice(1, -1);
  return [/[\n\r]/.test(key) ? escaped : key, escaped];
}

/** The two lines codex reads as herdr's hook trusted with `hash`. */
export function trustLines(key: string, hash: string): [string, string] {
  return [`[hooks.state.${tomlString(key)}]`, `trusted_hash = ${tomlString(hash)}`];
}

const HookMetadata = z.looseObject({
  key: z.string(),
  eventName: z.string(),
  handlerType: z.string(),
  command: z.string().nullish(),
  matcher: z.string().nullable(),
  timeoutSec: z.number(),
  async: z.boolean().optional(),
  statusMessage: z.string().nullable(),
  sourcePath: z.string(),
  source: z.string(),
  enabled: z.boolean(),
  isManaged: z.boolean(),
  currentHash: z.string(),
  trustStatus: z.enum(['managed', 'untrusted', 'trusted', 'modified']),
});

const HooksListAnswer = z.object({
  id: z.literal(LIST_ID),
  result: z.object({ data: z.array(z.looseObject({ cwd: z.string(), hooks: z.array(z.unknown()) })) }),
});

const ErrorAnswer = z.object({ id: z.literal(LIST_ID), error: z.looseObject({ message: z.string() }) });

/** codex says so when its config.toml does not parse (it then goes on with defaults). */
const ConfigWarning = z.object({ method: z.literal('configWarning'), params: z.looseObject({ summary: z.string(), details: z.string().nullish() }) });

function jsonLine(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return null;
  }
}

/** The look program's answer → herdr's hook as codex sees it under `root`. */
export function parseLook(stdout: string, exitCode: number, root: string): HookLook {
  const script = path.join(root, HERDR_HOOK_SCRIPT);
  const [first = '-', ...lines] = stdout.split('\n');
  const scriptSha256 = /^[0-9a-f]{64}$/.test(first) ? first : null;
  const none = (problem: string): HookLook => ({ root, script, scriptSha256, hook: null, problem });
  if (exitCode === MISSING_CODEX) return none('codex is not on the login PATH');
  if (exitCode === MISSING_HASH_TOOL) return none('neither sha256sum nor shasum is installed');
  if (exitCode !== 0) return none(`exit ${exitCode}`);
  let answer: z.infer<typeof HooksListAnswer> | null = null;
  for (const line of lines) {
    const v = jsonLine(line);
    const warning = ConfigWarning.safeParse(v);
    if (warning.success && /invalid configuration/i.test(warning.data.params.summary)) {
      return none(`its config.toml does not parse: ${warning.data.params.details ?? warning.data.params.summary}`);
    }
    const failed = ErrorAnswer.safeParse(v);
    if (failed.success) return none(`hooks/list failed: ${failed.data.error.message}`);
    const listed = HooksListAnswer.safeParse(v);
    if (listed.success) answer = listed.data;
  }
  if (!answer) return none('`codex app-server` gave no answer to hooks/list');
  const herdr: HerdrHook[] = [];
  for (const raw of answer.result.data[0]?.hooks ?? []) {
    const m = HookMetadata.safeParse(raw);
    const command = m.data?.command ?? '';
    if (!m.success || m.data.handlerType !== 'command' || m.data.source !== 'user' || !runsScript(command, script)) continue;
    herdr.push({
      key: m.data.key,
      event: m.data.eventName,
      matcher: m.data.matcher,
      command,
      timeoutSec: m.data.timeoutSec,
      async: m.data.async ?? false,
      statusMessage: m.data.statusMessage,
      enabled: m.data.enabled,
      currentHash: m.data.currentHash,
      trust: m.data.isManaged ? 'managed' : m.data.trustStatus,
    });
  }
  if (herdr.length > 1) return none(`${herdr.length} hooks run ${script}`);
  return { root, script, scriptSha256, hook: herdr[0] ?? null, problem: null };
}

/** Codex's config root: $CODEX_HOME, else ~/.codex. */
export function codexRoot(env: Record<string, string | undefined>, home: string): string {
  return rootFrom(env, 'CODEX_HOME', home, path.join(home, '.codex'));
}

async function look(host: Host, ctx: SideCtx, cwd: string): Promise<HookLook> {
  const root = codexRoot(ctx.env, ctx.home);
  const script = path.join(root, HERDR_HOOK_SCRIPT);
  try {
    const r = await host.run(['/bin/sh', '-c', CODEX_HOOKS_LOOK_PROGRAM, 'sh', script, ...appServerRequests(cwd)], { env: { CODEX_HOME: root }, timeoutMs: 30_000 });
    return parseLook(r.stdout, r.exitCode, root);
  } catch (err) {
    return { root, script, scriptSha256: null, hook: null, problem: err instanceof Error ? err.message : String(err) };
  }
}

/** What codex's review screen asks and the keys that trust herdr's hook alone (codex 0.171, measured). */
export function reviewHelp(host: string, script: string): string {
  return (
    `codex on ${host} shows "Hooks need review" (1 hook is new or changed). Attach there, keep "1. Review hooks" selected and press Enter; ` +
    `in the Hooks list press Enter on SessionStart; check the hook's command is bash '${script}' session (herdr's) and press t to trust that one hook; ` +
    `then Esc, Esc. Do not choose "2. Trust all and continue", nor t in the Hooks list: both trust every hook.`
  );
}

function configFile(root: string): string {
  return path.join(root, 'config.toml');
}

function tempBeside(file: string, tag: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.ah-${tag}.tmp`);
}

async function undo(host: Host, write: HookTrustWrite): Promise<void> {
  const [header = '', value = ''] = write.lines;
  const r = await host.run(['/bin/sh', '-c', CODEX_HOOK_TRUST_UNDO_PROGRAM, 'sh', write.file, tempBeside(write.file, write.tag), header, value]);
  if (r.exitCode !== 0) throw new Error(`could not remove herdr's hook trust from ${write.file} on ${host.label}: ${r.stderr.trim() || `exit ${r.exitCode}`}`);
}

async function carry(req: HookTrustRequest): Promise<HookTrustOutcome> {
  const { target, ctx, cwd, source, tag } = req;
  const labels = { source: req.sourceLabel, target: target.label };
  const here = (await req.early) ?? (await look(target, ctx, cwd));
  const plan = planHookTrust(source, here, labels);
  const left = (reason: string): HookTrustOutcome => ({ status: 'left_for_user', detail: `herdr's codex hook was left for you to review on ${target.label}: ${reason}.`, help: reviewHelp(target.label, here.script) });
  if (plan.action === 'nothing') {
    return plan.status === 'no_hook'
      ? { status: 'no_hook', detail: `codex on ${target.label} lists no herdr hook to trust.`, help: null }
      : { status: 'already_trusted', detail: `codex on ${target.label} already trusts herdr's hook.`, help: null };
  }
  if (plan.action === 'leave') return left(plan.reason);
  if (!req.allowed) return left('--no-trust was given');
  const file = configFile(here.root);
  const lines = trustLines(plan.key, plan.hash);
  const write: HookTrustWrite = { agentKind: 'codex', file, lines, tag };
  req.journal(write);
  const r = await target.run(['/bin/sh', '-c', CODEX_HOOK_TRUST_WRITE_PROGRAM, 'sh', file, tempBeside(file, tag), lines[0], lines[1], ...keyNeedles(plan.key), here.script, ...appServerRequests(cwd)], {
    env: { CODEX_HOME: here.root },
    timeoutMs: 30_000,
  });
  if (r.exitCode === 3) return left(`${file} already has an entry for it`);
  if (r.exitCode === 4) return left(`${file} is not a regular file (a symlink is not replaced)`);
  const after = parseLook(r.stdout, r.exitCode, here.root);
  if (after.hook?.trust === 'trusted') {
    return { status: 'carried', detail: `herdr's codex hook is trusted on ${target.label} as on ${labels.source} (the same hook and script): one entry added to ${file}.`, help: null };
  }
  // Codex does not read it as trusted (or the write failed): taken out again.
  await undo(target, write);
  return left(after.problem ? `writing its trust did not take (${after.problem})` : `codex did not read the trust written to ${file}`);
}

export const codexHookTrust: HookTrust = { look, carry, undo };
