/**
 * Base64url without padding (RFC 4648 §5), implemented with Web APIs only (SPEC §1.1, §2.2).
 *
 * Where the runtime has `Uint8Array.prototype.toBase64` it is used as a fast path; its output is
 * identical. Decoding is strict: only canonical input (no padding, no characters outside the
 * alphabet, no length ≡ 1 mod 4, zero trailing bits) decodes.
 * @module
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Value of each base64url character by char code, -1 for every other code. */
const VALUES = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;

/** Pairs of alphabet characters for every 12-bit value: halves the work of the encoding loop. */
const PAIRS: string[] = [];
for (let i = 0; i < 4096; i++) PAIRS.push(ALPHABET[i >> 6]! + ALPHABET[i & 63]!);

type NativeToBase64 = (this: Uint8Array, options: { alphabet: 'base64url'; omitPadding: boolean }) => string;
const nativeToBase64 = (Uint8Array.prototype as unknown as { toBase64?: NativeToBase64 }).toBase64;

/** True for the char codes of `[A-Za-z0-9_-]`. */
export function isBase64urlCode(code: number): boolean {
  return code < 128 && VALUES[code]! >= 0;
}

/** Base64url of `bytes`, without padding. */
export function base64urlEncode(bytes: Uint8Array): string {
  if (nativeToBase64) return nativeToBase64.call(bytes, { alphabet: 'base64url', omitPadding: true });
  let out = '';
  const whole = bytes.length - (bytes.length % 3);
  for (let i = 0; i < whole; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += PAIRS[n >> 12]! + PAIRS[n & 4095]!;
  }
  const rest = bytes.length - whole;
  if (rest === 1) {
    const n = bytes[whole]!;
    out += ALPHABET[n >> 2]! + ALPHABET[(n & 3) << 4]!;
  } else if (rest === 2) {
    const n = (bytes[whole]! << 8) | bytes[whole + 1]!;
    out += ALPHABET[n >> 10]! + ALPHABET[(n >> 4) & 63]! + ALPHABET[(n & 15) << 2]!;
  }
  return out;
}

/**
 * Bytes of canonical unpadded base64url `text`; `undefined` when `text` has a character outside
 * the alphabet, a length ≡ 1 (mod 4), or non-zero trailing bits.
 */
export function base64urlDecode(text: string): Uint8Array | undefined {
  const n = text.length;
  if (n % 4 === 1) return undefined;
  const out = new Uint8Array(Math.floor((n * 3) / 4));
  let o = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < n; i++) {
    const code = text.charCodeAt(i);
    const value = code < 128 ? VALUES[code]! : -1;
    if (value < 0) return undefined;
    acc = ((acc << 6) | value) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) return undefined;
  return out;
}
