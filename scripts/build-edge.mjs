#!/usr/bin/env node
// Builds the edge entry (`dsh-session-reference/edge`, SPEC §17.2) into dist/edge/:
//   index.js      src/edge/index.ts and the core it uses, bundled by esbuild as one ES module for
//                 workerd (not minified: wrangler minifies if the app asks). hono, jose and
//                 `cloudflare:*` stay imports (the app's wrangler resolves them).
//   libzstd.wasm  libzstd's decoder, which index.js imports (`./libzstd.wasm`): wrangler's default
//                 rules upload a `.wasm` import as a compiled module, and the entry provides it.
//   *.d.ts        declarations (tsc -p tsconfig.build.edge.json).
// What a Worker never runs stays out, so a plain `wrangler deploy` uploads none of it: libzstd's
// JavaScript form (wasm2js) and base64 copy, and SQLite's WebAssembly build and its JavaScript
// (the catalog runs the search engine on the Durable Object's own SQLite). Those modules are
// replaced by stubs that fail if ever called; the build fails if any Node built-in is imported.
//
// Usage: node scripts/build-edge.mjs                 (part of npm run build)
//        node scripts/build-edge.mjs --bundle-only   (index.js and libzstd.wasm alone: the tests)
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = join(ROOT, 'dist', 'edge');

/** Modules the edge never runs, by path under src/, and the stub that replaces each. */
const UNUSED = {
  'store/libzstd-js.ts': `export function instantiate() { throw new Error(${JSON.stringify("libzstd's JavaScript form is not part of dsh-session-reference/edge: the entry provides libzstd.wasm")}); }`,
  'store/libzstd-wasm.ts': `export const LIBZSTD_WASM_BASE64URL = '';`,
  'search/sqlite-wasm.ts': `export const SQLITE_WASM_BASE64URL = '';`,
};
const SQLITE_STUB = `export default function sqlite3InitModule() { return Promise.reject(new Error(${JSON.stringify("SQLite's WebAssembly build is not part of dsh-session-reference/edge: the catalog runs on the Durable Object's SQLite")})); }`;

/** @type {import('esbuild').Plugin} */
const edgeOnly = {
  name: 'edge-only',
  setup(b) {
    b.onResolve({ filter: /\.wasm$/ }, (args) => {
      if (args.path.endsWith('/libzstd.wasm')) return { path: './libzstd.wasm', external: true };
      return { errors: [{ text: `${args.path}: the edge entry imports no WebAssembly but libzstd.wasm` }] };
    });
    b.onResolve({ filter: /^@sqlite\.org\/sqlite-wasm$/ }, () => ({ path: 'sqlite-wasm', namespace: 'edge-stub' }));
    b.onLoad({ filter: /.*/, namespace: 'edge-stub' }, () => ({ contents: SQLITE_STUB, loader: 'js' }));
    b.onLoad({ filter: /[\\/]src[\\/](store|search)[\\/][^\\/]+\.ts$/ }, (args) => {
      const stub = UNUSED[relative(join(ROOT, 'src'), args.path).split('\\').join('/')];
      return stub === undefined ? undefined : { contents: stub, loader: 'js' };
    });
    b.onResolve({ filter: /^node:/ }, (args) => ({
      errors: [{ text: `${args.path} imported by ${relative(ROOT, args.importer)}: the edge entry must use Web APIs only` }],
    }));
  },
};

const bundleOnly = process.argv.includes('--bundle-only');
mkdirSync(OUT_DIR, { recursive: true });
if (!bundleOnly) {
  rmSync(OUT_DIR, { recursive: true, force: true });
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'workers-types.mjs')], { stdio: 'inherit' });
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.edge.json')], { stdio: 'inherit', cwd: ROOT });
}
await build({
  entryPoints: [join(ROOT, 'src', 'edge', 'index.ts')],
  outfile: join(OUT_DIR, 'index.js'),
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  mainFields: ['module', 'main'],
  conditions: ['workerd', 'worker', 'browser', 'import'],
  external: ['cloudflare:*', 'hono', 'hono/*', 'jose'],
  legalComments: 'none',
  plugins: [edgeOnly],
  logLevel: 'warning',
});
copyFileSync(join(ROOT, 'src', 'store', 'libzstd.wasm'), join(OUT_DIR, 'libzstd.wasm'));

const code = readFileSync(join(OUT_DIR, 'index.js'), 'utf8');
for (const forbidden of [/\brequire\(/, /from\s*["']node:/, /\bimport\(\s*["']node:/]) {
  if (forbidden.test(code)) {
    console.error(`dist/edge/index.js contains ${forbidden}: the edge entry must not depend on Node`);
    process.exit(1);
  }
}
console.log(`wrote dist/edge/: index.js ${statSync(join(OUT_DIR, 'index.js')).size} B, libzstd.wasm ${statSync(join(OUT_DIR, 'libzstd.wasm')).size} B`);
