import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { playwright } from '@vitest/browser-playwright';
import { transform } from 'esbuild';
import { configDefaults, defineConfig, type Plugin } from 'vitest/config';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './scripts/chromium.mjs';

/**
 * The runtime matrix (SPEC §1.3). One shared suite, `test/**\/*.test.ts`, runs unchanged in every
 * runtime; `test/**\/*.node.test.ts` files (fs, CLI, Buffer-based oracles, packaging) run only in
 * the Node project. Deno and Bun run the shared suite through `vitest.runtime.config.ts`.
 * `npm test` (scripts/test-matrix.mjs) runs all five and fails if any runtime cannot start.
 *
 * Each project provides `expectedRuntime`; test/runtime-matrix.test.ts checks that the suite really
 * runs where it claims to (a pool silently falling back to Node would otherwise go unnoticed).
 */
const SHARED = ['test/**/*.test.ts'];
const NODE_ONLY = ['test/**/*.node.test.ts'];
const EXCLUDE_NODE_ONLY = [...configDefaults.exclude, ...NODE_ONLY];

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
  test: {
    // Generous per-test limits: the property-based suites run on a 2-core machine, five runtimes in
    // a row; a hang still fails, and linear-time tests assert their own bounds.
    testTimeout: 30_000,
    hookTimeout: 120_000,
    projects: [
      {
        plugins: [standardDecorators],
        test: {
          name: 'node',
          include: SHARED,
          environment: 'node',
          provide: { expectedRuntime: 'node' },
        },
      },
      {
        test: {
          name: 'chromium',
          include: SHARED,
          exclude: EXCLUDE_NODE_ONLY,
          provide: { expectedRuntime: 'chromium' },
          browser: {
            enabled: true,
            headless: true,
            screenshotFailures: false,
            provider: playwright({
              launchOptions: {
                executablePath: CHROMIUM_PATH,
                args: CHROMIUM_ARGS,
              },
            }),
            instances: [{ browser: 'chromium' }],
          },
        },
      },
      {
        plugins: [
          // The pool itself turns on nodejs_compat_v2 for its runner (so `Buffer` is visible
          // inside these tests); test/miniflare-smoke.node.test.ts covers plain workerd.
          cloudflareTest({ miniflare: { compatibilityDate: WORKERD_COMPATIBILITY_DATE, compatibilityFlags: [] } }),
        ],
        test: {
          name: 'workerd',
          include: SHARED,
          exclude: EXCLUDE_NODE_ONLY,
          provide: { expectedRuntime: 'workerd' },
        },
      },
    ],
  },
});
