/**
 * UTF-8 lengths and code-point stepping over JavaScript strings (SPEC §8.3, §8.4).
 *
 * Byte counts here are raw UTF-8 bytes, with a lone surrogate counted as the 3 bytes of U+FFFD
 * (what `TextEncoder` writes for it).
 * @module
 */

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** UTF-8 bytes of `text` (`TextEncoder`; lone surrogates become U+FFFD). */
export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Decodes well-formed UTF-8 (a BOM is kept as U+FEFF); `undefined` for malformed bytes. */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** True for a UTF-16 high (leading) surrogate code unit. */
export function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/** True for a UTF-16 low (trailing) surrogate code unit. */
export function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** UTF-8 bytes of a single non-pair code unit (a lone surrogate counts 3, as U+FFFD). */
export function unitUtf8Bytes(unit: number): number {
  return unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3;
}

/** Below this many code units a JavaScript loop beats a native call. */
const NATIVE_MIN_UNITS = 64;
/** Code units measured per native call: their UTF-8 (≤ 3 bytes each) always fits the scratch. */
const CHUNK_UNITS = 1 << 14;
let lengthScratch: Uint8Array | undefined;

/**
 * Raw UTF-8 byte length of `text`, without keeping any allocation: equals
 * `TextEncoder.encode(text).length` (so a lone surrogate counts 3 bytes).
 *
 * Long texts go through `TextEncoder.encodeInto` into a small scratch buffer, in chunks that fit
 * it whole and never split a surrogate pair — many times faster than a loop over code units
 * (SPEC §8.3: every dropped text is measured).
 */
export function utf8ByteLength(text: string): number {
  const n = text.length;
  if (n < NATIVE_MIN_UNITS) return utf8ByteLengthOf(text, 0, n);
  const scratch = (lengthScratch ??= new Uint8Array(3 * CHUNK_UNITS));
  if (n <= CHUNK_UNITS) return encoder.encodeInto(text, scratch).written ?? 0;
  let bytes = 0;
  for (let start = 0; start < n; ) {
    let end = Math.min(n, start + CHUNK_UNITS);
    if (end < n && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    bytes += encoder.encodeInto(text.slice(start, end), scratch).written ?? 0;
    start = end;
  }
  return bytes;
}

/** UTF-8 bytes of `text[start, end)` by a loop over code units (lone surrogates: 3). */
function utf8ByteLengthOf(text: string, start: number, end: number): number {
  let bytes = end - start;
  for (let i = start; i < end; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) {
      bytes += 1;
    } else if (isHighSurrogate(unit) && i + 1 < end && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 2;
      i++;
    } else {
      bytes += 2;
    }
  }
  return bytes;
}

/**
 * Number of UTF-16 code units of the whole code point that starts at `index` (2 for a surrogate
 * pair, else 1).
 */
export function codePointUnitsAt(text: string, index: number): 1 | 2 {
  return isHighSurrogate(text.charCodeAt(index)) && isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1;
}

/**
 * Number of UTF-16 code units of the whole code point that ends just before `end` (2 for a
 * surrogate pair, else 1).
 */
export function codePointUnitsBefore(text: string, end: number): 1 | 2 {
  return end >= 2 && isLowSurrogate(text.charCodeAt(end - 1)) && isHighSurrogate(text.charCodeAt(end - 2)) ? 2 : 1;
}
