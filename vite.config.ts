import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { playwright } from '@vitest/browser-playwright';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';
import { configDefaults, defineConfig, type Plugin } from 'vitest/config';
import { CHROMIUM_ARGS, chromiumExecutable } from './scripts/chromium.mjs';
import { HOOK_HANG_GUARD_MS, TEST_HANG_GUARD_MS } from './test/hang-guard.js';
import { svelteRunes } from './scripts/svelte-runes.mjs';

/**
 * The one config to open first. It holds both things Vite runs in this repository:
 *
 * 1. The playground (SPEC §13), a static Vite app in playground/ over the library source in src/:
 *      npm run playground         dev server on http://127.0.0.1:5173/
 *      npm run build:playground   static site in playground/dist (relative base: works from any static host)
 *
 * 2. The test projects of the runtime matrix (SPEC §1.3) — node, chromium, workerd — under `test`.
 *    One shared suite, `test/**\/*.test.ts`, runs unchanged in every runtime; `test/**\/*.node.test.ts`
 *    files (fs, CLI, Buffer-based oracles, packaging, the playground e2e) run only in the Node project,
 *    and `test/**\/*.browser.test.ts` files (the DOM composer of `./editor/dom`, SPEC §15.8) only in
 *    the Chromium project.
 *    Deno and Bun run the same shared suite through the small vitest.runtime.config.ts beside this
 *    file (they cannot load the workerd and browser pools). `npm test` (scripts/test-matrix.mjs)
 *    runs all five and fails if any runtime cannot start, skips a test or runs other files.
 *
 * Each test project provides `expectedRuntime`; test/runtime-matrix.test.ts checks that the suite
 * really runs where it claims to (a pool silently falling back to Node would otherwise go unnoticed).
 */
const REPO_ROOT = fileURLToPath(new URL('.', import.meta.url));
const PLAYGROUND_ROOT = fileURLToPath(new URL('./playground/', import.meta.url));

const SHARED = ['test/**/*.test.ts'];
const NODE_ONLY = ['test/**/*.node.test.ts'];
/** Tests of browser-only entries (`./editor/dom`, SPEC §15.8): the Chromium project alone runs them. */
const BROWSER_ONLY = ['test/**/*.browser.test.ts'];
const EXCLUDE_NODE_ONLY = [...configDefaults.exclude, ...NODE_ONLY];
const EXCLUDE_BROWSER_ONLY = [...configDefaults.exclude, ...BROWSER_ONLY];
const EXCLUDE_NODE_AND_BROWSER_ONLY = [...EXCLUDE_NODE_ONLY, ...BROWSER_ONLY];

/**
 * Hang guards only (test/hang-guard.ts): no test depends on how fast the machine is. An inline
 * project does not inherit the root's `test` options, so each project sets them itself (a root
 * `testTimeout` left the projects at vitest's 5 s default, which a busy machine exceeded).
 */
const HANG_GUARDS = { testTimeout: TEST_HANG_GUARD_MS, hookTimeout: HOOK_HANG_GUARD_MS };

/** A compatibility date the bundled workerd supports; no compatibility flags (no nodejs_compat). */
export const WORKERD_COMPATIBILITY_DATE = '2026-04-01';

declare module 'vitest' {
  export interface ProvidedContext {
    expectedRuntime: 'node' | 'chromium' | 'workerd' | 'deno' | 'bun';
  }
}

/**
 * The dsh host adapter (src/dsh, SPEC §14) uses a standard (TC39) method decorator, `@Remote`, as
 * dsh's own plugins do; Vite's Oxc transform only knows legacy decorators, so those files are
 * lowered by esbuild first (as `tsc` does for the build). Node-only: src/dsh never runs elsewhere.
 */
const standardDecorators: Plugin = {
  name: 'standard-decorators',
  enforce: 'pre',
  async transform(code, id) {
    if (!/[\\/]src[\\/]dsh[\\/][^\\/]+\.ts$/.test(id)) return null;
    const { code: lowered, map } = await transform(code, { loader: 'ts', target: 'es2022', format: 'esm', sourcemap: true, sourcefile: id });
    return { code: lowered, map };
  },
};

export default defineConfig({
  // ── The playground app ──────────────────────────────────────────────────────────────────────
  root: PLAYGROUND_ROOT,
  base: './',
  // Keep the page self-contained: no public dir, no env files from the repository.
  publicDir: false,
  envDir: false,
  clearScreen: false,
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Sample session logs stay separate files (fetched by the page), even small ones.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  server: {
    host: '127.0.0.1',
    // The page imports ../src and fetches ../samples.
    fs: { allow: [REPO_ROOT] },
  },
  preview: { host: '127.0.0.1' },

  // ── The test projects ───────────────────────────────────────────────────────────────────────
  test: {
    root: REPO_ROOT,
    projects: [
      {
        root: REPO_ROOT,
        plugins: [standardDecorators, svelteRunes()],
        test: {
          name: 'node',
          ...HANG_GUARDS,
          include: SHARED,
          exclude: EXCLUDE_BROWSER_ONLY,
          environment: 'node',
          provide: { expectedRuntime: 'node' },
        },
      },
      {
        root: REPO_ROOT,
        plugins: [svelteRunes()],
        test: {
          name: 'chromium',
          ...HANG_GUARDS,
          include: SHARED,
          exclude: EXCLUDE_NODE_ONLY,
          provide: { expectedRuntime: 'chromium' },
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({
              launchOptions: {
                // Only when vitest loads this file: `vite build` of the playground needs no browser.
                executablePath: process.env.VITEST ? chromiumExecutable() : undefined,
                args: CHROMIUM_ARGS,
              },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
      {
        root: REPO_ROOT,
        plugins: [
          svelteRunes(),
          // The pool itself turns on nodejs_compat_v2 for its runner (so `Buffer` is visible
          // inside these tests); test/miniflare-smoke.node.test.ts covers plain workerd.
          // A `.wasm` file is imported as a compiled `WebAssembly.Module`, as wrangler does for a
          // Worker (libzstd's module: test/setup-workerd.ts).
          cloudflareTest({
            miniflare: {
              compatibilityDate: WORKERD_COMPATIBILITY_DATE,
              compatibilityFlags: [],
              modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
            },
          }),
        ],
        test: {
          name: 'workerd',
          ...HANG_GUARDS,
          include: SHARED,
          // libzstd's module, imported as a compiled module and given to the library.
          setupFiles: ['test/setup-workerd.ts'],
          exclude: EXCLUDE_NODE_AND_BROWSER_ONLY,
          provide: { expectedRuntime: 'workerd' },
        },
      },
    ],
  },
});
