/**
 * The one log pipeline every store uses (SPEC §11.2.2, §11.2.6): a read is a chain of one-way
 * stages that a log's bytes pass once, each a module with one job:
 *
 *   source (source.ts) → decoder (decoder.ts: zstd or not) → line splitter (lines.ts)
 *     → line classifier and validator (classify.ts: the rule of §11.2.6) → collector (collect.ts)
 *
 * This module only builds the chain and drives it: it pulls the source's chunks, lets the event
 * loop run between slices of work, loads the zstd decoder with a dynamic `import()` the first time
 * a zstd log is met (a front end that reads only plain `.jsonl` never ships it), and waits for
 * one of libzstd's decoding contexts when all are in use. A store's header read of a zstd log
 * whose first chunk holds dsh's header frame builds no chain: libzstd's first call gives line 1
 * (see {@link headerOfFirstFrame}).
 * @module
 */
import { raceAbort, throwIfAborted } from '../abort.js';
import { inspectCallerValue } from '../caller-data.js';
import type { SessionEvent } from '../types.js';
import { LineClassifier } from './classify.js';
import { LogCollector, type KeepEvent } from './collect.js';
import { LogDecoder, MAX_HEADER_BYTES, type DecodedBytes, type ZstdCodec } from './decoder.js';
import { ChunkScanner } from './chunk-scanner.js';
import { LineSplitter, splitTextLines } from './lines.js';
import { chunkReader, PulledChunks, readFailure, SizedSource, sizeMismatch, type ChunkReader, type StoreSource } from './source.js';
import { chunkWork, pace, PACE_WORK } from '../pace.js';
import { DEFAULT_MAX_LOG_BYTES } from './read-checks.js';
import { decodeUtf8Strict } from '../utf8.js';

export { MAX_HEADER_BYTES, type ZstdCodec } from './decoder.js';
export { asBytes, PulledChunks, SizedSource, sizeMismatch, type ReadRequest, type SessionLogChunk, type SessionLogSource, type StoreSource } from './source.js';

export { DEFAULT_MAX_LOG_BYTES } from './read-checks.js';

/** Options of one read. */
export interface ReadOptions {
  /** Fail once the decoded log passes this many bytes (default {@link DEFAULT_MAX_LOG_BYTES}). */
  maxLogBytes?: number;
  /** Verify zstd content checksums (default `true`). */
  verifyChecksums?: boolean;
  signal?: AbortSignal | undefined;
}

let zstdModule: Promise<ZstdCodec> | undefined;
/** The zstd decoder module once loaded, given to every later read at once. */
let loadedZstd: ZstdCodec | undefined;

/** The zstd decoder module and libzstd, loaded on first use. */
function loadZstd(): Promise<ZstdCodec> {
  zstdModule ??= import('./zstd.js').then(async ({ ZstdStream, loadLibZstd, firstFrameLine }) => (loadedZstd = { lib: await loadLibZstd(), ZstdStream, firstFrameLine }));
  return zstdModule;
}

/**
 * The decoded bytes a read of `collector` may pass (SPEC §11.2.1): `maxLogBytes` bounds whole
 * reads only; a header read has its own bound (line 1 within 1 MiB), so a log past
 * `maxLogBytes` is listed, and its reads fail naming the limit.
 */
function readLimit(collector: LogCollector, options: ReadOptions): number {
  return collector.headerOnly ? Infinity : (options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES);
}

/**
 * The stages after the decoder, for `collector`: line splitter → classifier → collector, with one
 * restore point over them all (a truncated final zstd frame takes its lines back).
 */
function lineStages(collector: LogCollector, maxLogBytes: number): DecodedBytes {
  const scanner = new ChunkScanner();
  const limits = { maxLogBytes, maxHeaderBytes: collector.headerOnly ? MAX_HEADER_BYTES : Infinity };
  const splitter = new LineSplitter(new LineClassifier(collector, scanner), limits, scanner);
  return {
    push: (bytes) => splitter.push(bytes),
    end: () => splitter.end(),
    get stopped() {
      return splitter.stopped;
    },
    mark: () => {
      const restoreLines = splitter.mark();
      const restoreCollector = collector.mark();
      return (truncatedAt) => {
        restoreLines();
        restoreCollector(truncatedAt);
      };
    },
  };
}

/** The chain from the decoder on, for `collector` (see the module). */
function chain(collector: LogCollector, options: ReadOptions, reading: { pulled: boolean; sliced: boolean }, codec: ZstdCodec | undefined): LogDecoder {
  const lines = lineStages(collector, readLimit(collector, options));
  return new LogDecoder(lines, { verifyChecksums: options.verifyChecksums ?? true, headerOnly: collector.headerOnly, ...reading }, codec);
}

/**
 * Runs a log given whole (text or bytes) through a collector, synchronously, with the zstd codec
 * at hand.
 */
export function collectSync(input: string | Uint8Array, collector: LogCollector, codec: ZstdCodec | undefined, options: ReadOptions = {}): void {
  if (typeof input === 'string') {
    splitTextLines(input, collector, readLimit(collector, options));
    return;
  }
  const feed = chain(collector, options, { pulled: false, sliced: false }, codec);
  try {
    feed.push(input);
    if (!feed.done) feed.end();
  } finally {
    feed.close();
  }
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
    splitTextLines(source, collector, readLimit(collector, options));
    return undefined;
  }
  if (source instanceof PulledChunks && source.first !== undefined && collector.headerOnly && headerOfFirstFrame(source.first, collector, options)) return undefined;
  const reader = chunkReader(source);
  const pulled = source instanceof PulledChunks;
  const feed = chain(collector, options, { pulled, sliced: true }, loadedZstd);
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
 * A header read of a zstd log settled by libzstd's first call over its `first` chunk (dsh's header
 * frame, see `firstFrameLine`): line 1 goes to `collector` as the classifier hands it on, and the
 * chain is never built. `false` (nothing done) for anything else, and until the codec is loaded
 * (the first zstd read loads it the general way).
 */
function headerOfFirstFrame(first: Uint8Array, collector: LogCollector, options: ReadOptions): boolean {
  const codec = loadedZstd;
  const line = codec?.firstFrameLine(codec.lib, first, options.verifyChecksums ?? true);
  if (line === undefined) return false;
  collector.line(line.length === 0 ? '' : decodeUtf8Strict(line), 1, true);
  return true;
}

/**
 * Pushes the chunks of `reader` into `feed` until the collector has what it wants, or ends the
 * input at the end of the chunks (after checking `size`, when known, against the `read` bytes
 * counted). Yields to the event loop as {@link pace} says, so an always-ready source cannot keep
 * an abort from running (SPEC §10.3).
 */
async function feedChunks(
  feed: LogDecoder,
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
async function provideZstd(feed: LogDecoder, signal: AbortSignal | undefined): Promise<void> {
  const codec = await loadZstd();
  while (!codec.lib.available) await codec.lib.whenAvailable(signal);
  throwIfAborted(signal);
  feed.provide(codec);
}

/**
 * Decodes the zstd work left in `feed` one slice at a time, with a turn of the event loop and a
 * look at `signal` before each (SPEC §11.2.1.1: a cancelled read stops between slices).
 */
async function slices(feed: LogDecoder, signal: AbortSignal | undefined): Promise<void> {
  while (feed.busy) {
    await pace(PACE_WORK); // a whole quota of work: always a turn
    throwIfAborted(signal);
    feed.resume();
  }
}

/**
 * Reads a log source, keeping `keep` of each event (see {@link KeepEvent}; `'header'`: line 1 only),
 * shrunk by `compact` as it goes, or parsing only `lines`, and reading the data of rows of the
 * types `readsData` accepts only (default: every type but packed chunk rows; see {@link LogCollector}).
 * @returns The collector, input ended (its `header` is `undefined` for a log without a complete
 * header): at once when {@link collect} ends synchronously, else as a promise.
 */
export function collectLog(
  source: StoreSource | string,
  keep: KeepEvent | 'header',
  options: ReadOptions = {},
  compact?: (events: SessionEvent[]) => SessionEvent[],
  lines?: ReadonlySet<number>,
  readsData?: (type: string) => boolean,
): LogCollector | Promise<LogCollector> {
  const collector = new LogCollector(keep, compact, lines, readsData);
  const rest = collect(source, collector, options);
  return rest === undefined ? collector : rest.then(() => collector);
}
