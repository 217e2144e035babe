/**
 * Decoding zstd-compressed session logs (SPEC §11.2, §11.2.1): a sequence of zstd frames (dsh
 * writes one frame for the header line and one per write batch), decoded with the pure-JS `fzstd`
 * as the compressed bytes stream in.
 *
 * Small complete frames are decoded in one call. A frame that may expand past `wholeFrameBytes`
 * is decoded block by block (`fzstd`'s `Decompress`), so neither a long single-frame log nor a
 * decompression bomb is ever held whole; the consumer's limits stop it as the bytes go by. A
 * truncated final frame (a crash mid-write) is ignored like a torn line, also when it was being
 * streamed: its output is taken back through the consumer's restore point. `fzstd` verifies no
 * checksum, so a frame's content checksum is verified here (when `verifyChecksums`), and a
 * declared content size is checked against the output.
 *
 * Loaded lazily by the streaming reader, so plain-text apps never ship it.
 * @module
 */
import { Decompress, decompress } from 'fzstd';
import { describeValue, SessionReferenceError } from '../errors.js';
import { concat } from './lines.js';
import { Xxh64, xxh64 } from './xxhash64.js';
import { isSkippableMagic, readU32 } from './magic.js';
import { corrupt, MAX_BLOCK_BYTES, MAX_WINDOW_BYTES, readBlockHeader, readFrameHeader, scanZstdFrame, type ZstdFrameExtent } from './zstd-format.js';
import { loadWasmZstd, wasmZstd } from './zstd-wasm.js';

export { isZstd, scanZstdFrame, type ZstdFrameExtent } from './zstd-format.js';

/**
 * Compiles the WebAssembly decoder of complete frames, where the runtime allows it (see
 * src/store/zstd-wasm.ts); frames decode with `fzstd` until then, and everywhere else. Never rejects.
 */
export const ready: () => Promise<void> = loadWasmZstd;

/** Whether complete frames decode in WebAssembly here (once {@link ready} has settled). */
export function zstdUsesWasm(): boolean {
  return wasmZstd() !== undefined;
}

/** Options of a {@link ZstdStream}. */
export interface ZstdStreamOptions {
  /** A complete frame whose output may exceed this many bytes is decoded block by block. */
  wholeFrameBytes: number;
  /** Verify frame content checksums (XXH64). */
  verifyChecksums: boolean;
  /** Called when a frame starts streaming: returns a function that takes back the output since. */
  mark(): () => void;
}

/**
 * An incomplete frame is decoded block by block once this many of its compressed bytes are held,
 * or once the blocks seen so far may expand past `wholeFrameBytes`.
 */
const STREAM_AFTER_BYTES = 1 << 20;

/**
 * Decodes one complete data frame found by {@link scanZstdFrame}, verifying its declared content
 * size and (with `verifyChecksum`, the default) its checksum when present. A frame with a declared
 * size is decoded in WebAssembly where that is loaded (`useWasm`, default `true`: see
 * {@link ready}), which verifies its checksum either way; else, and when that fails, by `fzstd`.
 * @returns The decoded bytes.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` (cause: the decoder's error) when
 * the frame does not decode, or decodes to the wrong size or checksum.
 */
export function decodeZstdFrame(bytes: Uint8Array, frame: ZstdFrameExtent, verifyChecksum = true, useWasm = true): Uint8Array {
  const wasm = useWasm ? wasmZstd() : undefined;
  if (wasm !== undefined && frame.contentSize !== undefined) {
    // libzstd checks the declared size and the checksum (when the frame has one); on any error
    // fzstd decodes the frame below and names the fault.
    const out = wasm(bytes.subarray(frame.start, frame.end), frame.contentSize);
    if (out !== undefined) return out;
  }
  let out: Uint8Array;
  try {
    out = decompress(frameForDecoder(bytes, frame));
  } catch (error) {
    throw corrupt(frame.start, `it does not decode (${describeValue(error)})`, error);
  }
  if (frame.contentSize !== undefined && out.length !== frame.contentSize) {
    throw corrupt(frame.start, `decoded ${out.length} bytes, the header declares ${frame.contentSize}`);
  }
  if (verifyChecksum && frame.hasChecksum) {
    if (xxh64(out)[1] !== readU32(bytes, frame.end - 4)) throw corrupt(frame.start, 'content checksum mismatch');
  }
  return out;
}

/**
 * The window descriptor to give `fzstd` for a frame sized by its window alone. Such a frame makes
 * `fzstd` allocate, and slide per block, a buffer of the declared window (often 8 MiB for a batch
 * of a few lines). No match can reach further back than the frame's own output, at most 128 KiB
 * per block, so declaring the smallest window that covers that bound decodes identically, and
 * much faster.
 * @param descriptor The declared window descriptor byte.
 * @returns The descriptor to use (never a larger window than declared).
 */
function boundedWindow(descriptor: number, blockCount: number): number {
  let exponent = 0;
  while (2 ** (10 + exponent) < blockCount * MAX_BLOCK_BYTES) exponent++;
  return Math.min(descriptor, exponent << 3); // window 2^(10 + exponent), mantissa 0
}

/** The frame's bytes for `fzstd`, a copy with a {@link boundedWindow} when that is smaller. */
function frameForDecoder(bytes: Uint8Array, frame: ZstdFrameExtent): Uint8Array {
  const data = bytes.subarray(frame.start, frame.end);
  const at = frame.windowDescriptorAt;
  if (at === undefined) return data;
  const descriptor = boundedWindow(bytes[at]!, frame.blockCount);
  if (descriptor === bytes[at]) return data;
  const copy = data.slice();
  copy[at - frame.start] = descriptor;
  return copy;
}

/**
 * Decodes a whole sequence of zstd frames at once (SPEC §11.2): every complete data frame, in
 * order, concatenated; skippable frames skipped; a truncated final frame ignored.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` for a corrupt frame or bytes that are not frames.
 */
export function decodeZstdFrames(bytes: Uint8Array): Uint8Array {
  const chunks: Uint8Array[] = [];
  const keep = (chunk: Uint8Array) => {
    chunks.push(chunk.slice());
    return true; // every frame
  };
  const stream = new ZstdStream(keep, {
    wholeFrameBytes: Infinity,
    verifyChecksums: true,
    mark: () => {
      const length = chunks.length;
      return () => void (chunks.length = length);
    },
  });
  stream.push(bytes);
  stream.end();
  return concat(chunks);
}

/** Thrown through `fzstd`'s streaming decoder to stop it once the consumer wants no more (not an error). */
const STOPPED: object = Object.freeze({ stopped: true });

/** No bytes: an empty queue's buffer (never written to). */
const NO_BYTES = new Uint8Array(0);

/**
 * A growable byte buffer consumed from the front. A chunk appended to an empty queue is held as
 * it is, not copied (most chunks hold whole frames, consumed at once), until {@link ByteQueue.own}
 * copies what is left of it; the queue writes only into buffers of its own.
 */
class ByteQueue {
  private buffer: Uint8Array = NO_BYTES;
  private start = 0;
  private end = 0;
  /** `buffer` is the caller's chunk: read only. */
  private borrowed = false;

  get length(): number {
    return this.end - this.start;
  }

  view(): Uint8Array {
    if (this.start === 0 && this.end === this.buffer.length) return this.buffer; // a borrowed chunk, whole
    return this.buffer.subarray(this.start, this.end);
  }

  append(chunk: Uint8Array): void {
    if (this.length === 0) {
      this.buffer = chunk;
      this.start = 0;
      this.end = chunk.length;
      this.borrowed = true;
      return;
    }
    if (this.borrowed || this.end + chunk.length > this.buffer.length) {
      const held = this.view();
      const grown = new Uint8Array(Math.max(held.length + chunk.length, 2 * this.buffer.length, 4096));
      grown.set(held);
      this.buffer = grown;
      this.start = 0;
      this.end = held.length;
      this.borrowed = false;
    }
    this.buffer.set(chunk, this.end);
    this.end += chunk.length;
  }

  /** Copies what is left of a chunk held as it is, so the caller may reuse it. */
  own(): void {
    if (!this.borrowed) return;
    this.buffer = this.view().slice();
    this.start = 0;
    this.end = this.buffer.length;
    this.borrowed = false;
  }

  consume(count: number): void {
    this.start += count;
    if (this.start === this.end) this.start = this.end = 0;
  }

  /** Everything held, as a fresh array (the queue is emptied). */
  takeAll(): Uint8Array {
    const bytes = this.view().slice();
    this.start = this.end = 0;
    return bytes;
  }
}

/**
 * A frame decoded (or, for a skippable frame, skipped) as its bytes arrive. Block headers are
 * followed as the bytes go by, so the frame's end is known exactly: the decoder is given this
 * frame's bytes only.
 */
class StreamedFrame {
  /** Bytes of this frame seen so far. */
  private pos = 0;
  /** Frame-relative offset of the next block header. */
  private nextHeader = 0;
  private readonly headerBytes = [0, 0, 0];
  private headerLength = 0;
  /** Frame-relative end, once the last block header has been read. */
  private end = Infinity;
  private readonly decoder: Decompress | undefined;
  private readonly hash: Xxh64 | undefined;
  private readonly checksum = new Uint8Array(4);
  private readonly contentSize: number | undefined;
  private readonly hasChecksum: boolean;
  private produced = 0;

  /**
   * @param first The frame's first bytes (at least its whole frame header).
   * @param start Its offset in the log, for error messages.
   * @param out Receives the decoded bytes.
   * @param restore Takes back this frame's output (a truncated frame).
   */
  constructor(
    first: Uint8Array,
    private readonly start: number,
    private readonly out: (bytes: Uint8Array) => void,
    verifyChecksums: boolean,
    readonly restore: (() => void) | undefined,
  ) {
    if (isSkippableMagic(readU32(first, 0))) {
      this.end = 8 + readU32(first, 4);
      this.contentSize = undefined;
      this.hasChecksum = false;
      return;
    }
    const header = readFrameHeader(first, 0)!;
    if (header.singleSegment && header.contentSize !== undefined && header.contentSize > MAX_WINDOW_BYTES) {
      throw corrupt(start, `window of ${header.contentSize} bytes exceeds ${MAX_WINDOW_BYTES}`);
    }
    this.nextHeader = header.blocksAt;
    this.contentSize = header.contentSize;
    this.hasChecksum = header.hasChecksum;
    this.hash = header.hasChecksum && verifyChecksums ? new Xxh64() : undefined;
    this.decoder = new Decompress((block) => this.output(block));
  }

  get done(): boolean {
    return this.pos === this.end;
  }

  /**
   * Feeds the next bytes of the log.
   * @returns How many of them belong to this frame (the rest starts the next frame).
   */
  feed(chunk: Uint8Array): number {
    if (this.decoder === undefined) {
      const take = Math.min(chunk.length, this.end - this.pos);
      this.pos += take;
      return take;
    }
    this.followBlocks(chunk);
    const take = Math.min(chunk.length, this.end - this.pos);
    const bytes = chunk.subarray(0, take);
    if (this.hasChecksum) {
      for (let k = Math.max(0, this.end - 4 - this.pos); k < take; k++) this.checksum[this.pos + k - (this.end - 4)] = bytes[k]!;
    }
    try {
      this.decoder.push(bytes);
    } catch (error) {
      if (error instanceof SessionReferenceError || !(error instanceof Error)) throw error;
      throw corrupt(this.start, `it does not decode (${describeValue(error)})`, error);
    }
    this.pos += take;
    if (this.done) this.finish();
    return take;
  }

  /** Reads the block headers that fall in `chunk` (frame-relative from `pos`), finding the frame's end. */
  private followBlocks(chunk: Uint8Array): void {
    for (let k = Math.max(0, this.nextHeader - this.pos); this.end === Infinity && k < chunk.length; ) {
      this.headerBytes[this.headerLength++] = chunk[k++]!;
      if (this.headerLength < 3) continue;
      this.headerLength = 0;
      const at = this.pos + k - 3;
      const [b0, b1, b2] = this.headerBytes as [number, number, number];
      const block = readBlockHeader(b0 | (b1 << 8) | (b2 << 16), this.start, this.start + at);
      this.nextHeader = at + 3 + block.bodyBytes;
      if (block.last) this.end = this.nextHeader + (this.hasChecksum ? 4 : 0);
      k = Math.max(k, this.nextHeader - this.pos);
    }
  }

  private output(block: Uint8Array): void {
    this.produced += block.length;
    if (this.contentSize !== undefined && this.produced > this.contentSize) {
      throw corrupt(this.start, `decodes to more than the ${this.contentSize} bytes its header declares`);
    }
    this.hash?.update(block);
    this.out(block);
  }

  private finish(): void {
    if (this.contentSize !== undefined && this.produced !== this.contentSize) {
      throw corrupt(this.start, `decoded ${this.produced} bytes, the header declares ${this.contentSize}`);
    }
    if (this.hash && this.hash.digest()[1] !== readU32(this.checksum, 0)) throw corrupt(this.start, 'content checksum mismatch');
  }
}

/**
 * Decodes a sequence of zstd frames pushed in chunks of any size, passing the decoded bytes on in
 * order (SPEC §11.2): skippable frames skipped, a truncated final frame ignored (see the module).
 */
export class ZstdStream {
  private readonly queue = new ByteQueue();
  /** Offset in the log of the queue's first byte. */
  private offset = 0;
  private frame: StreamedFrame | undefined;
  /** The consumer wants no more bytes: nothing more is decoded. */
  private stopped = false;

  /**
   * @param out Receives the decoded bytes, in order; returns `false` once it wants no more (a
   *   header read): the stream then decodes nothing further and holds no bytes.
   */
  constructor(
    private readonly out: (bytes: Uint8Array) => boolean,
    private readonly options: ZstdStreamOptions,
  ) {}

  /**
   * Feeds the next compressed bytes; the caller must not change them afterwards. After it throws
   * (a corrupt frame), the stream is not used again; once the consumer has stopped it, pushing
   * does nothing.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` for a corrupt frame or bytes that are not frames.
   */
  push(chunk: Uint8Array): void {
    if (this.stopped) return;
    try {
      while (this.frame !== undefined && chunk.length > 0) chunk = this.feedFrame(chunk);
      if (chunk.length === 0) return;
      this.queue.append(chunk);
      this.drain();
    } catch (error) {
      if (error !== STOPPED) throw error;
      this.stopped = true;
    }
    if (!this.stopped) this.queue.own();
  }

  /** Ends the input: a frame still incomplete is a truncated final frame, ignored. */
  end(): void {
    this.frame?.restore?.();
    this.frame = undefined;
  }

  private drain(): void {
    while (this.queue.length > 0) {
      const bytes = this.queue.view();
      const progress = { blocks: 0 };
      const frame = scanZstdFrame(bytes, 0, progress);
      if (frame === undefined) {
        if (bytes.length < STREAM_AFTER_BYTES && progress.blocks * MAX_BLOCK_BYTES <= this.options.wholeFrameBytes) return;
        this.startFrame(undefined);
        return;
      }
      if (frame.kind === 'skippable') {
        this.consume(frame.end);
        continue;
      }
      const bound = frame.contentSize ?? frame.blockCount * MAX_BLOCK_BYTES;
      if (bound > this.options.wholeFrameBytes) {
        this.startFrame(frame);
        return;
      }
      const more = this.out(decodeZstdFrame(bytes, frame, this.options.verifyChecksums));
      this.consume(frame.end);
      if (!more) {
        this.stopped = true;
        return;
      }
    }
  }

  /** Decodes the frame at the queue's start block by block, from the bytes held on. */
  private startFrame(complete: ZstdFrameExtent | undefined): void {
    const held = this.queue.takeAll();
    if (complete?.windowDescriptorAt !== undefined) {
      held[complete.windowDescriptorAt] = boundedWindow(held[complete.windowDescriptorAt]!, complete.blockCount);
    }
    const restore = isSkippableMagic(readU32(held, 0)) ? undefined : this.options.mark();
    const out = (bytes: Uint8Array) => {
      if (!this.out(bytes)) throw STOPPED; // out of fzstd's streaming decoder, to the catch in push
    };
    this.frame = new StreamedFrame(held, this.offset, out, this.options.verifyChecksums, restore);
    const rest = this.feedFrame(held);
    if (rest.length > 0) {
      this.queue.append(rest);
      this.drain();
    }
  }

  /** Feeds `chunk` to the streamed frame; returns the bytes after its end. */
  private feedFrame(chunk: Uint8Array): Uint8Array {
    const frame = this.frame!;
    const taken = frame.feed(chunk);
    this.offset += taken;
    if (frame.done) this.frame = undefined;
    return chunk.subarray(taken);
  }

  private consume(count: number): void {
    this.queue.consume(count);
    this.offset += count;
  }
}
