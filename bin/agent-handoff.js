#!/usr/bin/env node
// Thin launcher. `npm install` (prepare) or `npm run build` compiles the CLI to dist/src/ and
// bundles it into dist/cli.mjs, which loads faster; a tsc-only build runs from dist/src/.
import { existsSync } from 'node:fs';

const bundle = new URL('../dist/cli.mjs', import.meta.url);
import(existsSync(bundle) ? bundle.href : '../dist/src/cli.js').then((cli) => cli.main(process.argv.slice(2)));
