/**
 * Yielding to the event loop from loops over host sources that may always be ready (SPEC §10.3):
 * an async iterable whose `next()` resolves at once, a `list()` that answers at once with a new
 * cursor forever. Awaiting an already settled promise runs only microtasks, so such a loop never
 * lets a timer, an I/O callback or an abort run; {@link pace} hands the event loop a macrotask
 * turn every {@link PACE_MS} milliseconds or every {@link PACE_WORK} units of work, whichever
 * comes first. The work count is what holds in workerd, whose clock stands still while code runs.
 * Web APIs only (`performance.now`, `MessageChannel` where there is one, else `setTimeout`).
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
 * A macrotask turn: a message through a fresh `MessageChannel` where the runtime has one (no 4 ms
 * clamp of nested timers in browsers; the port, open until the message comes, keeps Node and Deno
 * alive meanwhile, as a timer would), else `setTimeout(0)`. Not `scheduler.yield()`: its
 * continuation runs ahead of other tasks, timers among them, so an abort timer could starve.
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof MessageChannel !== 'function') {
      setTimeout(resolve, 0);
      return;
    }
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(undefined);
  });
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
