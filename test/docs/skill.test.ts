// SKILL.md tells an agent how to run agent-handoff: its frontmatter must parse, every flag it
// mentions must exist, every command it shows must pass the CLI's own argument rules, and every
// code, screen and result field it names must be one the product (or herdr) really uses.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parserFor } from '../../src/cli.js';
import { parseSendOptions } from '../../src/handoff/options.js';
import { allUsage, APP, bashBlocks, flagsIn, HERDR_CODES, productCodes, ROOT, shellWords, waitingScreens } from './facts.js';

/** Files the rules forbid touching; named in backticks like codes. */
const SSH_FILES = ['known_hosts', 'authorized_keys'];

const SKILL = fs.readFileSync(path.join(ROOT, 'SKILL.md'), 'utf8');

function frontmatter(text: string): { fields: Record<string, string>; body: string } {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (!m) throw new Error('SKILL.md has no frontmatter');
  const fields: Record<string, string> = {};
  for (const line of m[1]!.split('\n')) {
    const kv = /^([a-z_-]+):\s*(.*)$/.exec(line);
    if (!kv) throw new Error(`frontmatter line is not "key: value": ${line}`);
    fields[kv[1]!] = kv[2]!.trim();
  }
  return { fields, body: text.slice(m[0].length) };
}

/** snake_case keys the product writes into `details` of its errors (e.g. failed_step). */
function detailKeys(): Set<string> {
  // HandoffFailed (rollback.ts) writes them, as execute's steps fail.
  const text = ['execute.ts', 'rollback.ts'].map((f) => fs.readFileSync(path.join(ROOT, 'src', 'handoff', f), 'utf8')).join('\n');
  return new Set([...text.matchAll(/\b([a-z]+(?:_[a-z]+)+):/g)].map((m) => m[1]!));
}

/** Property names anywhere in the JSON Schemas the CLI prints. */
function resultFields(): Set<string> {
  const r = spawnSync(process.execPath, [APP, 'schema'], { encoding: 'utf8' });
  const names = new Set<string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (k === 'properties' && child && typeof child === 'object') for (const p of Object.keys(child)) names.add(p);
        walk(child);
      }
    }
  };
  walk((JSON.parse(r.stdout) as { schemas: unknown }).schemas);
  return names;
}

describe('SKILL.md', () => {
  const { fields, body } = frontmatter(SKILL);

  it('has frontmatter with its name and when to use it', () => {
    expect(fields.name).toBe('agent-handoff');
    expect(fields.description!.length).toBeGreaterThan(80);
    expect(fields.description!.length).toBeLessThan(1024);
    expect(fields.description).toMatch(/Use when/);
    expect(Object.keys(fields).sort()).toEqual(['description', 'name']);
  });

  it('mentions only flags that `agent-handoff … --help` lists', async () => {
    const known = new Set(Object.values(await allUsage()).flatMap((u) => [...flagsIn(u)]));
    const mentioned = new Set([...body.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!));
    mentioned.delete('remote'); // herdr's own flag (herdr --remote HOST), quoted from `attach`
    mentioned.delete('hard'); // git's (`git reset --hard`, in the rules: never run it)
    expect(mentioned.size).toBeGreaterThan(8);
    for (const f of mentioned) expect(known.has(f), `--${f}`).toBe(true);
  });

  it('shows commands that pass the CLI argument rules', async () => {
    const lines = [
      ...bashBlocks(body).flatMap((b) => b.split('\n')),
      // Commands quoted inline, e.g. `agent-handoff send api-claude --here --new-worktree`.
      ...[...body.matchAll(/`(agent-handoff [^`]+)`/g)].map((m) => m[1]!),
    ]
      .map((l) => l.trim())
      .filter((l) => l.startsWith('agent-handoff ') && !l.includes(' ID'));
    expect(lines.length).toBeGreaterThan(8);
    for (const line of lines) {
      const args = shellWords(line, '/home/someone').slice(1);
      const parsed = (await parserFor(args).parse()) as Record<string, unknown>;
      if (args[0] === 'send') expect(() => parseSendOptions(parsed), line).not.toThrow();
      expect(parsed._, line).toEqual([args[0]]);
    }
  });

  it('names only error codes the product or herdr returns, and every waiting screen', () => {
    const codes = productCodes();
    const screens = waitingScreens();
    const fieldsOfResults = resultFields();
    const details = detailKeys();
    const ticked = [...body.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map((m) => m[1]!);
    const tableCodes = [...body.matchAll(/^\| `([a-z_]+)`(?: \/ `([a-z_]+)`)? \|/gm)].flatMap((m) => [m[1]!, m[2]].filter((x): x is string => !!x));
    expect(tableCodes.length).toBeGreaterThan(25);
    for (const t of [...ticked, ...tableCodes]) {
      const known = codes.has(t) || HERDR_CODES.includes(t) || screens.includes(t) || fieldsOfResults.has(t) || details.has(t) || SSH_FILES.includes(t);
      expect(known, `\`${t}\` is neither an error code, a waiting screen nor a result field`).toBe(true);
    }
    for (const s of screens) expect(tableCodes, s).toContain(s);
    // The codes an agent meets most must each have advice.
    for (const c of ['host_key_unknown', 'auth_failed', 'connect_timeout', 'herdr_not_installed', 'server_not_running', 'session_not_found', 'agent_busy', 'own_pane', 'target_dirty', 'start_failed']) {
      expect(tableCodes, c).toContain(c);
    }
  });

  it('names the result fields an agent must read, as the schemas spell them', () => {
    const fieldsOfResults = resultFields();
    for (const f of ['ok', 'code', 'error', 'fix', 'this_pane', 'target', 'deferred', 'waiting_for_user', 'attach', 'problems', 'ready']) {
      expect(fieldsOfResults.has(f), f).toBe(true);
      expect(body, f).toContain(`\`${f}`);
    }
  });

  it('keeps its rules', () => {
    for (const rule of [/Never touch ssh keys/, /Never install software/, /Never discard work/, /agent-handoff recover/, /Ask when the target machine or the agent/, /--dry-run/, /stop working/i]) {
      expect(body).toMatch(rule);
    }
  });
});
