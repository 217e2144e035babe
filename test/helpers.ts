import { expect } from 'vitest';
import { SessionReferenceError, type SessionReferenceErrorCode } from '../src/index.js';

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
