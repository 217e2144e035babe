/**
 * The zstd frame format, headers only (SPEC §11.2, RFC 8878 §3.1): telling zstd bytes from text,
 * and finding each frame's extent from its frame and block headers, without decoding anything,
 * so a truncated final frame (a crash mid-write) can be told apart from a corrupt one. No decoder
 * here: plain-text reads never load one.
 * @module
 */
import { fail } from '../errors.js';
import { isSkippableMagic, readU32, ZSTD_MAGIC } from './magic.js';

export { isSkippableMagic, isZstd, readU32 } from './magic.js';

/** Largest block size a frame may declare (`Block_Maximum_Size`, RFC 8878 §3.1.1.2.3). */
export const MAX_BLOCK_BYTES = 128 * 1024;
/** Largest window accepted, as the reference decoder's default limit (`windowLogMax` 27). */
export const MAX_WINDOW_BYTES = 2 ** 27;

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

/** Little-endian unsigned integer of `size` (0..8) bytes; exact up to 2^53. */
function readUint(bytes: Uint8Array, at: number, size: number): number {
  let value = 0;
  for (let k = size - 1; k >= 0; k--) value = value * 256 + bytes[at + k]!;
  return value;
}

export function corrupt(at: number, what: string, cause?: unknown) {
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
 * @param progress Receives how many block headers were read when the bytes end inside the frame.
 * @returns The extent, or `undefined` when the bytes end before the frame does (a truncated frame).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` for bytes that cannot begin or
 * continue a frame (unknown magic, reserved bits or block type, oversized block or window).
 */
export function scanZstdFrame(bytes: Uint8Array, at: number, progress?: ScanProgress): ZstdFrameExtent | undefined {
  if (bytes.length - at < 4) {
    if (isMagicPrefix(bytes, at)) return undefined;
    throw corrupt(at, 'trailing bytes are not a frame');
  }
  const magic = readU32(bytes, at);
  if (isSkippableMagic(magic)) return scanSkippable(bytes, at);
  if (magic !== ZSTD_MAGIC) throw corrupt(at, `unknown magic number 0x${magic.toString(16)}`);
  return scanDataFrame(bytes, at, progress);
}

/** How far {@link scanZstdFrame} got into a frame the bytes end inside. */
export interface ScanProgress {
  /** Block headers read (0 while the frame header itself is incomplete). */
  blocks: number;
}

function scanSkippable(bytes: Uint8Array, at: number): ZstdFrameExtent | undefined {
  if (bytes.length - at < 8) return undefined;
  const end = at + 8 + readU32(bytes, at + 4);
  if (end > bytes.length) return undefined;
  return { kind: 'skippable', start: at, end, contentSize: undefined, hasChecksum: false, blockCount: 0, windowDescriptorAt: undefined };
}

export interface FrameHeader {
  /** Offset of the first block header. */
  blocksAt: number;
  contentSize: number | undefined;
  hasChecksum: boolean;
  /** The window is the content size (no window descriptor). */
  singleSegment: boolean;
  windowDescriptorAt: number | undefined;
}

/** Reads the frame header at `at` (magic included); `undefined` when truncated. */
export function readFrameHeader(bytes: Uint8Array, at: number): FrameHeader | undefined {
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
  return { blocksAt, contentSize, hasChecksum, singleSegment: singleSegment === 1, windowDescriptorAt: sizedByWindow ? windowAt : undefined };
}

function checkWindow(windowDescriptor: number, at: number): void {
  const base = 2 ** (10 + (windowDescriptor >> 3));
  const windowSize = base + (base / 8) * (windowDescriptor & 7);
  if (windowSize > MAX_WINDOW_BYTES) throw corrupt(at, `window of ${windowSize} bytes exceeds ${MAX_WINDOW_BYTES}`);
}

/** One block header (RFC 8878 §3.1.1.2): whether it is the last block and how many bytes its body takes. */
export interface BlockHeader {
  last: boolean;
  /** Bytes of the block's body after its 3-byte header (1 for an RLE block). */
  bodyBytes: number;
}

/**
 * Reads the 3-byte block header `value` (little-endian) found at byte `pos` of the frame at `frameAt`.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` for a reserved block type or an oversized block.
 */
export function readBlockHeader(value: number, frameAt: number, pos: number): BlockHeader {
  const type = (value >> 1) & 3;
  const size = value >>> 3;
  if (type === 3) throw corrupt(frameAt, `reserved block type at byte ${pos}`);
  if (size > MAX_BLOCK_BYTES) throw corrupt(frameAt, `block of ${size} bytes at byte ${pos}`);
  return { last: (value & 1) === 1, bodyBytes: type === 1 ? 1 : size };
}

function scanDataFrame(bytes: Uint8Array, at: number, progress: ScanProgress = { blocks: 0 }): ZstdFrameExtent | undefined {
  const header = readFrameHeader(bytes, at);
  if (!header) return undefined;
  let pos = header.blocksAt;
  let blocks = 0;
  for (let last = false; !last; blocks++) {
    progress.blocks = blocks;
    if (pos + 3 > bytes.length) return undefined;
    const block = readBlockHeader(bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16), at, pos);
    last = block.last;
    pos += 3 + block.bodyBytes;
  }
  progress.blocks = blocks;
  if (header.hasChecksum) pos += 4;
  if (pos > bytes.length) return undefined;
  const { contentSize, hasChecksum, windowDescriptorAt } = header;
  if (contentSize !== undefined && contentSize > blocks * MAX_BLOCK_BYTES) {
    throw corrupt(at, `declared content size ${contentSize} exceeds what its ${blocks} block(s) can hold`);
  }
  return { kind: 'data', start: at, end: pos, contentSize, hasChecksum, blockCount: blocks, windowDescriptorAt };
}
