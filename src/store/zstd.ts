/**
 * Decoding zstd-compressed session logs (SPEC §11.2, §11.2.1, §11.2.1.1): a sequence of zstd
 * frames (dsh writes one frame for the header line and one per write batch), decoded by libzstd
 * (src/store/libzstd.ts) as the compressed bytes stream in.
 *
 * libzstd validates each data frame, checks its declared content size and content checksum, and
 * never lets a block yield more than 128 KiB: none of that is done again here. What is done here
 * is the framing libzstd's streaming API leaves to its caller:
 * - skippable frames are skipped by their declared length, without handing their content to the
 *   decoder (a store's reader is asked to skip them: see {@link ZstdStream.pendingSkip});
 * - a truncated final frame (a crash mid-write) is ignored like a torn line: its output is taken
 *   back through the consumer's restore point;
 * - header reads stop once they have read 1 MiB of compressed input (SPEC §11.2.1.1);
 * - work is cut into slices of at most {@link ZstdStreamOptions.sliceBytes}, so an asynchronous
 *   read can let the event loop run, and see its signal, between them.
 * Errors are this module's own messages, naming libzstd's error code: the same in every runtime,
 * since every runtime runs the same libzstd.
 *
 * Loaded lazily by the streaming reader, so plain-text apps never ship it.
 * @module
 */
import { fail, SessionReferenceError } from '../errors.js';
import { LibZstdError, STEP_BYTES, type LibZstd, type ZstdDecoder } from './libzstd.js';
import { concat, isLimitReached } from './lines.js';
import { isSkippableMagic, readU32, ZSTD_MAGIC } from './magic.js';
import { FrameExtent } from './zstd-extent.js';
import { checkFrameWindow, frameHeaderBytes, frameWindowBytes, MAX_WINDOW_BYTES } from './zstd-window.js';

export { isZstd } from './magic.js';
export { libZstdSync, loadLibZstd, type LibZstd } from './libzstd.js';

/** Options of a {@link ZstdStream}. */
export interface ZstdStreamOptions {
  /** Verify frame content checksums (XXH64, by libzstd). */
  verifyChecksums: boolean;
  /**
   * Called when a data frame starts: returns a function that takes back the output since, called
   * with the frame's offset in the log when the frame turns out a truncated final frame.
   */
  mark(): (truncatedAt: number) => void;
  /**
   * Compressed bytes the read may take (SPEC §11.2.1.1: 1 MiB for a header read, else
   * `Infinity`): data-frame bytes, plus skippable frames' content when {@link countSkipped}.
   * Skippable frames' 8-byte headers are never counted.
   */
  maxInputBytes: number;
  /**
   * Skippable content that arrived in the chunks counts as read (a store's own reads, which were
   * asked to skip it); content skipped inside a buffer given whole does not.
   */
  countSkipped: boolean;
  /** Work of one slice (compressed plus decoded bytes); a push or resume stops after it. */
  sliceBytes: number;
  /**
   * When the consumer stops (a header read has line 1), the frame it stopped in is still walked
   * to its end ({@link ZstdStream.settling}), within {@link maxInputBytes}: the input ending first
   * makes it a truncated final frame, its lines taken back (SPEC §11.2), as a whole read takes
   * them back; the allowance spent first leaves the lines standing.
   */
  settleFrame?: boolean;
}

/** The error of a header read that took its whole input allowance without finding line 1's end. */
export function headerInputOver(limit: number) {
  return fail('INVALID_LOG', `dsh session log: no header line in the first ${limit} bytes of compressed input (header line over ${limit / 1048576} MiB)`);
}

function corrupt(at: number, what: string) {
  return fail('INVALID_LOG', `dsh session log: corrupt zstd frame at byte ${at}: ${what}`);
}

/** `ZSTD_ErrorCode` names (zstd_errors.h) of the errors a decoder can report. */
const ERROR_NAMES: Record<number, string> = {
  1: 'generic error',
  10: 'unknown frame descriptor',
  12: 'version not supported',
  14: 'unsupported frame parameter',
  16: 'frame requires too much memory for decoding',
  20: 'data corruption detected',
  22: 'content checksum mismatch',
  24: 'header of literals is wrong',
  30: 'dictionary is corrupted',
  32: 'dictionary mismatch (dsh logs use none)',
  44: 'table log too large',
  46: 'max symbol value too large',
  48: 'max symbol value too small',
  64: 'allocation error: not enough memory',
  70: 'destination buffer is too small',
  72: 'source size is wrong',
};

function libzstdError(at: number, code: number) {
  return corrupt(at, `${ERROR_NAMES[code] ?? 'error'} (libzstd error ${code})`);
}

/** True when `bytes` (fewer than 4) are a proper prefix of a frame magic: a torn start. */
function isMagicPrefix(bytes: Uint8Array): boolean {
  const zstd = [0x28, 0xb5, 0x2f, 0xfd];
  const skippable = [0x50, 0x2a, 0x4d, 0x18];
  return bytes.every((byte, i) => byte === zstd[i] || (i === 0 ? (byte & 0xf0) === 0x50 : byte === skippable[i]));
}

const NO_BYTES = new Uint8Array(0);

/** Compressed bytes waiting for the decoder: chunks consumed from the front. */
class ChunkQueue {
  private chunks: Uint8Array[] = [];
  /** How many of the first chunks are copies of the queue's own (the rest are the caller's). */
  private owned = 0;
  length = 0;

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  /** Puts `bytes` (the queue's own) back in front. */
  unshift(bytes: Uint8Array): void {
    this.chunks.unshift(bytes);
    this.owned++;
    this.length += bytes.length;
  }

  first(): Uint8Array {
    return this.chunks[0]!;
  }

  /** The first `count` bytes (at most {@link ChunkQueue.length}), as one array. */
  peek(count: number): Uint8Array {
    const first = this.chunks[0]!;
    if (first.length >= count) return first.subarray(0, count);
    const out = new Uint8Array(count);
    let at = 0;
    for (const chunk of this.chunks) {
      const take = Math.min(chunk.length, count - at);
      out.set(chunk.subarray(0, take), at);
      at += take;
      if (at === count) break;
    }
    return out;
  }

  advance(count: number): void {
    this.length -= count;
    while (count > 0) {
      const first = this.chunks[0]!;
      if (first.length > count) {
        this.chunks[0] = first.subarray(count);
        return;
      }
      count -= first.length;
      this.chunks.shift();
      if (this.owned > 0) this.owned--;
    }
  }

  /** Copies the caller's chunks still held (once), so their owners may reuse them. */
  own(): void {
    if (this.owned === this.chunks.length) return;
    const all = this.peek(this.length).slice();
    this.chunks = [all];
    this.owned = 1;
  }

  clear(): void {
    this.chunks = [];
    this.owned = 0;
    this.length = 0;
  }
}

/**
 * Decodes a sequence of zstd frames pushed in chunks of any size, passing the decoded bytes on in
 * order (SPEC §11.2): skippable frames skipped, a truncated final frame ignored (see the module).
 * Call {@link ZstdStream.close} (or {@link ZstdStream.end}) when done with it: it frees libzstd's
 * memory.
 */
export class ZstdStream {
  private readonly queue = new ChunkQueue();
  private readonly decoder: ZstdDecoder;
  /** Offset in the log of the queue's first byte. */
  private offset = 0;
  /** Offset of the data frame being decoded; `undefined` between frames. */
  private frameStart: number | undefined;
  /** Takes back the output of the frame being decoded. */
  private restore: ((truncatedAt: number) => void) | undefined;
  /** The frame being decoded has a checksum that libzstd is not to check: its 4 bytes are skipped at its end. */
  private checksumSkipped = false;
  /** Bytes still to skip (a skippable frame's content, an unchecked checksum). */
  private skip = 0;
  /** The bytes being skipped are a skippable frame's content. */
  private skippingContent = false;
  /** The last call filled the output: libzstd may hold more output to flush. */
  private flushing = false;
  /** Compressed bytes counted against {@link ZstdStreamOptions.maxInputBytes}. */
  private counted = 0;
  /** The consumer wants no more bytes, or the stream was closed. */
  private stopped = false;
  /** libzstd took none of the bytes held and wrote nothing: it waits for more input. */
  private waiting = false;
  /**
   * What the consumer threw for the output of the frame being decoded (a line that is not valid,
   * SPEC §11.1): thrown once the frame ends, dropped with the frame when it turns out truncated
   * (SPEC §11.2: a truncated final frame is ignored like a torn line, whatever its lines hold).
   * Meanwhile the rest of the frame is not decoded: its block headers tell where it ends ({@link extent}).
   */
  private deferred: SessionReferenceError | undefined;
  /** The walk over the frame being decoded, fed what libzstd takes of it (see zstd-extent.ts). */
  private extent: FrameExtent | undefined;
  /**
   * The consumer has what it wants, and the frame it stopped in is walked, undecoded, to its end
   * before the stream stops ({@link ZstdStreamOptions.settleFrame}).
   */
  settling = false;

  /**
   * @param out Receives the decoded bytes, in order (a view valid during the call only); returns
   *   `false` once it wants no more (a header read): the stream then decodes nothing further.
   */
  constructor(
    lib: LibZstd,
    private readonly out: (bytes: Uint8Array) => boolean,
    private readonly options: ZstdStreamOptions,
  ) {
    this.decoder = lib.open();
  }

  /** Work is left from the last push (call {@link ZstdStream.resume}). */
  get busy(): boolean {
    return !this.stopped && !this.waiting && (this.flushing || (this.queue.length > 0 && this.canProgress()));
  }

  /** Bytes of the log the stream will skip once they arrive (a skippable frame's content): a reader may skip them instead. */
  get pendingSkip(): number {
    return this.stopped || !this.skippingContent ? 0 : Math.max(0, this.skip - this.queue.length);
  }

  /** The reader skipped `count` bytes of {@link ZstdStream.pendingSkip}: they will not arrive. */
  skipped(count: number): void {
    this.skip -= count;
    this.offset += count;
  }

  /** Compressed bytes the stream may still take in (`Infinity` unless a header read). */
  private get allowance(): number {
    return this.options.maxInputBytes - this.counted;
  }

  /**
   * Compressed bytes a reader may still read for this stream: its allowance less what it holds
   * (`Infinity` unless a header read).
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` ("header line over 1 MiB") when
   * nothing more may be read.
   */
  readLimit(): number {
    const limit = this.allowance - this.queue.length;
    if (limit <= 0 && !this.stopped) throw headerInputOver(this.options.maxInputBytes);
    return limit;
  }

  /**
   * Feeds the next compressed bytes and decodes one slice of work; more may be left
   * ({@link ZstdStream.busy}). The caller must not change the bytes during the call; what is left
   * of them afterwards is copied.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` for a corrupt frame, bytes that
   * are not frames, or a header read past its input allowance.
   */
  push(chunk: Uint8Array): void {
    if (this.stopped) return;
    this.queue.push(chunk);
    this.waiting = false;
    this.resume();
  }

  /** Decodes one more slice of work (see {@link ZstdStream.push}). */
  resume(): void {
    try {
      this.run(this.options.sliceBytes);
    } catch (error) {
      this.close();
      throw error;
    }
    if (this.stopped) this.close();
    else this.queue.own();
  }

  /**
   * Ends the input: decodes what is left, then a frame still incomplete is a truncated final frame,
   * ignored (its output taken back); bytes that cannot start a frame are an error.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG`, as {@link ZstdStream.push}.
   */
  end(): void {
    try {
      if (!this.stopped) this.run(Infinity);
      if (!this.stopped && this.frameStart === undefined && this.skip === 0 && this.queue.length > 0 && this.queue.length < 4) {
        if (!isMagicPrefix(this.queue.peek(this.queue.length))) throw corrupt(this.offset, 'trailing bytes are not a frame');
      }
      if (this.frameStart !== undefined) {
        this.restore?.(this.frameStart);
        this.deferred = undefined;
      }
    } finally {
      this.close();
    }
  }

  /** Frees libzstd's memory; the stream decodes nothing more. Idempotent. */
  close(): void {
    this.stopped = true;
    this.queue.clear();
    this.decoder.close();
  }

  /** Whether the bytes held can be worked on now (else they wait for more). */
  private canProgress(): boolean {
    if (this.skip > 0 || this.frameStart !== undefined) return true;
    if (this.queue.length < 4) return false;
    const magic = readU32(this.queue.peek(4), 0);
    if (isSkippableMagic(magic)) return this.queue.length >= 8;
    // A data frame starts once its whole header is here: its window is checked first.
    return magic !== ZSTD_MAGIC || (this.queue.length >= 5 && this.queue.length >= frameHeaderBytes(this.queue.peek(5)[4]!));
  }

  private run(budget: number): void {
    let work = 0;
    while (!this.stopped && !this.waiting && work < budget && (this.flushing || (this.queue.length > 0 && this.canProgress()))) {
      if (this.skip > 0 && !this.flushing) {
        const count = Math.min(this.skip, this.queue.length);
        if (!this.skippingContent || this.options.countSkipped) this.count(count);
        this.queue.advance(count);
        this.offset += count;
        this.skip -= count;
        work += count >> 4;
        continue;
      }
      if (this.frameStart === undefined && !this.flushing) {
        this.startFrame();
        continue;
      }
      work += this.walking ? this.skim() : this.step();
      // A header read walks no further than its allowance: a failed line's error stands, and so
      // does line 1 (a first frame over 1 MiB of compressed input is not settled; SPEC §11.2.1.1).
      if (this.walking && this.allowance <= 0) this.walked();
    }
  }

  /** The frame being read is walked by its block headers, not decoded ({@link skim}). */
  private get walking(): boolean {
    return this.deferred !== undefined || this.settling;
  }

  /** At a frame boundary: skips a skippable frame's header, or starts a data frame. */
  private startFrame(): void {
    const magic = readU32(this.queue.peek(4), 0);
    if (isSkippableMagic(magic)) {
      if (this.queue.length < 8) return;
      this.skip = readU32(this.queue.peek(8), 4);
      this.skippingContent = true;
      this.queue.advance(8);
      this.offset += 8;
      return;
    }
    if (magic !== ZSTD_MAGIC) throw corrupt(this.offset, `unknown magic number 0x${magic.toString(16)}`);
    // The window cap (SPEC §11.2.2, zstd-window.ts), before libzstd sees the frame and allocates it.
    checkFrameWindow(this.queue.peek(frameHeaderBytes(this.queue.peek(5)[4]!)), this.offset);
    this.frameStart = this.offset;
    this.restore = this.options.mark();
    this.skippingContent = false;
    const header = this.queue.peek(5);
    this.checksumSkipped = !this.options.verifyChecksums && (header[4]! & 4) !== 0;
    if (this.checksumSkipped) {
      // libzstd checks a frame's checksum whenever the frame header says it has one: clear the
      // flag, and skip the 4 checksum bytes once the frame ends.
      const copy = header.slice();
      copy[4] = header[4]! & ~4;
      this.queue.advance(5);
      this.queue.unshift(copy);
    }
    this.extent = new FrameExtent(this.queue.peek(frameHeaderBytes(this.queue.peek(5)[4]!)));
  }

  /** One decoder call over the bytes held; returns its work. */
  private step(): number {
    const allowance = this.allowance;
    if (allowance <= 0 && !this.flushing) throw headerInputOver(this.options.maxInputBytes);
    const input = this.queue.length === 0 ? NO_BYTES : this.queue.first();
    let result;
    try {
      result = this.decoder.step(input.subarray(0, Math.max(0, Math.min(input.length, STEP_BYTES, allowance))));
    } catch (error) {
      if (error instanceof LibZstdError) throw libzstdError(this.frameStart ?? this.offset, error.code);
      throw error;
    }
    const { consumed, output, frameEnded } = result;
    this.extent!.feed(input.subarray(0, consumed));
    this.queue.advance(consumed);
    this.offset += consumed;
    this.count(consumed);
    this.flushing = output.length === STEP_BYTES;
    if (output.length > 0 && !this.pass(output)) {
      if (frameEnded || !this.options.settleFrame) this.stopped = true;
      else {
        this.settling = true;
        this.flushing = false;
      }
      return 64;
    }
    if (frameEnded) {
      if (this.deferred !== undefined) throw this.deferred;
      this.frameStart = undefined;
      this.restore = undefined;
      this.flushing = false;
      if (this.checksumSkipped) this.skip = 4;
    } else if (consumed === 0 && output.length === 0) {
      // Everything given was taken in earlier: libzstd waits for more input.
      this.flushing = false;
      this.waiting = true;
    }
    return consumed + output.length + 64;
  }

  /**
   * Passes `output` on (see {@link out}), unless the consumer already failed this frame; a line's
   * failure is {@link deferred} to the frame's end. Other failures (a read past `maxLogBytes`)
   * stop the read at once.
   */
  private pass(output: Uint8Array): boolean {
    if (this.deferred !== undefined) return true;
    try {
      return this.out(output);
    } catch (error) {
      if (!isLineError(error)) throw error;
      this.deferred = error;
      this.flushing = false;
      return true;
    }
  }

  /**
   * Once a line of the frame failed ({@link deferred}), or the consumer stopped in it
   * ({@link settling}): walks the frame's bytes held, undecoded,
   * towards its end, where the line's error is thrown; the input ending first makes the frame a
   * truncated final frame ({@link ZstdStream.end}), and a header read's allowance spent first
   * ends it too ({@link run}).
   */
  private skim(): number {
    const input = this.queue.first();
    const taken = this.extent!.feed(input.subarray(0, Math.min(input.length, this.allowance)));
    this.queue.advance(taken);
    this.offset += taken;
    this.count(taken);
    if (this.extent!.ended || this.extent!.corrupt) return this.walked();
    return (taken >> 4) + 64;
  }

  /**
   * The walk of {@link skim} is over (the frame ended, or is corrupt, or a header read's allowance
   * is spent): a failed line's error is thrown; a consumer that had what it wanted keeps it.
   */
  private walked(): number {
    if (this.deferred !== undefined) throw this.deferred;
    this.frameStart = undefined;
    this.restore = undefined;
    this.settling = false;
    this.stopped = true;
    return 0;
  }

  private count(bytes: number): void {
    this.counted += bytes;
  }
}

/**
 * True for what a line's consumer throws about the line itself (SPEC §11.1: not JSON, not UTF-8,
 * not a header), which a truncated final frame's lines may be: never a read's limits (a line or
 * header past its bound, a log past `maxLogBytes`), which stop the read where they are met.
 */
function isLineError(error: unknown): error is SessionReferenceError {
  return error instanceof SessionReferenceError && error.code === 'SESSION_REFERENCE_INVALID_LOG' && !isLimitReached(error);
}

/**
 * Line 1 of a zstd log whose first bytes are `bytes`, when {@link ZstdStream}'s first libzstd call
 * over them decodes it: dsh writes the header line as a frame of its own, so a header read of a
 * listing needs that one call, not a stream. Nothing is copied and no stream is built; one of
 * libzstd's idle decoding contexts is taken and given back. This answers only what a
 * {@link ZstdStream} given the same bytes would, from the same first call: `undefined` whenever
 * that call might not be the whole story — bytes that do not start with a data frame whose header
 * they hold, no context {@link LibZstd.available}, a checksum not to be verified (the stream
 * rewrites the frame header first), a window over the cap, a libzstd error, a frame that call
 * does not end (it may be a truncated final frame, ignored whatever its lines hold), output
 * without a `\n` — and the read then takes the
 * general way from the first byte, which decodes and reports those bytes as always.
 * @returns The line's bytes without its `\n`: a view of libzstd's memory, valid until its next call.
 */
export function firstFrameLine(lib: LibZstd, bytes: Uint8Array, verifyChecksums: boolean): Uint8Array | undefined {
  if (bytes.length < 5 || readU32(bytes, 0) !== ZSTD_MAGIC || !lib.available) return undefined;
  const descriptor = bytes[4]!;
  if (bytes.length < frameHeaderBytes(descriptor) || (!verifyChecksums && (descriptor & 4) !== 0)) return undefined;
  if ((frameWindowBytes(bytes) ?? 0) > MAX_WINDOW_BYTES) return undefined;
  const decoder = lib.open();
  try {
    // The stream's first call: the chunk as it came, up to STEP_BYTES (a header read's 1 MiB allowance is more).
    const { output, frameEnded } = decoder.step(bytes);
    // A frame not ended by it may turn out truncated, its lines taken back whatever they hold.
    if (!frameEnded) return undefined;
    // At most STEP_BYTES of output: a line in it is within a header read's 1 MiB bound.
    const newline = output.indexOf(0x0a);
    return newline === -1 ? undefined : output.subarray(0, newline);
  } catch (error) {
    if (error instanceof LibZstdError) return undefined;
    throw error;
  } finally {
    decoder.close();
  }
}

/**
 * Decodes a whole sequence of zstd frames at once (SPEC §11.2): every complete data frame, in
 * order, concatenated; skippable frames skipped; a truncated final frame ignored.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` for a corrupt frame or bytes that are not frames.
 */
export function decodeZstdFrames(lib: LibZstd, bytes: Uint8Array, verifyChecksums = true): Uint8Array {
  const chunks: Uint8Array[] = [];
  const stream = new ZstdStream(
    lib,
    (chunk) => {
      chunks.push(chunk.slice());
      return true;
    },
    {
      verifyChecksums,
      mark: () => {
        const length = chunks.length;
        return () => void (chunks.length = length);
      },
      maxInputBytes: Infinity,
      countSkipped: false,
      sliceBytes: Infinity,
    },
  );
  stream.push(bytes);
  stream.end();
  return concat(chunks);
}
