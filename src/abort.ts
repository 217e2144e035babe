/**
 * Cancellation through `AbortSignal` (SPEC §6.5, §7.5, §10.2).
 * @module
 */
import { check, fail } from './errors.js';

/**
 * Checks that `signal` is absent, or an object with a boolean `aborted` and functions
 * `addEventListener` and `removeEventListener` (every `AbortSignal` is one) (SPEC §10.2).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` otherwise.
 */
export function checkSignal(signal: unknown): AbortSignal | undefined {
  const s = signal as AbortSignal | undefined;
  check(
    s === undefined ||
      (Object(s) === s && typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function' && typeof s.removeEventListener === 'function'),
    'INVALID_ARGUMENT',
    'signal must be an AbortSignal',
    signal,
  );
  return s;
}

/** @throws SessionReferenceError `SESSION_REFERENCE_CANCELLED` (cause `signal.reason`) when aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw fail('CANCELLED', 'cancelled by the signal', signal.reason);
}

/**
 * The pending races of each signal, behind one abort listener of ours: a signal carries at most
 * one, however many calls share it, and it goes when the last of them settles (SPEC §10.2).
 */
const racesOf = new WeakMap<AbortSignal, { races: Set<() => void>; listener: () => void }>();

/**
 * Settles like `promise`, or rejects with `SESSION_REFERENCE_CANCELLED` as soon as `signal`
 * aborts (at once when it already has), whichever comes first. A late settlement of `promise` is
 * ignored (and never reported as unhandled). Whatever the signal object does — its methods or
 * getters throw, its listener is called at odd times — ends as this promise's rejection or is
 * ignored, never as an exception elsewhere; and once this promise settles, no listener of its
 * call is left on the signal (SPEC §10.2).
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise; // nothing to race (a store read per chunk, often)
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    /** Leaves the signal, then settles (a throwing `removeEventListener` becomes the rejection). */
    const settle = (finish: () => void) => {
      if (settled) return;
      settled = true;
      try {
        leave(signal, race);
      } catch (error) {
        reject(error);
      }
      finish();
    };
    const race = () => {
      try {
        throwIfAborted(signal);
      } catch (error) {
        settle(() => reject(error));
      }
    };
    promise.then(
      (value) => settle(() => resolve(value)),
      (error: unknown) => settle(() => reject(error)),
    );
    try {
      if (!signal.aborted) join(signal, race);
      race();
    } catch (error) {
      settle(() => reject(error));
    }
  });
}

/** Adds `race` to the signal's pending races; the first one adds our listener. */
function join(signal: AbortSignal, race: () => void): void {
  const pending = racesOf.get(signal);
  if (pending) {
    pending.races.add(race);
    return;
  }
  const races = new Set([race]);
  // Every pending race of this signal; a race never throws.
  const listener = () => [...races].forEach((each) => each());
  racesOf.set(signal, { races, listener });
  try {
    signal.addEventListener('abort', listener);
  } catch (error) {
    racesOf.delete(signal);
    throw error;
  }
}

/** Removes `race`; the last one removes our listener (throws what `removeEventListener` throws). */
function leave(signal: AbortSignal, race: () => void): void {
  const pending = racesOf.get(signal);
  if (!pending?.races.delete(race) || pending.races.size > 0) return;
  racesOf.delete(signal);
  signal.removeEventListener('abort', pending.listener);
}
