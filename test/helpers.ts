import { expect, vi } from 'vitest';
import { SessionReferenceError, type SessionReferenceErrorCode } from '../src/index.js';
import { WAIT_HANG_GUARD_MS } from './hang-guard.js';

/** Runs `fn`, expects a SessionReferenceError with `code`, and returns it. */
export function expectCode(fn: () => unknown, code: SessionReferenceErrorCode): SessionReferenceError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected ${code}`).toBeInstanceOf(SessionReferenceError);
  expect((thrown as SessionReferenceError).code).toBe(code);
  return thrown as SessionReferenceError;
}

/** Awaits `promise`, expects a rejection with a SessionReferenceError with `code`, and returns it. */
export async function expectRejectCode(
  promise: Promise<unknown>,
  code: SessionReferenceErrorCode,
): Promise<SessionReferenceError> {
  let thrown: unknown;
  try {
    await promise;
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected ${code}`).toBeInstanceOf(SessionReferenceError);
  expect((thrown as SessionReferenceError).code).toBe(code);
  return thrown as SessionReferenceError;
}

/**
 * Waits until `check` stops throwing (vitest's `vi.waitFor`), for something the test has caused:
 * a state, never a duration. Its limit is a hang guard ({@link WAIT_HANG_GUARD_MS}), not vitest's
 * default of 1 s, which a busy machine can exceed.
 */
export function eventually<T>(check: () => T | Promise<T>): Promise<T> {
  return vi.waitFor(check, { timeout: WAIT_HANG_GUARD_MS, interval: 5 });
}
