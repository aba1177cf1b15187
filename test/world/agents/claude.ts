// Fake Claude Code: transcripts in <root>/projects/<sanitised cwd>/<uuidv4>.jsonl, resume only
// from the current cwd's project dir (or an absolute .jsonl path), trust keyed by the main repo
// root in .claude.json, `/exit` behind a slash menu, Ctrl+C twice.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { splitArgs, type AgentDefinition, type Launch, type LaunchContext, type Message, type SessionUnit, type Turn } from './agent.js';
import {
  AgentExit,
  appendJsonl,
  gitBranch,
  gitMainRoot,
  home,
  iso,
  mkdirPrivate,
  obj,
  readJson,
  readJsonl,
  realpathOr,
  safeReaddir,
  selfAndAncestors,
  str,
  uuidv4,
  UUID_RE,
  writePrivate,
} from './files.js';

const VERSION = '2.1.197';

export function claudeRoot(): string {
  return process.env.CLAUDE_CONFIG_DIR || path.join(home(), '.claude');
}

/** `~/.claude.json` in HOME, or inside CLAUDE_CONFIG_DIR when that is set. */
export function claudeStateFile(): string {
  const dir = process.env.CLAUDE_CONFIG_DIR;
  return dir ? path.join(dir, '.claude.json') : path.join(home(), '.claude.json');
}

/** Project dir name: every UTF-16 unit outside [A-Za-z0-9] → '-'; past 200 chars a Java-style hash suffix. */
export function claudeProjectDirName(cwd: string): string {
  const s = cwd.replace(/[^A-Za-z0-9]/g, '-');
  if (s.length <= 200) return s;
  let h = 0;
  for (let i = 0; i < cwd.length; i++) h = ((h << 5) - h + cwd.charCodeAt(i)) | 0;
  return `${s.slice(0, 200)}-${Math.abs(h).toString(36)}`;
}

class ClaudeSession implements SessionUnit {
  history: Message[] = [];
  private lastUuid: string | null = null;

  constructor(
    readonly id: string,
    readonly path: string,
    private readonly root: string,
  ) {
    if (fs.existsSync(this.path)) this.load();
    // Each start (new or resumed) records the modes first, as the real CLI does.
    appendJsonl(this.path, [
      { type: 'mode', mode: 'normal', sessionId: id },
      { type: 'permission-mode', permissionMode: 'default', sessionId: id },
    ]);
  }

  private load(): void {
    for (const r of readJsonl(this.path)) {
      if (typeof r.uuid === 'string' && r.isSidechain !== true) this.lastUuid = r.uuid;
      const msg = obj(r.message);
      const content = msg.content;
      if (r.type === 'user' && typeof content === 'string') this.history.push({ role: 'user', text: content });
      if (r.type === 'assistant' && Array.isArray(content)) {
        for (const c of content.map(obj)) {
          if (c.type === 'text' && typeof c.text === 'string') this.history.push({ role: 'assistant', text: c.text });
          if (c.type === 'tool_use') this.history.push({ role: 'tool', text: `${str(c.name) ?? 'Tool'} ${str(obj(c.input).file_path) ?? ''}` });
        }
      }
    }
  }

  appendTurn(t: Turn): void {
    const base = () => ({ userType: 'external', entrypoint: 'cli', cwd: t.cwd, sessionId: this.id, version: VERSION, gitBranch: gitBranch(t.cwd) });
    const promptId = uuidv4();
    const userUuid = uuidv4();
    const toolUuid = uuidv4();
    const resultUuid = uuidv4();
    const replyUuid = uuidv4();
    const sysUuid = uuidv4();
    const start = iso(t.startedAt);
    const end = iso(t.endedAt);
    const usage = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5, service_tier: 'standard' };
    const records: unknown[] = [
      { type: 'file-history-snapshot', messageId: userUuid, snapshot: { messageId: userUuid, trackedFileBackups: {}, timestamp: start }, isSnapshotUpdate: false },
      {
        parentUuid: this.lastUuid,
        isSidechain: false,
        promptId,
        type: 'user',
        message: { role: 'user', content: t.prompt },
        uuid: userUuid,
        timestamp: start,
        permissionMode: 'default',
        origin: { kind: 'human' },
        promptSource: 'typed',
        ...base(),
      },
    ];
    const toolId = `toolu_fake_${toolUuid.slice(0, 8)}`;
    const rel = path.relative(t.cwd, t.toolPath);
    const input = t.edit ? { replace_all: false, file_path: t.toolPath, old_string: 'hello', new_string: 'hello edited' } : { file_path: t.toolPath };
    records.push({
      parentUuid: userUuid,
      isSidechain: false,
      message: { id: `msg_fake_${toolUuid.slice(0, 8)}`, type: 'message', role: 'assistant', model: 'claude-fake-1', content: [{ type: 'tool_use', id: toolId, name: t.edit ? 'Edit' : 'Read', input }], stop_reason: 'tool_use', stop_sequence: null, usage },
      type: 'assistant',
      uuid: toolUuid,
      timestamp: start,
      ...base(),
    });
    const before = readText(t.toolPath);
    if (t.edit) {
      // The real CLI backs the file up before the edit: <root>/file-history/<sid>/<sha256(path)[0:16]>@v<N>.
      const dir = path.join(this.root, 'file-history', this.id);
      mkdirPrivate(dir);
      const stem = createHash('sha256').update(t.toolPath).digest('hex').slice(0, 16);
      let version = 1;
      while (fs.existsSync(path.join(dir, `${stem}@v${version}`))) version++;
      const backupFileName = `${stem}@v${version}`;
      writePrivate(path.join(dir, backupFileName), before);
      records.push({
        type: 'file-history-snapshot',
        messageId: toolUuid,
        snapshot: { messageId: userUuid, trackedFileBackups: { [rel]: { backupFileName, version, backupTime: end } }, timestamp: start },
        isSnapshotUpdate: true,
      });
    }
    const toolResult = t.edit
      ? { filePath: t.toolPath, oldString: 'hello', newString: 'hello edited', originalFile: before, userModified: false, replaceAll: false }
      : { type: 'text', file: { filePath: t.toolPath, content: before, numLines: before.split('\n').length, startLine: 1, totalLines: before.split('\n').length } };
    records.push(
      {
        parentUuid: toolUuid,
        isSidechain: false,
        promptId,
        type: 'user',
        message: { role: 'user', content: [{ tool_use_id: toolId, type: 'tool_result', content: t.edit ? `The file ${t.toolPath} has been updated successfully.` : numbered(before) }] },
        uuid: resultUuid,
        timestamp: end,
        toolUseResult: toolResult,
        sourceToolAssistantUUID: toolUuid,
        ...base(),
      },
      {
        parentUuid: resultUuid,
        isSidechain: false,
        message: { id: `msg_fake_${replyUuid.slice(0, 8)}`, type: 'message', role: 'assistant', model: 'claude-fake-1', content: [{ type: 'text', text: t.reply }], stop_reason: 'end_turn', stop_sequence: null, usage },
        type: 'assistant',
        uuid: replyUuid,
        timestamp: end,
        ...base(),
      },
      {
        parentUuid: replyUuid,
        isSidechain: false,
        type: 'system',
        subtype: 'turn_duration',
        durationMs: t.endedAt.getTime() - t.startedAt.getTime(),
        messageCount: 4,
        timestamp: end,
        uuid: sysUuid,
        isMeta: false,
        ...base(),
      },
      { type: 'last-prompt', lastPrompt: t.prompt, leafUuid: sysUuid, sessionId: this.id },
    );
    this.lastUuid = sysUuid;
    appendJsonl(this.path, records);
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function numbered(text: string): string {
  return text
    .split('\n')
    .map((l, i) => `${i + 1}\t${l}`)
    .join('\n');
}

function readState(): Record<string, unknown> {
  return readJson(claudeStateFile()) ?? {};
}

/** Trusted when the main repo root (else the cwd), or any ancestor of it, has hasTrustDialogAccepted. */
function trustKey(cwd: string): string {
  return gitMainRoot(cwd) ?? cwd;
}

function isTrusted(cwd: string): boolean {
  const projects = obj(readState().projects);
  return selfAndAncestors(trustKey(cwd)).some((k) => obj(projects[k]).hasTrustDialogAccepted === true);
}

function saveTrust(cwd: string): void {
  const file = claudeStateFile();
  const state = readState();
  const projects = obj(state.projects);
  const key = trustKey(cwd);
  projects[key] = { ...obj(projects[key]), hasTrustDialogAccepted: true };
  state.projects = projects;
  if (fs.existsSync(file)) fs.writeFileSync(file, JSON.stringify(state, null, 2) + '\n');
  else writePrivate(file, JSON.stringify(state, null, 2) + '\n');
}

async function launch(ctx: LaunchContext): Promise<Launch> {
  const { tui, control, root } = ctx;
  const args = splitArgs(ctx.argv, ['--resume', '-r'], ['--continue', '-c', '--fork-session', '--verbose', '--debug', '--dangerously-skip-permissions', '--ide']);
  const cwd = realpathOr(process.cwd());

  if (control.firstRun) {
    const r = await tui.menu({
      lines: [`Welcome to Claude Code v${VERSION}`, '', "Let's get started.", '', 'Choose the text style that looks best with your terminal', 'To change this later, run /theme'],
      options: ['Dark mode', 'Light mode', 'Dark mode (colorblind-friendly)', 'Light mode (colorblind-friendly)'],
      marker: '❯',
      numbered: true,
    });
    if ('key' in r) throw new AgentExit(1);
  }
  if (control.loggedOut) {
    const r = await tui.menu({
      lines: ['Claude Code can be used with your Claude subscription or billed based on API usage through your Console account.', '', 'Select login method:'],
      options: ['Claude account with subscription · Pro, Max, Team, or Enterprise', 'Anthropic Console account · API usage billing', '3rd-party platform · Amazon Bedrock, Microsoft Foundry, or Vertex AI'],
      marker: '❯',
      numbered: true,
    });
    if ('key' in r) throw new AgentExit(1);
  }
  if (!isTrusted(cwd)) {
    const r = await tui.menu({
      lines: [
        'Accessing workspace:',
        '',
        cwd,
        '',
        'Quick safety check: Is this a project you created or one you trust?',
        "(Like your own code, a well-known open source project, or work from your team). If not, take a moment to review what's in this folder first.",
        '',
        "Claude Code'll be able to read, edit, and execute files here.",
      ],
      options: ['Yes, I trust this folder', 'No, exit'],
      marker: '❯',
      numbered: true,
      footer: ['Enter to confirm · Esc to cancel'],
    });
    if (!('index' in r) || r.index !== 0) throw new AgentExit(1);
    saveTrust(cwd);
  }

  const projectDir = path.join(root, 'projects', claudeProjectDirName(cwd));
  let session: ClaudeSession;
  let resumed = true;
  const want = args.resume;
  if (want !== undefined) {
    if (want === '') throw new AgentExit(1, ['claude (fake): the session picker is not modelled; pass a session id or a .jsonl path'], true);
    if (path.isAbsolute(want) || want.endsWith('.jsonl')) {
      const file = path.resolve(want);
      if (!fs.existsSync(file)) throw new AgentExit(1, [`No conversation found with session ID: ${want}`], true);
      session = new ClaudeSession(path.basename(file, '.jsonl'), file, root);
    } else {
      const file = path.join(projectDir, `${want}.jsonl`);
      if (!UUID_RE.test(want) || !fs.existsSync(file)) {
        // The real CLI has already opened a fresh transcript by then and leaves it behind.
        const stub = uuidv4();
        new ClaudeSession(stub, path.join(projectDir, `${stub}.jsonl`), root);
        throw new AgentExit(1, [`No conversation found with session ID: ${want}`], true);
      }
      session = new ClaudeSession(want, file, root);
    }
  } else if (args.flags.has('--continue') || args.flags.has('-c')) {
    const newest = newestJsonl(projectDir);
    if (!newest) throw new AgentExit(1, ['No conversation found to continue'], true);
    session = new ClaudeSession(path.basename(newest, '.jsonl'), newest, root);
  } else {
    const id = uuidv4();
    session = new ClaudeSession(id, path.join(projectDir, `${id}.jsonl`), root);
    resumed = false;
  }
  return { session, cwd, resumed, prompt: args.positionals[0], extraArgs: [...args.extra, ...args.positionals.slice(1)], notices: [] };
}

function newestJsonl(dir: string): string | undefined {
  let best: { file: string; mtime: number } | undefined;
  for (const name of safeReaddir(dir)) {
    if (!name.endsWith('.jsonl')) continue;
    const file = path.join(dir, name);
    const mtime = fs.statSync(file).mtimeMs;
    if (!best || mtime > best.mtime) best = { file, mtime };
  }
  return best?.file;
}

export const claude: AgentDefinition = {
  kind: 'claude',
  banner: [` ✻ Claude Code v${VERSION}`, '   Fake Model · API Usage Billing'],
  promptChar: '❯',
  placeholder: '',
  footer: ['? for shortcuts'],
  quitWords: ['/exit', '/quit'],
  slashMenu: true,
  ctrlC: 'double',
  doubleMs: 1000,
  ctrlDQuits: false,
  fullLifecycle: false,
  // Claude Code 2.1: a braille spinner in the title while a turn runs, ✳ when it is done (herdr's claude rules).
  terminalTitle: (working) => `${working ? '\u2802' : '\u2733'} Claude Code`,
  refuseQuitWhileWorking: false,
  configRoot: claudeRoot,
  integrationFile: (root) => path.join(root, 'hooks', 'herdr-agent-state.sh'),
  launch,
  quitLines: (l) => ['Resume this session with:', `claude --resume ${l.session.id}`],
};
