// A realistic large agent transcript for the transfer benchmark: pi's JSONL records (see
// /work/shared/fixtures/sessions/pi) with varied content — user prompts, assistant text and
// thinking, tool calls naming files under the source repo, tool results holding real source and
// documentation text (slices of files from node_modules, as an agent reads them), command output
// with hashes and numbers, now and then a base64 image. Not repeated bytes: gzip finds in it what
// it finds in a real session, which is the point (a repeated block compresses unrealistically well).
import { createWriteStream, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** A small deterministic PRNG (mulberry32), so two runs generate the same file. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Text files to quote from: sources and docs under `root`, in a stable order, up to `maxBytes`. */
function textPool(root: string, maxBytes: number): string[] {
  const out: string[] = [];
  let total = 0;
  const walk = (dir: string, depth: number): void => {
    if (total >= maxBytes || depth > 6) return;
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const n of names) {
      if (total >= maxBytes) return;
      const p = path.join(dir, n);
      let st;
      try {
        st = statSync(p);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(p, depth + 1);
      else if (/\.(ts|js|md|json|mjs|cjs)$/.test(n) && st.size > 2000 && st.size < 400_000) {
        const text = readFileSync(p, 'utf8');
        out.push(text);
        total += text.length;
      }
    }
  };
  walk(root, 0);
  if (out.length === 0) throw new Error(`no text files under ${root}`);
  return out;
}

export interface TranscriptSpec {
  file: string;
  bytes: number;
  /** The source repo the transcript names (what the rewriter replaces). */
  repo: string;
  home: string;
  /** Where to quote real text from (a node_modules folder). */
  textRoot: string;
  seed?: number;
}

/** Write the transcript (streamed, constant memory); resolves with its size. */
export async function generateTranscript(spec: TranscriptSpec): Promise<number> {
  const rand = rng(spec.seed ?? 18);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const int = (n: number) => Math.floor(rand() * n);
  const hex = (n: number) => {
    let s = '';
    while (s.length < n) s += int(0x100000000).toString(16).padStart(8, '0');
    return s.slice(0, n);
  };
  const pool = textPool(spec.textRoot, 24 * 1024 * 1024);
  const slice = (min: number, max: number): string => {
    const t = pick(pool);
    const len = Math.min(t.length, min + int(max - min));
    const at = int(Math.max(1, t.length - len));
    return t.slice(at, at + len);
  };
  const words = (n: number): string => {
    const src = slice(n * 8, n * 12).split(/[^A-Za-z]+/).filter((w) => w.length > 1);
    return src.slice(0, n).join(' ');
  };
  const files = ['src/app.ts', 'src/cli.ts', 'src/host/ssh.ts', 'src/transcript/copy.ts', 'README.md', 'package.json', 'test/copy.test.ts', 'src/handoff/plan.ts', 'docs/design.md'];
  const file = () => `${spec.repo}/${pick(files)}`;
  const sessionId = `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
  let clock = Date.UTC(2026, 10, 30, 9, 0, 0);
  let parent: string | null = null;
  const record = (type: string, extra: Record<string, unknown>): string => {
    clock += 200 + int(40_000);
    const id = hex(8);
    const line = JSON.stringify({ type, id, parentId: parent, timestamp: new Date(clock).toISOString(), ...extra });
    parent = id;
    return line + '\n';
  };
  const usage = () => {
    const input = 1000 + int(90_000);
    const output = 20 + int(4000);
    const cacheRead = int(input);
    return { input, output, cacheRead, cacheWrite: int(5000), totalTokens: input + output, cost: { input: input * 3e-6, output: output * 1.5e-5, cacheRead: 0, cacheWrite: 0, total: input * 3e-6 + output * 1.5e-5 } };
  };
  const assistant = (content: unknown[]) =>
    record('message', { message: { role: 'assistant', content, api: 'anthropic-messages', provider: 'anthropic', model: 'claude-sonnet-4-5', usage: usage(), stopReason: 'toolUse', timestamp: clock } });
  const toolResult = (id: string, name: string, text: string) =>
    record('message', { message: { role: 'toolResult', toolCallId: id, toolName: name, content: [{ type: 'text', text }], isError: rand() < 0.05, timestamp: clock } });
  const bashOutput = () => {
    const lines: string[] = [];
    const n = 5 + int(60);
    for (let i = 0; i < n; i++) {
      const r = rand();
      if (r < 0.3) lines.push(`${hex(7)} ${words(4 + int(8))}`);
      else if (r < 0.6) lines.push(`${file()}:${1 + int(900)}:${1 + int(80)}: ${words(3 + int(10))}`);
      else if (r < 0.8) lines.push(` ✓ test/${pick(files).replace(/\.ts$/, '')}.test.ts (${int(40)} tests) ${int(9000)}ms`);
      else lines.push(`-rw-r--r-- 1 laptop laptop ${int(100_000)} Nov ${1 + int(30)} ${10 + int(13)}:${10 + int(49)} ${pick(files)}`);
    }
    return lines.join('\n');
  };
  const turn = (): string => {
    let out = record('message', { message: { role: 'user', content: [{ type: 'text', text: `${words(5 + int(40))} in ${file()}` }], timestamp: clock } });
    const steps = 1 + int(6);
    for (let s = 0; s < steps; s++) {
      const id = `toolu_${hex(24)}`;
      const r = rand();
      const thinking = rand() < 0.5 ? [{ type: 'thinking', thinking: words(20 + int(200)), thinkingSignature: Buffer.from(hex(64), 'hex').toString('base64').repeat(4) }] : [];
      if (r < 0.5) {
        const p = file();
        out += assistant([...thinking, { type: 'toolCall', id, name: 'read', arguments: { path: p } }]);
        out += toolResult(id, 'read', slice(2000, 40_000));
      } else if (r < 0.8) {
        const cmd = pick(['npx vitest run', 'git log --oneline -20', 'rg -n TODO', 'ls -la', 'npx tsc --noEmit']);
        out += assistant([...thinking, { type: 'toolCall', id, name: 'bash', arguments: { command: `cd ${spec.repo} && ${cmd}`, timeout: 120 } }]);
        out += toolResult(id, 'bash', bashOutput());
      } else if (r < 0.995) {
        const p = file();
        out += assistant([...thinking, { type: 'toolCall', id, name: 'edit', arguments: { path: p, oldText: slice(100, 1500), newText: slice(100, 1800) } }]);
        out += toolResult(id, 'edit', `Successfully replaced text in ${p}.`);
      } else {
        // A screenshot: incompressible bytes, as real sessions carry them.
        const png = Buffer.alloc(4 * (5000 + int(20_000)));
        for (let i = 0; i < png.length; i += 4) png.writeUInt32LE(int(0x100000000), i);
        out += record('message', { message: { role: 'user', content: [{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }], timestamp: clock } });
      }
    }
    out += assistant([{ type: 'text', text: `${words(10 + int(120))}. See ${file()} and ${spec.home}/.pi/agent/settings.json.` }]);
    return out;
  };

  const out = createWriteStream(spec.file, { mode: 0o600 });
  let written = 0;
  const put = async (s: string) => {
    written += Buffer.byteLength(s);
    if (!out.write(s)) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  await put(JSON.stringify({ type: 'session', version: 3, id: sessionId, timestamp: new Date(clock).toISOString(), cwd: spec.repo }) + '\n');
  await put(record('model_change', { provider: 'anthropic', modelId: 'claude-sonnet-4-5' }));
  while (written < spec.bytes) await put(turn());
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return written;
}
