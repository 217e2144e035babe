/**
 * zstd-compressed session logs (SPEC §11.2): a sequence of zstd frames (dsh writes one frame for
 * the header line and one per write batch), decoded frame by frame with the pure-JS `fzstd`.
 *
 * A small scanner finds each frame's extent from its headers (RFC 8878 §3.1), so a truncated final
 * frame (a crash mid-write) can be told apart from a corrupt one: the former is ignored like a
 * torn line, the latter is `SESSION_REFERENCE_INVALID_LOG`. `fzstd` verifies no checksum, so a
 * frame's content checksum, when present, is verified here; a declared content size is checked
 * against the output where `fzstd` does not already size its output by it (it zero-fills a short
 * one, so without a checksum a short frame shows only as invalid JSON).
 * @module
 */
import { decompress } from 'fzstd';
import { describeValue, fail } from '../errors.js';
import { xxh64 } from './xxhash64.js';

/** Little-endian value of the zstd frame magic `28 B5 2F FD`. */
const ZSTD_MAGIC = 0xfd2fb528;
/** Skippable frames have magics `0x184D2A50..0x184D2A5F` (little-endian). */
const SKIPPABLE_MAGIC_BASE = 0x184d2a50;
/** Largest block size a frame may declare (`Block_Maximum_Size`, RFC 8878 §3.1.1.2.3). */
const MAX_BLOCK_BYTES = 128 * 1024;
/** Largest window accepted, as the reference decoder's default limit (`windowLogMax` 27). */
const MAX_WINDOW_BYTES = 2 ** 27;

/** Extent of one complete frame inside a byte sequence, as found by {@link scanZstdFrame}. */
export interface ZstdFrameExtent {
  /** `'data'` for a zstd frame, `'skippable'` for a skippable frame (no content). */
  kind: 'data' | 'skippable';
  /** Offset of the frame's first byte (its magic). */
  start: number;
  /** Offset just past the frame's last byte. */
  end: number;
  /** The declared `Frame_Content_Size` in bytes, when the header has one. */
  contentSize: number | undefined;
  /** The frame ends with a 4-byte content checksum (low 32 bits of XXH64). */
  hasChecksum: boolean;
  /** Number of blocks (each regenerates at most 128 KiB). */
  blockCount: number;
  /** Offset of the window descriptor byte, for a frame sized by its window alone (no content size). */
  windowDescriptorAt: number | undefined;
}

/**
 * True when `bytes` starts with the zstd frame magic `28 B5 2F FD` (SPEC §11.2), or with a
 * skippable frame magic `5? 2A 4D 18` (a zstd stream may open with one; no text log can).
 */
export function isZstd(bytes: Uint8Array): boolean {
  if (bytes.length < 4) return false;
  const magic = readU32(bytes, 0);
  return magic === ZSTD_MAGIC || isSkippableMagic(magic);
}

function isSkippableMagic(magic: number): boolean {
  return magic >>> 4 === SKIPPABLE_MAGIC_BASE >>> 4;
}

function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

/** Little-endian unsigned integer of `size` (0..8) bytes; exact up to 2^53. */
function readUint(bytes: Uint8Array, at: number, size: number): number {
  let value = 0;
  for (let k = size - 1; k >= 0; k--) value = value * 256 + bytes[at + k]!;
  return value;
}

function corrupt(at: number, what: string, cause?: unknown) {
  return fail('INVALID_LOG', `dsh session log: corrupt zstd frame at byte ${at}: ${what}`, cause);
}

/** True when the bytes from `at` to the end are a proper prefix of a frame magic (a torn start). */
function isMagicPrefix(bytes: Uint8Array, at: number): boolean {
  const zstd = [0x28, 0xb5, 0x2f, 0xfd];
  const skippable = [0x50, 0x2a, 0x4d, 0x18];
  for (let k = at; k < bytes.length; k++) {
    const i = k - at;
    const byte = bytes[k]!;
    const okZstd = byte === zstd[i];
    const okSkip = i === 0 ? (byte & 0xf0) === 0x50 : byte === skippable[i];
    if (!okZstd && !okSkip) return false;
  }
  return true;
}

/**
 * The extent of the frame starting at byte offset `at` of `bytes` (RFC 8878 §3.1.1: frame header
 * descriptor, window descriptor, dictionary id, frame content size, blocks with raw / RLE /
 * compressed bodies, optional checksum; skippable frames by their size field). Only headers are
 * read, never block contents.
 * @returns The extent, or `undefined` when the bytes end before the frame does (a truncated frame).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` for bytes that cannot begin or
 * continue a frame (unknown magic, reserved bits or block type, oversized block or window).
 */
export function scanZstdFrame(bytes: Uint8Array, at: number): ZstdFrameExtent | undefined {
  if (bytes.length - at < 4) {
    if (isMagicPrefix(bytes, at)) return undefined;
    throw corrupt(at, 'trailing bytes are not a frame');
  }
  const magic = readU32(bytes, at);
  if (isSkippableMagic(magic)) return scanSkippable(bytes, at);
  if (magic !== ZSTD_MAGIC) throw corrupt(at, `unknown magic number 0x${magic.toString(16)}`);
  return scanDataFrame(bytes, at);
}

function scanSkippable(bytes: Uint8Array, at: number): ZstdFrameExtent | undefined {
  if (bytes.length - at < 8) return undefined;
  const end = at + 8 + readU32(bytes, at + 4);
  if (end > bytes.length) return undefined;
  return { kind: 'skippable', start: at, end, contentSize: undefined, hasChecksum: false, blockCount: 0, windowDescriptorAt: undefined };
}

interface FrameHeader {
  /** Offset of the first block header. */
  blocksAt: number;
  contentSize: number | undefined;
  hasChecksum: boolean;
  windowDescriptorAt: number | undefined;
}

/** Reads the frame header at `at` (magic included); `undefined` when truncated. */
function readFrameHeader(bytes: Uint8Array, at: number): FrameHeader | undefined {
  if (bytes.length - at < 5) return undefined;
  const descriptor = bytes[at + 4]!;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  if (descriptor & 0x08) throw corrupt(at, 'reserved bit of the frame header descriptor is set');
  const dictBytes = [0, 1, 2, 4][descriptor & 3]!;
  const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
  const windowAt = at + 5;
  const fcsAt = windowAt + (singleSegment ? 0 : 1) + dictBytes;
  const blocksAt = fcsAt + fcsBytes;
  if (blocksAt > bytes.length) return undefined;
  if (!singleSegment) checkWindow(bytes[windowAt]!, at);
  const dictionaryId = readUint(bytes, fcsAt - dictBytes, dictBytes);
  if (dictionaryId !== 0) throw corrupt(at, `it needs dictionary ${dictionaryId}, which dsh logs never use`);
  let contentSize: number | undefined;
  if (fcsBytes > 0) contentSize = readUint(bytes, fcsAt, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
  const hasChecksum = ((descriptor >> 2) & 1) === 1;
  const sizedByWindow = !singleSegment && contentSize === undefined;
  return { blocksAt, contentSize, hasChecksum, windowDescriptorAt: sizedByWindow ? windowAt : undefined };
}

function checkWindow(windowDescriptor: number, at: number): void {
  const base = 2 ** (10 + (windowDescriptor >> 3));
  const windowSize = base + (base / 8) * (windowDescriptor & 7);
  if (windowSize > MAX_WINDOW_BYTES) throw corrupt(at, `window of ${windowSize} bytes exceeds ${MAX_WINDOW_BYTES}`);
}

function scanDataFrame(bytes: Uint8Array, at: number): ZstdFrameExtent | undefined {
  const header = readFrameHeader(bytes, at);
  if (!header) return undefined;
  let pos = header.blocksAt;
  let blocks = 0;
  for (let last = false; !last; blocks++) {
    if (pos + 3 > bytes.length) return undefined;
    const blockHeader = bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16);
    last = (blockHeader & 1) === 1;
    const type = (blockHeader >> 1) & 3;
    const size = blockHeader >>> 3;
    if (type === 3) throw corrupt(at, `reserved block type at byte ${pos}`);
    if (size > MAX_BLOCK_BYTES) throw corrupt(at, `block of ${size} bytes at byte ${pos}`);
    pos += 3 + (type === 1 ? 1 : size);
  }
  if (header.hasChecksum) pos += 4;
  if (pos > bytes.length) return undefined;
  const { contentSize, hasChecksum, windowDescriptorAt } = header;
  if (contentSize !== undefined && contentSize > blocks * MAX_BLOCK_BYTES) {
    throw corrupt(at, `declared content size ${contentSize} exceeds what its ${blocks} block(s) can hold`);
  }
  return { kind: 'data', start: at, end: pos, contentSize, hasChecksum, blockCount: blocks, windowDescriptorAt };
}

/**
 * Decodes one complete data frame found by {@link scanZstdFrame}, verifying its declared content
 * size and its checksum when present.
 * @returns The decoded bytes.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` (cause: the decoder's error) when
 * the frame does not decode, or decodes to the wrong size or checksum.
 */
export function decodeZstdFrame(bytes: Uint8Array, frame: ZstdFrameExtent): Uint8Array {
  let out: Uint8Array;
  try {
    out = decompress(withBoundedWindow(bytes, frame));
  } catch (error) {
    throw corrupt(frame.start, `it does not decode (${describeValue(error)})`, error);
  }
  if (frame.contentSize !== undefined && out.length !== frame.contentSize) {
    throw corrupt(frame.start, `decoded ${out.length} bytes, the header declares ${frame.contentSize}`);
  }
  if (frame.hasChecksum && xxh64(out)[1] !== readU32(bytes, frame.end - 4)) {
    throw corrupt(frame.start, 'content checksum mismatch');
  }
  return out;
}

/**
 * The frame's bytes for `fzstd`. A frame without content size makes `fzstd` allocate, and slide
 * per block, a buffer of the declared window (often 8 MiB for a batch of a few lines). No match can
 * reach further back than the frame's own output, at most 128 KiB per block, so a copy declaring
 * the smallest window that covers that bound decodes identically, and much faster.
 */
function withBoundedWindow(bytes: Uint8Array, frame: ZstdFrameExtent): Uint8Array {
  const data = bytes.subarray(frame.start, frame.end);
  const at = frame.windowDescriptorAt;
  if (at === undefined) return data;
  let exponent = 0;
  while (2 ** (10 + exponent) < frame.blockCount * MAX_BLOCK_BYTES) exponent++;
  const descriptor = exponent << 3; // window 2^(10 + exponent), mantissa 0
  if (descriptor >= bytes[at]!) return data;
  const copy = data.slice();
  copy[at - frame.start] = descriptor;
  return copy;
}

/**
 * Decodes a sequence of zstd frames (SPEC §11.2): every complete data frame, in order,
 * concatenated; skippable frames are skipped; a truncated final frame is ignored.
 * @param bytes The compressed log (starting with the zstd magic).
 * @param stopAfterNewline Stop after the first data frame whose content contains a `\n` byte
 *   (default `false`): enough to read the header line without decoding the rest.
 * @returns The decoded bytes (UTF-8 JSON Lines, not yet validated).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` for a corrupt frame or bytes that
 * are not frames.
 */
export function decodeZstdFrames(bytes: Uint8Array, stopAfterNewline = false): Uint8Array {
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; ) {
    const frame = scanZstdFrame(bytes, at);
    if (!frame) break;
    at = frame.end;
    if (frame.kind === 'skippable') continue;
    const chunk = decodeZstdFrame(bytes, frame);
    chunks.push(chunk);
    if (stopAfterNewline && chunk.includes(0x0a)) break;
  }
  return concatBytes(chunks);
}

/** The bytes of `chunks` in order, as one array (the chunk itself when there is only one). */
export function concatBytes(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  let total = 0;
  for (const chunk of chunks) total += chunk.length;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
