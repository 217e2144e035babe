/**
 * Talking to the host: the target agent and calls into `sessionQuery` (SPEC §4.2, §4.6, §7.2).
 * @module
 */
import { raceAbort, throwIfAborted } from './abort.js';
import { check, describeValue, fail, SessionReferenceError } from './errors.js';
import type { TargetAgent } from './types.js';

/**
 * The agent, checked: an object with a string `id` (SPEC §4.6).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` otherwise.
 */
export function checkAgent(agent: unknown): TargetAgent {
  check(typeof (agent as TargetAgent | null)?.id === 'string', 'SESSION_REFERENCE_INVALID_ARGUMENT', 'agent must be an object with a string id', agent);
  return agent as TargetAgent;
}

/** The agent's cwd: `agent.cwd ?? agent.session?.header?.cwd` (SPEC §4.6). */
export function agentCwd(agent: TargetAgent): unknown {
  return agent.cwd ?? agent.session?.header?.cwd;
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
  let promise: Promise<T>;
  try {
    promise = Promise.resolve(call());
  } catch (error) {
    promise = Promise.reject(error);
  }
  return raceAbort(promise, signal).catch((error: unknown) => {
    throwIfAborted(signal);
    if ((error as SessionReferenceError)?.code === 'SESSION_REFERENCE_CANCELLED' && error instanceof SessionReferenceError) throw error;
    throw fail('SESSION_REFERENCE_READ_FAILED', `${what} failed: ${describeValue(error instanceof Error ? error.message : error)}`, error);
  });
}
