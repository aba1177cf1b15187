// A loopback stand-in for an OpenAI-style chat-completions service, just enough for the real pi
// CLI to hold a conversation (protocol facts: /work/shared/real-agents.md §2.4).
//
// Each request is answered from its own body:
//   - the last message is a tool result → a text reply naming the prompt's first word and quoting
//     the tool output's first line (so a screen shows which file, in which checkout, was read);
//   - else, when pi offers a `read` tool → one call of it on the RELATIVE path `README.md`, which
//     pi resolves against its working directory (so the reply proves where the agent runs);
//   - else → a short text (side requests without tools).
// It binds 127.0.0.1 only, on a port the kernel picks, and records every request for assertions.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';

const TextPart = z.object({ type: z.string(), text: z.string().optional() }).loose();
const Content = z.union([z.string(), z.array(TextPart), z.null()]).optional();
const ChatMessage = z.object({ role: z.string(), content: Content }).loose();
const ChatTool = z
  .object({
    function: z.object({ name: z.string(), parameters: z.object({ properties: z.record(z.string(), z.unknown()).optional() }).loose().optional() }).loose(),
  })
  .loose();
const ChatRequest = z
  .object({
    model: z.string(),
    stream: z.boolean().optional(),
    messages: z.array(ChatMessage),
    tools: z.array(ChatTool).optional(),
  })
  .loose();
type ChatRequest = z.infer<typeof ChatRequest>;

export interface MockRequest {
  method: string;
  url: string;
  model: string | null;
  stream: boolean;
  tools: string[];
  /** What the mock answered: 'tool:<name>', 'text:<reply>', or 'error:<status>'. */
  answer: string;
}

export interface MockModel {
  /** Base URL for a provider config (`…/v1`). */
  baseUrl: string;
  port: number;
  requests: MockRequest[];
  close(): Promise<void>;
}

function textOf(content: z.infer<typeof Content>): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.map((p) => p.text ?? '').join('');
}

type Answer = { kind: 'tool'; name: string; args: Record<string, unknown> } | { kind: 'text'; text: string };

function answerFor(body: ChatRequest): Answer {
  const last = body.messages[body.messages.length - 1];
  if (last?.role === 'tool') {
    const prompt = [...body.messages].reverse().find((m) => m.role === 'user');
    const word = textOf(prompt?.content).trim().split(/\s+/)[0]?.replace(/[^A-Za-z0-9-]/g, '') || 'prompt';
    const firstLine = textOf(last.content).split('\n').find((l) => l.trim() !== '')?.trim().slice(0, 60) ?? '(empty)';
    return { kind: 'text', text: `Mock reply to ${word}: ${firstLine}` };
  }
  const read = (body.tools ?? []).find((t) => t.function.name === 'read');
  if (read) {
    const props = Object.keys(read.function.parameters?.properties ?? {});
    const key = ['path', 'file_path', 'filePath'].find((k) => props.includes(k)) ?? 'path';
    return { kind: 'tool', name: 'read', args: { [key]: 'README.md' } };
  }
  return { kind: 'text', text: 'Mock title' };
}

/** The SSE chunks of one streamed chat completion. */
function chunksFor(answer: Answer, model: string, n: number): string[] {
  const base = { id: `chatcmpl-ahmock-${n}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
  const choice = (delta: Record<string, unknown>, finish: string | null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const out: object[] = [];
  if (answer.kind === 'tool') {
    const call = { index: 0, id: `call_ahmock_${n}`, type: 'function', function: { name: answer.name, arguments: '' } };
    out.push(choice({ role: 'assistant', content: null, tool_calls: [call] }, null));
    out.push(choice({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(answer.args) } }] }, null));
    out.push(choice({}, 'tool_calls'));
  } else {
    out.push(choice({ role: 'assistant', content: answer.text }, null));
    out.push(choice({}, 'stop'));
  }
  out.push({ ...base, choices: [], usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 } });
  return [...out.map((c) => JSON.stringify(c)), '[DONE]'];
}

export async function startMockModel(): Promise<MockModel> {
  const requests: MockRequest[] = [];
  let n = 0;
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const record: MockRequest = { method: req.method ?? '', url: req.url ?? '', model: null, stream: false, tools: [], answer: '' };
      requests.push(record);
      const fail = (status: number, message: string) => {
        record.answer = `error:${status}`;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message } }));
      };
      const route = (req.url ?? '').split('?')[0] ?? '';
      if (req.method !== 'POST' || !route.endsWith('/chat/completions')) return fail(404, `the mock serves only POST …/chat/completions, not ${req.method} ${route}`);
      let body: ChatRequest;
      try {
        body = ChatRequest.parse(JSON.parse(Buffer.concat(parts).toString('utf8')));
      } catch (err) {
        return fail(400, `unreadable request: ${(err as Error).message}`);
      }
      record.model = body.model;
      record.stream = body.stream === true;
      record.tools = (body.tools ?? []).map((t) => t.function.name);
      if (!record.stream) return fail(400, 'the mock answers streamed requests only');
      const answer = answerFor(body);
      record.answer = answer.kind === 'tool' ? `tool:${answer.name}` : `text:${answer.text}`;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const data of chunksFor(answer, body.model, ++n)) res.write(`data: ${data}\n\n`);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
