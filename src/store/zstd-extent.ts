/**
 * Where a zstd data frame ends in the compressed bytes, found from its block headers alone, without
 * decoding it (RFC 8878 §3.1.1: a frame header, blocks each led by a 3-byte header giving its
 * last-block flag, type and size, then a 4-byte checksum when the header says so). `ZstdStream`
 * runs one beside libzstd over each frame, and on its own once a line of the frame has failed:
 * whether the frame then ends (the line's error stands) or the input ends first (a truncated final
 * frame, ignored with its lines, SPEC §11.2) is known without decoding the rest of the frame, which
 * could be a decompression bomb.
 * @module
 */
import { frameHeaderBytes, frameWindowBytes } from './zstd-window.js';

/** The block type RFC 8878 reserves: no frame holds one (libzstd's error, when decoded). */
const RESERVED_BLOCK = 3;

/** `Block_Maximum_Size` (RFC 8878 §3.1.1.2.4): no block yields more, whatever the window. */
const MAX_BLOCK_BYTES = 128 * 1024;

/**
 * The walk over one data frame's compressed bytes, fed in order from the frame's first byte (its
 * magic number); {@link ended} once its last block, and checksum, have passed.
 */
export class FrameExtent {
  /** Bytes of the part being walked that are still to come (header, block content, checksum). */
  private remaining: number;
  /** What those bytes are. */
  private part: 'header' | 'block' | 'checksum' = 'header';
  /** The last block has started. */
  private lastBlock = false;
  /** The frame has a checksum after its last block. */
  private readonly checksum: boolean;
  /** The bytes of a block header read so far (it may straddle two feeds). */
  private readonly blockHeader = new Uint8Array(3);
  private blockHeaderBytes = 0;
  /** The frame has ended: every byte fed after it is not the frame's. */
  ended = false;
  /**
   * A block no valid frame holds (of the reserved type, or of more than the block maximum): the
   * frame is corrupt, and no end is known. A size past the bytes that follow is not this: it is
   * what a cut frame looks like too.
   */
  corrupt = false;
  /** The most a block of this frame may yield: 128 KiB, or the frame's window when smaller. */
  private readonly maxBlock: number;

  /** @param header The frame's header (magic number included, {@link frameHeaderBytes} of it) as libzstd reads it. */
  constructor(header: Uint8Array) {
    this.remaining = frameHeaderBytes(header[4]!);
    this.checksum = (header[4]! & 4) !== 0;
    this.maxBlock = Math.min(MAX_BLOCK_BYTES, frameWindowBytes(header) ?? MAX_BLOCK_BYTES);
  }

  /** Walks `bytes`, the frame's next ones; returns how many belong to the frame (all, unless it ends within them). */
  feed(bytes: Uint8Array): number {
    let at = 0;
    while (at < bytes.length && !this.ended && !this.corrupt) {
      if (this.remaining > 0) {
        const taken = Math.min(this.remaining, bytes.length - at);
        this.remaining -= taken;
        at += taken;
      } else {
        this.blockHeader[this.blockHeaderBytes++] = bytes[at++]!;
        if (this.blockHeaderBytes === 3) this.startBlock();
      }
      this.settle();
    }
    return at;
  }

  private startBlock(): void {
    this.blockHeaderBytes = 0;
    const value = this.blockHeader[0]! | (this.blockHeader[1]! << 8) | (this.blockHeader[2]! << 16);
    const type = (value >> 1) & 3;
    const size = value >>> 3;
    this.lastBlock = (value & 1) === 1;
    if (type === RESERVED_BLOCK || size > this.maxBlock) this.corrupt = true;
    // An RLE block is one byte repeated (its size, what it yields); the others carry their size in bytes.
    else this.startPart('block', type === 1 ? 1 : size);
  }

  /** Moves on from a part walked whole to what needs no byte more: the checksum after the last block, the end after it. */
  private settle(): void {
    if (this.remaining > 0) return;
    if (this.part === 'block' && this.lastBlock) this.startPart('checksum', this.checksum ? 4 : 0);
    if (this.part === 'checksum' && this.remaining === 0) this.ended = true;
  }

  private startPart(part: 'block' | 'checksum', bytes: number): void {
    this.part = part;
    this.remaining = bytes;
  }
}
