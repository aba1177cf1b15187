// Bundles the compiled CLI (dist/src, from tsc) into one file, dist/cli.cjs, which the launcher
// loads: one file parses and links in about two thirds of the time of the ~100 modules and their
// dependencies, and every handoff starts with that wait. CommonJS rather than an ES module: node
// compiles and evaluates the same code in about 85 ms instead of 145 ms here (no module linking).
// ssh2 is bundled too (so the code cache covers it); its native parts are loaded from its package.
import { isAscii } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

/**
 * zod's `z` namespace carries every message locale (about a third of the bundle), which a
 * bundler cannot leave out of a namespace object. Only English is used (zod registers it itself),
 * so the locale index is replaced by English alone.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: args.resolveDir.replace(/[\\/](classic|core|mini)$/, '/locales/en.js'), namespace: 'zod-english' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-english' }, (args) => ({ contents: `export { default as en } from ${JSON.stringify(args.path)};`, resolveDir: '/' }));
  },
};

/**
 * string-width (yargs' help layout: cliui, wrap-ansi) builds Unicode-property regular expressions
 * and an Intl.Segmenter when it is loaded: about a third of the bundle's start-up, for a help text
 * that a command run never renders. Its importers get a stand-in that loads it on first call.
 */
const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.pluginData === 'real') return undefined;
      const real = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: 'real' });
      if (real.errors.length > 0) return { errors: real.errors };
      return { path: real.path, namespace: 'lazy-string-width' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-string-width' }, (args) => ({
      contents: `let real;\nexport default function stringWidth(text, options) {\n  real ??= require(${JSON.stringify(args.path)}).default;\n  return real(text, options);\n}\n`,
      resolveDir: '/',
    }));
  },
};

/**
 * ssh2 inside the bundle: loading it from its package took ~45 ms at every connection (about 30
 * files found, read and compiled, with no code cache). Its optional native parts (the crypto
 * binding, cpu-features) stay in the installed package and are required from there, exactly as
 * ssh2 itself would find them. src/host/ssh2-lib.js loads it with a require esbuild can follow.
 */
const ssh2Inside = {
  name: 'ssh2-inside',
  setup(b) {
    const fromSsh2 = (request) => ({
      contents: `const { createRequire } = require('node:module');\nmodule.exports = createRequire(createRequire(__filename).resolve('ssh2'))(${JSON.stringify(request)});`,
      resolveDir: '/',
    });
    b.onResolve({ filter: /^cpu-features$|[\\/]sshcrypto\.node$/ }, (args) =>
      /[\\/]node_modules[\\/]ssh2[\\/]/.test(args.importer) ? { path: args.path, namespace: 'from-ssh2' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'from-ssh2' }, (args) =>
      // Relative to ssh2's main module (lib/index.js), as ssh2's own require would resolve it.
      fromSsh2(args.path === 'cpu-features' ? 'cpu-features' : './protocol/crypto/build/Release/sshcrypto.node'),
    );
    b.onLoad({ filter: /[\\/]dist[\\/]src[\\/]host[\\/]ssh2-lib\.js$/ }, () => ({
      contents: "let lib;\nexport function ssh2() {\n  return (lib ??= require('ssh2'));\n}\n",
      loader: 'js',
    }));
  },
};

await build({
  entryPoints: ['dist/src/cli.js'],
  outfile: 'dist/cli.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  plugins: [zodEnglishOnly, lazyStringWidth, ssh2Inside],
  // Less to read and parse at every start; names are kept (error names and stack traces stay readable).
  minifyWhitespace: true,
  minifySyntax: true,
  // The modules find package.json and their dependencies from their own URL: the bundle's.
  define: { 'import.meta.url': '__ahImportMetaUrl' },
  banner: { js: "const __ahImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
});

// The launcher reads an all-ASCII bundle straight into a one-byte string (no UTF-8 decode, half
// the memory). esbuild escapes non-ASCII in strings but not in regular expression literals: write
// those characters as \u escapes.
const out = readFileSync('dist/cli.cjs');
if (!isAscii(out)) {
  const at = out.findIndex((b) => b > 0x7f);
  console.warn(`dist/cli.cjs is not all ASCII (a regular expression with a non-ASCII character?): …${out.subarray(Math.max(0, at - 60), at + 20).toString()}…`);
}
