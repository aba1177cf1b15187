// Bundles the compiled CLI (dist/src, from tsc) into one file, dist/cli.mjs, which the launcher
// loads: one file parses and links in about two thirds of the time of the ~100 modules and their
// dependencies, and every handoff starts with that wait. ssh2 stays a package of its own: its
// optional native crypto is found relative to its own folder.
import { build } from 'esbuild';

await build({
  entryPoints: ['dist/src/cli.js'],
  outfile: 'dist/cli.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['ssh2'],
  // Bundled CommonJS dependencies call require(): give the ES module one.
  banner: { js: "import { createRequire as __ahCreateRequire } from 'node:module'; const require = __ahCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
