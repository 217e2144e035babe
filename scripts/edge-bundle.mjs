// How the edge entry (`dsh-session-reference/edge`, SPEC §17.2) is bundled for workerd: shared by
// scripts/build-edge.mjs (dist/edge/index.js) and scripts/size.mjs (its budget row).
// What a Worker never runs stays out: libzstd's JavaScript form (wasm2js) and its base64 copy
// (the entry imports libzstd.wasm as a module and provides it), the row scan's module (compiled
// from bytes, which workerd refuses: the JavaScript scan runs), and SQLite's WebAssembly build and
// its JavaScript (the catalog runs the search engine on the Durable Object's own SQLite). Those
// modules are replaced by stubs that fail if ever called; any Node built-in fails the build.
import { join, relative } from 'node:path';

/** Modules the edge never runs, by path under src/, and the stub that replaces each. */
const UNUSED = {
  'store/libzstd-js.ts': `export function instantiate() { throw new Error(${JSON.stringify("libzstd's JavaScript form is not part of dsh-session-reference/edge: the entry provides libzstd.wasm")}); }`,
  'store/libzstd-wasm.ts': `export const LIBZSTD_WASM_BASE64URL = '';`,
  // workerd compiles no WebAssembly from bytes: the row scan runs in JavaScript there (chunk-scanner.ts).
  'store/json-scan-wasm.ts': `export const JSON_SCAN_WASM_BASE64URL = '';`,
  'search/sqlite-wasm.ts': `export const SQLITE_WASM_BASE64URL = '';`,
};
const SQLITE_STUB = `export default function sqlite3InitModule() { return Promise.reject(new Error(${JSON.stringify("SQLite's WebAssembly build is not part of dsh-session-reference/edge: the catalog runs on the Durable Object's SQLite")})); }`;

/**
 * esbuild options of the edge entry, for a repository at `root`: ES module for workerd, libzstd.wasm
 * left as an import of `./libzstd.wasm` (beside the bundle), `cloudflare:*` external.
 * @param {string} root
 * @returns {import('esbuild').BuildOptions}
 */
export function edgeBuildOptions(root) {
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
        const stub = UNUSED[relative(join(root, 'src'), args.path).split('\\').join('/')];
        return stub === undefined ? undefined : { contents: stub, loader: 'js' };
      });
      b.onResolve({ filter: /^node:/ }, (args) => ({
        errors: [{ text: `${args.path} imported by ${relative(root, args.importer)}: the edge entry must use Web APIs only` }],
      }));
    },
  };
  return {
    entryPoints: [join(root, 'src', 'edge', 'index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    // wrangler's own conditions (workerd, worker, browser).
    conditions: ['workerd', 'worker', 'browser', 'import'],
    external: ['cloudflare:*'],
    legalComments: 'none',
    plugins: [edgeOnly],
  };
}
