/**
 * Errors of the public API (SPEC §10).
 *
 * Every failure that leaves a public function is a {@link SessionReferenceError} with one of the
 * stable {@link SessionReferenceErrorCode}s. Errors cross worker/page boundaries as plain objects
 * (`toJSON()`), and {@link isSessionReferenceError} recognizes both forms.
 * @module
 */

const SUFFIXES = [
  'INVALID_CONFIG',
  'INVALID_ARGUMENT',
  'INVALID_REFERENCE',
  'SELF_REFERENCE',
  'TOO_MANY',
  'READ_FAILED',
  'CANCELLED',
  'BUDGET_EXCEEDED',
  'INVALID_LOG',
  'NOT_FOUND',
] as const;

/** A stable error code (SPEC §10). */
export type SessionReferenceErrorCode = `SESSION_REFERENCE_${(typeof SUFFIXES)[number]}`;

/** Every error code the module produces (SPEC §10). */
export const SESSION_REFERENCE_ERROR_CODES: readonly SessionReferenceErrorCode[] = SUFFIXES.map(
  (suffix) => `SESSION_REFERENCE_${suffix}` as const,
);

/** The plain-object form of a {@link SessionReferenceError} (`toJSON()`, SPEC §10). */
export interface SessionReferenceErrorJSON {
  name: 'SessionReferenceError';
  code: SessionReferenceErrorCode;
  message: string;
}

/**
 * The only exception type that escapes the public API (SPEC §10).
 *
 * `code` is stable; `message` names the offending value (truncated, see {@link describeValue});
 * `cause` keeps the underlying failure (a host error, `signal.reason`, …) when there is one.
 */
export class SessionReferenceError extends Error {
  readonly code: SessionReferenceErrorCode;

  constructor(code: SessionReferenceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SessionReferenceError';
    this.code = code;
  }

  /** `{ name, code, message }`: survives `JSON.stringify` and `postMessage`. */
  toJSON(): SessionReferenceErrorJSON {
    return { name: 'SessionReferenceError', code: this.code, message: this.message };
  }
}

/**
 * True for a {@link SessionReferenceError} instance, and for a plain object of its `toJSON()`
 * shape (`name` `'SessionReferenceError'`, a known `code`, a string `message`), e.g. after
 * `postMessage` or `JSON.parse` (SPEC §10). Never throws.
 */
export function isSessionReferenceError(
  value: unknown,
): value is SessionReferenceError | SessionReferenceErrorJSON {
  const v = value as Record<string, unknown> | null;
  return (
    value instanceof SessionReferenceError ||
    (v?.name === 'SessionReferenceError' &&
      SESSION_REFERENCE_ERROR_CODES.includes(v.code as SessionReferenceErrorCode) &&
      typeof v.message === 'string')
  );
}

/** Longest rendering of a value inside an error message, in UTF-16 code units. */
const MAX_DESCRIBED = 80;

/**
 * A short, safe rendering of any value for error messages: strings are JSON-quoted, long
 * renderings are cut to 80 code units plus `…`. Never throws (cyclic or hostile objects included).
 */
export function describeValue(value: unknown): string {
  let text: string;
  try {
    text =
      typeof value === 'function'
        ? 'a function'
        : Array.isArray(value)
          ? `an array of length ${value.length}`
          : typeof value === 'object' || typeof value === 'string'
            ? (JSON.stringify(value) ?? String(value))
            : String(value);
  } catch {
    text = 'an unserializable object';
  }
  return text.length > MAX_DESCRIBED ? `${text.slice(0, MAX_DESCRIBED)}…` : text;
}

/**
 * Validation shorthand: throws `code` with the message "`what`, got <value>" unless `ok`.
 * @throws SessionReferenceError `code` when `ok` is falsy.
 */
export function check(ok: unknown, code: SessionReferenceErrorCode, what: string, value: unknown): asserts ok {
  if (!ok) throw fail(code, `${what}, got ${describeValue(value)}`);
}

/** Shorthand used across the module: `throw fail(code, message, cause?)`. */
export function fail(code: SessionReferenceErrorCode, message: string, cause?: unknown): SessionReferenceError {
  return new SessionReferenceError(code, message, cause === undefined ? undefined : { cause });
}
