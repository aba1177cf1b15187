#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm install` (prepare) or `npm run build`.
import('../dist/src/cli.js').then((cli) => cli.main(process.argv.slice(2)));
