import { configDefaults, defineConfig } from 'vitest/config';
import { HOOK_HANG_GUARD_MS, TEST_HANG_GUARD_MS } from './test/hang-guard.js';
import { svelteRunes } from './scripts/svelte-runes.mjs';

/**
 * The shared suite under Deno or Bun (SPEC §1.3): `deno run -A node_modules/vitest/vitest.mjs run
 * --config vitest.runtime.config.ts`, or the same with `bun`. The project is named after the runtime
 * that loads this file, and test/runtime-matrix.test.ts checks that the tests really run there.
 */
const g = globalThis as { Deno?: unknown; Bun?: unknown };
const runtime = g.Deno !== undefined ? 'deno' : g.Bun !== undefined ? 'bun' : undefined;
if (runtime === undefined) {
  throw new Error('vitest.runtime.config.ts is for Deno and Bun; use vite.config.ts (project "node") under Node');
}

export default defineConfig({
  plugins: [svelteRunes()],
  test: {
    name: runtime,
    // Hang guards only (test/hang-guard.ts): no test depends on how fast the machine is.
    testTimeout: TEST_HANG_GUARD_MS,
    hookTimeout: HOOK_HANG_GUARD_MS,
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'test/**/*.node.test.ts', 'test/**/*.browser.test.ts'],
    provide: { expectedRuntime: runtime },
  },
});
