/**
 * The session-reference URI `dsh-session:<base64url(utf8(JSON.stringify(sessionId)))>` (SPEC §2).
 * @module
 */
import { base64urlDecode, base64urlEncode } from './base64url.js';
import { describeValue, fail } from './errors.js';
import { decodeUtf8Strict, encodeUtf8 } from './utf8.js';

/** The URI scheme, exactly this lowercase spelling (SPEC §2.1). */
export const SESSION_REFERENCE_SCHEME = 'dsh-session:';

/**
 * Encodes a session id as a canonical `dsh-session:` URI (SPEC §2.2, §2.3).
 *
 * Byte-identical to dsh's `Buffer.from(JSON.stringify(id), 'utf8').toString('base64url')`
 * behind the scheme; every JavaScript string round-trips (empty, non-BMP, lone surrogates).
 * @example encodeSessionReferenceUri('session-434') // 'dsh-session:InNlc3Npb24tNDM0Ig'
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_REFERENCE` when `sessionId` is not a string.
 */
export function encodeSessionReferenceUri(sessionId: string): string {
  if (typeof sessionId !== 'string') {
    throw fail('SESSION_REFERENCE_INVALID_REFERENCE', `session id must be a string, got ${describeValue(sessionId)}`);
  }
  return SESSION_REFERENCE_SCHEME + base64urlEncode(encodeUtf8(JSON.stringify(sessionId)));
}

/**
 * The session id of a canonical URI, or `undefined` for anything else (never throws). Canonical
 * means: the scheme, a non-empty base64url payload, valid UTF-8, a JSON string, and re-encoding
 * gives back exactly `uri` (SPEC §2.4).
 */
export function tryDecodeSessionReferenceUri(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || !uri.startsWith(SESSION_REFERENCE_SCHEME)) return undefined;
  const payload = uri.slice(SESSION_REFERENCE_SCHEME.length);
  if (payload.length === 0) return undefined;
  const bytes = base64urlDecode(payload);
  if (bytes === undefined) return undefined;
  const json = decodeUtf8Strict(bytes);
  if (json === undefined) return undefined;
  let id: unknown;
  try {
    id = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof id !== 'string') return undefined;
  return encodeSessionReferenceUri(id) === uri ? id : undefined;
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
  if (id === undefined) {
    throw fail('SESSION_REFERENCE_INVALID_REFERENCE', `not a canonical dsh-session URI: ${describeValue(uri)}`);
  }
  return id;
}
