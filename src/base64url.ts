/**
 * Base64url without padding (RFC 4648 §5), implemented with Web APIs only (SPEC §1.1, §2.2).
 *
 * Where the runtime has `Uint8Array.prototype.toBase64` it is used as a fast path; its output is
 * identical. Decoding is strict: only canonical input (no padding, no characters outside the
 * alphabet, no length ≡ 1 mod 4, zero trailing bits) decodes.
 *
 * The URI codec (SPEC §2) goes through {@link base64urlOfJsonString} and {@link decodeBase64urlInto},
 * which work in a reused scratch buffer: allocating a typed array per short id costs more than the
 * encoding itself.
 * @module
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Value of each base64url character by char code, -1 for every other code. */
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;

/** Char codes of the alphabet. */
const CODES = new Uint8Array(64);
for (let i = 0; i < ALPHABET.length; i++) CODES[i] = ALPHABET.charCodeAt(i);

type NativeToBase64 = (this: Uint8Array, options: { alphabet: 'base64url'; omitPadding: boolean }) => string;
const nativeToBase64 = (Uint8Array.prototype as unknown as { toBase64?: NativeToBase64 }).toBase64;

/** Largest scratch buffers kept between calls; longer inputs get buffers of their own. */
const MAX_SCRATCH = 1 << 16;
/** Scratch buffers: [0] for bytes, [1] for encoded characters. */
const scratch: Uint8Array[] = [new Uint8Array(1024), new Uint8Array(1024)];

/** A buffer of at least `size` bytes: the shared scratch `slot` when it is small enough. */
function bufferFor(size: number, slot = 0): Uint8Array {
  if (size > MAX_SCRATCH) return new Uint8Array(size);
  if (size > scratch[slot]!.length) scratch[slot] = new Uint8Array(Math.min(MAX_SCRATCH, Math.max(size, 2 * scratch[slot]!.length)));
  return scratch[slot]!;
}

/** Turns ASCII bytes into a string in one native call (the base64url alphabet is ASCII). */
const asciiDecoder = new TextDecoder();

/** True for the char codes of `[A-Za-z0-9_-]`. */
export function isBase64urlCode(code: number): boolean {
  return code < 128 && VALUES[code]! >= 0;
}

/** Base64url of `bytes`, without padding. */
export function base64urlEncode(bytes: Uint8Array): string {
  return encodeToString(bytes, bytes.length);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * `prefix + base64urlEncode(utf8(JSON.stringify(text)))` for a string `text` and an ASCII
 * `prefix` — a session-reference URI (SPEC §2.2) — in one flat string, without allocating per
 * call: the usual id needs no JSON escape, so its JSON text is written byte by byte; any other
 * goes through `JSON.stringify`.
 */
export function base64urlOfJsonString(text: string, prefix = ''): string {
  let bytes = bufferFor(3 * text.length + 2);
  let length = writePlainJsonString(text, bytes);
  if (length < 0) {
    const json = JSON.stringify(text);
    bytes = bufferFor(3 * json.length);
    length = utf8Encoder.encodeInto(json, bytes).written ?? 0;
  }
  return encodeToString(bytes, length, prefix);
}

const utf8Encoder = new TextEncoder();

/**
 * Writes `"` + the UTF-8 of `text` + `"` into `bytes` and returns the length; -1 as soon as a
 * character needs a JSON escape (`"`, `\`, a control character, a lone surrogate).
 */
function writePlainJsonString(text: string, bytes: Uint8Array): number {
  const n = text.length;
  let length = 0;
  bytes[length++] = QUOTE;
  for (let i = 0; i < n; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      if (code < 0x20 || code === QUOTE || code === BACKSLASH) return -1;
      bytes[length++] = code;
    } else if (code < 0x800) {
      bytes[length++] = 0xc0 | (code >> 6);
      bytes[length++] = 0x80 | (code & 0x3f);
    } else if (code < 0xd800 || code > 0xdfff) {
      bytes[length++] = 0xe0 | (code >> 12);
      bytes[length++] = 0x80 | ((code >> 6) & 0x3f);
      bytes[length++] = 0x80 | (code & 0x3f);
    } else {
      const next = text.charCodeAt(i + 1);
      if (code > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) return -1;
      code = 0x10000 + ((code - 0xd800) << 10) + (next - 0xdc00);
      bytes[length++] = 0xf0 | (code >> 18);
      bytes[length++] = 0x80 | ((code >> 12) & 0x3f);
      bytes[length++] = 0x80 | ((code >> 6) & 0x3f);
      bytes[length++] = 0x80 | (code & 0x3f);
      i++;
    }
  }
  bytes[length++] = QUOTE;
  return length;
}

/**
 * `prefix` (ASCII) + base64url (no padding) of `bytes[0, length)`, built as ASCII codes and
 * turned into one flat string by a single native call.
 */
function encodeToString(bytes: Uint8Array, length: number, prefix = ''): string {
  if (nativeToBase64) return prefix + nativeToBase64.call(bytes.subarray(0, length), { alphabet: 'base64url', omitPadding: true });
  const out = bufferFor(prefix.length + Math.ceil((length * 4) / 3), 1);
  let o = 0;
  for (; o < prefix.length; o++) out[o] = prefix.charCodeAt(o);
  const whole = length - (length % 3);
  for (let i = 0; i < whole; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out[o++] = CODES[n >> 18]!;
    out[o++] = CODES[(n >> 12) & 63]!;
    out[o++] = CODES[(n >> 6) & 63]!;
    out[o++] = CODES[n & 63]!;
  }
  const rest = length - whole;
  if (rest === 1) {
    const n = bytes[whole]!;
    out[o++] = CODES[n >> 2]!;
    out[o++] = CODES[(n & 3) << 4]!;
  } else if (rest === 2) {
    const n = (bytes[whole]! << 8) | bytes[whole + 1]!;
    out[o++] = CODES[n >> 10]!;
    out[o++] = CODES[(n >> 4) & 63]!;
    out[o++] = CODES[(n & 15) << 2]!;
  }
  return asciiDecoder.decode(out.subarray(0, o));
}

/**
 * Bytes of canonical unpadded base64url `text`; `undefined` when `text` has a character outside
 * the alphabet, a length ≡ 1 (mod 4), or non-zero trailing bits.
 */
export function base64urlDecode(text: string): Uint8Array | undefined {
  const length = decodeBase64urlInto(text, 0, text.length);
  return length < 0 ? undefined : decodedBytes.slice(0, length);
}

/** The buffer the last {@link decodeBase64urlInto} wrote to; valid until the next call. */
export let decodedBytes: Uint8Array = scratch[0]!;

/**
 * Decodes canonical unpadded base64url `text.slice(from, to)` into {@link decodedBytes} (see
 * {@link base64urlDecode} for what is canonical) and returns the byte count; -1 otherwise.
 */
export function decodeBase64urlInto(text: string, from: number, to: number): number {
  const n = to - from;
  if (n % 4 === 1) return -1;
  const bytes = bufferFor(Math.floor((n * 3) / 4));
  decodedBytes = bytes;
  let o = 0;
  const whole = to - (n % 4);
  let i = from;
  for (; i < whole; i += 4) {
    const a = text.charCodeAt(i);
    const b = text.charCodeAt(i + 1);
    const c = text.charCodeAt(i + 2);
    const d = text.charCodeAt(i + 3);
    if ((a | b | c | d) >= 128) return -1;
    const va = VALUES[a]!;
    const vb = VALUES[b]!;
    const vc = VALUES[c]!;
    const vd = VALUES[d]!;
    if ((va | vb | vc | vd) < 0) return -1;
    const value = (va << 18) | (vb << 12) | (vc << 6) | vd;
    bytes[o++] = value >> 16;
    bytes[o++] = (value >> 8) & 0xff;
    bytes[o++] = value & 0xff;
  }
  const rest = to - i;
  if (rest > 0) {
    let acc = 0;
    for (; i < to; i++) {
      const code = text.charCodeAt(i);
      const value = code < 128 ? VALUES[code]! : -1;
      if (value < 0) return -1;
      acc = (acc << 6) | value;
    }
    if (rest === 2) {
      if ((acc & 0xf) !== 0) return -1;
      bytes[o++] = acc >> 4;
    } else {
      if ((acc & 0x3) !== 0) return -1;
      bytes[o++] = acc >> 10;
      bytes[o++] = (acc >> 2) & 0xff;
    }
  }
  return o;
}
