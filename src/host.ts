/**
 * Talking to the host: the target agent and calls into `sessionQuery` (SPEC §4.2, §4.6, §7.2).
 * @module
 */
import { raceAbort, throwIfAborted } from './abort.js';
import { check, describeValue, fail } from './errors.js';
import type { TargetAgent } from './types.js';

/**
 * The agent, checked: an object with a string `id` (SPEC §4.6).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` otherwise.
 */
export function checkAgent(agent: unknown): TargetAgent {
  check(typeof (agent as TargetAgent | null)?.id === 'string', 'INVALID_ARGUMENT', 'agent must have a string id', agent);
  return agent as TargetAgent;
}

/** True for a string other than `''`. */
export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/**
 * Calls the host: a synchronous throw or a rejection becomes `SESSION_REFERENCE_READ_FAILED` naming
 * `what` (cause kept); an abort of `signal` becomes `SESSION_REFERENCE_CANCELLED` at once.
 */
export function callHost<T>(call: () => Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  // The executor runs `call` synchronously and turns its throw into a rejection.
  return raceAbort(new Promise<T>((resolve) => resolve(call())), signal).catch((error: unknown) => {
    throwIfAborted(signal);
    throw fail('READ_FAILED', `${what} failed: ${describeValue(error)}`, error);
  });
}
