// What the docs may name, learned from the product itself: its flags (from each command's usage),
// the error codes it can return, the waiting screens, and herdr 0.8's documented error codes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { usageText } from '../../src/cli.js';
import { commandsFromUsage } from '../../src/completion.js';
import { ERROR_CODES } from '../../src/result.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const APP = path.join(ROOT, 'bin', 'agent-handoff.js');

/** Error codes herdr 0.8 documents for its CLI; they pass through agent-handoff unchanged. */
export const HERDR_CODES = [
  'server_not_running',
  'protocol_mismatch',
  'timeout',
  'agent_kind_mismatch',
  'agent_name_not_found',
  'agent_start_failed',
  'agent_pane_busy',
  'agent_prompt_stalled',
  'empty_agent_prompt',
  'agent_not_ready',
  'agent_not_idle',
  'pane_not_found',
  'invalid_key',
  'pane_send_failed',
];

/** Screens an agent may wait on after it started (src/handoff/screens.ts). */
export function waitingScreens(): string[] {
  const text = fs.readFileSync(path.join(ROOT, 'src', 'handoff', 'screens.ts'), 'utf8');
  const m = /export type WaitingScreen = ([^;]+);/.exec(text);
  return [...(m?.[1] ?? '').matchAll(/'([a-z_]+)'/g)].map((x) => x[1]!);
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Codes the product can put in `code`: ERROR_CODES and every code its errors are raised with. */
export function productCodes(): Set<string> {
  const codes = new Set<string>(Object.keys(ERROR_CODES));
  for (const file of [...sourceFiles(path.join(ROOT, 'src')), ...sourceFiles(path.join(ROOT, 'adapters'))]) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:HandoffError|HostError|HerdrError)\(\s*'([a-z_]+)'/g)) codes.add(m[1]!);
    for (const m of text.matchAll(/\bcode: '([a-z_]+)'/g)) codes.add(m[1]!);
  }
  return codes;
}

/** A command's usage text as `agent-handoff … --help` prints it (in-process, unwrapped: fast). */
async function usageOf(args: string[]): Promise<string> {
  return usageText([...args, '--help'], { wrap: null });
}

/** Every command's usage text, from the CLI (`agent-handoff <command> --help`). */
export async function allUsage(): Promise<Record<string, string>> {
  const top = await usageOf([]);
  const out: Record<string, string> = { '': top };
  for (const c of commandsFromUsage(top)) out[c.name] = await usageOf([c.name]);
  return out;
}

/** `--flag` names in a usage text (with `--no-flag` for booleans that default to true). */
export function flagsIn(usage: string): Set<string> {
  const flags = new Set<string>();
  for (const m of usage.matchAll(/(?:^|\s)--([a-z][a-z0-9-]*)/g)) flags.add(m[1]!);
  for (const m of usage.matchAll(/--([a-z][a-z0-9-]*)\s[^\n]*\[boolean\] \[default: true\]/g)) flags.add(`no-${m[1]!}`);
  for (const m of usage.matchAll(/\(--no-([a-z-]+)\)/g)) flags.add(`no-${m[1]!}`);
  return flags;
}

/** Fenced ```bash blocks of a markdown text. */
export function bashBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** Split a command line like a shell would for our simple docs: quotes, `~/`, trailing comment. */
export function shellWords(line: string, home: string): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else cur += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
      continue;
    }
    if (c === '#' && !inWord) break;
    if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
      continue;
    }
    if (!inWord && c === '~' && (line[i + 1] === '/' || line[i + 1] === undefined || /\s/.test(line[i + 1]!))) {
      cur += home;
      inWord = true;
      continue;
    }
    if (/[|;&<>$`()]/.test(c)) throw new Error(`documented command uses shell syntax (${c}); keep agent-handoff lines plain: ${line}`);
    cur += c;
    inWord = true;
  }
  if (quote) throw new Error(`unbalanced quote: ${line}`);
  if (inWord) words.push(cur);
  return words;
}
