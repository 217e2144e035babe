#!/usr/bin/env node
// Builds examples/edge-worker/dist/worker.js: the Worker and the library it imports
// (`dsh-session-reference`, `dsh-session-reference/store`, taken from this repository's src/),
// bundled by esbuild into one ESM file for workerd without nodejs_compat.
//
// Usage: npm run build:edge   (or: node examples/edge-worker/build.mjs [--no-minify])
import { build } from 'esbuild';
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const OUT = join(HERE, 'dist', 'worker.js');

/** The package's entries, resolved to their sources. */
const ENTRIES = {
  'dsh-session-reference': join(ROOT, 'src', 'index.ts'),
  'dsh-session-reference/store': join(ROOT, 'src', 'store', 'index.ts'),
};

/** @type {import('esbuild').Plugin} */
const packageFromSource = {
  name: 'dsh-session-reference-from-source',
  setup(b) {
    b.onResolve({ filter: /^dsh-session-reference(\/.*)?$/ }, (args) => {
      const path = ENTRIES[args.path];
      if (!path) return { errors: [{ text: `${args.path} is not an entry of dsh-session-reference (use ${Object.keys(ENTRIES).join(' or ')})` }] };
      return { path };
    });
    // No Node built-ins may reach the bundle: workerd runs it without nodejs_compat.
    b.onResolve({ filter: /^node:/ }, (args) => ({
      errors: [{ text: `${args.path} imported by ${relative(ROOT, args.importer)}: the Worker must use Web APIs only` }],
    }));
  },
};

const minify = !process.argv.includes('--no-minify');
mkdirSync(dirname(OUT), { recursive: true });
await build({
  entryPoints: [join(HERE, 'src', 'worker.ts')],
  outfile: OUT,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  conditions: ['workerd', 'worker', 'browser', 'import'],
  target: 'es2022',
  minify,
  legalComments: 'none',
  plugins: [packageFromSource],
  logLevel: 'warning',
});

const code = readFileSync(OUT, 'utf8');
for (const forbidden of [/\brequire\(/, /from\s*["']node:/, /\bimport\(\s*["']node:/]) {
  if (forbidden.test(code)) {
    console.error(`${relative(ROOT, OUT)} contains ${forbidden}: the Worker must not depend on Node`);
    process.exit(1);
  }
}
console.log(`wrote ${relative(ROOT, OUT)} (${statSync(OUT).size} bytes${minify ? ', minified' : ''})`);
