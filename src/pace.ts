/**
 * Yielding to the event loop from loops over host sources that may always be ready (SPEC §10.3):
 * an async iterable whose `next()` resolves at once, a `list()` that answers at once with a new
 * cursor forever. Awaiting an already settled promise runs only microtasks, so such a loop never
 * lets a timer, an I/O callback or an abort run; {@link pace} hands the event loop a macrotask
 * turn every {@link PACE_MS} milliseconds or every {@link PACE_WORK} units of work, whichever
 * comes first. The work count is what holds in workerd, whose clock stands still while code runs.
 * Web APIs only (`performance.now`, `setTimeout`; a host's `setImmediate` where it has one, found by
 * feature detection: see `nextTurn`).
 * @module
 */

/** Milliseconds of work between two turns of the event loop, at most (where the clock moves). */
export const PACE_MS = 10;

/**
 * Units of work between two turns of the event loop, at most: a loop step is one unit, and a
 * chunk of bytes one more per 4 KiB ({@link chunkWork}), so about 4 MiB of log or 1,024 steps.
 */
export const PACE_WORK = 1024;

/** Units counted between two looks at the clock (reading it costs more than counting). */
const CLOCK_EVERY = 64;

let work = 0;
let since = now();

function now(): number {
  return typeof performance === 'object' ? performance.now() : Date.now();
}

/** The work of one chunk of `bytes` bytes: 1 plus 1 per 4 KiB. */
export function chunkWork(bytes: number): number {
  return 1 + (bytes >>> 12);
}

/** The host's `setImmediate`, when it has one (Node, Bun, Deno 2, workerd with `nodejs_compat`). */
type SetImmediate = (callback: () => void) => unknown;

/**
 * Read once, by feature detection on `globalThis` (the core names no Node global: SPEC §1.1; a
 * runtime without the function, or a page whose polyfill is not a function, gets `setTimeout`).
 * Safe wherever it is defined: every runtime that defines it runs the callback as a macrotask
 * after the I/O and the timers already due (Node and Bun: the check phase, after the poll phase,
 * with the timers phase at the top of every loop iteration; Deno 2: its Node-compatible event
 * loop, the same order; workerd with `nodejs_compat`: its own, after which due timers run too),
 * and a callback queued by a callback runs in the next iteration, never in the same one, so a
 * loop yielding through it still lets an abort timer, `AbortSignal.timeout` and I/O run at each
 * turn (test/store-strict.test.ts checks both in every runtime of the shared suite).
 */
const immediate: SetImmediate | undefined = (() => {
  const candidate = (globalThis as { setImmediate?: unknown }).setImmediate;
  return typeof candidate === 'function' ? (candidate.bind(globalThis) as SetImmediate) : undefined;
})();

/**
 * A macrotask turn, the cheapest one that still lets timers and I/O run first, per runtime:
 * - Node, Bun, Deno 2: `setImmediate`. `setTimeout(0)` is clamped to 1 ms there: a turn cost
 *   1.1–1.2 ms of wall time in Node (no CPU), 11–30 ms per 25 MiB read of 10–24 turns; a
 *   `setImmediate` turn costs about 0.02 ms and runs after the same timers and I/O.
 * - workerd without `nodejs_compat`: `setTimeout(0)`. The clock stands still while code runs, so
 *   a zero-delay timer is due at once and costs no clamp. With `nodejs_compat` (the test pool
 *   runs `nodejs_compat_v2`) `globalThis.setImmediate` is defined and used; a 5 ms timer still
 *   fires between its turns (checked by hand in Miniflare: after 88–411 turns). Never a
 *   `MessageChannel` message: workerd delivers those ahead of timers, so a loop yielding through
 *   them never lets an abort timer run; nor `scheduler.yield()`, whose continuation runs ahead of
 *   other tasks for the same reason.
 * - Browsers: `setTimeout(0)`. They have no `setImmediate`; nested timeouts are clamped to 4 ms,
 *   at most 4 ms per {@link PACE_MS} ms of work. A `MessageChannel` would cost less in Chromium,
 *   but HTML leaves the order between a page's message tasks and its timers to the user agent
 *   (the reason it is refused in workerd), so it is not relied on for an abort timer here either.
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => (immediate === undefined ? setTimeout(resolve, 0) : immediate(resolve)));
}

/**
 * Counts `units` of work done (shared by every loop of the module) and, once {@link PACE_WORK}
 * units or {@link PACE_MS} milliseconds have gone by since the last turn, yields one turn of the
 * event loop.
 * @returns A promise to await before the next step, or `undefined` when there is no need to yield
 *   (no promise, no microtask).
 */
export function pace(units = 1): Promise<void> | undefined {
  const before = work;
  work += units;
  if (work < PACE_WORK && (work & -CLOCK_EVERY) === (before & -CLOCK_EVERY)) return undefined;
  if (work < PACE_WORK && now() - since < PACE_MS) return undefined;
  work = 0;
  return nextTurn().then(() => {
    since = now();
  });
}
