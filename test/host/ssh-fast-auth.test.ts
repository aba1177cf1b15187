// The two auth shortcuts of ssh-fast-auth.ts: what they send (against a stand-in of ssh2's
// protocol object) and that ssh2 1.17 still behaves as they assume (against the world's sshd,
// through ssh2's own protocol trace). If an ssh2 upgrade changes its internals, this fails.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ssh2, { type Client } from 'ssh2';
import { SshHost } from '../../src/host/ssh.js';
import { signWithoutQuery, type AgentLike } from '../../src/host/ssh-fast-auth.js';
import { useWorld } from '../helpers/world.js';
import type { World } from '../world/machines.js';
import { makeSshFixture, type SshFixture } from './ssh-fixtures.js';

const { utils } = ssh2;

interface Sent {
  key: unknown;
  keyAlgo: string | undefined;
  signature: Buffer | undefined;
}

/** A stand-in for ssh2's protocol: authPK as ssh2 1.17 has it (the signer gets the data first). */
function fakeClient(): { client: Client; sent: Sent[] } {
  const sent: Sent[] = [];
  const proto = {
    authPK(_username: string, key: unknown, keyAlgo: string | undefined, cbSign?: (data: Buffer, done: (sig: Buffer) => void) => void): void {
      if (!cbSign) sent.push({ key, keyAlgo, signature: undefined });
      else cbSign(Buffer.from('to be signed'), (signature) => sent.push({ key, keyAlgo, signature }));
    },
  };
  return { client: { _protocol: proto } as unknown as Client, sent };
}

/** A fresh ed25519 private key that ssh2 can read back. ssh2 1.17's generator drops a public key's
 * leading zero byte (about one key in 256), and its parser then refuses the key as malformed. */
function ed25519Private(): string {
  for (;;) {
    const { private: text } = utils.generateKeyPairSync('ed25519');
    if (!(utils.parseKey(text) instanceof Error)) return text;
  }
}

function ed25519(): ssh2.ParsedKey {
  return utils.parseKey(ed25519Private()) as ssh2.ParsedKey;
}

describe('signWithoutQuery', () => {
  it('signs an identity file key in the first request (RSA with the hash its algorithm names)', () => {
    const { client, sent } = fakeClient();
    expect(signWithoutQuery(client, undefined)).toBe(true);
    const key = ed25519();
    (client as unknown as { _protocol: { authPK: (...a: unknown[]) => void } })._protocol.authPK('vega', key, undefined);
    expect(sent).toHaveLength(1);
    expect(key.verify(Buffer.from('to be signed'), sent[0]!.signature!)).toBe(true);

    const rsa = utils.parseKey(utils.generateKeyPairSync('rsa', { bits: 2048 }).private) as ssh2.ParsedKey;
    (client as unknown as { _protocol: { authPK: (...a: unknown[]) => void } })._protocol.authPK('vega', rsa, 'rsa-sha2-512');
    expect(sent[1]!.keyAlgo).toBe('rsa-sha2-512');
    expect(rsa.verify(Buffer.from('to be signed'), sent[1]!.signature!, 'sha512')).toBe(true);
    expect(rsa.verify(Buffer.from('to be signed'), sent[1]!.signature!, 'sha256')).toBe(false);
  });

  it('has the agent sign its keys, asks first for security keys, and queries when the agent cannot sign', async () => {
    const { client, sent } = fakeClient();
    const asked: { type: string; hash: string | undefined }[] = [];
    let fail = false;
    const agent: AgentLike = {
      sign(pubKey, _data, options, cb) {
        asked.push({ type: (pubKey as { type: string }).type, hash: options.hash });
        setImmediate(() => (fail ? cb(new Error('agent refused')) : cb(null, Buffer.from('agent signature'))));
      },
    };
    signWithoutQuery(client, agent);
    const authPK = (client as unknown as { _protocol: { authPK: (...a: unknown[]) => void } })._protocol.authPK;
    const pub = (type: string) => ({ type, isPrivateKey: () => false, sign: () => new Error('public only') });
    authPK('vega', pub('ssh-ed25519'), undefined);
    await new Promise((r) => setImmediate(r));
    expect(sent.at(-1)?.signature?.toString()).toBe('agent signature');

    authPK('vega', pub('ssh-rsa'), 'rsa-sha2-256');
    await new Promise((r) => setImmediate(r));
    expect(asked.at(-1)).toEqual({ type: 'ssh-rsa', hash: 'sha256' });

    authPK('vega', pub('sk-ssh-ed25519@openssh.com'), undefined);
    expect(sent.at(-1)).toMatchObject({ signature: undefined });
    expect(asked).toHaveLength(2);

    fail = true;
    authPK('vega', pub('ssh-ed25519'), undefined);
    await new Promise((r) => setImmediate(r));
    expect(sent.at(-1)).toMatchObject({ signature: undefined });
  });

  it('leaves ssh2 alone when its protocol object is not what it expects', () => {
    expect(signWithoutQuery({} as Client, undefined)).toBe(false);
    expect(signWithoutQuery({ _protocol: { authPK: (a: unknown) => a } } as unknown as Client, undefined)).toBe(false);
  });
});

describe('ssh2 internals, against the real sshd', () => {
  let world: World;
  let fx: SshFixture;
  let dir: string;
  beforeAll(async () => {
    world = await useWorld();
    fx = makeSshFixture(world);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ah-fast-auth-'));
  });
  afterAll(() => {
    fs.rmSync(fx.dir, { recursive: true, force: true });
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function trace(identityFiles: string[]): Promise<{ lines: string[]; authMethod: string | null }> {
    const lines: string[] = [];
    const host = await SshHost.connect('w-vega', { ...fx.opts, identityFiles, debug: (l) => lines.push(l) });
    const authMethod = host.authMethod;
    await host.close();
    return { lines, authMethod };
  }

  const index = (lines: string[], re: RegExp): number => lines.findIndex((l) => re.test(l));

  it('sends the signed auth request in the service request’s flight, without a PK_OK query', async () => {
    const { lines, authMethod } = await trace([world.users.laptop!.key]);
    expect(authMethod).toBe(`publickey ${world.users.laptop!.key}`);
    expect(lines.filter((l) => /USERAUTH_REQUEST/.test(l))).toEqual(['Outbound: Sending USERAUTH_REQUEST (publickey)']);
    expect(lines.some((l) => /PK_OK|publickey -- check/.test(l))).toBe(false);
    const service = index(lines, /Sending SERVICE_REQUEST/);
    const extInfo = index(lines, /Received EXT_INFO/);
    const auth = index(lines, /Sending USERAUTH_REQUEST/);
    const accept = index(lines, /Received SERVICE_ACCEPT/);
    expect(service).toBeGreaterThanOrEqual(0);
    expect([service < extInfo, extInfo < auth, auth < accept]).toEqual([true, true, true]);
  });

  it('goes on to the next key when the server refuses a signed request', async () => {
    const stranger = path.join(dir, 'stranger');
    fs.writeFileSync(stranger, ed25519Private(), { mode: 0o600 });
    const { lines, authMethod } = await trace([stranger, world.users.laptop!.key]);
    expect(authMethod).toBe(`publickey ${world.users.laptop!.key}`);
    expect(lines.filter((l) => /USERAUTH_REQUEST/.test(l))).toHaveLength(2);
    expect(lines.some((l) => /publickey -- check/.test(l))).toBe(false);
  });
});
