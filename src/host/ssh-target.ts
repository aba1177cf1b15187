// Target resolution like OpenSSH: `user@host`, `host`, `ssh://user@host:port` and ~/.ssh/config
// aliases.
//
// With an ssh client installed we ask it: `ssh -G [-F file] [-p port] -- [user@]alias` prints the
// effective configuration (Include, Host/Match, tokens in HostName, defaults) and never connects.
// Paths in its output may still hold `~` and `%` tokens; we expand them as ssh would.
//
// Without ssh, a fallback reads the config files itself: the user file (or the -F file) then
// /etc/ssh/ssh_config, first value wins, `Host` patterns with `*`, `?` and `!`, `Include`
// (globs; relative to ~/.ssh or /etc/ssh), `Key=Value` and quoted arguments. It does NOT honour
// `Match` blocks (skipped entirely: we never run `Match exec`), `CanonicalizeHostname`,
// tokens other than %% %d %h %i %L %l %n %p %r %u %C %k, or environment variables (${VAR}).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { HostError } from '../errors.js';

/** What the user typed, split. */
export interface TargetSpec {
  /** Host or config alias exactly as given (OpenSSH matches `Host` patterns against this). */
  alias: string;
  user?: string;
  port?: number;
}

export interface ResolvedTarget {
  alias: string;
  hostName: string;
  user: string;
  port: number;
  identityFiles: string[];
  identitiesOnly: boolean;
  /** Agent socket from IdentityAgent; 'none' disables the agent; undefined means SSH_AUTH_SOCK. */
  identityAgent: string | undefined;
  /** Raw ProxyJump value ('none' folded to undefined). */
  proxyJump: string | undefined;
  /** Raw ProxyCommand value ('none' folded to undefined); not supported by the connection. */
  proxyCommand: string | undefined;
  userKnownHostsFiles: string[];
  globalKnownHostsFiles: string[];
  strictHostKeyChecking: string;
  hostKeyAlias: string | undefined;
  connectTimeoutMs: number | undefined;
  serverAliveIntervalMs: number | undefined;
  serverAliveCountMax: number | undefined;
  /** Which resolver produced this. */
  source: 'ssh -G' | 'config files';
}

export interface ResolveOptions {
  /** Like `ssh -F file`: this file instead of ~/.ssh/config (and no system file). */
  configFile?: string;
  /** ssh binary; null forces the built-in config reader. Default 'ssh' from PATH. */
  sshBinary?: string | null;
  /** Home for `~` and %d (default: os.homedir()). */
  home?: string;
  /** Local user for %u and the default remote user. */
  localUser?: string;
}

// Characters OpenSSH accepts in a host name or alias; anything else (quotes, spaces, leading '-')
// is refused before it can reach `ssh -G` as an option or a shell.
const HOST_RE = /^[A-Za-z0-9_.%+:[\]-]+$/;
const USER_RE = /^[A-Za-z0-9_.@+-]+$/;

function badTarget(spec: string, why: string): HostError {
  return new HostError('bad_target', `Not an ssh destination: ${JSON.stringify(spec)} (${why}).`, {
    fix: 'Use user@host, host, ssh://user@host:port, or a Host alias from ~/.ssh/config.',
  });
}

/** Split `user@host`, `host` or `ssh://[user@]host[:port]`. Pure. */
export function parseTargetSpec(spec: string): TargetSpec {
  const text = spec.trim();
  let user: string | undefined;
  let alias: string;
  let port: number | undefined;
  if (/^ssh:\/\//i.test(text)) {
    const rest = text.slice('ssh://'.length).replace(/\/$/, '');
    // [user@]host[:port], host possibly a bracketed IPv6 address.
    const m = /^(?:([^@/]*)@)?(\[[^\]/]+\]|[^:/@]+)(?::(\d+))?$/.exec(rest);
    if (!m?.[2]) throw badTarget(spec, 'expected ssh://[user@]host[:port]');
    user = m[1];
    alias = m[2].replace(/^\[(.*)\]$/, '$1');
    if (m[3] !== undefined) {
      port = Number(m[3]);
      if (!Number.isInteger(port) || port < 1 || port > 65535) throw badTarget(spec, 'bad port');
    }
  } else {
    const at = text.lastIndexOf('@');
    user = at >= 0 ? text.slice(0, at) : undefined;
    alias = at >= 0 ? text.slice(at + 1) : text;
  }
  if (!alias) throw badTarget(spec, 'no host');
  if (alias.startsWith('-') || !HOST_RE.test(alias)) throw badTarget(spec, 'the host has characters ssh does not accept');
  if (user !== undefined && (user === '' || user.startsWith('-') || !USER_RE.test(user))) throw badTarget(spec, 'the user name has characters ssh does not accept');
  return { alias, ...(user !== undefined ? { user } : {}), ...(port !== undefined ? { port } : {}) };
}

export interface TokenContext {
  home: string;
  localUser: string;
  remoteUser: string;
  hostName: string;
  alias: string;
  port: number;
  hostKeyAlias?: string | undefined;
}

/** Expand a leading `~` and the `%` tokens OpenSSH allows in paths (IdentityFile, known hosts, agent). */
export function expandPath(value: string, ctx: TokenContext): string {
  const localHost = os.hostname();
  const out = value.replace(/%(.)/g, (whole, t: string) => {
    switch (t) {
      case '%': return '%';
      case 'd': return ctx.home;
      case 'u': return ctx.localUser;
      case 'r': return ctx.remoteUser;
      case 'h': return ctx.hostName;
      case 'n': return ctx.alias;
      case 'p': return String(ctx.port);
      case 'l': return localHost;
      case 'L': return localHost.split('.')[0] ?? localHost;
      case 'i': return String(process.getuid?.() ?? '');
      case 'k': return ctx.hostKeyAlias ?? ctx.alias;
      case 'C': return createHash('sha1').update(`${localHost}${ctx.hostName}${ctx.port}${ctx.remoteUser}`).digest('hex');
      default: return whole;
    }
  });
  if (out === '~') return ctx.home;
  if (out.startsWith('~/')) return path.join(ctx.home, out.slice(2));
  return out;
}

/** `ssh -G` output → key → values (keys lowercase; repeated keys accumulate). Pure. */
export function parseSshGOutput(text: string): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s+(.*)$/.exec(line.trim());
    if (!m?.[1] || m[2] === undefined) continue;
    const key = m[1].toLowerCase();
    map.set(key, [...(map.get(key) ?? []), m[2]]);
  }
  return map;
}

const DEFAULT_IDENTITIES = ['id_rsa', 'id_ecdsa', 'id_ecdsa_sk', 'id_ed25519', 'id_ed25519_sk', 'id_xmss', 'id_dsa'].map((n) => `~/.ssh/${n}`);

function noneToUndefined(v: string | undefined): string | undefined {
  return v === undefined || v.toLowerCase() === 'none' ? undefined : v;
}

function seconds(v: string | undefined): number | undefined {
  if (v === undefined || v === 'none') return undefined;
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? n * 1000 : undefined;
}

/** Turn a flat option map (ssh -G style keys) into a ResolvedTarget. Pure apart from os.hostname(). */
export function buildResolved(
  opts: Map<string, string[]>,
  spec: TargetSpec,
  env: { home: string; localUser: string },
  source: ResolvedTarget['source'],
): ResolvedTarget {
  const first = (k: string): string | undefined => opts.get(k)?.[0];
  const user = spec.user ?? first('user') ?? env.localUser;
  const hostName = first('hostname') ?? spec.alias;
  const port = spec.port ?? Number(first('port') ?? 22);
  const hostKeyAlias = noneToUndefined(first('hostkeyalias'));
  const ctx: TokenContext = { home: env.home, localUser: env.localUser, remoteUser: user, hostName, alias: spec.alias, port, hostKeyAlias };
  const words = (k: string): string[] => (opts.get(k) ?? []).flatMap((v) => v.split(/\s+/)).filter((w) => w && w !== 'none');
  const identityFiles = (opts.get('identityfile') ?? DEFAULT_IDENTITIES).map((f) => expandPath(f, ctx));
  const agent = first('identityagent');
  return {
    alias: spec.alias,
    hostName,
    user,
    port,
    identityFiles: [...new Set(identityFiles)],
    identitiesOnly: first('identitiesonly') === 'yes',
    identityAgent: agent === undefined ? undefined : agent.toLowerCase() === 'none' ? 'none' : agent === 'SSH_AUTH_SOCK' ? undefined : expandPath(agent, ctx),
    proxyJump: noneToUndefined(first('proxyjump')),
    proxyCommand: noneToUndefined(first('proxycommand')),
    userKnownHostsFiles: (words('userknownhostsfile').length ? words('userknownhostsfile') : ['~/.ssh/known_hosts', '~/.ssh/known_hosts2']).map((f) => expandPath(f, ctx)),
    globalKnownHostsFiles: (words('globalknownhostsfile').length ? words('globalknownhostsfile') : ['/etc/ssh/ssh_known_hosts', '/etc/ssh/ssh_known_hosts2']).map((f) => expandPath(f, ctx)),
    strictHostKeyChecking: first('stricthostkeychecking') ?? 'ask',
    hostKeyAlias,
    connectTimeoutMs: seconds(first('connecttimeout')),
    serverAliveIntervalMs: seconds(first('serveraliveinterval')),
    serverAliveCountMax: first('serveralivecountmax') ? Number(first('serveralivecountmax')) : undefined,
    source,
  };
}

// ---------------------------------------------------------------------------------------------
// Fallback: our own reader of ssh_config files.

export interface ConfigLine {
  keyword: string;
  args: string[];
  file: string;
  line: number;
}

/** Split one config line's arguments: whitespace separated, "double" or 'single' quotes group. */
function splitArgs(text: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const m of text.matchAll(re)) out.push(m[1] ?? m[2] ?? m[3] ?? '');
  return out;
}

/** Parse ssh_config text into keyword lines (comments and blanks dropped). Pure. */
export function parseSshConfigText(text: string, file: string): ConfigLine[] {
  const out: ConfigLine[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const m = /^([A-Za-z]+)(?:\s*=\s*|\s+)(.*)$/.exec(line);
    if (!m?.[1]) return;
    out.push({ keyword: m[1].toLowerCase(), args: splitArgs(m[2] ?? ''), file, line: i + 1 });
  });
  return out;
}

/** `Host` line match: any positive pattern matches and no negated one does. */
export function hostPatternsMatch(patterns: readonly string[], alias: string): boolean {
  let hit = false;
  for (const p of patterns) {
    const neg = p.startsWith('!');
    const body = (neg ? p.slice(1) : p).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
    if (new RegExp(`^${body}$`, 'i').test(alias)) {
      if (neg) return false;
      hit = true;
    }
  }
  return hit;
}

const ACCUMULATING = new Set(['identityfile', 'certificatefile', 'localforward', 'remoteforward']);

/**
 * Evaluate config lines for `alias`, first value wins (IdentityFile accumulates). `include`
 * loads the lines of an Include argument. Match blocks are skipped. Pure given `include`.
 */
export function evaluateSshConfig(lines: readonly ConfigLine[], alias: string, include: (arg: string) => ConfigLine[], into = new Map<string, string[]>(), depth = 0): Map<string, string[]> {
  let active = true;
  for (const l of lines) {
    if (l.keyword === 'host') {
      active = hostPatternsMatch(l.args, alias);
      continue;
    }
    if (l.keyword === 'match') {
      active = false;
      continue;
    }
    if (!active) continue;
    if (l.keyword === 'include') {
      if (depth > 16) continue;
      for (const arg of l.args) evaluateSshConfig(include(arg), alias, include, into, depth + 1);
      continue;
    }
    const value = l.args.join(' ');
    if (ACCUMULATING.has(l.keyword)) into.set(l.keyword, [...(into.get(l.keyword) ?? []), value]);
    else if (!into.has(l.keyword)) into.set(l.keyword, [value]);
  }
  return into;
}

/** fast-glob, loaded on first use: only the built-in config reader (no `ssh` client) needs it. */
function globSync(pattern: string): string[] {
  const fg = createRequire(import.meta.url)('fast-glob') as typeof import('fast-glob');
  return fg.sync(pattern, { onlyFiles: true, dot: true });
}

function readConfigFile(file: string): ConfigLine[] {
  try {
    return parseSshConfigText(fs.readFileSync(file, 'utf8'), file);
  } catch {
    return [];
  }
}

function resolveFromFiles(spec: TargetSpec, opts: Required<Pick<ResolveOptions, 'home' | 'localUser'>> & ResolveOptions): ResolvedTarget {
  const files = opts.configFile ? [opts.configFile] : [path.join(opts.home, '.ssh', 'config'), '/etc/ssh/ssh_config'];
  const map = new Map<string, string[]>();
  for (const file of files) {
    const base = file === '/etc/ssh/ssh_config' ? '/etc/ssh' : path.join(opts.home, '.ssh');
    const include = (arg: string): ConfigLine[] => {
      const p = arg.startsWith('~/') ? path.join(opts.home, arg.slice(2)) : path.isAbsolute(arg) ? arg : path.join(base, arg);
      return globSync(p).sort().flatMap(readConfigFile);
    };
    evaluateSshConfig(readConfigFile(file), spec.alias, include, map);
  }
  // HostName may hold %h (the alias) and %%.
  const hn = map.get('hostname')?.[0];
  if (hn) map.set('hostname', [hn.replace(/%(.)/g, (w, t: string) => (t === 'h' ? spec.alias : t === '%' ? '%' : w))]);
  return buildResolved(map, spec, opts, 'config files');
}

interface SshGAnswer {
  err: Error | null;
  stdout: string;
  stderr: string;
}

/**
 * The `ssh -G` that bin/agent-handoff.js starts before it loads the bundle (for `send` with a
 * plain target), taken over when it ran this very command with these very options.
 */
function launcherSshG(bin: string, args: string[], options: object): Promise<SshGAnswer> | undefined {
  const key = Symbol.for('agent-handoff.ssh-G');
  const slot = globalThis as { [key]?: { bin: string; args: string[]; options: object; answer: Promise<SshGAnswer> } };
  const early = slot[key];
  if (!early || early.bin !== bin || JSON.stringify(early.args) !== JSON.stringify(args) || JSON.stringify(early.options) !== JSON.stringify(options)) return undefined;
  delete slot[key];
  return early.answer;
}

function runSshG(bin: string, spec: TargetSpec, configFile: string | undefined): Promise<string | null> {
  const args = ['-G', ...(configFile ? ['-F', configFile] : []), ...(spec.port ? ['-p', String(spec.port)] : []), '--', spec.user ? `${spec.user}@${spec.alias}` : spec.alias];
  const options = { timeout: 10_000, encoding: 'utf8', maxBuffer: 1 << 20 } as const;
  const answer = launcherSshG(bin, args, options) ?? new Promise<SshGAnswer>((resolve) => execFile(bin, args, options, (err, stdout, stderr) => resolve({ err, stdout, stderr })));
  return answer.then(({ err, stdout, stderr }) => {
    if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if (err) {
      const msg = stderr.split('\n').filter((l) => l && !l.startsWith('Pseudo-terminal')).join(' ').trim();
      throw new HostError('ssh_config', `ssh could not resolve ${JSON.stringify(spec.alias)}: ${msg || err.message}`, {
        fix: configFile ? `Check ${configFile}.` : 'Check ~/.ssh/config (try `ssh -G ' + spec.alias + '`).',
        cause: err,
      });
    }
    return stdout;
  });
}

/** Resolutions begun before the command line was parsed (see resolveEarly), by target. */
const early = new Map<string, Promise<ResolvedTarget>>();

/**
 * Start resolving `target` with the default options now: `ssh -G` then runs in its own process
 * while this one parses the command line and loads its modules. The next resolveSshTarget of the
 * same target with default options takes the answer over; an unused one is simply dropped.
 */
export function resolveEarly(target: string): void {
  if (early.has(target)) return;
  const p = resolveSshTarget(target);
  p.catch(() => undefined); // whoever takes it over sees the error
  early.set(target, p);
}

/** Resolved as a plain `ssh -G TARGET` would (the launcher's and resolveEarly's way): no option overrides it. */
export function usesDefaultResolution(opts: ResolveOptions): boolean {
  return opts.configFile === undefined && opts.sshBinary === undefined && opts.home === undefined && opts.localUser === undefined;
}

/** Resolve what the user typed to connection parameters, like OpenSSH would. */
export async function resolveSshTarget(target: string, opts: ResolveOptions = {}): Promise<ResolvedTarget> {
  const started = early.get(target);
  if (started && usesDefaultResolution(opts)) {
    early.delete(target);
    return started;
  }
  const spec = parseTargetSpec(target);
  const env = { home: opts.home ?? os.homedir(), localUser: opts.localUser ?? os.userInfo().username };
  const bin = opts.sshBinary === undefined ? 'ssh' : opts.sshBinary;
  if (bin !== null) {
    const out = await runSshG(bin, spec, opts.configFile);
    if (out !== null) {
      // ssh -G already applied the user/port given on its command line.
      return buildResolved(parseSshGOutput(out), { alias: spec.alias }, env, 'ssh -G');
    }
  }
  return resolveFromFiles(spec, { ...opts, ...env });
}
