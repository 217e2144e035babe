/**
 * The decoder, second stage of a read (SPEC §11.2, §11.2.1, §11.2.1.1): a log's bytes in, its
 * decoded bytes out to the line splitter. The first four bytes say whether the log is zstd; if so,
 * every frame is decoded by libzstd (zstd.ts), loaded by the pipeline on first use, in slices that
 * let an asynchronous read see its signal; else the bytes pass through as they are.
 * @module
 */
import { concat } from './lines.js';
import { isZstd } from './magic.js';
import type { ReadRequest } from './source.js';
import type { firstFrameLine, LibZstd, ZstdStream, ZstdStreamOptions } from './zstd.js';

/** A header read decodes at most this much of line 1, and reads at most this much compressed input (SPEC §11.2.1, §11.2.1.1). */
export const MAX_HEADER_BYTES = 1024 * 1024;

/** What the zstd module gives the pipeline: libzstd, loaded, the stream over it, and the header read of its first call alone. */
export interface ZstdCodec {
  lib: LibZstd;
  ZstdStream: new (lib: LibZstd, out: (bytes: Uint8Array) => boolean, options: ZstdStreamOptions) => ZstdStream;
  firstFrameLine: typeof firstFrameLine;
}

/** The stage after the decoder: the line splitter, with a restore point over it and everything after it. */
export interface DecodedBytes {
  push(bytes: Uint8Array): void;
  end(): void;
  /** The read has what it wants: no more bytes are needed. */
  readonly stopped: boolean;
  /**
   * A restore point: calling the result takes back everything since (the lines of a truncated
   * final frame, which starts at byte `truncatedAt` of the log).
   */
  mark(): (truncatedAt: number) => void;
}

/** How a {@link LogDecoder} reads (see its constructor). */
export interface DecoderOptions {
  verifyChecksums: boolean;
  headerOnly: boolean;
  pulled: boolean;
  sliced: boolean;
}

/**
 * Work of one slice of zstd decoding (compressed plus decoded bytes) in an asynchronous read:
 * between slices the read lets the event loop run and checks its signal (SPEC §11.2.1.1: a
 * cancelled read stops within 50 ms). 4 MiB is a few ms of libzstd in WebAssembly plus the line
 * splitting and parsing of its output; libzstd's JavaScript form (wasm2js) is a few hundred times
 * slower, so there a slice is one block (a call yields at most 128 KiB).
 */
const SLICE_BYTES = { wasm: 4 * 1024 * 1024, js: 128 * 1024 };

/** No bytes: the sniffed prefix before any chunk (never written to). */
const NO_BYTES = new Uint8Array(0);

/**
 * The decoder stage: takes a log's bytes, in chunks of any size, and passes its decoded bytes on
 * to `lines` — through zstd decoding when the bytes start with a zstd magic, else as they are.
 * Synchronous: a zstd log needs the codec, given at construction or later through
 * {@link LogDecoder.provide}. Zstd work is done in slices ({@link LogDecoder.busy},
 * {@link LogDecoder.resume}) when `sliced`, else all at once.
 */
export class LogDecoder {
  /** The first bytes, until 4 have arrived and say whether the log is zstd. */
  private sniffed: Uint8Array | undefined = NO_BYTES;
  /** The zstd decoder the bytes go through, once they turned out to be zstd (else straight to the lines). */
  private zstd: ZstdStream | undefined;
  /** Bytes pushed so far. */
  private received = 0;
  /** The log is zstd and the codec is missing: {@link LogDecoder.provide} it before pushing more. */
  needsZstd = false;

  /**
   * @param lines The next stage: the line splitter and what follows it.
   * @param options `headerOnly`: the read wants line 1 only (SPEC §11.2.1.1: it reads at most 1 MiB);
   *   `pulled`: the chunks come from a store's own reads, which honour {@link LogDecoder.nextRead}
   *   (skippable content that still arrives in them counts as read); `sliced`: decode zstd in
   *   slices (an asynchronous read), else all at once.
   */
  constructor(
    private readonly lines: DecodedBytes,
    private readonly options: DecoderOptions,
    private codec?: ZstdCodec,
  ) {}

  /** The collector has what it wants: nothing more needs to be pushed. */
  get done(): boolean {
    return this.lines.stopped && this.zstd?.settling !== true;
  }

  /** Zstd work is left from the last push: {@link LogDecoder.resume} it before pushing more. */
  get busy(): boolean {
    return this.zstd !== undefined && !this.done && this.zstd.busy;
  }

  /** Decodes the next slice of zstd work. */
  resume(): void {
    this.zstd!.resume();
  }

  /**
   * What the next read of the source should be (SPEC §11.2.1.1): skip the rest of a skippable
   * frame; a header read takes at most 1 MiB of compressed input (plus the 8-byte headers of
   * skippable frames), or 1 MiB and one byte of text.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` when a header read may read no more.
   */
  nextRead(): ReadRequest {
    if (this.zstd !== undefined) return { skip: this.zstd.pendingSkip, limit: this.zstd.readLimit() };
    if (!this.options.headerOnly) return { skip: 0, limit: Infinity };
    return { skip: 0, limit: Math.max(1, MAX_HEADER_BYTES + 1 - this.received) };
  }

  /** The source skipped `count` bytes, as {@link LogDecoder.nextRead} asked. */
  skipped(count: number): void {
    if (count > 0) this.zstd!.skipped(count);
  }

  provide(codec: ZstdCodec): void {
    this.codec = codec;
    this.needsZstd = false;
    const held = this.sniffed!;
    this.sniffed = undefined;
    this.start(true);
    this.push(held);
  }

  push(chunk: Uint8Array): void {
    this.received += chunk.length;
    if (this.sniffed !== undefined) {
      const held = this.sniffed.length === 0 ? chunk : concat([this.sniffed, chunk]);
      if (held.length < 4 || this.needsZstd) {
        this.sniffed = held === chunk ? chunk.slice() : held;
        return;
      }
      if (isZstd(held) && !this.zstdReady()) {
        this.sniffed = held === chunk ? chunk.slice() : held;
        this.needsZstd = true;
        return;
      }
      this.sniffed = undefined;
      this.start(isZstd(held));
      chunk = held;
    }
    if (this.zstd !== undefined) this.zstd.push(chunk);
    else this.lines.push(chunk);
  }

  /**
   * The codec is here and, for an asynchronous read, one of libzstd's decoding contexts is free
   * (SPEC §11.2.2: concurrent reads take turns, see `MAX_LIVE_CONTEXTS`); a synchronous read takes
   * one at once.
   */
  private zstdReady(): boolean {
    return this.codec !== undefined && (!this.options.sliced || this.codec.lib.available);
  }

  /** Ends the input (a torn last line, a truncated final frame are dropped by the stages). */
  end(): void {
    if (this.sniffed !== undefined) {
      const held = this.sniffed;
      this.sniffed = undefined;
      this.start(false);
      this.lines.push(held);
    }
    if (this.done) return this.close();
    this.zstd?.end();
    this.lines.end();
  }

  /** Frees the zstd decoder's memory (a read that stops early or fails); idempotent. */
  close(): void {
    this.zstd?.close();
  }

  /** Routes the bytes from here on: through a zstd decoder (`zstd`) or straight to the lines. */
  private start(zstd: boolean): void {
    if (!zstd) return;
    const { lines, options } = this;
    const { lib, ZstdStream } = this.codec!;
    this.zstd = new ZstdStream(
      lib,
      (bytes) => {
        lines.push(bytes);
        return !lines.stopped;
      },
      {
        verifyChecksums: options.verifyChecksums,
        mark: () => lines.mark(),
        maxInputBytes: options.headerOnly ? MAX_HEADER_BYTES : Infinity,
        // A header read's line 1 stands only once its frame has ended (a truncated first frame: no header yet).
        settleFrame: options.headerOnly,
        countSkipped: options.pulled,
        sliceBytes: options.sliced ? SLICE_BYTES[lib.kind] : Infinity,
      },
    );
  }
}
