/**
 * The window a zstd frame declares, and the cap a read holds it to (SPEC §11.2, §11.2.2; issue 28
 * item 4). A frame's window is what its decoder must keep in memory; a 4 KB frame may declare
 * 128 MiB. The module's libzstd build exports no `ZSTD_DCtx_setParameter`, so
 * `ZSTD_d_windowLogMax` cannot be set on it: the same rule is applied here, to the frame header,
 * before a frame's first byte reaches libzstd, and so holds for its WebAssembly and JavaScript
 * forms alike. The rule is libzstd's own (`ZSTD_getFrameHeader`, then the check of
 * `ZSTD_decompressStream`): the window is the `Window_Descriptor`'s size, or for a single-segment
 * frame its content size, at least 1 KiB; a window over the cap is refused.
 * @module
 */
import { fail } from '../errors.js';

/**
 * Largest window a read accepts: 8 MiB (`ZSTD_d_windowLogMax` 23). dsh compresses each write batch
 * with Node's `zstdCompress` at its default level 3 (windowLog at most 21, 2 MiB), and the `zstd`
 * CLI writes at most windowLog 23 (8 MiB, level 19) at every level short of `--ultra` (20–22:
 * 32–128 MiB) and `--long` (128 MiB). Those two are refused: a frame over the cap is
 * `SESSION_REFERENCE_INVALID_LOG`; re-compress such a log without them.
 */
export const MAX_WINDOW_BYTES = 8 * 1024 * 1024;

/** libzstd's smallest window (`ZSTD_WINDOWLOG_ABSOLUTEMIN`: 1 KiB). */
const MIN_WINDOW_BYTES = 1024;

/** Bytes of the frame content size field by `Frame_Content_Size_flag` (single-segment frames: 1 for flag 0). */
const CONTENT_SIZE_BYTES = [0, 2, 4, 8];
/** Bytes of the dictionary id field by `Dictionary_ID_flag`. */
const DICTIONARY_ID_BYTES = [0, 1, 2, 4];

/**
 * Bytes of a zstd frame header, magic included, from its `Frame_Header_Descriptor` (RFC 8878
 * §3.1.1.1): 4 magic + 1 descriptor + window descriptor + dictionary id + content size.
 */
export function frameHeaderBytes(descriptor: number): number {
  const singleSegment = (descriptor & 0x20) !== 0;
  const sizeFlag = descriptor >> 6;
  const sizeBytes = singleSegment && sizeFlag === 0 ? 1 : CONTENT_SIZE_BYTES[sizeFlag]!;
  return 5 + (singleSegment ? 0 : 1) + DICTIONARY_ID_BYTES[descriptor & 3]! + sizeBytes;
}

/** A little-endian unsigned value of `count` (at most 8) bytes, as a number (exact below 2^53). */
function readLE(bytes: Uint8Array, at: number, count: number): number {
  let value = 0;
  for (let i = count - 1; i >= 0; i--) value = value * 256 + bytes[at + i]!;
  return value;
}

/**
 * The window a frame declares, in bytes, from its whole header (`header`: at least
 * {@link frameHeaderBytes} bytes, magic included): libzstd's `windowSize`. `undefined` for a header
 * libzstd refuses on its own (the reserved bit set), left to it.
 */
export function frameWindowBytes(header: Uint8Array): number | undefined {
  const descriptor = header[4]!;
  if ((descriptor & 0x08) !== 0) return undefined;
  let window: number;
  if ((descriptor & 0x20) !== 0) {
    const sizeFlag = descriptor >> 6;
    const at = 5 + DICTIONARY_ID_BYTES[descriptor & 3]!;
    window = sizeFlag === 0 ? header[at]! : readLE(header, at, CONTENT_SIZE_BYTES[sizeFlag]!) + (sizeFlag === 1 ? 256 : 0);
  } else {
    const exponent = header[5]! >> 3;
    const mantissa = header[5]! & 7;
    const base = 2 ** (10 + exponent);
    window = base + (base / 8) * mantissa;
  }
  return Math.max(window, MIN_WINDOW_BYTES);
}

/** Bytes for a message: `8 MiB (8388608 bytes)` in the largest binary unit that divides them, else `1500 bytes`. */
function describeBytes(bytes: number): string {
  for (const [unit, size] of [['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit} (${bytes} bytes)`;
  }
  return `${bytes} bytes`;
}

/**
 * Checks the window of the frame whose header is `header` against `cap`.
 * @param at Offset of the frame in the log, for the message.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` naming the frame's offset, the window and the cap
 * ("corrupt zstd frame at byte 0: window of 128 MiB (134217728 bytes) over the 8 MiB (8388608 bytes) …").
 */
export function checkFrameWindow(header: Uint8Array, at: number, cap = MAX_WINDOW_BYTES): void {
  const window = frameWindowBytes(header);
  if (window === undefined || window <= cap) return;
  throw fail(
    'INVALID_LOG',
    `dsh session log: corrupt zstd frame at byte ${at}: window of ${describeBytes(window)} over the ${describeBytes(cap)} a read accepts (ZSTD_d_windowLogMax ${Math.log2(cap)})`,
  );}
