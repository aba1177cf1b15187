// The session format pi and omp share: `<ISO ts with : and . → ->_<uuidv7>.jsonl`, a v3
// `session` header with `cwd`, then an id/parentId tree of entries. omp adds a fixed-width
// `title` record as line 1 (rewritten in place) and a few `custom` entries. omp also rewrites its
// history: a turn that reads a file read before prunes the older result ("Superseded by a newer
// read of this file") and writes the whole file anew (to a temporary file renamed over it), as
// omp 18.2.3 does on every such turn (compaction.supersedeReads, on by default).
import fs from 'node:fs';
import path, { dirname } from 'node:path';
import type { Message, SessionUnit, Turn } from './agent.js';
import { appendJsonl, iso, mkdirPrivate, obj, readJsonl, shortId, str, uuidv7, walkFiles } from './files.js';

export type Flavor = 'pi' | 'omp';

/** omp's line 1 is exactly this many bytes, newline included, so it can be rewritten in place. */
export const OMP_TITLE_LINE_BYTES = 256;

/** What omp 18.2.3 writes over an older `read` result that a newer read of the same file made stale. */
export const OMP_SUPERSEDED_TEXT = '[Superseded by a newer read of this file]';

/** omp names no session after a greeting or a number (isLowSignalTitleInput): it waits for the next prompt. */
const FILLER_WORDS = new Set(['hi', 'hii', 'hiya', 'hey', 'heya', 'hello', 'helo', 'hullo', 'yo', 'ya', 'ok', 'okay', 'thanks', 'thx']);
export function lowSignalTitleInput(prompt: string): boolean {
  const words = prompt.toLowerCase().match(/[\p{L}\p{N}]+/gu);
  return !words || words.every((w) => FILLER_WORDS.has(w) || /^\d+$/.test(w));
}

/** pi's directory for a cwd: strip one leading separator, `/`, `\` and `:` → `-`, wrapped in `--…--`. */
export function piDirName(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`;
}

export function sessionFileName(now: Date, id: string): string {
  return `${now.toISOString().replace(/[:.]/g, '-')}_${id}.jsonl`;
}

/** The id a session file name ends with. */
export function idOfFile(file: string): string {
  return /_([0-9a-f-]{36})\.jsonl$/i.exec(path.basename(file))?.[1] ?? path.basename(file, '.jsonl');
}

export function headerOf(file: string): Record<string, unknown> | undefined {
  return readJsonl(file).find((r) => r.type === 'session');
}

/** Session files whose id starts with `prefix`: first in `localDir`, then anywhere under `sessionsRoot`. */
export function findByIdPrefix(sessionsRoot: string, localDir: string, prefix: string): { file: string; local: boolean } | undefined {
  const match = (f: string) => f.endsWith('.jsonl') && idOfFile(f).toLowerCase().startsWith(prefix.toLowerCase());
  const local = walkFiles(localDir, 0).find(match);
  if (local) return { file: local, local: true };
  const any = walkFiles(sessionsRoot, 1).find(match);
  return any ? { file: any, local: false } : undefined;
}

export function newestSession(dir: string): string | undefined {
  let best: { f: string; t: number } | undefined;
  for (const f of walkFiles(dir, 0)) {
    if (!f.endsWith('.jsonl')) continue;
    const t = fs.statSync(f).mtimeMs;
    if (!best || t > best.t) best = { f, t };
  }
  return best?.f;
}

/** omp's fixed-width line 1 (without its newline): `source` only once a title was set; a long title is cut to fit. */
export function titleLine(title: string, updatedAt: string): string {
  const rec = (t: string, pad: string) => JSON.stringify(title ? { type: 'title', v: 1, title: t, source: 'auto', updatedAt, pad } : { type: 'title', v: 1, title: t, updatedAt, pad });
  let t = title;
  while (Buffer.byteLength(rec(t, '')) > OMP_TITLE_LINE_BYTES - 1) t = [...t].slice(0, -1).join('');
  const free = OMP_TITLE_LINE_BYTES - 1 - Buffer.byteLength(rec(t, ''));
  return rec(t, ' '.repeat(free));
}

export class PiSession implements SessionUnit {
  history: Message[] = [];
  private lastId: string | null = null;
  private title = '';
  private toolCalls = 0;

  constructor(
    private readonly flavor: Flavor,
    readonly id: string,
    readonly path: string,
    cwd: string,
    extraHeader: Record<string, unknown> = {},
  ) {
    if (fs.existsSync(this.path)) {
      this.load();
      return;
    }
    const now = new Date();
    mkdirPrivate(dirname(this.path));
    if (flavor === 'omp') fs.writeFileSync(this.path, titleLine('', iso(now)) + '\n', { mode: 0o600 });
    const modelId = shortId();
    appendJsonl(this.path, [
      { type: 'session', version: 3, id, timestamp: iso(now), cwd, ...extraHeader },
      flavor === 'omp'
        ? { type: 'model_change', id: modelId, parentId: null, timestamp: iso(now), model: 'fake/fake-model', resolvedModelIsFallback: false }
        : { type: 'model_change', id: modelId, parentId: null, timestamp: iso(now), provider: 'fake', modelId: 'fake-model' },
    ]);
    this.lastId = modelId;
    this.entries([{ type: 'thinking_level_change', thinkingLevel: 'off' }]);
  }

  private load(): void {
    for (const r of readJsonl(this.path)) {
      if (r.type === 'title') this.title = str(r.title) ?? '';
      if (typeof r.id === 'string' && r.type !== 'session') this.lastId = r.id;
      if (r.type !== 'message') continue;
      const m = obj(r.message);
      const content = Array.isArray(m.content) ? m.content.map(obj) : [];
      for (const c of content) {
        if (m.role === 'user' && c.type === 'text') this.history.push({ role: 'user', text: str(c.text) ?? '' });
        if (m.role === 'assistant' && c.type === 'text') this.history.push({ role: 'assistant', text: str(c.text) ?? '' });
        if (m.role === 'assistant' && c.type === 'toolCall') this.history.push({ role: 'tool', text: `${str(c.name) ?? 'tool'} ${str(obj(c.arguments).path) ?? ''}` });
      }
    }
  }

  /** Append tree entries, each with a fresh id and the previous one as parent. */
  private entries(list: Record<string, unknown>[], at = new Date()): void {
    const out = list.map((e) => {
      const id = shortId();
      const rec = { type: e.type, id, parentId: this.lastId, timestamp: iso(at), ...e };
      this.lastId = id;
      return rec;
    });
    appendJsonl(this.path, out);
  }

  appendTurn(t: Turn): void {
    const callId = `call_fake_${++this.toolCalls}_${shortId()}`;
    const args = { path: t.toolPath };
    const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    const assistant = (content: unknown[], stopReason: string, at: Date) => ({
      role: 'assistant',
      content,
      api: 'openai-completions',
      provider: 'fake',
      model: 'fake-model',
      usage,
      stopReason,
      timestamp: at.getTime(),
    });
    if (this.flavor === 'omp' && !this.title && !lowSignalTitleInput(t.prompt)) this.setTitle(t.prompt.slice(0, 60), t.startedAt);
    const user = { role: 'user', content: [{ type: 'text', text: t.prompt }], timestamp: t.startedAt.getTime(), ...(this.flavor === 'omp' ? { attribution: 'user' } : {}) };
    const call: Record<string, unknown> = { type: 'toolCall', id: callId, name: 'read', arguments: args };
    if (this.flavor === 'omp') Object.assign(call, { partialArgs: JSON.stringify(args), streamIndex: 0 });
    const list: Record<string, unknown>[] = [
      { type: 'message', message: user },
      { type: 'message', message: assistant([call], 'toolUse', t.startedAt) },
    ];
    const text = 'hello\n';
    if (this.flavor === 'omp') {
      list.push({ type: 'custom', customType: 'tool_execution_start', data: { toolCallId: callId, toolName: 'read', startedAt: iso(t.startedAt), args } });
      const shown = path.relative(t.cwd, t.toolPath).startsWith('..') ? t.toolPath : path.relative(t.cwd, t.toolPath);
      list.push({
        type: 'message',
        message: { role: 'toolResult', toolCallId: callId, toolName: 'read', content: [{ type: 'text', text: `[${shown}#FAKE]\n1:hello` }], details: { totalLines: 1, meta: { source: { type: 'path', value: t.toolPath } } }, isError: false, timestamp: t.endedAt.getTime() },
      });
    } else {
      list.push({ type: 'message', message: { role: 'toolResult', toolCallId: callId, toolName: 'read', content: [{ type: 'text', text }], isError: false, timestamp: t.endedAt.getTime() } });
    }
    list.push({ type: 'message', message: assistant([{ type: 'text', text: t.reply }], 'stop', t.endedAt) });
    this.entries(list, t.endedAt);
    if (this.flavor === 'omp') this.supersedeReads(t.toolPath, callId);
  }

  /**
   * omp's per-turn stale-read pass: older `read` results of the file this turn read are replaced
   * by OMP_SUPERSEDED_TEXT and, when any was, the whole file is written anew and renamed over the
   * old one (a new inode; the header then carries the title too). Lines it does not change keep
   * their bytes.
   */
  private supersedeReads(toolPath: string, keepCallId: string): void {
    const lines = fs.readFileSync(this.path, 'utf8').split('\n');
    let pruned = 0;
    const out = lines.map((line) => {
      let r: Record<string, unknown>;
      try {
        r = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return line;
      }
      if (r.type === 'session' && this.title && r.title !== this.title) return JSON.stringify({ ...r, title: this.title, titleSource: 'auto' });
      const m = obj(r.message);
      if (r.type !== 'message' || m.role !== 'toolResult' || m.toolName !== 'read' || m.toolCallId === keepCallId) return line;
      if (str(obj(obj(obj(m.details).meta).source).value) !== toolPath) return line;
      const content = Array.isArray(m.content) ? m.content.map(obj) : [];
      if (content.length === 1 && content[0]!.text === OMP_SUPERSEDED_TEXT) return line;
      pruned++;
      return JSON.stringify({ ...r, message: { ...m, content: [{ type: 'text', text: OMP_SUPERSEDED_TEXT }] } });
    });
    if (pruned === 0) return;
    const tmp = `${this.path}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, out.join('\n'), { mode: 0o600 });
    fs.renameSync(tmp, this.path);
  }

  /** omp: rewrite the fixed-width line 1 in place (same bytes count, same inode) and record the change in the tree. */
  private setTitle(title: string, at: Date): void {
    this.title = title;
    const fd = fs.openSync(this.path, 'r+');
    try {
      fs.writeSync(fd, titleLine(title, iso(at)), 0, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
    this.entries([{ type: 'title_change', title, source: 'auto' }], at);
  }

  close(): void {
    if (this.flavor === 'omp') this.entries([{ type: 'custom', customType: 'session_exit', data: { reason: 'dispose', kind: 'normal', recordedAt: iso() } }]);
  }
}

/** A new session file for `cwd` in `dir`. */
export function newPiSession(flavor: Flavor, dir: string, cwd: string, extraHeader: Record<string, unknown> = {}): PiSession {
  const now = new Date();
  const id = uuidv7(now.getTime());
  return new PiSession(flavor, id, path.join(dir, sessionFileName(now, id)), cwd, extraHeader);
}
