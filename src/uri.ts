/**
 * The session-reference URI `dsh-session:<base64url(utf8(JSON.stringify(sessionId)))>` (SPEC §2).
 * @module
 */
import { base64urlOfJsonString, decodeBase64url } from './base64url.js';
import { check, describeValue, fail } from './errors.js';
import { decodeUtf8Strict } from './utf8.js';

/** The URI scheme, exactly this lowercase spelling (SPEC §2.1). */
export const SESSION_REFERENCE_SCHEME = 'dsh-session:';

/**
 * A JSON text that is `"`, then no `"`, `\` or control character, then `"`: `JSON.stringify` of
 * the string between the quotes when that string is well-formed (it escapes nothing else then),
 * as strictly decoded UTF-8 always is. The usual id needs neither `JSON.parse` nor
 * `JSON.stringify`.
 */
const PLAIN_JSON_STRING = /^"[^"\\\0-\x1f]*"$/;

/**
 * Encodes a session id as a canonical `dsh-session:` URI (SPEC §2.2, §2.3).
 *
 * Byte-identical to dsh's `Buffer.from(JSON.stringify(id), 'utf8').toString('base64url')`
 * behind the scheme; every JavaScript string round-trips (empty, non-BMP, lone surrogates).
 * @example encodeSessionReferenceUri('session-434') // 'dsh-session:InNlc3Npb24tNDM0Ig'
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_REFERENCE` when `sessionId` is not a string.
 */
export function encodeSessionReferenceUri(sessionId: string): string {
  check(typeof sessionId === 'string', 'INVALID_REFERENCE', 'session id must be a string', sessionId);
  return SESSION_REFERENCE_SCHEME + base64urlOfJsonString(sessionId);
}

/**
 * The session id of a canonical URI, or `undefined` for anything else (never throws). Canonical
 * means: the scheme, a non-empty base64url payload, valid UTF-8, a JSON string, and re-encoding
 * gives back exactly `uri` (SPEC §2.4).
 *
 * Strict base64url decoding and strict UTF-8 decoding are both one-to-one, so re-encoding gives
 * back `uri` exactly when `JSON.stringify(id)` gives back the decoded JSON text.
 */
export function tryDecodeSessionReferenceUri(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || !uri.startsWith(SESSION_REFERENCE_SCHEME)) return undefined;
  const bytes = decodeBase64url(uri, SESSION_REFERENCE_SCHEME.length);
  const json = bytes && decodeUtf8Strict(bytes);
  if (json === undefined) return undefined;
  if (PLAIN_JSON_STRING.test(json)) return json.slice(1, -1);
  // Not a JSON string at all: no JSON.parse, whose SyntaxError (with its stack) would cost a
  // hostile paste of many such URIs tens of microseconds each (issue 21).
  if (json.length < 2 || json[0] !== '"' || json[json.length - 1] !== '"') return undefined;
  try {
    // An empty payload decodes to the empty JSON text, which does not parse.
    const id: unknown = JSON.parse(json);
    return typeof id === 'string' && JSON.stringify(id) === json ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Decodes a canonical `dsh-session:` URI back to its session id (SPEC §2.4).
 * @example decodeSessionReferenceUri('dsh-session:InNlc3Npb24tNDM0Ig') // 'session-434'
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_REFERENCE` naming the URI when it is
 * not a string or not canonical (padding, non-zero trailing bits, bad UTF-8, non-canonical JSON
 * such as `"\u0041"` or whitespace, non-string JSON, empty payload, wrong scheme).
 */
export function decodeSessionReferenceUri(uri: string): string {
  const id = tryDecodeSessionReferenceUri(uri);
  if (id === undefined) throw fail('INVALID_REFERENCE', notCanonical(uri));
  return id;
}

/** The message of the error for a URI that is not canonical (SPEC §2.4), naming it. */
export function notCanonical(uri: unknown): string {
  return `not a canonical dsh-session URI, got ${describeValue(uri)}`;
}
