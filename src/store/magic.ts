/**
 * Telling zstd bytes from text by their first four bytes (SPEC §11.2). Kept apart from the frame
 * scanner and decoder so that plain-text reads load nothing else of zstd.
 * @module
 */

/** Little-endian value of the zstd frame magic `28 B5 2F FD`. */
export const ZSTD_MAGIC = 0xfd2fb528;
/** Skippable frames have magics `0x184D2A50..0x184D2A5F` (little-endian). */
const SKIPPABLE_MAGIC_BASE = 0x184d2a50;

export function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

export function isSkippableMagic(magic: number): boolean {
  return magic >>> 4 === SKIPPABLE_MAGIC_BASE >>> 4;
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
