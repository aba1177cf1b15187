#!/usr/bin/env node
// Thin launcher. `npm install` (prepare) or `npm run build` compiles the CLI to dist/src/ and
// bundles it into dist/cli.cjs, which loads faster; a tsc-only build runs from dist/src/.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const bundle = new URL('../dist/cli.cjs', import.meta.url);
const cli = existsSync(bundle) ? Promise.resolve(createRequire(import.meta.url)(fileURLToPath(bundle))) : import('../dist/src/cli.js');
cli.then((m) => m.main(process.argv.slice(2)));
