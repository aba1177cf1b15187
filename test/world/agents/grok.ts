// Fake grok (xAI "Grok Build"): a session is a directory <root>/sessions/<pct-enc cwd>/<uuidv7>/
// (updates.jsonl, chat_history.jsonl, summary.json, rewind_points.jsonl, prompt_context.json);
// `grok --resume <uuid>` finds it in any cwd group and runs in its recorded cwd; `/quit` (alias
// `/exit`), Ctrl+Q twice; Ctrl+C only clears. Like grok 1.0.41, it rewrites the JSON files of the
// session folder while it runs: a start or resume writes prompt_context.json over in place (a new
// build_timestamp_utc) and summary.json anew; each turn writes summary.json, signals.json,
// usage.json and title_refresh_idx anew (a temporary file renamed over the old one), while the
// .jsonl logs (updates, chat_history, rewind_points) are only appended to.
import fs from 'node:fs';
import path from 'node:path';
import { splitArgs, type AgentDefinition, type Launch, type LaunchContext, type Message, type SessionUnit, type Turn } from './agent.js';
import { AgentExit, appendJsonl, gitTopLevel, home, iso, mkdirPrivate, obj, readJson, readJsonl, realpathOr, safeReaddir, str, uuidv4, uuidv7, UUID_RE, writePrivate } from './files.js';

const VERSION = '1.0.41';

export function grokRoot(): string {
  return process.env.GROK_HOME || path.join(realpathOr(home()), '.grok');
}

/** Percent-encode every UTF-8 byte outside `A–Z a–z 0–9 - . _ ~`, uppercase hex. */
export function grokDirName(cwd: string): string {
  let out = '';
  for (const byte of Buffer.from(cwd, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

class GrokSession implements SessionUnit {
  history: Message[] = [];
  private events = 0;
  private prompts = 0;

  constructor(
    readonly id: string,
    readonly path: string,
    private readonly root: string,
    private readonly cwd: string,
  ) {
    if (fs.existsSync(this.file('summary.json'))) this.load();
    else this.create();
  }

  private file(name: string): string {
    return path.join(this.path, name);
  }

  /** grok writes its JSON state whole, to a temporary file renamed over the old one (a new inode). */
  private replace(name: string, text: string): void {
    const f = this.file(name);
    const tmp = `${f}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, text, { mode: 0o600 });
    fs.renameSync(tmp, f);
  }

  private load(): void {
    for (const r of readJsonl(this.file('updates.jsonl'))) {
      this.events++;
      const u = obj(obj(r.params).update);
      const text = str(obj(u.content).text);
      if (u.sessionUpdate === 'user_message_chunk' && text !== undefined) {
        this.prompts++;
        this.history.push({ role: 'user', text });
      }
      if (u.sessionUpdate === 'agent_message_chunk' && text !== undefined) this.history.push({ role: 'assistant', text });
      if (u.sessionUpdate === 'tool_call_update' && typeof u.title === 'string') this.history.push({ role: 'tool', text: u.title });
    }
    // A resume: the prompt context is built again (written over in place), the summary gets this
    // run's attempt, and the update stream a background_tasks update.
    const now = new Date();
    this.updateContext({ is_non_interactive: false, build_timestamp_utc: buildTimestamp(now) });
    const s = readJson(this.file('summary.json'));
    if (s) this.replace('summary.json', JSON.stringify({ ...s, attempt_id: `at1.${uuidv4().replace(/-/g, '')}`, updated_at: iso(now) }, null, 2));
    appendJsonl(this.file('updates.jsonl'), [
      { timestamp: Math.floor(now.getTime() / 1000), method: '_x.ai/session/update', params: { sessionId: this.id, update: { sessionUpdate: 'background_tasks', tasks: [] }, _meta: { eventId: `${this.id}-${++this.events}`, agentTimestampMs: now.getTime() } } },
    ]);
  }

  private create(): void {
    mkdirPrivate(this.path);
    const now = iso();
    const top = gitTopLevel(this.cwd);
    const summary: Record<string, unknown> = {
      info: { id: this.id, cwd: this.cwd },
      session_summary: '',
      created_at: now,
      updated_at: now,
      num_messages: 0,
      num_chat_messages: 2,
      current_model_id: 'fake-model',
      chat_format_version: 1,
      session_kind: 'interactive',
    };
    if (top) summary.git_root_dir = top.endsWith('/') ? top : `${top}/`;
    summary.grok_home = this.root;
    summary.last_active_at = now;
    writePrivate(this.file('summary.json'), JSON.stringify(summary, null, 2));
    appendJsonl(this.file('chat_history.jsonl'), [
      { type: 'system', content: 'You are Grok (fake), an autonomous agent that completes software engineering tasks.' },
      { type: 'user', content: [{ type: 'text', text: `<user_info>\nOS Version: linux\nShell: /bin/bash\nWorkspace Path: ${this.cwd}\n</user_info>` }] },
    ]);
    for (const name of ['updates.jsonl', 'rewind_points.jsonl', 'updates.jsonl.lock', 'chat_history.jsonl.lock', 'summary.json.lock', 'rewind_points.jsonl.lock']) writePrivate(this.file(name), '');
    writePrivate(
      this.file('prompt_context.json'),
      JSON.stringify({ version: 1, prompt_mode: 'extend', audience: 'primary', build_timestamp_utc: buildTimestamp(new Date(now)), os_name: 'linux', shell_path: '/bin/bash', working_directory: this.cwd, current_date: now.slice(0, 10), is_non_interactive: false, system_prompt_label: 'Grok' }, null, 2),
    );
    writePrivate(this.file('title_refresh_idx'), '0');
  }

  /** prompt_context.json is written over in place (same inode), as grok does at each start. */
  private updateContext(patch: Record<string, unknown>): void {
    const f = this.file('prompt_context.json');
    const cur = readJson(f);
    if (cur) fs.writeFileSync(f, JSON.stringify({ ...cur, ...patch }, null, 2));
  }

  /** signals.json and usage.json: counters grok writes anew after every turn. */
  private countTurn(t: Turn): void {
    const signals = readJson(this.file('signals.json')) ?? {};
    const n = (v: unknown) => (typeof v === 'number' ? v : 0);
    const turns = n(signals.turnCount) + 1;
    this.replace(
      'signals.json',
      JSON.stringify({ ...signals, turnCount: turns, userMessageCount: n(signals.userMessageCount) + 1, assistantMessageCount: n(signals.assistantMessageCount) + 2, toolCallCount: n(signals.toolCallCount) + 1, toolsUsed: [t.edit ? 'search_replace' : 'read_file'], modelsUsed: ['fake-model'], primaryModelId: 'fake-model' }),
    );
    const usage = readJson(this.file('usage.json')) ?? {};
    const session = obj(usage.session);
    this.replace('usage.json', JSON.stringify({ updated_at: iso(t.endedAt), session: { inputTokens: n(session.inputTokens) + 20, outputTokens: n(session.outputTokens) + 10, cachedReadTokens: 0, cacheCreationTokens: 0, reasoningTokens: 0 } }, null, 2));
    this.replace('title_refresh_idx', String(Math.min(turns - 1, 1)));
  }

  appendTurn(t: Turn): void {
    const promptId = uuidv4();
    const callId = `call_fake_${promptId.slice(0, 8)}`;
    const promptIndex = this.prompts++;
    const secs = Math.floor(t.endedAt.getTime() / 1000);
    const meta = () => ({ eventId: `${this.id}-${++this.events}`, agentTimestampMs: t.endedAt.getTime(), promptId });
    const update = (u: Record<string, unknown>, method = 'session/update') => ({ timestamp: secs, method, params: { sessionId: this.id, update: u, _meta: meta() } });
    const toolName = t.edit ? 'search_replace' : 'read_file';
    const rawInput = t.edit ? { file_path: t.toolPath, old_string: 'hello', new_string: 'hello edited' } : { target_file: t.toolPath };
    appendJsonl(this.file('updates.jsonl'), [
      update({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: t.prompt }, _meta: { modelId: 'fake-model', promptIndex } }),
      update({ sessionUpdate: 'tool_call', toolCallId: callId, title: toolName, rawInput }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: callId, kind: t.edit ? 'edit' : 'read', title: `${t.edit ? 'Edit' : 'Read'} \`${t.toolPath}\``, locations: [{ path: t.toolPath }], rawInput }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: callId, status: 'completed', content: [{ type: 'content', content: { type: 'text', text: '1→hello\n' } }] }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: t.reply } }),
      update({ sessionUpdate: 'turn_completed', prompt_id: promptId, stop_reason: 'end_turn', elapsed_ms: t.endedAt.getTime() - t.startedAt.getTime() }, '_x.ai/session/update'),
    ]);
    appendJsonl(this.file('chat_history.jsonl'), [
      { type: 'user', content: [{ type: 'text', text: `<user_query>\n${t.prompt}\n</user_query>` }], prompt_index: promptIndex },
      { type: 'assistant', content: '', tool_calls: [{ id: callId, name: toolName, arguments: JSON.stringify(rawInput) }], model_id: 'fake-model' },
      { type: 'tool_result', tool_call_id: callId, content: '1→hello\n' },
      { type: 'assistant', content: t.reply, model_id: 'fake-model' },
    ]);
    const rel = path.relative(t.cwd, t.toolPath);
    let content = '';
    try {
      content = fs.readFileSync(t.toolPath, 'utf8');
    } catch {
      // no file: empty snapshot
    }
    const snap = t.edit ? { [rel]: { path: rel, content, captured_at: iso(t.endedAt) } } : {};
    appendJsonl(this.file('rewind_points.jsonl'), [{ prompt_index: promptIndex, created_at: iso(t.startedAt), file_snapshots: snap, after_snapshots: snap }]);
    const sf = this.file('summary.json');
    const s = readJson(sf) ?? {};
    const now = iso(t.endedAt);
    Object.assign(s, {
      updated_at: now,
      last_active_at: now,
      num_messages: (typeof s.num_messages === 'number' ? s.num_messages : 0) + 6,
      num_chat_messages: (typeof s.num_chat_messages === 'number' ? s.num_chat_messages : 0) + 4,
      request_id: promptId,
    });
    if (!s.session_summary) Object.assign(s, { session_summary: t.prompt.slice(0, 60), generated_title: t.prompt.slice(0, 60) });
    this.replace('summary.json', JSON.stringify(s, null, 2));
    this.countTurn(t);
  }
}

/** grok's build_timestamp_utc: RFC 3339 with nanoseconds. */
function buildTimestamp(d: Date): string {
  return `${d.toISOString().slice(0, 19)}.${String(d.getMilliseconds()).padStart(3, '0')}${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}+00:00`;
}

function findSession(root: string, id: string): string | undefined {
  const sessions = path.join(root, 'sessions');
  for (const group of safeReaddir(sessions)) {
    const dir = path.join(sessions, group, id);
    if (fs.existsSync(path.join(dir, 'summary.json'))) return dir;
  }
  return undefined;
}

/** A non-UUID --resume value is matched against the titles of this directory's sessions. */
function findByTitle(groupDir: string, title: string): string | undefined {
  for (const id of safeReaddir(groupDir)) {
    const s = readJson(path.join(groupDir, id, 'summary.json'));
    if (s && (s.session_summary === title || s.generated_title === title)) return path.join(groupDir, id);
  }
  return undefined;
}

function newestIn(groupDir: string): string | undefined {
  let best: { d: string; t: number } | undefined;
  for (const id of safeReaddir(groupDir)) {
    const f = path.join(groupDir, id, 'summary.json');
    if (!fs.existsSync(f)) continue;
    const t = fs.statSync(f).mtimeMs;
    if (!best || t > best.t) best = { d: path.join(groupDir, id), t };
  }
  return best?.d;
}

async function launch(ctx: LaunchContext): Promise<Launch> {
  const { tui, root, control } = ctx;
  const args = splitArgs(ctx.argv, ['--resume', '-r'], ['--continue', '-c', '--trust', '--verbose']);
  const here = realpathOr(process.cwd());
  if (control.loggedOut || control.firstRun) {
    const r = await tui.menu({
      lines: ['Error: could not reach https://auth.x.ai (offline)', '', `Grok Build ${VERSION}`, ''],
      options: ['Login with Grok  l', 'Quit  q'],
      marker: '❯',
      numbered: false,
      hotkeys: ['l', 'q'],
    });
    const quit = 'key' in r ? r.key !== 'l' : r.index !== 0;
    if (quit) throw new AgentExit(0);
  }
  const groupDir = path.join(root, 'sessions', grokDirName(here));
  let dir: string | undefined;
  const notices: string[] = [];
  if (args.resume !== undefined) {
    const v = args.resume;
    if (!v) throw new AgentExit(1, ['grok (fake): the session picker is not modelled; pass a session id'], true);
    dir = UUID_RE.test(v) ? findSession(root, v.toLowerCase()) : findByTitle(groupDir, v);
    if (!dir) throw new AgentExit(1, [`No session found matching "${v}"`], true);
  } else if (args.flags.has('--continue') || args.flags.has('-c')) {
    dir = newestIn(groupDir);
  }
  let cwd = here;
  let session: GrokSession;
  if (dir) {
    const id = path.basename(dir);
    const recorded = str(obj(readJson(path.join(dir, 'summary.json'))?.info).cwd);
    if (path.dirname(dir) !== groupDir) notices.push(`  Session ${id} found locally (originally in ${recorded ?? '?'})`);
    if (recorded && fs.existsSync(recorded)) {
      cwd = recorded;
      process.chdir(cwd);
    }
    session = new GrokSession(id, dir, root, cwd);
  } else {
    const id = uuidv7();
    session = new GrokSession(id, path.join(groupDir, id), root, cwd);
  }
  return { session, cwd, resumed: !!dir, prompt: args.positionals[0], extraArgs: [...args.extra, ...args.positionals.slice(1)], notices };
}

export const grok: AgentDefinition = {
  kind: 'grok',
  banner: [` Grok Build ${VERSION}`, '   model: Fake'],
  promptChar: '❯',
  placeholder: '',
  footer: ['Shift+Tab:mode │ Ctrl+x:shortcuts'],
  quitWords: ['/quit', '/exit'],
  slashMenu: false,
  ctrlC: 'clear',
  doubleMs: 1000,
  ctrlDQuits: false,
  fullLifecycle: false,
  refuseQuitWhileWorking: false,
  configRoot: grokRoot,
  integrationFile: (root) => path.join(root, 'hooks', 'herdr-agent-state.sh'),
  launch,
  quitLines: (l) => ['Resume this session with:', `grok --resume ${l.session.id}`],
};
