/**
 * Base64url without padding (RFC 4648 §5), implemented with Web APIs only (SPEC §1.1, §2.2).
 *
 * Decoding is strict: only canonical input (no padding, no characters outside the alphabet, no
 * length ≡ 1 mod 4, zero trailing bits) decodes.
 *
 * Both directions work in a reused scratch buffer: allocating a typed array per short id costs
 * more than the encoding itself.
 * @module
 */
import { decodeUtf8Strict, encodeUtf8Into } from './utf8.js';

/** ASCII codes of the alphabet `A–Z a–z 0–9 - _`, by value. */
const CODES = new TextEncoder().encode('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');

/** Value of each base64url character by char code, -1 for every other ASCII code (read through {@link valueOf}). */
const VALUES = new Int32Array(128).fill(-1);
CODES.forEach((code, value) => (VALUES[code] = value));

/** Size of the shared scratch buffer; longer inputs get buffers of their own. */
const SCRATCH_BYTES = 1 << 14;
let scratch: Uint8Array | undefined;

/** A buffer of at least `size` bytes: the shared scratch when it is large enough. */
function bufferOf(size: number): Uint8Array {
  return size > SCRATCH_BYTES ? new Uint8Array(size) : (scratch ??= new Uint8Array(SCRATCH_BYTES));
}

/**
 * Base64url (no padding) of the UTF-8 of `JSON.stringify(text)` — the payload of a
 * session-reference URI (SPEC §2.2).
 *
 * One buffer holds the UTF-8 bytes, two zero bytes (the bits that fill the last group), then the
 * ASCII codes of the encoding, turned into a string by one native call.
 */
export function base64urlOfJsonString(text: string): string {
  const json = JSON.stringify(text);
  // UTF-8 takes at most 3 bytes per UTF-16 code unit; base64url 4 characters per 3 bytes.
  const buffer = bufferOf(7 * json.length + 6);
  const length = encodeUtf8Into(json, buffer);
  buffer[length] = buffer[length + 1] = 0;
  const start = length + 2;
  let out = start;
  for (let i = 0; i < length; i += 3) {
    const group = (buffer[i]! << 16) | (buffer[i + 1]! << 8) | buffer[i + 2]!;
    buffer[out++] = CODES[group >> 18]!;
    buffer[out++] = CODES[(group >> 12) & 63]!;
    buffer[out++] = CODES[(group >> 6) & 63]!;
    buffer[out++] = CODES[group & 63]!;
  }
  // Without padding: the characters that carry the bytes' bits (the last group may hold 1 or 2).
  return decodeUtf8Strict(buffer.subarray(start, start + Math.ceil((4 * length) / 3)))!;
}

/**
 * Value of the base64url character whose char code is `code`, -1 for every other code: the table
 * is read at `code & 127`, always in bounds (an out-of-bounds typed-array read would slow the
 * whole loop down), and a code above 127 turns the value into -1 by its sign bit.
 */
function valueOf(code: number): number {
  return VALUES[code & 127]! | ((127 - code) >> 31);
}

/**
 * The bytes of canonical unpadded base64url `text.slice(from)`, or `undefined` when it has a
 * character outside the alphabet, a length ≡ 1 (mod 4), or non-zero trailing bits.
 *
 * Full groups are decoded in one loop without bounds checks; a -1 (a character outside the
 * alphabet) makes its group negative, which the OR of all groups remembers. A short last group
 * (2 or 3 characters) reads as completed with zero bits.
 *
 * The bytes are a view of a shared scratch buffer: valid until the next call.
 */
export function decodeBase64url(text: string, from: number): Uint8Array | undefined {
  const n = text.length - from;
  const tail = n % 4;
  if (tail === 1) return undefined;
  const bytes = bufferOf(n);
  const fullEnd = text.length - tail;
  let length = 0;
  let groups = 0;
  for (let i = from; i < fullEnd; i += 4) {
    const group =
      (valueOf(text.charCodeAt(i)) << 18) |
      (valueOf(text.charCodeAt(i + 1)) << 12) |
      (valueOf(text.charCodeAt(i + 2)) << 6) |
      valueOf(text.charCodeAt(i + 3));
    groups |= group;
    bytes[length++] = group >> 16;
    bytes[length++] = group >> 8;
    bytes[length++] = group;
  }
  if (tail) {
    const group =
      (valueOf(text.charCodeAt(fullEnd)) << 18) |
      (valueOf(text.charCodeAt(fullEnd + 1)) << 12) |
      (tail === 3 ? valueOf(text.charCodeAt(fullEnd + 2)) << 6 : 0);
    groups |= group;
    bytes[length] = group >> 16;
    bytes[length + 1] = group >> 8;
    // Canonical: the trailing bits of a short last group, which would go into the byte after the
    // decoded ones, are zero.
    if ((tail === 2 ? group & 0xffff : group & 0xff) !== 0) return undefined;
  }
  return groups < 0 ? undefined : bytes.subarray(0, (3 * n) >> 2);
}
