/**
 * The test suite's hang guards: the only time limits in it. No test asserts how long anything
 * takes (timings belong in `npm run bench`); a test asserts counts, order and outcomes, and waits
 * for events, never for time to pass. These limits only stop a test that hangs, so they are far
 * above what any test takes on a loaded 2-core machine (`npm test` with a CPU-bound process running
 * alongside and other work on the machine, load average about 20: the slowest test, a build of the
 * package in test/cli.node.test.ts, took 49 s; the slowest property, over real zstd frames in
 * Chromium, 14 s). vite.config.ts (node, chromium, workerd)
 * and vitest.runtime.config.ts (Deno, Bun) use them; a test or wait inside a test that needs more
 * names a multiple of them.
 */

/** Per test (vitest `testTimeout`). */
export const TEST_HANG_GUARD_MS = 180_000;

/** Per hook (vitest `hookTimeout`): hooks build bundles and sites and start browsers and workerd. */
export const HOOK_HANG_GUARD_MS = 600_000;

/**
 * One wait inside a test for something the test caused (a page reaching a state, a child process
 * ending): less than {@link TEST_HANG_GUARD_MS}, so a hung wait fails with its own message.
 */
export const WAIT_HANG_GUARD_MS = 120_000;
