// Every flag that an error's `fix` tells the user to pass must exist: each `--flag` in a fix text
// anywhere in the product (a `fix:` property, or a UsageError's second argument) is accepted by the
// command line parser. Read from the source with TypeScript's own parser, so no fix is missed.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fg from 'fast-glob';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { parserFor } from '../src/cli.js';
import { commandSpecs } from '../src/completion.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The literal text of a string or template expression (substitutions as `…`). */
function textOf(node: ts.Node): string | null {
  if (ts.isStringLiteralLike(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((s) => `…${s.literal.text}`).join('');
  if (ts.isConditionalExpression(node)) return [textOf(node.whenTrue), textOf(node.whenFalse)].filter((t) => t !== null).join(' ');
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) return [textOf(node.left), textOf(node.right)].filter((t) => t !== null).join('');
  if (ts.isParenthesizedExpression(node)) return textOf(node.expression);
  return null;
}

function fixTexts(): { where: string; text: string }[] {
  const out: { where: string; text: string }[] = [];
  for (const file of fg.sync(['src/**/*.ts', 'adapters/**/*.ts'], { cwd: REPO, absolute: true })) {
    const sf = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node) => {
      let text: string | null = null;
      if (ts.isPropertyAssignment(node) && node.name.getText(sf) === 'fix') text = textOf(node.initializer);
      if (ts.isNewExpression(node) && node.expression.getText(sf) === 'UsageError' && node.arguments?.[1]) text = textOf(node.arguments[1]);
      if (text) out.push({ where: `${path.relative(REPO, file)}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}`, text });
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

/** Every long flag some command accepts (`--no-x` for a boolean `x`), from the parser's own usage. */
async function knownFlags(): Promise<Set<string>> {
  const { commands, globalFlags } = await commandSpecs(parserFor);
  const flags = new Set<string>();
  for (const f of [...globalFlags, ...commands.flatMap((c) => c.flags)]) {
    flags.add(f.name);
    if (!f.takesValue) flags.add(`no-${f.name}`);
  }
  return flags;
}

describe('fix texts name only flags that exist', () => {
  it('finds the fix texts', () => {
    // A sanity floor: the product has many fixes; a parser change that finds none would pass vacuously.
    expect(fixTexts().length).toBeGreaterThan(50);
  });

  it('every --flag in a fix is accepted by agent-handoff', async () => {
    const known = await knownFlags();
    expect(known.has('overwrite')).toBe(true);
    const unknown: string[] = [];
    for (const { where, text } of fixTexts()) {
      // Flags of other programs are named after their program (`git stash --…`, `herdr --…`).
      for (const m of text.matchAll(/(?:^|[\s`(])(\S*?\s?)--([a-z][a-z0-9-]*)/g)) {
        const flag = m[2]!;
        if (/\b(git|herdr|ssh|apt-get|npm|claude|codex|pi|omp|grok)\s$/.test(m[1] ?? '')) continue;
        if (!known.has(flag)) unknown.push(`${where}: --${flag} in ${JSON.stringify(text)}`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
