// Arguments that a careless encoding would let a shell interpret (hostileArgs), and the folder
// their touches land in.
import fs from 'node:fs';
import path from 'node:path';

/** An empty `canaries` folder made in `root`, for hostileArgs' touches to land in. */
export function canaryFolder(root: string): string {
  const canaries = path.join(root, 'canaries');
  fs.mkdirSync(canaries);
  return canaries;
}

/** hostileArgs usable as file names: a slash made `_`, at most 200 characters, each once, none empty, `.` or `..`. */
export function hostileFileNames(canaryDir: string): string[] {
  return [...new Set(hostileArgs(canaryDir).map((n) => n.replace(/\//g, '_').slice(0, 200)))].filter((n) => n !== '' && n !== '.' && n !== '..');
}

/**
 * Every `touch` here targets `canaryDir`, so a test can prove none of them ran by finding that
 * folder empty.
 */
export function hostileArgs(canaryDir: string): string[] {
  const c = `${canaryDir}/canary`;
  return [
    'plain',
    'with space',
    '  leading and trailing  ',
    "it's",
    '"double"',
    'back\\slash\\',
    '\\n literal',
    `$(touch ${c}1)`,
    `\`touch ${c}2\``,
    `; touch ${c}3`,
    `| touch ${c}4`,
    `& touch ${c}5 &`,
    `'; touch ${c}6; '`,
    `"; touch ${c}7; "`,
    `\n touch ${c}8\n`,
    '*',
    '~',
    '~root',
    '$HOME',
    '${PATH}',
    '%s %d %%',
    'new\nline',
    'trailing newlines\n\n',
    'carriage\rreturn',
    'tab\there',
    '-n',
    '-e',
    '--',
    '-',
    '',
    'ünïcödé',
    '日本語',
    '🚀 emoji 👩‍💻',
    '!bang !! history',
    '#comment',
    '{a,b}',
    '[abc]?',
    '\x01\x1b[31mcontrol',
    'x'.repeat(100_000),
  ];
}
