/**
 * Cancellation through `AbortSignal` (SPEC §6.5, §7.5).
 * @module
 */
import { check, fail } from './errors.js';

/**
 * Checks that `signal` is absent or an `AbortSignal`-like object (`aborted` boolean and
 * `addEventListener`).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` otherwise.
 */
export function checkSignal(signal: unknown): AbortSignal | undefined {
  const s = signal as AbortSignal | undefined;
  check(
    s === undefined || (typeof s?.aborted === 'boolean' && typeof s.addEventListener === 'function'),
    'INVALID_ARGUMENT',
    'signal must be an AbortSignal',
    signal,
  );
  return s;
}

function cancelled(signal: AbortSignal) {
  return fail('CANCELLED', 'cancelled by the signal', signal.reason);
}

/** @throws SessionReferenceError `SESSION_REFERENCE_CANCELLED` (cause `signal.reason`) when aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw cancelled(signal);
}

/**
 * Settles like `promise`, or rejects with `SESSION_REFERENCE_CANCELLED` as soon as `signal`
 * aborts (at once when it already has), whichever comes first. A late settlement of `promise` is
 * ignored (and never reported as unhandled); the abort listener goes once `promise` settles.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      if (signal?.aborted) reject(cancelled(signal));
    };
    onAbort();
    signal?.addEventListener('abort', onAbort);
    promise.then(resolve, reject).finally(() => signal?.removeEventListener('abort', onAbort));
  });
}
