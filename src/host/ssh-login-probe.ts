// The target's basic facts and login environment (login-env.ts) learned over one exec channel,
// without waiting on a login profile that hangs.
import { HostError } from '../errors.js';
import type { HostInfo } from './host.js';
import { makeLoginProbe } from './login-env.js';
import { loginPathWithExtras } from './login-path.js';
import { killChannel } from './ssh-channel-end.js';
import type { SshLink } from './ssh-link.js';

/** `warn`: survivable trouble (the login shell failed or timed out; the bare PATH is used). */
export async function probeLogin(link: SshLink, loginEnvTimeoutMs: number, warn: (warning: string) => void): Promise<HostInfo> {
  const probe = makeLoginProbe();
  const ch = await link.openExec(probe.header);
  ch.end();
  const out: Buffer[] = [];
  let timedOut = false;
  await new Promise<void>((resolve, reject) => {
    const onLost = (e: HostError): void => reject(e);
    link.onLost.add(onLost);
    // The login shell may hang on a profile that waits for something; do not wait for it.
    const timer = setTimeout(() => {
      timedOut = true;
      killChannel(ch);
      // What arrived so far (the facts) is enough; do not wait for the close.
      link.onLost.delete(onLost);
      resolve();
    }, loginEnvTimeoutMs);
    ch.on('data', (d: Buffer) => out.push(d));
    ch.stderr.resume();
    ch.on('close', () => {
      clearTimeout(timer);
      link.onLost.delete(onLost);
      resolve();
    });
  });
  const parsed = probe.parse(Buffer.concat(out));
  if (!parsed) {
    throw link.lost ?? new HostError('host_probe_failed', `Could not learn the basic facts of ${link.label} (uname, id, HOME) with /bin/sh.`, {
      fix: 'The remote machine needs a POSIX /bin/sh with uname, id and hostname.',
    });
  }
  const { facts } = parsed;
  let env = parsed.env;
  if (!env) {
    warn(`The login shell of ${link.label} (${facts.shell} -l) ${timedOut ? `did not finish within ${loginEnvTimeoutMs / 1000} s` : 'failed'}; using the non-login PATH plus the usual bin folders.`);
    env = { PATH: facts.barePath };
  }
  const home = env.HOME || facts.home;
  const loginEnv: Record<string, string> = { ...env, HOME: home };
  loginEnv.PATH = loginPathWithExtras(env.PATH || facts.barePath || '/usr/bin:/bin', home);
  // The real path found is that of the plain HOME: it stands for a login HOME only when the two agree.
  const homeReal = facts.homeReal && home === facts.home ? { homeReal: facts.homeReal } : {};
  return { home, user: facts.user, hostname: facts.hostname, platform: facts.platform, shell: facts.shell, tmpdir: facts.tmpdir || '/tmp', loginEnv, ...homeReal };
}
