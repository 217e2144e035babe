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

const PREFIX = 'SESSION_REFERENCE_';

/**
 * Every {@link SessionReferenceError} ever constructed: a brand check that, unlike `instanceof`,
 * never runs code of the value (a proxy's `getPrototypeOf` trap) and never throws.
 */
const instances = new WeakSet<object>();

/**
 * A stable error code (SPEC §10): `SESSION_REFERENCE_` and a suffix; every one of them is listed in
 * {@link SESSION_REFERENCE_ERROR_CODES}.
 */
export type SessionReferenceErrorCode = `${typeof PREFIX}${(typeof SUFFIXES)[number]}`;

/**
 * An error code as the internal helpers {@link check} and {@link fail} take it: without its
 * `SESSION_REFERENCE_` prefix (`'READ_FAILED'`), which they add.
 */
export type ErrorCodeInput = (typeof SUFFIXES)[number];

/** Every error code the module produces (SPEC §10). */
export const SESSION_REFERENCE_ERROR_CODES: readonly SessionReferenceErrorCode[] = /* @__PURE__ */ SUFFIXES.map((suffix) => `${PREFIX}${suffix}` as const);

/** The plain-object form of a {@link SessionReferenceError} (`toJSON()`, SPEC §10). */
export interface SessionReferenceErrorJSON {
  name: 'SessionReferenceError';
  code: SessionReferenceErrorCode;
  message: string;
}

/**
 * The only exception type that escapes the public API (SPEC §10).
 *
 * `code` is stable; `message` names the offending value (a short rendering of it, cut to bounded length);
 * `cause` keeps the underlying failure (a host error, `signal.reason`, …) when there is one.
 */
export class SessionReferenceError extends Error {
  declare readonly code: SessionReferenceErrorCode;

  constructor(code: SessionReferenceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SessionReferenceError';
    this.code = code;
    instances.add(this);
  }

  /** `{ name, code, message }`: survives `JSON.stringify` and `postMessage`. */
  toJSON(): SessionReferenceErrorJSON {
    return { name: 'SessionReferenceError', code: this.code, message: this.message };
  }
}

/** True for an error built by the {@link SessionReferenceError} constructor; never throws. */
export function isInstance(value: unknown): value is SessionReferenceError {
  return instances.has(value as object);
}

/**
 * True for a {@link SessionReferenceError} instance, and for a plain object of its `toJSON()`
 * shape (`name` `'SessionReferenceError'`, a known `code`, a string `message`), e.g. after
 * `postMessage` or `JSON.parse` (SPEC §10). Never throws, whatever it is given (SPEC §10.1): a
 * value that cannot be read (a revoked proxy, a throwing getter) is not one.
 */
export function isSessionReferenceError(
  value: unknown,
): value is SessionReferenceError | SessionReferenceErrorJSON {
  if (isInstance(value)) return true;
  try {
    const v = value as Record<string, unknown> | null;
    return (
      v?.name === 'SessionReferenceError' &&
      SESSION_REFERENCE_ERROR_CODES.includes(v.code as SessionReferenceErrorCode) &&
      typeof v.message === 'string'
    );
  } catch {
    return false;
  }
}

/** Longest rendering of a value inside an error message, in UTF-16 code units. */
const MAX_DESCRIBED = 80;

/**
 * A short, safe rendering of any value for error messages: an `Error` as its message; objects,
 * arrays and strings as JSON (strings quoted); numbers as they are (`-0`; an unsafe integer with a
 * note that it may be rounded); anything else (`undefined`, functions, symbols, …) as `String()`
 * gives it. Long renderings are cut to 80 code units plus `…`. Never
 * throws (cyclic or hostile objects included), and its work is bounded by what it shows: only
 * the first 80 entries of an array are rendered (more could not show), so a sparse array with a
 * huge `length` costs no more than a short one (SPEC §10.3).
 */
export function describeValue(value: unknown): string {
  let text = 'an unreadable value';
  try {
    if (value instanceof Error) value = value.message;
    // Only the start of a long string can be shown: the JSON of its first MAX_DESCRIBED + 2 code
    // units begins with the same MAX_DESCRIBED characters (a pair cut at the end escapes past them),
    // and a 1 MiB value costs no 1 MiB JSON.stringify.
    if (typeof value === 'string' && value.length > MAX_DESCRIBED + 2) value = value.slice(0, MAX_DESCRIBED + 2);
    const firstEntries = (_key: string, entry: unknown) => (Array.isArray(entry) && entry.length > MAX_DESCRIBED ? entry.slice(0, MAX_DESCRIBED) : entry);
    text = ((typeof value === 'object' || typeof value === 'string') && JSON.stringify(value, firstEntries)) || (typeof value === 'number' ? describeNumber(value) : String(value));
  } catch {
    // A cyclic or hostile object, or one String() cannot convert: keep the placeholder.
  }
  return text.length > MAX_DESCRIBED ? `${text.slice(0, MAX_DESCRIBED)}…` : text;
}

/**
 * A number as it is (SPEC §10): `-0` as `-0`, and an integer past 2^53 − 1 with a note, since
 * the number written may have been rounded to it (`9007199254740993` is `9007199254740992`). A
 * number that arrives as text (a CLI flag, a query parameter) is quoted as that text instead, by
 * whoever parses it.
 */
function describeNumber(value: number): string {
  if (Object.is(value, -0)) return '-0';
  const text = String(value);
  return Number.isInteger(value) && !Number.isSafeInteger(value) ? `${text} (past 2^53 − 1: may be rounded from the number written)` : text;
}

/**
 * Validation shorthand: throws `code` with the message "`what`, got <value>" unless `ok`.
 * @throws SessionReferenceError `code` when `ok` is falsy.
 */
export function check(ok: unknown, code: ErrorCodeInput, what: string, value: unknown): asserts ok {
  if (!ok) throw fail(code, `${what}, got ${describeValue(value)}`);
}

/** Shorthand used across the module: `throw fail(code, message, cause?)`, `code` without its prefix. */
export function fail(code: ErrorCodeInput, message: string, cause?: unknown): SessionReferenceError {
  return new SessionReferenceError(
    `${PREFIX}${code}`,
    message,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * A {@link SessionReferenceError} made without capturing a stack trace, for an error that is kept
 * as a value and never thrown: the `error` of a malformed token of `scanSessionReferenceText`
 * (SPEC §3.6), of which a paste can hold hundreds of thousands, each costing a stack otherwise.
 * It is an instance (`instanceof`, {@link isSessionReferenceError}) with the same own `name`,
 * `code` and `message` as a constructed one; `stack` is absent. `code` without its prefix.
 */
export function keptError(code: ErrorCodeInput, message: string): SessionReferenceError {
  const error = Object.create(SessionReferenceError.prototype) as { -readonly [K in keyof SessionReferenceError]: SessionReferenceError[K] };
  // As `new Error(message)` defines it: not enumerable.
  Object.defineProperty(error, 'message', { value: message, writable: true, configurable: true });
  error.name = 'SessionReferenceError';
  error.code = `${PREFIX}${code}`;
  instances.add(error);
  return error as SessionReferenceError;
}

/**
 * What a public function throws for a caught error (SPEC §10): a `SessionReferenceError` as it
 * is; anything else — a throwing getter, a revoked proxy, a runtime error —
 * becomes `code` (default `SESSION_REFERENCE_INVALID_ARGUMENT`) naming it, the original kept as
 * `cause`.
 */
export function argumentError(error: unknown, code: ErrorCodeInput = 'INVALID_ARGUMENT'): SessionReferenceError {
  return isInstance(error) ? error : fail(code, `unusable argument: ${describeValue(error)}`, error);
}
