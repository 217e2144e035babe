/**
 * The line splitter, one stage of a read (SPEC §11.1, §11.2.1, §11.2.2): decoded log bytes in, as
 * they stream by, split on byte `0x0A` only; each line out as its bytes, for the line classifier
 * (classify.ts) to validate, skip or decode. Memory: the unfinished line only.
 * @module
 */
import { fail, type SessionReferenceError } from '../errors.js';
import type { ChunkScanner } from './chunk-scanner.js';
import { utf8ByteLength } from '../utf8.js';

/** Receives the lines of a log as bytes, in order. */
export interface LineSink {
  /**
   * One line without its `\n`.
   * @param bytes The line's bytes: a view valid during the call only.
   * @param number 1-based line number.
   * @param terminated A `\n` ended the line (false only for the last line of the input).
   * @returns `false` to stop reading: no further line is delivered.
   */
  line(bytes: Uint8Array, number: number, terminated: boolean): boolean;
}

/**
 * Where the splitter finds newlines: the read's {@link ChunkScanner} (SIMD in WebAssembly over a
 * copy of the chunk that the classifier's row scan then reads too; `indexOf` where it cannot run).
 */
export interface NewlineFinder {
  /** The chunk the next lines are cut from, and `undefined` when the splitter is done with it (the producer may then reuse its buffer). */
  setChunk(chunk: Uint8Array | undefined): void;
  /** The index of the first `\n` of the current chunk from `start` on, or -1. */
  newline(start: number): number;
}

/** Receives the lines of a log given as text, in order (see {@link LineSink}; `text` is `undefined` for bytes that are not UTF-8). */
export interface TextLineSink {
  line(text: string | undefined, number: number, terminated: boolean): boolean;
}

/** Limits of one read, in bytes. */
export interface LineLimits {
  /** Decoded bytes a read may pass through before it fails (SPEC §11.2.1 `maxLogBytes`). */
  maxLogBytes: number;
  /** Bytes line 1 (the header) may have before it fails (SPEC §11.2.1: 1 MiB for header reads). */
  maxHeaderBytes: number;
}

/**
 * Longest line accepted, in bytes: a line this long cannot become a JavaScript string in V8
 * (about 2^29 UTF-16 code units), so holding more of it can only waste memory.
 */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

/** An empty line's bytes (never written to). */
const NO_BYTES = new Uint8Array(0);

/** The errors of a read's limits ({@link limitReached}). */
const limits = new WeakSet<object>();

/**
 * `error`, marked as a read's limit met (a line or the header past its bound, a log past
 * `maxLogBytes`): it stops the read where it is met, unlike the error of a line's content, which
 * a truncated final zstd frame takes back with the frame (zstd.ts).
 */
function limitReached(error: SessionReferenceError): SessionReferenceError {
  limits.add(error);
  return error;
}

/** True for an error of {@link limitReached}. */
export function isLimitReached(error: unknown): boolean {
  return typeof error === 'object' && error !== null && limits.has(error);
}

function logTooLarge(maxLogBytes: number) {
  return limitReached(fail('INVALID_LOG', `dsh session log is larger than maxLogBytes (${maxLogBytes} bytes)`));
}

function headerTooLong(limit: number) {
  return limitReached(fail('INVALID_LOG', `dsh session log line 1 (the header) is over ${limit} bytes (header line over ${limit / 1048576} MiB): not a dsh session header`));
}

/** Bytes of the first block of an unfinished line; each further block doubles, up to {@link MAX_BLOCK}. */
const FIRST_BLOCK = 256;

/** Largest block of an unfinished line: a line costs one block object per 64 KiB of it. */
const MAX_BLOCK = 64 * 1024;

/**
 * The bytes of an unfinished line, copied (the producer may reuse its buffers) into blocks that
 * start small and double up to {@link MAX_BLOCK}, and into one block of its own for a piece of
 * at least that size: what it holds is the line's bytes plus at most one partly filled block,
 * however the bytes were chunked (SPEC §11.2.3: a 4 MB line in 1-byte chunks costs 64 blocks of
 * 64 KiB, not 4 million arrays). Blocks are only ever appended to, so a {@link PendingLine.mark}
 * stays valid until it is restored.
 */
export class PendingLine {
  /** Full blocks (or filled parts of blocks), in order. */
  private blocks: Uint8Array[] = [];
  /** The block being filled, and how much of it is. */
  private tail: Uint8Array | undefined;
  private used = 0;
  /** Size of the next block: doubles with each one, from {@link FIRST_BLOCK} to {@link MAX_BLOCK}. */
  private next = FIRST_BLOCK;
  /** Bytes held. */
  bytes = 0;

  /** Appends a copy of `piece`. */
  append(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.bytes += piece.length;
    if (piece.length >= MAX_BLOCK) {
      this.seal();
      this.blocks.push(piece.slice());
      return;
    }
    for (let from = 0; from < piece.length; ) {
      if (this.tail === undefined || this.used === this.tail.length) this.grow();
      const take = Math.min(piece.length - from, this.tail!.length - this.used);
      this.tail!.set(piece.subarray(from, from + take), this.used);
      this.used += take;
      from += take;
    }
  }

  /** The held bytes followed by `tail`, as one array (`tail` itself when nothing is held); the line is cleared. */
  take(tail: Uint8Array): Uint8Array {
    if (this.bytes === 0) return tail;
    this.seal();
    const bytes = concat([...this.blocks, tail]);
    this.clear();
    return bytes;
  }

  /** The number of arrays held (for tests: it grows with the bytes, never with the number of pieces). */
  get arrays(): number {
    return this.blocks.length + (this.tail === undefined ? 0 : 1);
  }

  /** A restore point: calling the result puts the line back as it was when marked (any number of times). */
  mark(): () => void {
    const { tail, used, bytes, next } = this;
    const blocks = this.blocks.slice();
    return () => {
      Object.assign(this, { tail, used, bytes, next, blocks: blocks.slice() });
    };
  }

  private clear(): void {
    this.blocks = [];
    this.tail = undefined;
    this.used = 0;
    this.bytes = 0;
    this.next = FIRST_BLOCK;
  }

  /** Moves the filled part of the tail block to {@link PendingLine.blocks}. */
  private seal(): void {
    if (this.tail !== undefined && this.used > 0) this.blocks.push(this.tail.subarray(0, this.used));
    this.tail = undefined;
    this.used = 0;
  }

  /** A new tail block, twice the last one (from {@link FIRST_BLOCK}, at most {@link MAX_BLOCK}). */
  private grow(): void {
    this.seal();
    this.tail = new Uint8Array(this.next);
    this.next = Math.min(MAX_BLOCK, this.next * 2);
  }
}

/**
 * Splits pushed byte chunks into lines for a {@link LineSink}. Memory: the current unfinished
 * line only ({@link PendingLine}). A restore point ({@link LineSplitter.mark}) lets a caller take
 * back the lines of a zstd frame that turned out to be truncated.
 */
export class LineSplitter {
  /** The unfinished line. */
  private readonly pending = new PendingLine();
  private number = 1;
  private total = 0;
  /** The sink asked to stop. */
  stopped = false;

  constructor(
    private readonly sink: LineSink,
    private readonly limits: LineLimits,
    private readonly newlines: NewlineFinder,
  ) {}

  /** Feeds the next bytes of the log. */
  push(chunk: Uint8Array): void {
    if (this.stopped || chunk.length === 0) return;
    // The bytes within `maxLogBytes` are split first, so an error of a line that ends within it is
    // reported as such, not as the limit, at every chunking of the same bytes.
    const within = chunk.subarray(0, this.limits.maxLogBytes - this.total);
    this.total += within.length;
    if (within.length > 0) this.splitChunk(within);
    if (within.length < chunk.length && !this.stopped) throw logTooLarge(this.limits.maxLogBytes);
  }

  /** {@link split} with the newline finder over `chunk`. */
  private splitChunk(chunk: Uint8Array): void {
    this.newlines.setChunk(chunk);
    try {
      this.split(chunk);
    } finally {
      this.newlines.setChunk(undefined);
    }
  }

  /** Delivers the lines `chunk` ends and holds the rest. */
  private split(chunk: Uint8Array): void {
    let start = 0;
    for (;;) {
      // An empty line (a flood of them is the cheapest way to make a log big) costs no search and no view.
      const newline = chunk[start] === 0x0a ? start : this.newlines.newline(start);
      if (newline === -1) return this.hold(chunk.subarray(start));
      const bytes = newline === start ? NO_BYTES : chunk.subarray(start, newline);
      if (start === 0 && this.pending.bytes > 0) {
        this.checkHeaderLength(this.pending.bytes + bytes.length);
        this.deliver(this.pending.take(bytes), true);
      } else {
        this.checkHeaderLength(bytes.length);
        this.deliver(bytes, true);
      }
      if (this.stopped) return;
      start = newline + 1;
    }
  }

  /** Ends the input: delivers the last, unterminated line if there is one. */
  end(): void {
    if (this.stopped || this.pending.bytes === 0) return;
    this.deliver(this.pending.take(new Uint8Array(0)), false);
  }

  /** A restore point: calling the result puts the splitter back as it was when marked. */
  mark(): () => void {
    const { number, total, stopped } = this;
    const restorePending = this.pending.mark();
    return () => {
      Object.assign(this, { number, total, stopped });
      restorePending();
    };
  }

  private deliver(bytes: Uint8Array, terminated: boolean): void {
    if (!this.sink.line(bytes, this.number++, terminated)) this.stopped = true;
  }

  private hold(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    const length = this.pending.bytes + bytes.length;
    this.checkHeaderLength(length);
    if (length > MAX_LINE_BYTES) {
      throw limitReached(fail('INVALID_LOG', `dsh session log line ${this.number} is longer than ${MAX_LINE_BYTES} bytes`));
    }
    this.pending.append(bytes);
  }

  private checkHeaderLength(length: number): void {
    if (this.number === 1 && length > this.limits.maxHeaderBytes) throw headerTooLong(this.limits.maxHeaderBytes);
  }
}

/** The bytes of `parts` in order, as one array. */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * The lines of a log given as text (SPEC §11.1): split on `\n`; the text after the last `\n`,
 * when not empty, is the unterminated last line.
 */
export function splitTextLines(text: string, sink: TextLineSink, maxLogBytes = Infinity): void {
  // Past `maxLogBytes` as UTF-8, text reads as its bytes would (LineSplitter.push): the lines whose
  // `\n` is within the limit, then the limit's error. Counted only when it may be passed.
  let room = text.length * 3 > maxLogBytes && utf8ByteLength(text) > maxLogBytes ? maxLogBytes : Infinity;
  for (let start = 0, number = 1; start < text.length; number++) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end);
    if (room !== Infinity && (room -= utf8ByteLength(line) + 1) < 0) throw logTooLarge(maxLogBytes);
    if (!sink.line(line, number, newline !== -1)) return;
    start = end + 1;
  }
}
