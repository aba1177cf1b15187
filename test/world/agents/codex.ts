// Fake Codex CLI: rollouts in <root>/sessions/YYYY/MM/DD/rollout-<local ts>-<uuidv7>.jsonl with a
// monotonic `ordinal` on every line; `codex resume <full uuid>`; the session's cwd wins (with the
// "Working directory · resume" chooser when it differs); trust in config.toml for git repos.
import fs from 'node:fs';
import path from 'node:path';
import { splitArgs, type AgentDefinition, type Launch, type LaunchContext, type Message, type SessionUnit, type Turn } from './agent.js';
import { hookRuns, listHooks, needingReview, trustHooks, type FakeHook } from './codex-hooks.js';
import type { Tui } from './tui.js';
import { AgentExit, appendJsonl, gitMainRoot, gitTopLevel, home, iso, obj, readJsonl, realpathOr, str, uuidv7, UUID_RE, walkFiles, writePrivate } from './files.js';

const VERSION = '0.171.0';

export function codexRoot(): string {
  return process.env.CODEX_HOME || path.join(home(), '.codex');
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Local-time stamp of the rollout name and its dated folders (the real CLI names files in local time). */
function rolloutStamp(d: Date): { dir: string[]; stamp: string } {
  const [y, m, day] = [String(d.getFullYear()), pad(d.getMonth() + 1), pad(d.getDate())];
  return { dir: [y, m, day], stamp: `${y}-${m}-${day}T${pad(d.getHours())}-${pad(d.getMinutes())}-${pad(d.getSeconds())}` };
}

class CodexSession implements SessionUnit {
  history: Message[] = [];
  private ordinal = 0;
  private turns = 0;

  constructor(
    readonly id: string,
    readonly path: string,
    private readonly root: string,
    cwd: string,
  ) {
    if (fs.existsSync(this.path)) {
      for (const r of readJsonl(this.path)) {
        if (typeof r.ordinal === 'number') this.ordinal = Math.max(this.ordinal, r.ordinal + 1);
        const p = obj(r.payload);
        if (r.type === 'event_msg' && p.type === 'task_started') this.turns++;
        if (r.type === 'event_msg' && p.type === 'item_completed') {
          const item = obj(p.item);
          const text = Array.isArray(item.content) ? str(obj(item.content[0]).text) : undefined;
          if (item.type === 'UserMessage' && text !== undefined) this.history.push({ role: 'user', text });
          if (item.type === 'AgentMessage' && text !== undefined) this.history.push({ role: 'assistant', text });
          if (item.type === 'CommandExecution') this.history.push({ role: 'tool', text: `Ran ${Array.isArray(item.command) ? String(item.command[2] ?? '') : ''}` });
        }
      }
    } else {
      this.write([
        {
          type: 'session_meta',
          payload: {
            session_id: id,
            id,
            timestamp: iso(),
            cwd,
            runtime_workspace_roots: [cwd],
            originator: 'codex_cli_rs',
            cli_version: VERSION,
            source: 'cli',
            thread_source: 'user',
            model_provider: 'fake',
            base_instructions: { text: 'You are a coding agent running in the Codex CLI (fake).' },
          },
        },
      ]);
    }
  }

  /** The cwd of the latest turn, else the one of session_meta. */
  static recordedCwd(file: string): string | undefined {
    let cwd: string | undefined;
    for (const r of readJsonl(file)) {
      const p = obj(r.payload);
      if (r.type === 'session_meta' && cwd === undefined) cwd = str(p.cwd);
      if (r.type === 'turn_context') cwd = str(p.cwd) ?? cwd;
    }
    return cwd;
  }

  private write(items: { type: string; payload: unknown }[]): void {
    const now = iso();
    appendJsonl(
      this.path,
      items.map((it) => ({ timestamp: now, ordinal: this.ordinal++, type: it.type, payload: it.payload })),
    );
  }

  appendTurn(t: Turn): void {
    const turnId = uuidv7(t.startedAt.getTime());
    const skills = path.join(this.root, 'skills', '.system');
    const callId = `call_fake_${turnId.slice(-8)}`;
    const cmd = `cat ${t.toolPath}`;
    const userText = (text: string) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
    const settings = { model: 'fake-model', model_provider_id: 'fake', approval_policy: 'on-request', cwd: t.cwd, runtime_workspace_roots: [t.cwd] };
    const items: { type: string; payload: unknown }[] = [{ type: 'event_msg', payload: { type: 'task_started', turn_id: turnId, started_at: Math.floor(t.startedAt.getTime() / 1000), model_context_window: 258400 } }];
    if (this.turns === 0) {
      items.push(
        {
          type: 'response_item',
          payload: {
            type: 'message',
            role: 'developer',
            content: [{ type: 'input_text', text: `<skills_instructions>\n## Skills\n### Skill roots\n- \`r0\` = \`${skills}\`\n</skills_instructions>` }],
          },
        },
        { type: 'response_item', payload: userText(`<environment_context>\n  <cwd>${t.cwd}</cwd>\n  <shell>bash</shell>\n  <filesystem><workspace_roots><root>${t.cwd}</root></workspace_roots></filesystem>\n</environment_context>`) },
        { type: 'world_state', payload: { full: true, state: { environments: { environments: { local: { cwd: t.cwd, status: 'available', shell: 'bash' } } }, host_skills: { body: `- \`r0\` = \`${skills}\`` } } } },
      );
    }
    items.push(
      { type: 'turn_context', payload: { turn_id: turnId, cwd: t.cwd, approval_policy: 'on-request', model: 'fake-model', summary: 'none', sandbox_policy: { type: 'workspace-write' } } },
      { type: 'event_msg', payload: { type: 'thread_settings_applied', thread_id: this.id, thread_settings: settings } },
      { type: 'response_item', payload: userText(t.prompt) },
      { type: 'event_msg', payload: { type: 'item_completed', thread_id: this.id, turn_id: turnId, item: { type: 'UserMessage', id: uuidv7(), content: [{ type: 'text', text: t.prompt, text_elements: [] }] } } },
      { type: 'response_item', payload: { type: 'function_call', status: 'completed', id: `fc_${callId}`, name: 'exec_command', arguments: JSON.stringify({ cmd }), call_id: callId } },
      {
        type: 'event_msg',
        payload: {
          type: 'item_completed',
          thread_id: this.id,
          turn_id: turnId,
          item: { type: 'CommandExecution', id: callId, command: ['/bin/bash', '-lc', cmd], cwd: `file://${encodeURI(t.cwd)}`, parsed_cmd: [{ type: 'read', cmd, name: path.basename(t.toolPath), path: t.toolPath }], status: 'completed', exit_code: 0 },
        },
      },
      { type: 'response_item', payload: { type: 'function_call_output', call_id: callId, output: 'Process exited with code 0\nOutput:\nhello\n' } },
      { type: 'event_msg', payload: { type: 'item_completed', thread_id: this.id, turn_id: turnId, item: { type: 'AgentMessage', id: `msg_${callId}`, content: [{ type: 'Text', text: t.reply }] } } },
      { type: 'response_item', payload: { type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: t.reply, annotations: [] }] } },
      { type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } } } },
      { type: 'event_msg', payload: { type: 'task_complete', turn_id: turnId, last_agent_message: t.reply, duration_ms: t.endedAt.getTime() - t.startedAt.getTime() } },
    );
    this.write(items);
    this.turns++;
  }
}

/** Paths with `[projects."<path>"] trust_level = "trusted"` in config.toml (the only form we read). */
function trustedProjects(configText: string): Set<string> {
  const out = new Set<string>();
  let section: string | undefined;
  for (const line of configText.split('\n')) {
    const h = /^\s*\[\s*projects\s*\.\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*\]\s*(#.*)?$/.exec(line);
    if (h) {
      const q = h[1]!;
      section = q.startsWith('"') ? (JSON.parse(q) as string) : q.slice(1, -1);
      continue;
    }
    if (/^\s*\[/.test(line)) section = undefined;
    else if (section !== undefined && /^\s*trust_level\s*=\s*"trusted"\s*(#.*)?$/.test(line)) out.add(section);
  }
  return out;
}

function saveTrust(configFile: string, key: string): void {
  let text = '';
  try {
    text = fs.readFileSync(configFile, 'utf8');
  } catch {
    // first write creates it
  }
  const lines = text.split('\n');
  const header = `[projects.${JSON.stringify(key)}]`;
  const at = lines.findIndex((l) => l.trim() === header);
  if (at >= 0) {
    let end = at + 1;
    while (end < lines.length && !/^\s*\[/.test(lines[end]!)) end++;
    const tl = lines.slice(at + 1, end).findIndex((l) => /^\s*trust_level\s*=/.test(l));
    if (tl >= 0) lines[at + 1 + tl] = 'trust_level = "trusted"';
    else lines.splice(at + 1, 0, 'trust_level = "trusted"');
    text = lines.join('\n');
  } else {
    text = `${text}${text && !text.endsWith('\n') ? '\n' : ''}\n${header}\ntrust_level = "trusted"\n`;
  }
  if (fs.existsSync(configFile)) fs.writeFileSync(configFile, text);
  else writePrivate(configFile, text);
}

/** The hook events codex's Hooks list shows, in its order. */
const HOOK_EVENTS = ['PreToolUse', 'PermissionRequest', 'PostToolUse', 'PreCompact', 'PostCompact', 'SessionStart', 'SessionEnd', 'UserPromptSubmit', 'Stop'];

const reviewLine = (n: number) => `⚠ ${n} ${n === 1 ? 'hook needs' : 'hooks need'} review before it can run.`;

/** Real codex's start-up review of hooks it does not trust (texts and keys measured on 0.171). */
async function reviewHooks(tui: Tui, root: string): Promise<void> {
  const pending = needingReview(root);
  if (pending.length === 0) return;
  const n = pending.length;
  const r = await tui.menu({
    lines: ['Hooks need review', `${n} ${n === 1 ? 'hook is' : 'hooks are'} new or changed.`, 'Hooks can run outside the sandbox after you trust them.'],
    options: ['Review hooks', 'Trust all and continue', "Continue without trusting (hooks won't run)"],
    marker: '›',
    numbered: true,
    footer: ['enter confirm · esc skip'],
  });
  if ('index' in r && r.index === 1) trustHooks(root, needingReview(root));
  else if ('index' in r && r.index === 0) await hooksList(tui, root);
}

/** The Hooks list: one row per event; `t` trusts every hook, Enter opens an event's hooks, Esc closes. */
async function hooksList(tui: Tui, root: string): Promise<void> {
  let sel = Math.max(0, HOOK_EVENTS.indexOf(needingReview(root)[0]?.event ?? 'SessionStart'));
  for (;;) {
    const hooks = listHooks(root);
    const pending = needingReview(root);
    const rows = HOOK_EVENTS.map((e, i) => {
      const of = hooks.filter((h) => h.event === e);
      const cols = [e.padEnd(22), String(of.length).padEnd(12), String(of.filter((h) => h.enabled && h.trust === 'trusted').length).padEnd(12), String(of.filter((h) => pending.includes(h)).length)];
      return `${i === sel ? '›' : ' '} ${cols.join('')}`;
    });
    const lines = ['Hooks', 'Lifecycle hooks from config and enabled plugins.', '', ...(pending.length ? [reviewLine(pending.length), ''] : []), '  Event                 Installed   Active      Review', ...rows];
    tui.draw({ header: [], body: lines, footer: ['', pending.length ? 't trust all · enter review · esc close' : 'enter details · esc close'] });
    const k = await tui.key();
    if (k.name === 'up') sel = Math.max(0, sel - 1);
    else if (k.name === 'down') sel = Math.min(HOOK_EVENTS.length - 1, sel + 1);
    else if (k.name === 'esc' || k.name === 'ctrl-c') return;
    else if (k.name === 'char' && k.ch === 't') trustHooks(root, pending);
    else if (k.name === 'enter') await eventHooks(tui, root, HOOK_EVENTS[sel]!);
  }
}

/** One event's hooks with their details; `t` trusts the selected one, Esc goes back. */
async function eventHooks(tui: Tui, root: string, event: string): Promise<void> {
  let sel = 0;
  for (;;) {
    const hooks = listHooks(root).filter((h) => h.event === event);
    const pending = hooks.filter((h) => h.enabled && h.trust !== 'trusted');
    const h: FakeHook | undefined = hooks[sel];
    const rows = hooks.map((x, i) => `${i === sel ? '›' : ' '} [${x.trust === 'trusted' ? 'x' : '!'}]  ${i + 1}  Unnamed hook${x.trust === 'trusted' ? '' : x.trust === 'modified' ? ' · changed' : ' · new'}`);
    const details = h
      ? ['', `  Event     ${event}`, '  Source    User config - ~/.codex/hooks.json', `  Command   ${h.command}`, `  Mode      ${h.async ? 'Async' : 'Sync'}`, `  Timeout   ${h.timeoutSec}s`, `  Trust     ${h.trust === 'trusted' ? 'Trusted' : 'New hook - review required'}`]
      : ['', '  No hooks for this event.'];
    tui.draw({ header: [], body: [`${event} hooks`, pending.length ? reviewLine(pending.length).slice(2) : 'Turn hooks on or off. Your changes are saved automatically.', '', ...rows, ...details], footer: ['', h && h.trust !== 'trusted' ? 't trust · esc back' : 'space/enter toggle · esc back'] });
    const k = await tui.key();
    if (k.name === 'up') sel = Math.max(0, sel - 1);
    else if (k.name === 'down') sel = Math.min(Math.max(0, hooks.length - 1), sel + 1);
    else if (k.name === 'esc' || k.name === 'ctrl-c') return;
    else if (k.name === 'char' && k.ch === 't' && h && h.trust !== 'trusted') trustHooks(root, [h]);
  }
}

function findRollout(root: string, id: string): string | undefined {
  const suffix = `-${id.toLowerCase()}.jsonl`;
  return walkFiles(path.join(root, 'sessions')).find((f) => path.basename(f).startsWith('rollout-') && path.basename(f).toLowerCase().endsWith(suffix));
}

function newestRollout(root: string): string | undefined {
  let best: { f: string; t: number } | undefined;
  for (const f of walkFiles(path.join(root, 'sessions'))) {
    if (!/^rollout-.*\.jsonl$/.test(path.basename(f))) continue;
    const t = fs.statSync(f).mtimeMs;
    if (!best || t > best.t) best = { f, t };
  }
  return best?.f;
}

async function launch(ctx: LaunchContext): Promise<Launch> {
  const { tui, control, root } = ctx;
  let argv = ctx.argv;
  const resumeMode = argv[0] === 'resume';
  if (resumeMode) argv = argv.slice(1);
  else if (argv[0] && /^[a-z][a-z-]*$/.test(argv[0]) && ['exec', 'e', 'login', 'logout', 'mcp', 'apply', 'agents', 'fork'].includes(argv[0])) {
    throw new AgentExit(2, [`codex (fake): subcommand '${argv[0]}' is not modelled`], true);
  }
  const args = splitArgs(argv, ['-C', '--cd'], ['--last', '--all', '--full-auto', '--search', '--oss', '--yolo']);
  if (args.resume) process.chdir(path.resolve(args.resume));
  const here = realpathOr(process.cwd());

  if (control.loggedOut || control.firstRun) {
    const r = await tui.menu({
      lines: [">_ Welcome to Codex, OpenAI's command-line coding agent", '', 'Choose how you want to use Codex.'],
      options: ['Sign in with ChatGPT', 'Sign in with Device Code', 'Sign in another way'],
      marker: '›',
      numbered: true,
      footer: ['Press Enter to continue'],
    });
    if ('key' in r) throw new AgentExit(1);
  }
  const top = gitTopLevel(here);
  if (top) {
    const configFile = path.join(root, 'config.toml');
    let configText = '';
    try {
      configText = fs.readFileSync(configFile, 'utf8');
    } catch {
      // no config: nothing trusted
    }
    const trusted = trustedProjects(configText);
    const main = gitMainRoot(here) ?? top;
    if (![here, top, main].some((p) => trusted.has(p))) {
      const r = await tui.menu({
        lines: ['Folder access', '', here, '', 'Trust this folder? Codex can read, edit, and run files here, and may run commands in this folder without asking.'],
        options: ['Trust and continue', 'Back to Agent Command Center'],
        marker: '›',
        numbered: true,
        footer: ['enter continue · esc back'],
      });
      if (!('index' in r) || r.index !== 0) throw new AgentExit(1);
      saveTrust(configFile, main);
    }
  }
  // Real codex 0.171 holds a hook it has not trusted (herdr's, once installed) for review: it
  // does not run until trusted, so herdr learns no session id (`esc` goes on without it).
  await reviewHooks(tui, root);

  let cwd = here;
  let session: CodexSession;
  const pos = [...args.positionals];
  if (resumeMode) {
    let file: string | undefined;
    let id: string;
    if (args.flags.has('--last')) {
      file = newestRollout(root);
      id = file ? /([0-9a-f-]{36})\.jsonl$/i.exec(file)?.[1] ?? '' : '';
      if (!file) throw new AgentExit(1, ['No saved sessions to resume.'], true);
    } else {
      id = pos.shift() ?? '';
      if (!id) throw new AgentExit(1, ['codex (fake): the resume picker is not modelled; pass the full session id'], true);
      if (UUID_RE.test(id)) file = findRollout(root, id);
      if (!file) throw new AgentExit(1, [`No saved session found with ID ${id}. Run \`codex resume\` without an ID to choose from existing sessions.`], true);
    }
    const old = CodexSession.recordedCwd(file) ?? here;
    if (old !== here) {
      const r = await tui.menu({
        lines: ['Working directory · resume', '', 'This session was started in a different directory.'],
        options: [`Use session directory (${old})`, `Use current directory (${here})`, 'Always use session directory', 'Always use current directory'],
        marker: '›',
        numbered: true,
        footer: ['enter confirm · esc cancel'],
      });
      if (!('index' in r)) throw new AgentExit(1);
      cwd = r.index % 2 === 0 ? old : here;
    }
    if (fs.existsSync(cwd)) process.chdir(cwd);
    session = new CodexSession(id, file, root, cwd);
  } else {
    const now = new Date();
    const id = uuidv7(now.getTime());
    const { dir, stamp } = rolloutStamp(now);
    session = new CodexSession(id, path.join(root, 'sessions', ...dir, `rollout-${stamp}-${id}.jsonl`), root, cwd);
  }
  const script = path.join(root, 'herdr-agent-state.sh');
  // Codex runs its SessionStart hooks (herdr's reports the session) with the first prompt.
  return { session, cwd, resumed: resumeMode, prompt: pos[0], extraArgs: [...args.extra, ...pos.slice(1)], notices: [], herdrHookRuns: () => hookRuns(root, script), reportAtFirstTurn: true };
}

export const codex: AgentDefinition = {
  kind: 'codex',
  banner: [`>_ OpenAI Codex (v${VERSION})`, '   model: fake-model'],
  promptChar: '›',
  placeholder: 'Ask Codex to do anything',
  footer: ['? for shortcuts'],
  quitWords: ['/quit'],
  slashMenu: true,
  ctrlC: 'double',
  doubleMs: 1000,
  ctrlDQuits: false,
  fullLifecycle: false,
  refuseQuitWhileWorking: true,
  configRoot: codexRoot,
  integrationFile: (root) => path.join(root, 'herdr-agent-state.sh'),
  launch,
  // The daemon's detach notice (its "running work continues" is moot: the fake refuses /quit mid-turn),
  // then the hint the CLI prints.
  quitLines: (l) => ['Disconnected from this task. Any running work continues.', 'To continue this session, run:', `codex resume ${l.session.id}`],
};
