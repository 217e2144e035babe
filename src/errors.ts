/**
 * Errors of the public API (SPEC §10).
 *
 * Every failure that leaves a public function is a {@link SessionReferenceError} with one of the
 * stable {@link SessionReferenceErrorCode}s. Errors cross worker/page boundaries as plain objects
 * (`toJSON()`), and {@link isSessionReferenceError} recognizes both forms.
 * @module
 */

/** Every error code the module produces (SPEC §10). */
export const SESSION_REFERENCE_ERROR_CODES = [
  'SESSION_REFERENCE_INVALID_CONFIG',
  'SESSION_REFERENCE_INVALID_ARGUMENT',
  'SESSION_REFERENCE_INVALID_REFERENCE',
  'SESSION_REFERENCE_SELF_REFERENCE',
  'SESSION_REFERENCE_TOO_MANY',
  'SESSION_REFERENCE_READ_FAILED',
  'SESSION_REFERENCE_CANCELLED',
  'SESSION_REFERENCE_BUDGET_EXCEEDED',
  'SESSION_REFERENCE_INVALID_LOG',
  'SESSION_REFERENCE_NOT_FOUND',
] as const;

/** A stable error code (SPEC §10). */
export type SessionReferenceErrorCode = (typeof SESSION_REFERENCE_ERROR_CODES)[number];

const CODES: ReadonlySet<string> = new Set(SESSION_REFERENCE_ERROR_CODES);

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
    super(message, options && 'cause' in options ? { cause: options.cause } : undefined);
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
  if (value instanceof SessionReferenceError) return true;
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    v.name === 'SessionReferenceError' &&
    typeof v.code === 'string' &&
    CODES.has(v.code) &&
    typeof v.message === 'string'
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
    if (typeof value === 'string') text = JSON.stringify(value);
    else if (typeof value === 'bigint') text = `${value}n`;
    else if (typeof value === 'symbol') text = value.toString();
    else if (typeof value === 'function') text = 'a function';
    else if (value === undefined) text = 'undefined';
    else if (Array.isArray(value)) text = `an array of length ${value.length}`;
    else if (typeof value === 'object' && value !== null) text = JSON.stringify(value) ?? 'an object';
    else text = String(value);
  } catch {
    text = 'an unserializable object';
  }
  return text.length > MAX_DESCRIBED ? `${text.slice(0, MAX_DESCRIBED)}…` : text;
}

/** Shorthand used across the module: `throw fail(code, message, cause?)`. */
export function fail(code: SessionReferenceErrorCode, message: string, cause?: unknown): SessionReferenceError {
  return cause === undefined
    ? new SessionReferenceError(code, message)
    : new SessionReferenceError(code, message, { cause });
}
