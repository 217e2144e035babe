/**
 * A validating scan of one JSON Lines row in UTF-8 bytes (SPEC §11.2.6): it checks that the bytes
 * are one JSON value (RFC 8259, as `JSON.parse` accepts it) in valid UTF-8 (as a fatal
 * `TextDecoder` accepts it), without decoding them to a string or building objects, and gives the
 * byte ranges of the values of a few top-level keys of an object.
 *
 * It is sound, never complete: bytes it accepts are bytes `JSON.parse(decode(bytes))` accepts, and
 * whatever it cannot vouch for (a malformed row, a top-level key written with escapes) it refuses,
 * so that its caller reads the row in full and gets today's outcome, errors included.
 *
 * json-scan.wat is the same scan in WebAssembly (run by chunk-scanner.ts where it can run): this
 * one is the reference it is tested against, and scans every row that one does not vouch for.
 * @module
 */

/** The top-level keys whose values a scan reports, by index in {@link ScannedRow.values}. */
export const TOP_LEVEL_KEYS = ['type', 'seq', 'time', 'surfaceOp'] as const;

/** Byte ranges `[start, end)` of the values of {@link TOP_LEVEL_KEYS} (the last one of a repeated key, as `JSON.parse` keeps), `-1` for a key absent. */
export interface ScannedRow {
  /** Start of each key's value, in the order of {@link TOP_LEVEL_KEYS}; `-1` when absent. */
  starts: Int32Array;
  /** End (exclusive) of each key's value. */
  ends: Int32Array;
  /** Times `type` occurred at the top level. */
  types: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Key ids by their bytes (ASCII): index in {@link TOP_LEVEL_KEYS} plus one; 0 for any other key. */
function keyId(bytes: Uint8Array, start: number, end: number): number {
  const length = end - start;
  const first = bytes[start];
  if (length === 4 && first === 0x74) {
    if (bytes[start + 1] === 0x79 && bytes[start + 2] === 0x70 && bytes[start + 3] === 0x65) return 1; // type
    if (bytes[start + 1] === 0x69 && bytes[start + 2] === 0x6d && bytes[start + 3] === 0x65) return 3; // time
    return 0;
  }
  if (length === 3 && first === 0x73 && bytes[start + 1] === 0x65 && bytes[start + 2] === 0x71) return 2; // seq
  if (length === 9 && first === 0x73) {
    const tail = 'urfaceOp';
    for (let i = 0; i < 8; i++) if (bytes[start + 1 + i] !== tail.charCodeAt(i)) return 0;
    return 4; // surfaceOp
  }
  return 0;
}

/**
 * Index after JSON whitespace (space, tab, CR; a line holds no LF) from `i`. dsh writes none, so
 * the scan calls it only when the byte at `i` is at most 0x20 (a call per token costs more than
 * the test).
 */
function skipSpace(bytes: Uint8Array, i: number): number {
  for (;;) {
    const c = bytes[i]!;
    // One test for the usual case: dsh writes no whitespace, so the byte is a token's.
    if (c > 0x20 || (c !== 0x20 && c !== 0x09 && c !== 0x0d)) return i;
    i++;
  }
}

function isHex(c: number | undefined): boolean {
  return c !== undefined && ((c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66));
}

function isContinuation(c: number | undefined): boolean {
  return c !== undefined && (c & 0xc0) === 0x80;
}

/**
 * Index after the UTF-8 sequence that starts at `i` with lead byte `c` (at least 0x80), or -1 when
 * it is not well-formed UTF-8 (overlong forms, surrogates and code points over U+10FFFF refused,
 * as a fatal `TextDecoder` refuses them).
 */
function skipMultibyte(bytes: Uint8Array, i: number, c: number): number {
  const c1 = bytes[i + 1];
  if (c >= 0xc2 && c <= 0xdf) return isContinuation(c1) ? i + 2 : -1;
  if (c >= 0xe0 && c <= 0xef) {
    const low = c === 0xe0 ? 0xa0 : 0x80;
    const high = c === 0xed ? 0x9f : 0xbf;
    if (c1 === undefined || c1 < low || c1 > high || !isContinuation(bytes[i + 2])) return -1;
    return i + 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const low = c === 0xf0 ? 0x90 : 0x80;
    const high = c === 0xf4 ? 0x8f : 0xbf;
    if (c1 === undefined || c1 < low || c1 > high || !isContinuation(bytes[i + 2]) || !isContinuation(bytes[i + 3])) return -1;
    return i + 4;
  }
  return -1;
}

/**
 * Classes of a string's bytes: 1 for the bytes it holds as they are (printable ASCII but `"` and
 * `\\`), 0 for the rest (quote, backslash, controls, UTF-8 sequences, invalid bytes).
 */
const STRING_BYTE = new Uint8Array(256);
for (let c = 0x20; c < 0x80; c++) STRING_BYTE[c] = c === QUOTE || c === BACKSLASH ? 0 : 1;

/**
 * A `DataView` of the row being scanned, for reading its bytes 4 at a time (little-endian, at any
 * alignment): made at the row's first string, dropped when {@link scanRow} returns, so that it
 * never keeps a buffer alive.
 */
let view: DataView | undefined;

/** A `DataView` of `bytes`, kept in {@link view}. */
function viewOf(bytes: Uint8Array): DataView {
  return (view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length));
}

/**
 * The bytes of `x` (4 string bytes, the first one lowest) that are not plain string bytes (class 1
 * of {@link STRING_BYTE}: printable ASCII other than `"` and `\\`), tested at once (SWAR): bit 7 of
 * each such byte set, 0 when all 4 are plain. A byte under 0x20 or over 0x7F sets bit 7 of
 * `x | (x - 0x20202020)`, and a byte equal to `"` or `\\` is a zero byte of `x ^ 0x22222222` or
 * `x ^ 0x5c5c5c5c`, which `(y - 0x01010101) & ~y` marks. A borrow can mark a plain byte too, but
 * only above a byte rightly marked: the lowest mark is always right.
 */
function notPlain(x: number): number {
  const q = x ^ 0x22222222;
  const b = x ^ 0x5c5c5c5c;
  return (x | (x - 0x20202020) | ((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b)) & 0x80808080;
}

/**
 * Index after the string whose opening quote is at `i - 1`, or -1 when it is not a JSON string
 * in valid UTF-8 (a raw control character, a bad escape, an unterminated string).
 */
function skipString(bytes: Uint8Array, i: number): number {
  const end = bytes.length;
  const words = view ?? viewOf(bytes);
  for (;;) {
    // The hot loop: the bulk of a row is string bytes, mostly ASCII: two words a step, then one,
    // up to the first byte that is not plain (the lowest byte marked), then that byte's case.
    let marks = 0;
    while (i + 8 <= end) {
      marks = notPlain(words.getUint32(i, true));
      if (marks !== 0) break;
      marks = notPlain(words.getUint32(i + 4, true));
      if (marks !== 0) {
        i += 4;
        break;
      }
      i += 8;
    }
    if (marks === 0 && i + 4 <= end) {
      marks = notPlain(words.getUint32(i, true));
      if (marks === 0) i += 4;
    }
    if (marks !== 0) i += (31 - Math.clz32(marks & -marks)) >>> 3;
    else while (i < end && STRING_BYTE[bytes[i]!] === 1) i++;
    if (i >= end) return -1;
    const c = bytes[i]!;
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) {
      const e = bytes[i + 1];
      if (e === 0x75) {
        if (!isHex(bytes[i + 2]) || !isHex(bytes[i + 3]) || !isHex(bytes[i + 4]) || !isHex(bytes[i + 5])) return -1;
        i += 6;
      } else if (e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) {
        i += 2;
      } else {
        return -1;
      }
    } else if (c < 0x80) {
      return -1;
    } else if (c >= 0xc2 && c <= 0xdf) {
      // A 2-byte sequence (Latin, Cyrillic, …), the most common kind in logs, inline.
      if ((bytes[i + 1]! & 0xc0) !== 0x80) return -1;
      i += 2;
    } else {
      i = skipMultibyte(bytes, i, c);
      if (i === -1) return -1;
    }
  }
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** Index after the JSON number at `i`, or -1 (`-? (0 | [1-9]\d*) (\.\d+)? ([eE][+-]?\d+)?`). */
function skipNumber(bytes: Uint8Array, i: number): number {
  if (bytes[i] === 0x2d) i++;
  if (bytes[i] === 0x30) i++;
  else if (isDigit(bytes[i])) while (isDigit(bytes[i])) i++;
  else return -1;
  if (bytes[i] === 0x2e) {
    i++;
    if (!isDigit(bytes[i])) return -1;
    while (isDigit(bytes[i])) i++;
  }
  if ((bytes[i]! | 0x20) === 0x65) {
    i++;
    if (bytes[i] === 0x2b || bytes[i] === 0x2d) i++;
    if (!isDigit(bytes[i])) return -1;
    while (isDigit(bytes[i])) i++;
  }
  return i;
}

/** Index after `word` (ASCII) at `i`, or -1. */
function skipWord(bytes: Uint8Array, i: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (bytes[i + k] !== word.charCodeAt(k)) return -1;
  return i + word.length;
}

/** Index after the scalar value (string, number, `true`, `false`, `null`) at `i`, or -1. */
function skipScalar(bytes: Uint8Array, i: number): number {
  const c = bytes[i];
  if (c === QUOTE) return skipString(bytes, i + 1);
  if (c === 0x74) return skipWord(bytes, i, 'true');
  if (c === 0x66) return skipWord(bytes, i, 'false');
  if (c === 0x6e) return skipWord(bytes, i, 'null');
  return skipNumber(bytes, i);
}

const OBJECT = 1;
const ARRAY = 2;

/** The one result of {@link scanRow}, reused: read it before the next scan. */
const SCANNED: ScannedRow = { starts: new Int32Array(TOP_LEVEL_KEYS.length), ends: new Int32Array(TOP_LEVEL_KEYS.length), types: 0 };
/** The container stack of {@link scanRow}, reused. */
const STACK: number[] = [];

/**
 * Scans `bytes` (one line, without its `\n`) as one JSON object in valid UTF-8.
 * @returns Where the values of {@link TOP_LEVEL_KEYS} are (one object, reused by the next scan);
 * `undefined` when the bytes are not one
 * JSON object in valid UTF-8, or a top-level key has an escape (it may spell one of those keys).
 */
export function scanRow(bytes: Uint8Array): ScannedRow | undefined {
  const scanned = scanObject(bytes);
  view = undefined;
  return scanned;
}

/** {@link scanRow} but for the buffer view it leaves behind. */
function scanObject(bytes: Uint8Array): ScannedRow | undefined {
  const end = bytes.length;
  const { starts, ends } = SCANNED;
  starts.fill(-1);
  let types = 0;
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== 0x7b) return undefined;
  /** Open containers, innermost last. */
  const stack = STACK;
  stack.length = 0;
  /** The top-level key whose value is being scanned (its id), 0 for none. */
  let key = 0;
  let expectKey = false;
  for (;;) {
    let c: number | undefined;
    if (expectKey) {
      // After `{` or `,` in an object: a key, `:`, then a value.
      if (bytes[i]! <= 0x20) i = skipSpace(bytes, i);
      if (bytes[i] !== QUOTE) return undefined;
      const start = i + 1;
      i = skipString(bytes, start);
      if (i === -1) return undefined;
      if (stack.length === 1) {
        for (let k = start; k < i - 1; k++) if (bytes[k] === BACKSLASH) return undefined;
        key = keyId(bytes, start, i - 1);
        if (key === 1) types++;
      }
      if (bytes[i]! <= 0x20) i = skipSpace(bytes, i);
      if (bytes[i] !== 0x3a) return undefined;
      i++;
      expectKey = false;
    }
    // A value.
    if (bytes[i]! <= 0x20) i = skipSpace(bytes, i);
    if (key !== 0 && stack.length === 1) starts[key - 1] = i;
    c = bytes[i];
    if (c === 0x7b || c === 0x5b) {
      i = skipSpace(bytes, i + 1);
      const close = c === 0x7b ? 0x7d : 0x5d;
      if (bytes[i] !== close) {
        stack.push(c === 0x7b ? OBJECT : ARRAY);
        if (stack.length === 1) key = 0;
        expectKey = c === 0x7b;
        continue;
      }
      i++;
    } else {
      i = skipScalar(bytes, i);
      if (i === -1) return undefined;
    }
    // After a value: `,` or the container's close, as many times as containers close.
    for (;;) {
      if (stack.length === 1 && key !== 0) {
        ends[key - 1] = i;
        key = 0;
      }
      if (bytes[i]! <= 0x20) i = skipSpace(bytes, i);
      if (stack.length === 0) {
        SCANNED.types = types;
        return i === end ? SCANNED : undefined;
      }
      c = bytes[i];
      const top = stack[stack.length - 1];
      if (c === 0x2c) {
        i++;
        expectKey = top === OBJECT;
        break;
      }
      if ((c === 0x7d && top === OBJECT) || (c === 0x5d && top === ARRAY)) {
        stack.pop();
        i++;
        continue;
      }
      return undefined;
    }
  }
}
