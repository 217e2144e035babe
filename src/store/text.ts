/**
 * From a session-log input (text, bytes, zstd frames) to the log's text (SPEC §11.1, §11.2).
 * @module
 */
import { describeValue, fail } from '../errors.js';
import { decodeUtf8Strict } from '../utf8.js';
import { decodeZstdFrames, isZstd } from './zstd.js';

/** What `parseSessionLog` accepts: the log's text, or its bytes (UTF-8 JSON Lines or zstd frames). */
export type SessionLogInput = string | Uint8Array | ArrayBuffer;

const BOM = '\uFEFF';

function tagOf(value: object): string {
  return Object.prototype.toString.call(value);
}

/**
 * The bytes of a binary input: a `Uint8Array` (subclasses such as Node's `Buffer` included, from
 * any realm) as is, an `ArrayBuffer` as a view over it.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` for anything else.
 */
function inputBytes(input: unknown): Uint8Array {
  if (typeof input === 'object' && input !== null) {
    if (ArrayBuffer.isView(input) && tagOf(input) === '[object Uint8Array]') return input as Uint8Array;
    if (tagOf(input) === '[object ArrayBuffer]') return new Uint8Array(input as ArrayBuffer);
  }
  throw fail(
    'INVALID_ARGUMENT',
    `a dsh session log must be a string, a Uint8Array or an ArrayBuffer, got ${describeValue(input)}`,
  );
}

/** `text` without one leading U+FEFF (a UTF-8 BOM). */
function stripBom(text: string): string {
  return text.startsWith(BOM) ? text.slice(1) : text;
}

/**
 * Strict UTF-8 decoding of log bytes, a leading BOM removed.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` for bytes that are not UTF-8.
 */
function decodeLogBytes(bytes: Uint8Array): string {
  const text = decodeUtf8Strict(bytes);
  if (text === undefined) throw fail('INVALID_LOG', 'dsh session log: the bytes are not valid UTF-8');
  return stripBom(text);
}

/**
 * The whole text of a log (SPEC §11.1, §11.2): a string as is; bytes starting with the zstd magic
 * decoded frame by frame (truncated final frame ignored); then strict UTF-8; a leading BOM removed.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` (not a string or bytes),
 * `SESSION_REFERENCE_INVALID_LOG` (corrupt zstd frame, invalid UTF-8).
 */
export function logText(input: unknown): string {
  if (typeof input === 'string') return stripBom(input);
  const bytes = inputBytes(input);
  return decodeLogBytes(isZstd(bytes) ? decodeZstdFrames(bytes) : bytes);
}

/**
 * The first line of a log (without its `\n`), decoding no more than needed: for zstd input, frames
 * up to the first one containing a `\n`; for plain bytes, the bytes before the first `\n`.
 * Returns the whole (decoded) input when it has no `\n`.
 * @throws Like {@link logText}, for the part it reads.
 */
export function firstLogLine(input: unknown): string {
  if (typeof input === 'string') return stripBom(beforeNewline(input));
  const bytes = inputBytes(input);
  const head = isZstd(bytes) ? decodeZstdFrames(bytes, true) : bytes;
  const newline = head.indexOf(0x0a);
  return decodeLogBytes(newline === -1 ? head : head.subarray(0, newline));
}

function beforeNewline(text: string): string {
  const newline = text.indexOf('\n');
  return newline === -1 ? text : text.slice(0, newline);
}
