/**
 * Yielding to the event loop from loops over host sources that may always be ready (SPEC §10.3):
 * an async iterable whose `next()` resolves at once, a `list()` that answers at once with a new
 * cursor forever. Awaiting an already settled promise runs only microtasks, so such a loop never
 * lets a timer, an I/O callback or an abort run; {@link pace} hands the event loop a macrotask
 * turn every {@link PACE_MS} milliseconds or every {@link PACE_WORK} units of work, whichever
 * comes first. The work count is what holds in workerd, whose clock stands still while code runs.
 * Web APIs only (`performance.now`, `setTimeout`).
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

/**
 * A macrotask turn: `setTimeout(0)`, whose callback runs after timers already due and I/O, in
 * every runtime. Not a `MessageChannel` message: workerd delivers those ahead of timers, so a loop
 * yielding through them never lets an abort timer run; nor `scheduler.yield()`, whose continuation
 * runs ahead of other tasks for the same reason. (Browsers clamp nested timeouts to 4 ms: a turn
 * every {@link PACE_MS} ms of work costs at most that.)
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
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
