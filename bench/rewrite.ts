// Benchmark of the streaming rewriter: generate a transcript-like JSONL file (1 GB by default,
// AH_BENCH_MB to change), stream it through the rewriter into /dev/null, report MB/s and peak RSS.
//   npm run build && node dist/bench/rewrite.js            # 1 GB
//   AH_BENCH_MB=64 node dist/bench/rewrite.js              # quick run
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { buildRewritePlan } from '../src/transcript/rewrite-plan.js';
import { createRewriteStream } from '../src/transcript/rewrite.js';

const MB = 1024 * 1024;
const sizeMb = Number(process.env.AH_BENCH_MB ?? 1024);
const keep = process.env.AH_BENCH_KEEP === '1';

const SRC_REPO = '/home/laptop/code/hark';
const SRC_HOME = '/home/laptop';

/** Lines shaped like real agent records: short metadata lines, tool calls, and long tool outputs. */
function lines(): string[] {
  const filler = 'lorem ipsum dolor sit amet, consectetur adipiscing elit; '.repeat(40);
  const big = JSON.stringify({ type: 'tool_result', content: `${filler}\n${SRC_REPO}/src/app.ts:12\n`.repeat(40) });
  return [
    JSON.stringify({ type: 'user', cwd: SRC_REPO, sessionId: '7529c0d9-ed0d-4e45-a4e1-413fe4ba5257', message: { role: 'user', content: 'please read README.md' } }),
    JSON.stringify({ type: 'function_call', arguments: JSON.stringify({ cmd: `cat ${SRC_REPO}/README.md`, workdir: SRC_REPO }) }),
    JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', input: { file_path: `${SRC_REPO}/src/index.ts` } }] }, cwd: SRC_REPO }),
    big,
    JSON.stringify({ type: 'world_state', skills: `${SRC_HOME}/.codex/skills/.system`, cwd: `file://${SRC_REPO}`, other: '/home/laptop-old/x /home/laptop/code/hark-old' }),
    JSON.stringify({ type: 'text', text: filler }),
  ];
}

async function generate(file: string, bytes: number): Promise<number> {
  const out = createWriteStream(file);
  const sample = lines().join('\n') + '\n';
  const block = sample.repeat(Math.max(1, Math.floor((4 * MB) / sample.length)));
  let written = 0;
  while (written < bytes) {
    if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
    written += Buffer.byteLength(block);
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return written;
}

async function main(): Promise<void> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ah-bench-'));
  const file = path.join(dir, 'transcript.jsonl');
  try {
    const t0 = Date.now();
    const bytes = await generate(file, sizeMb * MB);
    const genS = (Date.now() - t0) / 1000;
    const plan = buildRewritePlan({
      renames: [{ from: `${SRC_HOME}/.claude/projects/-home-laptop-code-hark`, to: '/home/vega/.claude/projects/-home-vega-src-hark' }],
      repo: { source: [SRC_REPO], target: '/home/vega/src/hark' },
      configRoot: { source: [`${SRC_HOME}/.codex`], target: '/home/vega/.codex' },
      home: { source: [SRC_HOME], target: '/home/vega' },
    });
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
    const rewriter = createRewriteStream(plan);
    let outBytes = 0;
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        outBytes += chunk.length;
        cb();
      },
    });
    const t1 = process.hrtime.bigint();
    await pipeline(createReadStream(file, { highWaterMark: 256 * 1024 }), rewriter, sink);
    const secs = Number(process.hrtime.bigint() - t1) / 1e9;
    clearInterval(sampler);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    const result = {
      input_mb: +(bytes / MB).toFixed(1),
      output_mb: +(outBytes / MB).toFixed(1),
      replacements: rewriter.replacements,
      seconds: +secs.toFixed(2),
      mb_per_s: +(bytes / MB / secs).toFixed(1),
      peak_rss_mb: +(peakRss / MB).toFixed(1),
      generate_seconds: +genS.toFixed(1),
      node: process.version,
      cpus: os.cpus().length,
    };
    console.log(JSON.stringify(result));
  } finally {
    if (!keep) await fs.rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
