// The probe with the agent list (src/herdr/probe.ts): where a socket request costs a round trip
// and herdr's wait for its next read (ssh), `reach` asks herdr's status and its agents in one
// program. PROBE_SCRIPT under each POSIX shell with a stand-in herdr in hostile folders, then the
// client against a throwaway real herdr 0.8.2: one program, no socket request for the list, the
// same agents as herdr's own list, and herdr's own error when its server is not there.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HerdrClient } from '../../src/herdr/client.js';
import { HerdrError } from '../../src/herdr/herdr-error.js';
import { PROBE_SCRIPT } from '../../src/herdr/probe.js';
import { LocalHost } from '../../src/host/local.js';
import { canaryFolder, hostileFileNames } from '../host/hostile-args.js';
import { LinkedHost } from '../helpers/linked-host.js';
import { POSIX_SHELLS } from '../helpers/posix-shells.js';
import { tempDirs } from '../helpers/temp-dirs.js';
import { startThrowaway, type Throwaway } from './throwaway.js';

const tempDir = tempDirs('ah-probe-list-');
const MARK = 'agent-handoff:agent-list';

/** A stand-in herdr: its status on one line, its agent list on another, each arg it got on stderr. */
const STAND_IN = `#!/bin/sh
for a do printf '[%s]' "$a" >&2; done
case "$1 $2" in
  "status server") echo '{"status":"running","running":true,"version":"0.8.2","compatible":true,"socket":"/s"}' ;;
  "agent list") echo '{"id":"cli:agent:list","result":{"type":"agent_list","agents":[]}}' ;;
  *) exit 2 ;;
esac
`;

describe.each(POSIX_SHELLS.map((s) => [s.join(' '), s] as const))('PROBE_SCRIPT under %s', (_name, shell) => {
  const probe = (bin: string, mark: string, cwd: string) => {
    const r = spawnSync(shell[0]!, [...shell.slice(1), '-c', PROBE_SCRIPT, 'sh', bin, mark], { encoding: 'utf8', cwd });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  it('prints the path, the status, then (with a mark) the mark and the list; paths are data', () => {
    const root = tempDir();
    const canaries = canaryFolder(root);
    for (const [i, name] of hostileFileNames(canaries).slice(0, 16).entries()) {
      const dir = path.join(root, `${i} ${name}`);
      fs.mkdirSync(dir);
      const bin = path.join(dir, 'herdr');
      fs.writeFileSync(bin, STAND_IN, { mode: 0o755 });
      const plain = probe(bin, '', canaries);
      expect(plain.status, plain.stderr).toBe(0);
      expect(plain.stdout.split('\0')).toEqual([bin, expect.stringContaining('"running":true')]);
      expect(plain.stdout.split('\0')[1]!.split('\n')).toEqual([expect.stringContaining('"running":true'), '']);
      const listed = probe(bin, MARK, canaries);
      expect(listed.status, listed.stderr).toBe(0);
      expect(listed.stdout.startsWith(`${bin}\0`)).toBe(true);
      expect(listed.stdout.slice(bin.length + 1).split('\n')).toEqual([expect.stringContaining('"running":true'), '', MARK, expect.stringContaining('"agent_list"'), '']);
      // The list's stderr is dropped: its error is the CLI's to tell when asked again.
      expect(listed.stderr).toBe('[status][server][--json]');
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('exits 127 for a herdr that is not there, not absolute or not a program, running nothing', () => {
    const root = tempDir();
    const canaries = canaryFolder(root);
    const notAProgram = path.join(root, 'plain-file');
    fs.writeFileSync(notAProgram, 'touch ' + path.join(canaries, 'ran'));
    for (const bin of [path.join(root, 'missing'), 'herdr', notAProgram, ...hostileFileNames(canaries).map((n) => path.join(root, 'missing', n))]) {
      const r = probe(bin, MARK, canaries);
      expect(r.status).toBe(127);
      expect(r.stdout).toBe('');
    }
    expect(fs.readdirSync(canaries)).toEqual([]);
  });

  it('keeps the status exit when the list fails, and drops the list error', () => {
    const root = tempDir();
    const bin = path.join(root, 'herdr');
    fs.writeFileSync(bin, '#!/bin/sh\ncase "$1" in status) echo \'{"status":"not_running","running":false}\';; *) echo \'{"error":{"code":"server_not_running"}}\' >&2; exit 1;; esac\n', { mode: 0o755 });
    const r = probe(bin, MARK, root);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${bin}\0{"status":"not_running","running":false}\n\n${MARK}\n`);
    expect(r.stderr).toBe('');
  });
});

const FAKE_PI = `#!/usr/bin/env node
process.stdout.write('fake pi\\n> ');
process.stdin.on('data', () => undefined);
`;

describe('reach where sockets cost a round trip, against the real herdr', () => {
  let h: Throwaway;
  beforeAll(async () => {
    h = await startThrowaway('real');
    fs.writeFileSync(path.join(h.binDir, 'pi'), FAKE_PI, { mode: 0o755 });
  });
  afterAll(async () => {
    await h?.stop();
  });

  it('is the full probe, and the agents come with it: one program, no socket request', { timeout: 30_000 }, async () => {
    const starter = new HerdrClient(new LocalHost({ env: { ...h.env } }), { bin: h.bin });
    const { paneId } = await starter.workspaceCreate({ cwd: h.dir, label: 'listed', focus: false });
    await starter.agentStart('listed-pi', 'pi', paneId, [], 20_000);

    const host = new LinkedHost({ env: { ...h.env } });
    const client = new HerdrClient(host, { bin: h.bin });
    const probe = client.reach();
    const agents = await client.agentListBeside(probe);
    expect(await probe).toMatchObject({ path: h.bin, server: 'running', version: { version: '0.8.2', ok: true }, serverStatus: { socket: h.socket } });
    expect(host.ran).toHaveLength(1);
    expect(host.requests).toEqual([]);
    expect(agents.map((a) => [a.name, a.pane_id, a.agent])).toEqual([['listed-pi', paneId, 'pi']]);
    expect(agents).toEqual(await starter.agentList());
    // The list was the probe's news: asked again, it is asked of herdr (on its socket now).
    await client.agentListBeside(client.reach());
    expect(host.requests.map((r) => JSON.parse(r).method)).toEqual(['agent.list']);
  });

  it("with no server there: the probe says not running, and the list fails with herdr's own error", { timeout: 15_000 }, async () => {
    const env = { ...h.env, HERDR_SOCKET_PATH: path.join(h.dir, 'no-server.sock') };
    const client = new HerdrClient(new LinkedHost({ env }), { bin: h.bin });
    const probe = client.reach();
    const listing = client.agentListBeside(probe).catch((e: unknown) => e);
    expect((await probe).server).toBe('not_running');
    const err = await listing;
    expect(err).toBeInstanceOf(HerdrError);
    expect((err as HerdrError).code).toBe('server_not_running');
  });
});
