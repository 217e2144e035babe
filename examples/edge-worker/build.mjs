#!/usr/bin/env node
// Builds examples/edge-worker/dist/: worker.js, the Worker and the library it imports
// (`dsh-session-reference`, `dsh-session-reference/store`, taken from this repository's src/),
// bundled by esbuild as ESM for workerd without nodejs_compat, and libzstd.wasm, libzstd's decoder
// module, which worker.js imports (`dsh-session-reference/libzstd.wasm`) and workerd compiles at
// deploy time (wrangler.toml's CompiledWasm rule). Code splitting keeps the library's other forms
// of libzstd (compiled from bytes, or in JavaScript: lazy chunks, never loaded in workerd once
// the module is provided) out of worker.js, in chunk files beside it.
//
// Usage: npm run build:edge   (or: node examples/edge-worker/build.mjs [--no-minify])
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const OUT_DIR = join(HERE, 'dist');
const OUT = join(OUT_DIR, 'worker.js');
const LIBZSTD = join(ROOT, 'src', 'store', 'libzstd.wasm');
/** SQLite's module, as the package's `./sqlite3.wasm` ships it (copied from its dependency). */
const SQLITE = join(ROOT, 'node_modules', '@sqlite.org', 'sqlite-wasm', 'dist', 'sqlite3.wasm');

/** The package's entries, resolved to their sources. */
const ENTRIES = {
  'dsh-session-reference': join(ROOT, 'src', 'index.ts'),
  'dsh-session-reference/store': join(ROOT, 'src', 'store', 'index.ts'),
};

/** @type {import('esbuild').Plugin} */
const packageFromSource = {
  name: 'dsh-session-reference-from-source',
  setup(b) {
    // The compiled modules stay modules of their own, beside worker.js.
    b.onResolve({ filter: /^dsh-session-reference\/libzstd\.wasm$/ }, () => ({ path: './libzstd.wasm', external: true }));
    b.onResolve({ filter: /^dsh-session-reference\/sqlite3\.wasm$/ }, () => ({ path: './sqlite3.wasm', external: true }));
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
rmSync(OUT_DIR, { recursive: true, force: true });
mkdirSync(OUT_DIR, { recursive: true });
await build({
  entryPoints: { worker: join(HERE, 'src', 'worker.ts') },
  outdir: OUT_DIR,
  splitting: true,
  chunkNames: 'chunk-[hash]',
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

copyFileSync(LIBZSTD, join(OUT_DIR, 'libzstd.wasm'));
copyFileSync(SQLITE, join(OUT_DIR, 'sqlite3.wasm'));

for (const file of readdirSync(OUT_DIR).filter((name) => name.endsWith('.js'))) {
  const code = readFileSync(join(OUT_DIR, file), 'utf8');
  for (const forbidden of [/\brequire\(/, /from\s*["']node:/, /\bimport\(\s*["']node:/]) {
    if (forbidden.test(code)) {
      console.error(`${relative(ROOT, join(OUT_DIR, file))} contains ${forbidden}: the Worker must not depend on Node`);
      process.exit(1);
    }
  }
}
const sizes = readdirSync(OUT_DIR).map((name) => `${name} ${statSync(join(OUT_DIR, name)).size} B`);
console.log(`wrote ${relative(ROOT, OUT_DIR)}/: ${sizes.join(', ')}${minify ? ' (minified)' : ''}`);
