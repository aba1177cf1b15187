// The mock model answers each turn from what came in since it last spoke: a tool's result is
// quoted even when the agent put a reminder of its own after it (claude's task reminder does, now
// and then; the mock once asked for the file a second time there and claude answered that call
// with its "unchanged since your last Read" stub).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockModels, type MockModels } from './mock-models.js';

let mock: MockModels;
beforeAll(async () => {
  mock = await startMockModels('/home/laptop/src/p');
});
afterAll(() => mock.close());

async function ask(route: string, body: unknown): Promise<string> {
  const r = await fetch(`${mock.origin}${route}`, { method: 'POST', body: JSON.stringify(body) });
  expect(r.status).toBe(200);
  return JSON.stringify(await r.json());
}

const readTool = { name: 'Read', input_schema: { properties: { file_path: { type: 'string' } } } };
const anthropicTools = [readTool, ...['Bash', 'Edit', 'Write'].map((name) => ({ name, input_schema: { properties: {} } }))];
const chatTools = ['read', 'bash', 'edit'].map((name) => ({ type: 'function', function: { name, parameters: { properties: name === 'read' ? { path: { type: 'string' } } : {} } } }));
const responsesTools = ['read_file', 'shell', 'apply_patch'].map((name) => ({ type: 'function', name, parameters: { properties: name === 'read_file' ? { path: { type: 'string' } } : {} } }));

describe('mock model turns', () => {
  const anthropicTurn = [
    { role: 'user', content: [{ type: 'text', text: 'echo: what does README.md say?' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
  ];
  const anthropicCases: [string, unknown[], string][] = [
    ['a new prompt: the read tool is called', [{ role: 'user', content: 'echo: what does README.md say?' }], '"tool_use"'],
    ['the result last', [...anthropicTurn, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '1\thello there' }] }], 'Mock reply to echo: hello there'],
    [
      'a reminder after the result, in its own message',
      [...anthropicTurn, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '1\thello there' }] }, { role: 'user', content: [{ type: 'text', text: '<system-reminder>tasks</system-reminder>' }] }],
      'Mock reply to echo: hello there',
    ],
    [
      'a reminder after the result, in the same message',
      [...anthropicTurn, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '1\thello there' }, { type: 'text', text: '<system-reminder>tasks</system-reminder>' }] }],
      'Mock reply to echo: hello there',
    ],
    ['the next prompt after an answered turn: a new call', [...anthropicTurn, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'hello' }] }, { role: 'assistant', content: [{ type: 'text', text: 'Mock reply' }] }, { role: 'user', content: 'foxtrot: and now?' }], '"tool_use"'],
  ];
  it.each(anthropicCases)('anthropic: %s', async (_name, messages, expected) => {
    expect(await ask('/v1/messages', { model: 'm', messages, tools: anthropicTools })).toContain(expected);
  });

  const chatTurn = [
    { role: 'user', content: 'echo: what does README.md say?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'hello there' },
  ];
  it.each([
    ['the result last', chatTurn],
    ['a reminder after the result', [...chatTurn, { role: 'user', content: '<system-reminder>tasks</system-reminder>' }]],
  ])('chat: %s', async (_name, messages) => {
    expect(await ask('/v1/chat/completions', { model: 'm', messages, tools: chatTools })).toContain('Mock reply to echo: hello there');
  });

  const responsesTurn = [
    { role: 'user', content: [{ type: 'input_text', text: 'echo: what does README.md say?' }] },
    { type: 'function_call', call_id: 'c1', name: 'read_file', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: 'hello there' },
  ];
  it.each([
    ['the result last', responsesTurn],
    ['a reminder after the result', [...responsesTurn, { role: 'user', content: [{ type: 'input_text', text: '<system-reminder>tasks</system-reminder>' }] }]],
  ])('responses: %s', async (_name, input) => {
    expect(await ask('/v1/responses', { model: 'm', input, tools: responsesTools })).toContain('Mock reply to echo: hello there');
  });
});
