// A loopback model service for the five real agent CLIs: Anthropic Messages (claude), OpenAI Chat
// Completions (pi, omp, grok) and OpenAI Responses (codex), streamed as each CLI expects
// (protocol facts: /work/shared/real-agents.md §2). One mock serves one machine: every tool call
// reads `<checkout>/README.md` of that machine's checkout, so a reply quoting the file proves
// which checkout the agent works in, and no other machine's path ever enters a new turn.
//
// Each request is answered from its own body:
//   - the last input is a tool result → `Mock reply to <first word of the prompt>: <the line of
//     the tool output that starts with "hello">`;
//   - else, when tools are offered → one call of the agent's read tool (or its shell with `cat`);
//   - else → `Mock title` (title and summary side requests).
// It binds 127.0.0.1 only, on a port the kernel picks, and records what it answered.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, unknown>;

export interface MockAnswer {
  protocol: 'anthropic' | 'chat' | 'responses';
  answer: string;
  /** The tool output a reply quoted no "hello" line from (so a failure shows what the agent read). */
  toolOutput?: string;
}

export interface MockModels {
  /** `http://127.0.0.1:<port>` (no `/v1`). */
  origin: string;
  port: number;
  answers: MockAnswer[];
  /** Text replies given so far (`Mock reply to …`). */
  replies(): string[];
  close(): Promise<void>;
}

interface Tool {
  name: string;
  props: Record<string, { type?: unknown }>;
}

type Call = { name: string; args: Json } | null;

const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map(textOf).join('\n');
  const o = obj(v);
  if (typeof o.text === 'string') return o.text;
  if ('content' in o) return textOf(o.content);
  if (typeof o.output === 'string') return o.output;
  return '';
}

function pickCall(tools: Tool[], file: string): Call {
  const read = tools.find((t) => /^(read|Read|read_file|ReadFile|view|read_text_file)$/.test(t.name));
  if (read) {
    const key = ['file_path', 'path', 'filePath', 'absolute_path', 'target_file', 'file'].find((k) => k in read.props) ?? 'path';
    return { name: read.name, args: { [key]: file } };
  }
  const shell = tools.find((t) => /^(exec_command|shell|shell_command|bash|Bash|run_terminal_cmd|run_terminal_command|run_command)$/.test(t.name));
  if (shell) {
    const key = ['cmd', 'command'].find((k) => k in shell.props) ?? 'command';
    return { name: shell.name, args: { [key]: shell.props[key]?.type === 'array' ? ['cat', file] : `cat ${file}` } };
  }
  return null;
}

const NO_HELLO = '(no hello line)';

/** The reply after a tool ran: the prompt's first word and the file's "hello…" line. */
function replyText(prompt: string, toolOutput: string): string {
  const word = prompt.trim().split(/\s+/)[0]?.replace(/[^A-Za-z0-9-]/g, '') || 'prompt';
  const line = /hello[^\n"\\]*/.exec(toolOutput)?.[0]?.trim().slice(0, 60) ?? NO_HELLO;
  return `Mock reply to ${word}: ${line}`;
}

/** The tool output kept beside a reply that found no "hello" line in it. */
function unquoted(text: string, output: string): { toolOutput?: string } {
  return text.endsWith(NO_HELLO) ? { toolOutput: output.slice(0, 600) } : {};
}

function sse(res: http.ServerResponse, events: [string | null, unknown][]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [ev, data] of events) {
    if (ev) res.write(`event: ${ev}\n`);
    res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  }
  res.end();
}

/**
 * What came in since the model last spoke. An agent may add a reminder of its own after a tool's
 * result (claude's task reminder, now and then), so the result is not always the last input.
 */
function sinceModel(items: Json[], fromModel: (item: Json) => boolean): Json[] {
  const i = items.findLastIndex(fromModel);
  return items.slice(i + 1);
}

/** The last user prompt that is real text (not a tool result, not a system reminder). */
function lastPrompt(texts: string[]): string {
  for (let i = texts.length - 1; i >= 0; i--) {
    const t = (texts[i] ?? '').replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, '').trim();
    const m = /\b([a-z]+): [^\n]*\?/.exec(t);
    if (m) return m[0];
  }
  return '';
}

export async function startMockModels(checkout: string): Promise<MockModels> {
  const file = `${checkout}/README.md`;
  const answers: MockAnswer[] = [];
  let n = 0;

  const anthropic = (body: Json, res: http.ServerResponse) => {
    const msgs = arr(body.messages).map(obj);
    const toolResult = sinceModel(msgs, (m) => m.role === 'assistant')
      .flatMap((m) => arr(m.content).map(obj))
      .findLast((c) => c.type === 'tool_result');
    const tools: Tool[] = arr(body.tools).map(obj).filter((t) => typeof t.name === 'string').map((t) => ({ name: t.name as string, props: obj(obj(t.input_schema).properties) as Tool['props'] }));
    const call = !toolResult && tools.length > 3 ? pickCall(tools, file) : null;
    const prompts = msgs.filter((m) => m.role === 'user').map((m) => textOf(arr(m.content).map(obj).filter((c) => c.type === 'text')) || (typeof m.content === 'string' ? m.content : ''));
    const output = toolResult ? textOf(toolResult.content) : '';
    const text = toolResult ? replyText(lastPrompt(prompts), output) : 'Mock title';
    const id = `msg_ahmock_${++n}`;
    answers.push({ protocol: 'anthropic', answer: call ? `tool:${call.name}` : `text:${text}`, ...unquoted(text, output) });
    const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const content = call ? [{ type: 'tool_use', id: `toolu_ahmock_${n}`, name: call.name, input: call.args }] : [{ type: 'text', text }];
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model: body.model, content, stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null, usage }));
      return;
    }
    const ev: [string, unknown][] = [['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage } }]];
    if (call) {
      ev.push(['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: `toolu_ahmock_${n}`, name: call.name, input: {} } }]);
      ev.push(['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.args) } }]);
    } else {
      ev.push(['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }]);
      ev.push(['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }]);
    }
    ev.push(['content_block_stop', { type: 'content_block_stop', index: 0 }]);
    ev.push(['message_delta', { type: 'message_delta', delta: { stop_reason: call ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }]);
    ev.push(['message_stop', { type: 'message_stop' }]);
    sse(res, ev);
  };

  const chat = (body: Json, res: http.ServerResponse) => {
    const msgs = arr(body.messages).map(obj);
    const last = sinceModel(msgs, (m) => m.role === 'assistant').findLast((m) => m.role === 'tool');
    const afterTool = last !== undefined;
    const tools: Tool[] = arr(body.tools).map((t) => obj(obj(t).function ?? t)).map((f) => ({ name: String(f.name ?? ''), props: obj(obj(f.parameters).properties) as Tool['props'] }));
    const call = !afterTool && tools.length > 2 ? pickCall(tools, file) : null;
    const output = last ? textOf(last.content) : '';
    const text = afterTool ? replyText(lastPrompt(msgs.filter((m) => m.role === 'user').map((m) => textOf(m.content))), output) : 'Mock title';
    const id = `chatcmpl-ahmock-${++n}`;
    answers.push({ protocol: 'chat', answer: call ? `tool:${call.name}` : `text:${text}`, ...unquoted(text, output) });
    const created = Math.floor(Date.now() / 1000);
    const usage = { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 };
    if (body.stream !== true) {
      const message = call ? { role: 'assistant', content: null, tool_calls: [{ id: `call_ahmock_${n}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }] } : { role: 'assistant', content: text };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }], usage }));
      return;
    }
    const base = { id, object: 'chat.completion.chunk', created, model: body.model };
    const choice = (delta: Json, finish: string | null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const ev: [null, unknown][] = [];
    if (call) {
      ev.push([null, choice({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: `call_ahmock_${n}`, type: 'function', function: { name: call.name, arguments: '' } }] }, null)]);
      ev.push([null, choice({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(call.args) } }] }, null)]);
      ev.push([null, choice({}, 'tool_calls')]);
    } else {
      ev.push([null, choice({ role: 'assistant', content: text }, null)]);
      ev.push([null, choice({}, 'stop')]);
    }
    ev.push([null, { ...base, choices: [], usage }]);
    ev.push([null, '[DONE]']);
    sse(res, ev);
  };

  const responses = (body: Json, res: http.ServerResponse) => {
    const input = arr(body.input).map(obj);
    const last = sinceModel(input, (i) => i.role === 'assistant' || /^(function_call|custom_tool_call|reasoning)$/.test(String(i.type ?? ''))).findLast((i) => /function_call_output|custom_tool_call_output/.test(String(i.type ?? '')));
    const afterTool = last !== undefined;
    const tools: Tool[] = arr(body.tools).map(obj).filter((t) => typeof t.name === 'string').map((t) => ({ name: t.name as string, props: obj(obj(t.parameters).properties) as Tool['props'] }));
    const call = !afterTool && tools.length > 2 ? pickCall(tools, file) : null;
    const prompts = input.filter((i) => i.role === 'user').map((i) => textOf(i.content));
    const output = last ? textOf(last.output ?? last) : '';
    const text = afterTool ? replyText(lastPrompt(prompts), output) : 'Mock title';
    const rid = `resp_ahmock_${++n}`;
    answers.push({ protocol: 'responses', answer: call ? `tool:${call.name}` : `text:${text}`, ...unquoted(text, output) });
    const item = call
      ? { type: 'function_call', id: `fc_ahmock_${n}`, call_id: `call_ahmock_${n}`, name: call.name, arguments: JSON.stringify(call.args), status: 'completed' }
      : { type: 'message', id: `msg_ahmock_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
    const resp = { id: rid, object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'completed', model: body.model, output: [item], usage };
    if (body.stream !== true) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(resp));
      return;
    }
    const ev: [string, unknown][] = [['response.created', { type: 'response.created', sequence_number: 0, response: { ...resp, status: 'in_progress', output: [] } }]];
    ev.push(['response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { ...item, status: 'in_progress' } }]);
    if (!call) ev.push(['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 2, item_id: item.id, output_index: 0, content_index: 0, delta: text }]);
    ev.push(['response.output_item.done', { type: 'response.output_item.done', sequence_number: 3, output_index: 0, item }]);
    ev.push(['response.completed', { type: 'response.completed', sequence_number: 4, response: resp }]);
    sse(res, ev);
  };

  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      let body: Json = {};
      try {
        body = obj(JSON.parse(Buffer.concat(parts).toString('utf8') || '{}'));
      } catch {
        // not JSON: answered by the route alone
      }
      const route = (req.url ?? '').split('?')[0] ?? '';
      try {
        if (req.method === 'GET' && /models/.test(route)) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ object: 'list', data: [{ id: 'mock-model', object: 'model', created: 0, owned_by: 'mock' }], models: [] }));
        } else if (route.endsWith('/messages/count_tokens')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"input_tokens":10}');
        } else if (route.endsWith('/messages')) anthropic(body, res);
        else if (route.endsWith('/chat/completions')) chat(body, res);
        else if (route.endsWith('/responses')) responses(body, res);
        else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
        }
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: (err as Error).message } }));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    answers,
    replies: () => answers.map((a) => a.answer).filter((a) => a.startsWith('text:Mock reply')).map((a) => a.slice('text:'.length)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
