/**
 * The one log pipeline every store uses (SPEC §11.2.2): bytes in (one buffer, a `ReadableStream`
 * or an async iterable), zstd frames decoded incrementally, lines split on `0x0A`, each line
 * decoded and parsed once by a {@link LogCollector} as it goes by.
 *
 * The zstd decoder is loaded with a dynamic `import()` the first time a zstd log is met, so a
 * front end that reads only plain `.jsonl` never ships it.
 * @module
 */
import { raceAbort, throwIfAborted } from '../abort.js';
import { inspectCallerValue } from '../caller-data.js';
import { describeValue, fail, SessionReferenceError } from '../errors.js';
import type { SessionEvent } from '../types.js';
import { LogCollector, type KeepEvent } from './collect.js';
import { concat, LineSplitter, splitTextLines, type LineLimits } from './lines.js';
import type { LibZstd, ZstdStream, ZstdStreamOptions } from './zstd.js';
import { isZstd } from './magic.js';
import { chunkWork, pace, PACE_WORK } from '../pace.js';

/** One item of a streamed log: a `Uint8Array`, an `ArrayBuffer` or any other `ArrayBufferView`, read as its bytes (SPEC §11.2.3). */
export type SessionLogChunk = Uint8Array | ArrayBuffer | ArrayBufferView;

/** Bytes of a log: one buffer, a `ReadableStream` of byte chunks or an async iterable of them. */
export type SessionLogSource = Uint8Array | ArrayBuffer | ReadableStream<SessionLogChunk> | AsyncIterable<SessionLogChunk>;

/** Default `maxLogBytes`: 4 GiB of decoded log (SPEC §11.2.1). */
export const DEFAULT_MAX_LOG_BYTES = 4 * 1024 ** 3;

/** A header read decodes at most this much of line 1 (SPEC §11.2.1). */
export const MAX_HEADER_BYTES = 1024 * 1024;

/** Options of one read. */
export interface ReadOptions {
  /** Fail once the decoded log passes this many bytes (default {@link DEFAULT_MAX_LOG_BYTES}). */
  maxLogBytes?: number;
  /** Verify zstd content checksums (default `true`). */
  verifyChecksums?: boolean;
  signal?: AbortSignal | undefined;
}

/** What the zstd module gives the pipeline: libzstd, loaded, and the stream over it. */
export interface ZstdCodec {
  lib: LibZstd;
  ZstdStream: new (lib: LibZstd, out: (bytes: Uint8Array) => boolean, options: ZstdStreamOptions) => ZstdStream;
}

let zstdModule: Promise<ZstdCodec> | undefined;
/** The zstd decoder module once loaded, given to every later read at once. */
let loadedZstd: ZstdCodec | undefined;

/** The zstd decoder module and libzstd, loaded on first use. */
function loadZstd(): Promise<ZstdCodec> {
  zstdModule ??= import('./zstd.js').then(async ({ ZstdStream, loadLibZstd }) => (loadedZstd = { lib: await loadLibZstd(), ZstdStream }));
  return zstdModule;
}

/**
 * Work of one slice of zstd decoding (compressed plus decoded bytes) in an asynchronous read:
 * between slices the read lets the event loop run and checks its signal (SPEC §11.2.1.1: a
 * cancelled read stops within 50 ms). 4 MiB is a few ms of libzstd in WebAssembly plus the line
 * splitting and parsing of its output; libzstd's JavaScript form (wasm2js) is a few hundred times
 * slower, so there a slice is one block (a call yields at most 128 KiB).
 */
const SLICE_BYTES = { wasm: 4 * 1024 * 1024, js: 128 * 1024 };

/** What the next read of a store's own source should be (see {@link PulledChunks}). */
export interface ReadRequest {
  /** Bytes to skip after the end of the last chunk (a skippable frame's content). */
  skip: number;
  /** Bytes the read may still take (a header read's allowance); `Infinity` for whole reads. */
  limit: number;
}

/** No bytes: the sniffed prefix before any chunk (never written to). */
const NO_BYTES = new Uint8Array(0);

/**
 * Pushes a log's bytes, in chunks of any size, through zstd decoding (when the bytes start with
 * a zstd magic) and line splitting into a collector. Synchronous: a zstd log needs the codec,
 * given at construction or later through {@link LogFeed.provide}. Zstd work is done in slices
 * ({@link LogFeed.busy}, {@link LogFeed.resume}) when `sliced`, else all at once.
 */
export class LogFeed {
  private readonly lines: LineSplitter;
  /** The first bytes, until 4 have arrived and say whether the log is zstd. */
  private sniffed: Uint8Array | undefined = NO_BYTES;
  /** The zstd decoder the bytes go through, once they turned out to be zstd (else straight to the lines). */
  private zstd: ZstdStream | undefined;
  /** Bytes pushed so far. */
  private received = 0;
  /** The log is zstd and the codec is missing: {@link LogFeed.provide} it before pushing more. */
  needsZstd = false;

  /**
   * @param pulled The chunks come from a store's own reads, which honour {@link LogFeed.nextRead}:
   *   skippable content that still arrives in them counts as read (SPEC §11.2.1.1).
   * @param sliced Decode zstd in slices (an asynchronous read), else all at once.
   */
  constructor(
    private readonly collector: LogCollector,
    private readonly options: Required<Omit<ReadOptions, 'signal'>>,
    private codec?: ZstdCodec,
    private readonly pulled = false,
    private readonly sliced = false,
  ) {
    const header = collector.headerOnly;
    const limits: LineLimits = { maxLogBytes: options.maxLogBytes, maxHeaderBytes: header ? MAX_HEADER_BYTES : Infinity };
    this.lines = new LineSplitter(collector, limits);
  }

  /** The collector has what it wants: nothing more needs to be pushed. */
  get done(): boolean {
    return this.lines.stopped;
  }

  /** Zstd work is left from the last push: {@link LogFeed.resume} it before pushing more. */
  get busy(): boolean {
    return this.zstd !== undefined && !this.lines.stopped && this.zstd.busy;
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
    if (!this.collector.headerOnly) return { skip: 0, limit: Infinity };
    return { skip: 0, limit: Math.max(1, MAX_HEADER_BYTES + 1 - this.received) };
  }

  /** The source skipped `count` bytes, as {@link LogFeed.nextRead} asked. */
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
    return this.codec !== undefined && (!this.sliced || this.codec.lib.available);
  }

  /** Ends the input (a torn last line, a truncated final frame are dropped by the stages). */
  end(): void {
    if (this.sniffed !== undefined) {
      const held = this.sniffed;
      this.sniffed = undefined;
      this.start(false);
      this.lines.push(held);
    }
    if (this.lines.stopped) return this.close();
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
    const { lines, collector } = this;
    const { lib, ZstdStream } = this.codec!;
    this.zstd = new ZstdStream(
      lib,
      (bytes) => {
        lines.push(bytes);
        return !lines.stopped;
      },
      {
        verifyChecksums: this.options.verifyChecksums,
        mark: () => {
          const restoreLines = lines.mark();
          const restoreCollector = collector.mark();
          return () => {
            restoreLines();
            restoreCollector();
          };
        },
        maxInputBytes: collector.headerOnly ? MAX_HEADER_BYTES : Infinity,
        countSkipped: this.pulled,
        sliceBytes: this.sliced ? SLICE_BYTES[lib.kind] : Infinity,
      },
    );
  }
}

/** Fills in the defaults of {@link ReadOptions}. */
function settled(options: ReadOptions): Required<Omit<ReadOptions, 'signal'>> {
  return { maxLogBytes: options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES, verifyChecksums: options.verifyChecksums ?? true };
}

/**
 * Runs a log given whole (text or bytes) through a collector, synchronously, with the zstd codec
 * at hand.
 */
export function collectSync(input: string | Uint8Array, collector: LogCollector, codec: ZstdCodec | undefined, options: ReadOptions = {}): void {
  if (typeof input === 'string') {
    splitTextLines(input, collector);
    return;
  }
  const feed = new LogFeed(collector, settled(options), codec);
  try {
    feed.push(input);
    if (!feed.done) feed.end();
  } finally {
    feed.close();
  }
}

/** Chunks of a byte source, one at a time (`undefined` at the end, checked bytes else), and a way to stop early. */
interface ChunkReader {
  /** The next chunk; a {@link PulledChunks} reader honours `request`, any other ignores it. */
  next(request?: ReadRequest): Promise<Uint8Array | undefined>;
  /** Stops the source early (none: nothing to stop). */
  cancel?(): Promise<void>;
}

const noop = () => {};

/**
 * Chunks a store reads itself: `first`, read already (`undefined`: the log is empty), then one
 * call of `next` per further chunk (`undefined` at the end), read by the pipeline as they come —
 * no async iterator and no stream between the store's reads and the feed. When `first` holds
 * what the collector wants (a header in the first read: the usual listing), the read ends
 * synchronously (see {@link collect}). Stopping early only stops calling `next`; the store
 * releases what it read from. `next(request)` reads from `request.skip` bytes after the end of
 * the last chunk, and at most `request.limit` bytes (SPEC §11.2.1.1: a header read skips
 * skippable frames without reading them, and reads at most 1 MiB); it may read fewer.
 */
export class PulledChunks implements ChunkReader {
  constructor(
    readonly first: Uint8Array | undefined,
    readonly next: (request: ReadRequest) => Promise<Uint8Array | undefined>,
  ) {}
}

/**
 * A store's source whose length in bytes the store knows (an object's `size`, a file's size at
 * open, SPEC §11.2.4): a source that ends before `size` is `SESSION_REFERENCE_READ_FAILED`
 * ("short read: 70 of 100 bytes"), one that goes past it too ("long read"), found at the end of
 * the source, before the read's result exists. A read that stops early (a header read) is not
 * held to it.
 */
export class SizedSource {
  constructor(
    readonly source: SessionLogSource | PulledChunks,
    readonly size: number,
  ) {}
}

/** What a store reads through the pipeline. */
export type StoreSource = SessionLogSource | PulledChunks | SizedSource;

function tagOf(value: object): string {
  return Object.prototype.toString.call(value);
}

/** The bytes of `value` when it is a `Uint8Array` (any realm, subclasses included) or an `ArrayBuffer`. */
export function asBytes(value: unknown): Uint8Array | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (ArrayBuffer.isView(value) && tagOf(value) === '[object Uint8Array]') return value as Uint8Array;
  if (tagOf(value) === '[object ArrayBuffer]') return new Uint8Array(value as ArrayBuffer);
  return undefined;
}

/**
 * The bytes of one item of a streamed source (SPEC §11.2.3): a `Uint8Array` as it is, an
 * `ArrayBuffer` or any other `ArrayBufferView` (a `DataView`, a `Uint16Array`, Node's `Buffer`)
 * as the bytes it covers. Empty ones are allowed.
 * @param index The item's index in the source, from 0.
 * @throws SessionReferenceError `SESSION_REFERENCE_READ_FAILED` naming `index` and the item for
 * anything else (`undefined`, `null`, a number, a string, an object): never an end of the stream.
 */
function itemBytes(value: unknown, index: number): Uint8Array {
  const bytes = asBytes(value);
  if (bytes !== undefined) return bytes;
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw fail('READ_FAILED', `a dsh session log stream gave item ${index} (counting from 0) that is not bytes: ${describeItem(value)}`);
}

/** What a stream item was, for an error message: `undefined` and strings told apart from their text. */
function describeItem(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `the string ${describeValue(value)}`;
  return describeValue(value);
}

/**
 * The item of an iterator result `{ done: boolean, value }` (SPEC §11.2.3): `undefined` when
 * `done` is `true`, else the bytes of `value` ({@link itemBytes}).
 * @throws SessionReferenceError `SESSION_REFERENCE_READ_FAILED` naming `index` for a result that is
 * not an object with a boolean `done` (a primitive, `{}`, `{ done: 'no' }`), and for an item that
 * is not bytes (`{ done: false }` carries `undefined`).
 */
function resultItem(result: unknown, index: number): Uint8Array | undefined {
  if (typeof result !== 'object' || result === null || typeof (result as { done?: unknown }).done !== 'boolean') {
    throw fail('READ_FAILED', `a dsh session log stream answered read ${index} (counting from 0) with ${describeItem(result)}, not an iterator result { done: boolean, value }`);
  }
  const { done, value } = result as { done: boolean; value: unknown };
  return done ? undefined : itemBytes(value, index);
}

/**
 * A reader over any {@link SessionLogSource}, whose every item is checked ({@link resultItem}).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` for anything else.
 */
function chunkReader(source: unknown): ChunkReader {
  // A look at the source that throws (a revoked proxy, a throwing trap, a locked stream) is the
  // caller's: SESSION_REFERENCE_INVALID_ARGUMENT naming `source` (SPEC §10.4).
  return inspectCallerValue(() => (source instanceof PulledChunks ? pulledReader(source) : sourceReader(source)), 'source');
}

/** The reader of a source that is bytes, a `ReadableStream` or an async iterable. */
function sourceReader(source: unknown): ChunkReader {
  const bytes = asBytes(source);
  if (bytes !== undefined) {
    let given = false;
    return { next: async () => (given ? undefined : ((given = true), bytes)) };
  }
  const candidate = source as { getReader?: unknown; [Symbol.asyncIterator]?: unknown } | null;
  let index = 0;
  if (typeof candidate === 'object' && candidate !== null && typeof candidate.getReader === 'function') {
    const reader = (source as ReadableStream<SessionLogChunk>).getReader();
    return {
      next: async () => resultItem(await reader.read(), index++),
      cancel: () => reader.cancel().catch(noop),
    };
  }
  if (typeof candidate === 'object' && candidate !== null && typeof candidate[Symbol.asyncIterator] === 'function') {
    const iterator = (source as AsyncIterable<SessionLogChunk>)[Symbol.asyncIterator]();
    return {
      next: async () => resultItem(await iterator.next(), index++),
      cancel: async () => {
        await Promise.resolve(iterator.return?.()).catch(noop);
      },
    };
  }
  throw fail(
    'INVALID_ARGUMENT',
    `a dsh session log must be a string, a Uint8Array, an ArrayBuffer, a ReadableStream or an async iterable of byte chunks, got ${describeValue(source)}`,
  );
}

/** The reads of {@link PulledChunks} after the first, checked like any other source's items. */
function pulledReader(source: PulledChunks): ChunkReader {
  let index = 1;
  return {
    next: async (request = { skip: 0, limit: Infinity }) => {
      const value = await source.next(request);
      const at = index++;
      return value === undefined ? undefined : itemBytes(value, at);
    },
  };
}

/** What a failing source read becomes: a `SessionReferenceError` as it is, anything else `SESSION_REFERENCE_READ_FAILED`. */
function readFailure(error: unknown): SessionReferenceError {
  if (error instanceof SessionReferenceError) return error;
  return fail('READ_FAILED', `reading the dsh session log failed: ${describeValue(error)}`, error);
}

/**
 * The error of a source that gave `got` bytes where the store knew it holds `expected` (SPEC
 * §11.2.4): `SESSION_REFERENCE_READ_FAILED` "short read: 70 of 100 bytes" (or "long read" for
 * more), after `what` (the store call) when given.
 */
export function sizeMismatch(got: number, expected: number, what?: string): SessionReferenceError {
  return fail('READ_FAILED', `${what === undefined ? '' : `${what}: `}${got < expected ? 'short' : 'long'} read: ${got} of ${expected} bytes`);
}

/**
 * Runs a log source through a collector, loading the zstd codec when the bytes are zstd. Stops
 * reading (and cancels the source) as soon as the collector has what it wants, on abort, and on
 * the first error. Synchronous for text, and for {@link PulledChunks} whose first chunk holds
 * what the collector wants: then it returns `undefined` (no promise, no turn of the event loop);
 * else the promise of the rest. Failures before the first read throw.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` (not a source),
 * `SESSION_REFERENCE_INVALID_LOG` (from the stages and the collector),
 * `SESSION_REFERENCE_READ_FAILED` (the source failed, gave something that is not bytes, or ended
 * before or went past the size of a {@link SizedSource}),
 * `SESSION_REFERENCE_CANCELLED`.
 */
export function collect(given: StoreSource | string, collector: LogCollector, options: ReadOptions = {}): Promise<void> | undefined {
  const { signal } = options;
  throwIfAborted(signal);
  const sized = inspectCallerValue(() => given instanceof SizedSource, 'source');
  const size = sized ? (given as SizedSource).size : undefined;
  const source = sized ? (given as SizedSource).source : given;
  if (typeof source === 'string') {
    splitTextLines(source, collector);
    return undefined;
  }
  const reader = chunkReader(source);
  const pulled = source instanceof PulledChunks;
  const feed = new LogFeed(collector, settled(options), loadedZstd, pulled, true);
  let read = 0;
  if (source instanceof PulledChunks && source.first !== undefined) {
    read = source.first.length;
    try {
      feed.push(source.first);
    } catch (error) {
      feed.close();
      throw error;
    }
    if (feed.done) return undefined;
  }
  return feedChunks(feed, reader, { signal, size, read, pulled });
}

/**
 * Pushes the chunks of `reader` into `feed` until the collector has what it wants, or ends the
 * input at the end of the chunks (after checking `size`, when known, against the `read` bytes
 * counted). Yields to the event loop as {@link pace} says, so an always-ready source cannot keep
 * an abort from running (SPEC §10.3).
 */
async function feedChunks(
  feed: LogFeed,
  reader: ChunkReader,
  at: { signal: AbortSignal | undefined; size: number | undefined; read: number; pulled: boolean },
): Promise<void> {
  const { signal, size, pulled } = at;
  let { read } = at;
  let finished = false;
  try {
    for (;;) {
      if (feed.needsZstd) await provideZstd(feed, signal);
      await slices(feed, signal);
      if (feed.done) return;
      // The next chunk (`undefined` at the end), checked, cancellable by `signal`. A store's own
      // reads skip what the feed asks them to skip (a skippable frame's content), unread.
      const request = feed.nextRead();
      let chunk: Uint8Array | undefined;
      try {
        chunk = await raceAbort(reader.next(request), signal);
      } catch (error) {
        throw readFailure(error);
      }
      throwIfAborted(signal);
      if (pulled && request.skip > 0) {
        feed.skipped(request.skip);
        read += request.skip;
      }
      if (chunk === undefined) break;
      read += chunk.length;
      if (size !== undefined && read > size) throw sizeMismatch(read, size);
      feed.push(chunk);
      const turn = pace(chunkWork(chunk.length));
      if (turn !== undefined) {
        await turn;
        throwIfAborted(signal);
      }
    }
    if (size !== undefined && read < size) throw sizeMismatch(read, size);
    finished = true;
    if (feed.needsZstd) await provideZstd(feed, signal);
    await slices(feed, signal);
    feed.end();
  } finally {
    feed.close();
    if (!finished && reader.cancel) await reader.cancel();
  }
}

/** Gives `feed` the zstd codec once it is loaded and one of its decoding contexts is free. */
async function provideZstd(feed: LogFeed, signal: AbortSignal | undefined): Promise<void> {
  const codec = await loadZstd();
  while (!codec.lib.available) await codec.lib.whenAvailable(signal);
  throwIfAborted(signal);
  feed.provide(codec);
}

/**
 * Decodes the zstd work left in `feed` one slice at a time, with a turn of the event loop and a
 * look at `signal` before each (SPEC §11.2.1.1: a cancelled read stops between slices).
 */
async function slices(feed: LogFeed, signal: AbortSignal | undefined): Promise<void> {
  while (feed.busy) {
    await pace(PACE_WORK); // a whole quota of work: always a turn
    throwIfAborted(signal);
    feed.resume();
  }
}

/**
 * Reads a log source, keeping `keep` of each event (see {@link KeepEvent}; `'header'`: line 1 only),
 * shrunk by `compact` as it goes, or parsing only `lines` (see {@link LogCollector}).
 * @returns The collector, input ended (its `header` is `undefined` for a log without a complete
 * header): at once when {@link collect} ends synchronously, else as a promise.
 */
export function collectLog(
  source: StoreSource | string,
  keep: KeepEvent | 'header',
  options: ReadOptions = {},
  compact?: (events: SessionEvent[]) => SessionEvent[],
  lines?: ReadonlySet<number>,
): LogCollector | Promise<LogCollector> {
  const collector = new LogCollector(keep, compact, lines);
  const rest = collect(source, collector, options);
  return rest === undefined ? collector : rest.then(() => collector);
}
