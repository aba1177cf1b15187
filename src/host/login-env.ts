// Learning a remote machine's login environment in one exec.
//
// The probe is a header line for /bin/sh (see remote-command.ts). It prints the plain facts
// first (uname, hostname, id, HOME, SHELL, TMPDIR realpath, the bare PATH), then starts the
// user's login shell (`$SHELL -l -c …`, stdin from /dev/null) which hands over to /bin/sh to
// print the wanted variables. Everything is NUL-separated between nonce markers, so whatever a
// profile prints (junk, even NULs) cannot be mistaken for a value; if the profile hangs, the
// facts part has already arrived and the caller falls back to the bare PATH.
import { randomBytes } from 'node:crypto';
import { LOGIN_ENV_VARS } from './host.js';

export interface LoginProbe {
  /** The header line to send. */
  header: string;
  /** Parse what stdout held so far; `env` is undefined while (or if) the login part is missing. */
  parse(stdout: Buffer): ProbeResult | undefined;
}

export interface ProbeFacts {
  platform: string;
  hostname: string;
  user: string;
  home: string;
  shell: string;
  tmpdir: string;
  barePath: string;
  /** HOME's real path ('' when HOME could not be entered). */
  homeReal: string;
}

export interface ProbeResult {
  facts: ProbeFacts;
  /** Variables the login shell had set (only the wanted ones), or undefined if it never finished. */
  env: Record<string, string> | undefined;
}

/** `uname -s` → process.platform spelling. */
export function platformFromUname(uname: string): string {
  const u = uname.trim().toLowerCase();
  if (u === 'sunos') return 'sunos';
  if (u.startsWith('cygwin') || u.startsWith('mingw') || u.startsWith('msys')) return 'win32';
  return u || 'unknown';
}

export function makeLoginProbe(nonce = randomBytes(6).toString('hex')): LoginProbe {
  const factsMark = `AHFACTS${nonce}`;
  const envMark = `AHENV${nonce}`;
  const endMark = `AHEND${nonce}`;
  const names = LOGIN_ENV_VARS.join(' ');
  // Runs in /bin/sh started by the login shell; single quotes are fine here (it travels in an
  // environment variable, never through the login shell's parser).
  const inner = String.raw`printf '\0%s\0' ${envMark}; for _n in ${names}; do eval "_s=\${$_n+x} _v=\${$_n-}"; if [ -n "$_s" ]; then printf '%s=%s\0' "$_n" "$_v"; fi; done; printf '%s\0' ${endMark}`;
  // The facts cost one program (uname) and no subshell: every process start counts on a slow box,
  // and each remote command waits for this probe. sshd sets USER (id -un only without it).
  const header = [
    String.raw`_o=$PWD; _t=${'$'}{TMPDIR:-/tmp}; if cd -P -- "$_t" >/dev/null 2>&1; then _t=$PWD; cd -- "$_o" >/dev/null 2>&1; fi`,
    // HOME's real path (the session folders of some agents are named after it): '' when it cannot be entered.
    String.raw`_h=; if [ -n "$HOME" ] && cd -P -- "$HOME" >/dev/null 2>&1; then _h=$PWD; cd -- "$_o" >/dev/null 2>&1; fi`,
    String.raw`set -- $(uname -sn 2>/dev/null)`,
    String.raw`printf '\0%s\0' ${factsMark}`,
    String.raw`printf '%s\0' "$1" "$2" "${'$'}{USER:-${'$'}{LOGNAME:-$(id -un 2>/dev/null)}}" "$HOME" "${'$'}{SHELL:-/bin/sh}" "$_t" "$PATH" "$_h"`,
    `AH_PROBE='${inner.replace(/'/g, `'\\''`)}'; export AH_PROBE`,
    // The login shell only parses `exec /bin/sh -c "$AH_PROBE"`: the same in sh, bash, zsh, fish, csh.
    String.raw`"${'$'}{SHELL:-/bin/sh}" -l -c 'exec /bin/sh -c "$AH_PROBE"' </dev/null 2>/dev/null`,
    'exit 0',
  ].join('; ');

  const parse = (stdout: Buffer): ProbeResult | undefined => {
    const text = stdout.toString('utf8');
    const f = text.indexOf(`\0${factsMark}\0`);
    if (f < 0) return undefined;
    const fields = text.slice(f + factsMark.length + 2).split('\0');
    if (fields.length < 9) return undefined;
    const [uname = '', hostname = '', user = '', home = '', shell = '', tmpdir = '', barePath = '', homeReal = ''] = fields;
    const facts: ProbeFacts = { platform: platformFromUname(uname), hostname: hostname.trim(), user: user.trim(), home, shell, tmpdir, barePath, homeReal };
    const e = text.lastIndexOf(`\0${envMark}\0`);
    const end = text.lastIndexOf(`${endMark}\0`);
    if (e < 0 || end < e) return { facts, env: undefined };
    const env: Record<string, string> = {};
    for (const pair of text.slice(e + envMark.length + 2, end).split('\0')) {
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq);
      if ((LOGIN_ENV_VARS as readonly string[]).includes(name)) env[name] = pair.slice(eq + 1);
    }
    return { facts, env };
  };
  return { header, parse };
}
