#!/usr/bin/env node
// Thin launcher. `npm install` (prepare) or `npm run build` compiles the CLI to dist/src/ and
// bundles it into dist/cli.cjs, which loads faster; a tsc-only build runs from dist/src/.
//
// The bundle is compiled with V8's code cache (node 22 has module.enableCompileCache; node 20 has
// not): what a command compiled in its first run is kept in the user's cache folder and reused by
// the next run of that command, which then starts without compiling most of its code again. The
// cache is keyed by the bundle's content and node's version (V8 itself only checks the length of
// the source), and is only ever a speed-up: a cache that cannot be read, written or used is ignored.
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import Module, { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const argv = process.argv.slice(2);
const earlyWork = sshGFirst(argv);
const bundle = fileURLToPath(new URL('../dist/cli.cjs', import.meta.url));
// The bundle loads in the next tick: node issues a socket's connect in a tick of its own, so the
// early dial's SYN leaves before the bundle's ~20 ms of synchronous loading, not after it.
const cli = new Promise((resolve) => process.nextTick(resolve)).then(() => (fs.existsSync(bundle) ? loadBundle(bundle, argv[0]) : import('../dist/src/cli.js')));
cli.then((m) => m.main(argv)).finally(() => earlyWork?.());

/**
 * `send … --from HOST`, or `send AGENT TARGET …`, with a plain `[user@]host`: the `ssh -G` of the
 * host the send connects to first starts now, before the bundle loads, and answers while it does
 * (read as src/cli.ts: sendRemoteOf reads it). The command, its arguments and options are left
 * beside the bundle, which takes the answer over only when it would run exactly that; otherwise
 * it runs its own. Returns what ends an answer nobody took (a refused command line).
 */
function sshGFirst(args) {
  const words = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  const target = words[0] === 'send' ? remoteOf(words) : null;
  if (!target || target === 'local') return undefined;
  if (!/^(?:[A-Za-z0-9_.+][A-Za-z0-9_.+-]*@)?[A-Za-z0-9_.][A-Za-z0-9_.-]*$/.test(target)) return undefined;
  if (words.some((w) => w === '--help' || /^-[a-zA-Z]*h[a-zA-Z]*$/.test(w))) return undefined;
  // The TCP connect first: its round trip is the longer wait.
  const dial = dialFirst(target);
  const key = Symbol.for('agent-handoff.ssh-G');
  const early = { bin: 'ssh', args: ['-G', '--', target], options: { timeout: 10_000, encoding: 'utf8', maxBuffer: 1 << 20 } };
  // Loaded only here: --version and help start no process.
  const { execFile } = createRequire(import.meta.url)('node:child_process');
  let child;
  early.answer = new Promise((resolve) => {
    child = execFile(early.bin, early.args, early.options, (err, stdout, stderr) => resolve({ err, stdout, stderr }));
  });
  globalThis[key] = early;
  return () => {
    if (globalThis[key] === early) child.kill();
    dial?.();
  };
}

/** The value of the one `--from`, else the last of two or more plain words after `send` (or the one after a leading `--all`) without `--here`; else null. */
function remoteOf(words) {
  const froms = words.flatMap((w, i) => (w === '--from' ? [words[i + 1] ?? ''] : w.startsWith('--from=') ? [w.slice('--from='.length)] : []));
  if (froms.length > 0) return froms.length === 1 && !froms[0].startsWith('-') ? froms[0] : null;
  if (words.some((w) => w === '--here' || w.startsWith('--here='))) return null;
  const all = words[1] === '--all';
  const rest = words.slice(all ? 2 : 1);
  const end = rest.findIndex((w) => w.startsWith('-'));
  const run = end < 0 ? rest : rest.slice(0, end);
  return run.length < (all ? 1 : 2) || (all && run.length > 1) ? null : run[run.length - 1];
}

/**
 * The TCP connect to where this target's first hop was last time (src/host/dial-memory.ts keeps
 * it), begun now so its round trip and the server's banner come while the bundle loads. The
 * bundle takes the socket over only when this run's `ssh -G` resolves the target to that same
 * address (src/host/launcher-socket.ts); nothing is sent on it before. Returns what closes a
 * socket nobody took.
 */
function dialFirst(target) {
  let address;
  try {
    const memory = JSON.parse(fs.readFileSync(path.join(cacheFolder(), 'dial.json'), 'utf8'));
    address = memory?.version === 1 && Object.hasOwn(memory.targets ?? {}, target) ? memory.targets[target] : undefined;
  } catch {
    return undefined;
  }
  // Checked as the bundle's schema would (no zod here): a host name or address, a port.
  if (typeof address?.host !== 'string' || !/^[A-Za-z0-9_.:%-]{1,255}$/.test(address.host) || !Number.isInteger(address.port) || address.port < 1 || address.port > 65535) return undefined;
  const key = Symbol.for('agent-handoff.early-dial');
  const socket = createRequire(import.meta.url)('node:net').connect({ host: address.host, port: address.port, noDelay: true });
  const dial = { target, host: address.host, port: address.port, socket };
  socket.once('error', (err) => (dial.error = err));
  globalThis[key] = dial;
  return () => {
    if (globalThis[key] === dial) socket.destroy();
  };
}

function loadBundle(file, command) {
  // Read as bytes: hashing them is far cheaper than hashing the text, and an all-ASCII bundle
  // (scripts/bundle.mjs keeps it so) becomes a one-byte string without a UTF-8 decode.
  const bytes = fs.readFileSync(file);
  const source = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
  const cacheFile = codeCacheFile(bytes, command);
  let cachedData;
  try {
    cachedData = cacheFile ? fs.readFileSync(cacheFile) : undefined;
  } catch {
    // none yet
  }
  // What node does for a CommonJS file, with the cached code handed to V8.
  const script = new vm.Script(Module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  const module = { exports: {}, filename: file, id: file, loaded: false };
  script.runInThisContext()(module.exports, createRequire(file), module, file, path.dirname(file));
  module.loaded = true;
  // At exit, so the cache holds every function this command compiled on its way.
  if (cacheFile && (!cachedData || script.cachedDataRejected)) process.once('exit', () => saveCodeCache(cacheFile, script));
  return module.exports;
}

/** The launcher's cache folder (its code cache, the dial memory): XDG_CACHE_HOME when absolute, else ~/.cache. */
function cacheFolder() {
  const base = process.env.XDG_CACHE_HOME && path.isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(base, 'agent-handoff');
}

function codeCacheFile(bytes, command) {
  try {
    const key = createHash('sha256').update(bytes).update(`\0${process.version}\0${process.arch}`).digest('hex').slice(0, 32);
    // One per command: each compiles its own part of the bundle.
    const name = /^[a-z][a-z-]{0,19}$/.test(command ?? '') ? command : 'other';
    return path.join(cacheFolder(), `cli-${key}-${name}.v8`);
  } catch {
    return null;
  }
}

function saveCodeCache(file, script) {
  try {
    const dir = path.dirname(file);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    fs.renameSync(tmp, file);
    // This command's caches for other bundles or node versions are of no more use.
    const command = path.basename(file).replace(/^cli-[0-9a-f]+-/, '');
    for (const old of fs.readdirSync(dir)) {
      if (old !== path.basename(file) && /^cli-[0-9a-f]+-/.test(old) && old.replace(/^cli-[0-9a-f]+-/, '') === command) fs.rmSync(path.join(dir, old), { force: true });
    }
  } catch {
    // only a speed-up
  }
}
