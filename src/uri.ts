/**
 * The session-reference URI `dsh-session:<base64url(utf8(JSON.stringify(sessionId)))>` (SPEC §2).
 * @module
 */
import { base64urlOfJsonString, decodeBase64urlInto, decodedBytes } from './base64url.js';
import { describeValue, fail } from './errors.js';
import { decodeUtf8Strict } from './utf8.js';

/** The URI scheme, exactly this lowercase spelling (SPEC §2.1). */
export const SESSION_REFERENCE_SCHEME = 'dsh-session:';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

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
  return base64urlOfJsonString(sessionId, SESSION_REFERENCE_SCHEME);
}

/**
 * The session id of a canonical URI, or `undefined` for anything else (never throws). Canonical
 * means: the scheme, a non-empty base64url payload, valid UTF-8, a JSON string, and re-encoding
 * gives back exactly `uri` (SPEC §2.4).
 *
 * Strict base64url decoding and strict UTF-8 decoding are both one-to-one, so re-encoding gives
 * back `uri` exactly when `JSON.stringify(id)` gives back the decoded JSON text. A JSON text
 * that is `"`, then no `"`, `\` or control character, then `"`, is such a text as it stands
 * (`JSON.stringify` escapes nothing else in a well-formed string), so the usual id needs neither
 * `JSON.parse` nor `JSON.stringify`.
 */
export function tryDecodeSessionReferenceUri(uri: unknown): string | undefined {
  if (typeof uri !== 'string' || !uri.startsWith(SESSION_REFERENCE_SCHEME)) return undefined;
  return tryDecodeSessionReferencePayload(uri, SESSION_REFERENCE_SCHEME.length, uri.length);
}

/**
 * {@link tryDecodeSessionReferenceUri} of the URI whose payload is `text.slice(start, end)`,
 * without building the URI (the mention scanner decodes in place).
 */
export function tryDecodeSessionReferencePayload(text: string, start: number, end: number): string | undefined {
  if (end <= start) return undefined;
  const length = decodeBase64urlInto(text, start, end);
  if (length < 0) return undefined;
  const bytes = decodedBytes;
  let plain = length >= 2 && bytes[0] === QUOTE && bytes[length - 1] === QUOTE;
  for (let i = 1; plain && i < length - 1; i++) {
    const byte = bytes[i]!;
    if (byte < 0x20 || byte === QUOTE || byte === BACKSLASH) plain = false;
  }
  // `"` + text + `"` is valid UTF-8 exactly when the text between the quotes is.
  if (plain) return decodeUtf8Strict(bytes.subarray(1, length - 1));
  const json = decodeUtf8Strict(bytes.subarray(0, length));
  if (json === undefined) return undefined;
  let id: unknown;
  try {
    id = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof id !== 'string') return undefined;
  return JSON.stringify(id) === json ? id : undefined;
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
