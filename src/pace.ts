/**
 * Yielding to the event loop from loops over host sources that may always be ready (SPEC §10.3):
 * an async iterable whose `next()` resolves at once, a `list()` that answers at once with a new
 * cursor forever. Awaiting an already settled promise runs only microtasks, so such a loop never
 * lets a timer, an I/O callback or an abort run; {@link pace} hands the event loop a macrotask
 * turn every {@link PACE_MS} milliseconds or every {@link PACE_WORK} units of work, whichever
 * comes first. The work count is what holds in workerd, whose clock stands still while code runs.
 * Web APIs only (`performance.now`, `setTimeout`); a host entry may hand in a cheaper turn
 * ({@link useTurn}: the Node entry's `setImmediate`).
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
/**
 * When the last turn ended: the clock is first read by the first look at it, not when this module
 * loads (Node 20 loads `perf_hooks` on the first read of `performance`, ~4 ms a CLI run that paces
 * little need not pay).
 */
let since: number | undefined;

function now(): number {
  return typeof performance === 'object' ? performance.now() : Date.now();
}

/** The work of one chunk of `bytes` bytes: 1 plus 1 per 4 KiB. */
export function chunkWork(bytes: number): number {
  return 1 + (bytes >>> 12);
}

/** Schedules `callback` as a macrotask (see {@link nextTurn}). */
export type Turn = (callback: () => void) => unknown;

/** `setTimeout(0)`: the Web API every runtime has (SPEC §1.1). */
const timeoutTurn: Turn = (callback) => setTimeout(callback, 0);

let turn: Turn = timeoutTurn;

/**
 * Hands the core a cheaper macrotask turn than `setTimeout(0)`: the Node entry gives Node's
 * `setImmediate` (src/node/store.ts), so the core itself names no Node API (SPEC §1.1). It must run
 * its callback after the I/O and the timers already due, and a callback queued from a callback in
 * a later iteration, never the same one, so an abort timer and `AbortSignal.timeout` still run at
 * each turn (Node's check phase does; test/store-strict.test.ts checks it). In Node `setTimeout(0)`
 * is clamped to 1 ms: a turn cost 1.1–1.2 ms of wall time, 11–30 ms per 25 MiB read of 10–24
 * turns; a `setImmediate` turn about 0.02 ms. Shared by every loop of the realm.
 * @internal
 */
export function useTurn(next: Turn): void {
  turn = next;
}

/**
 * A macrotask turn: by default `setTimeout(0)`, whose callback runs after timers already due and
 * I/O, in every runtime (in workerd the clock stands still while code runs, so a zero-delay timer
 * costs no clamp; browsers clamp nested timeouts to 4 ms, at most 4 ms per {@link PACE_MS} ms of
 * work). Never a `MessageChannel` message: workerd delivers those ahead of timers, and HTML leaves
 * the order of a page's message tasks and its timers to the user agent, so a loop yielding through
 * them might never let an abort timer run; nor `scheduler.yield()`, whose continuation runs ahead
 * of other tasks for the same reason. A host entry may hand in a cheaper one ({@link useTurn}).
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => turn(resolve));
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
  if (work < PACE_WORK && now() - (since ??= now()) < PACE_MS) return undefined;
  work = 0;
  return nextTurn().then(() => {
    since = now();
  });
}
