// The zod schemas against output captured from the real herdr 0.8.2 binary
// (/work/shared/herdr/0.8.2/herdr, protocol 20), saved under fixtures/real-0.8.2/: the JSON the
// product reads must parse whatever fields herdr adds (capabilities, scroll, terminal_title, …).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AgentInfoResult,
  AgentListResult,
  ErrorEnvelope,
  PaneInfoResult,
  PaneListResult,
  PaneReadResult,
  PongResult,
  ProcessInfoResult,
  ServerStatus,
  WorkspaceCreatedResult,
  WorkspaceListResult,
} from '../../src/herdr/schemas.js';

const DIR = path.join(import.meta.dirname, 'fixtures', 'real-0.8.2');
const fixture = (name: string): unknown => JSON.parse(fs.readFileSync(path.join(DIR, name), 'utf8'));

describe('schemas accept real herdr 0.8.2 output', () => {
  it('status server --json, running and not running (protocol 20, capabilities, session)', () => {
    const running = ServerStatus.parse(fixture('status-server-running.json'));
    expect(running).toMatchObject({ status: 'running', running: true, version: '0.8.2', protocol: 20, compatible: true, capabilities: { live_handoff: true } });
    const stopped = ServerStatus.parse(fixture('status-server-not-running.json'));
    expect(stopped).toMatchObject({ status: 'not_running', running: false, version: null, protocol: null, capabilities: null });
  });

  it('the socket: ping (with capabilities) and pane.read', () => {
    expect(PongResult.parse(fixture('socket-ping.json')).result).toMatchObject({ version: '0.8.2', protocol: 20 });
    expect(PaneReadResult.parse(fixture('socket-pane-read.json')).result.read.text).toContain('fake pi');
  });

  it('agents: a started agent in agent list and agent get', () => {
    const agents = AgentListResult.parse(fixture('agent-list.json')).result.agents;
    expect(agents.map((a) => a.name)).toEqual(['o1', 'rev']);
    expect(agents[1]).toMatchObject({ name: 'rev', agent: 'pi', agent_status: 'idle', interactive_ready: true, state_change_seq: 1 });
    expect(AgentInfoResult.parse(fixture('agent-get.json')).result.agent.name).toBe('rev');
  });

  it('panes: scroll, foreground_cwd and terminal_title fields', () => {
    expect(PaneInfoResult.parse(fixture('pane-get-agent.json')).result.pane).toMatchObject({ agent: 'pi', agent_status: 'idle' });
    const titled = PaneInfoResult.parse(fixture('pane-get-title.json')).result.pane;
    expect(titled).toMatchObject({ terminal_title: '✳ hello title', terminal_title_stripped: 'hello title', revision: 1 });
    expect(PaneListResult.parse(fixture('pane-list.json')).result.panes.length).toBeGreaterThan(1);
    const info = ProcessInfoResult.parse(fixture('pane-process-info.json')).result.process_info;
    expect(info.foreground_processes[0]?.argv).toEqual(['node', '/tmp/herdr-real/bin/pi', '--model', 'a b', "it's"]);
  });

  it('workspaces: create (with its tab) and list', () => {
    const created = WorkspaceCreatedResult.parse(fixture('workspace-create.json')).result;
    expect(created.workspace).toMatchObject({ label: 'fixture', focused: false });
    expect(created.root_pane.pane_id).toMatch(/^w\d+:p1$/);
    expect(WorkspaceListResult.parse(fixture('workspace-list.json')).result.workspaces.length).toBeGreaterThan(0);
  });

  it('error envelopes (field order differs: real herdr prints error before id, except server_not_running)', () => {
    const codes = ['error-timeout.json', 'error-pane-not-found.json', 'error-server-not-running.json', 'error-agent-name-taken.json', 'error-agent-pane-busy.json'].map(
      (f) => ErrorEnvelope.parse(fixture(f)).error.code,
    );
    expect(codes).toEqual(['timeout', 'pane_not_found', 'server_not_running', 'agent_name_taken', 'agent_pane_busy']);
    expect(ErrorEnvelope.parse(fixture('error-agent-name-taken.json')).error.message).toMatch(/^agent name rev is already used; candidates: terminal_id=/);
  });
});
