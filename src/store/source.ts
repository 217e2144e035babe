/**
 * The source, first stage of a read (SPEC §11.2.2, §11.2.3, §11.2.4): a log's bytes as a store or
 * a caller gives them — one buffer, a `ReadableStream`, an async iterable, or a store's own reads
 * ({@link PulledChunks}) — taken one checked chunk at a time.
 * @module
 */
import { inspectCallerValue } from '../caller-data.js';
import { describeValue, fail, SessionReferenceError } from '../errors.js';

/** One item of a streamed log: a `Uint8Array`, an `ArrayBuffer` or any other `ArrayBufferView`, read as its bytes (SPEC §11.2.3). */
export type SessionLogChunk = Uint8Array | ArrayBuffer | ArrayBufferView;

/** Bytes of a log: one buffer, a `ReadableStream` of byte chunks or an async iterable of them. */
export type SessionLogSource = Uint8Array | ArrayBuffer | ReadableStream<SessionLogChunk> | AsyncIterable<SessionLogChunk>;

/** What the next read of a store's own source should be (see {@link PulledChunks}). */
export interface ReadRequest {
  /** Bytes to skip after the end of the last chunk (a skippable frame's content). */
  skip: number;
  /** Bytes the read may still take (a header read's allowance); `Infinity` for whole reads. */
  limit: number;
}

/** Chunks of a byte source, one at a time (`undefined` at the end, checked bytes else), and a way to stop early. */
export interface ChunkReader {
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
export function chunkReader(source: unknown): ChunkReader {
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
    return streamReader(source as ReadableStream<SessionLogChunk>);
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

/**
 * Bytes of each read of a byte stream, into one buffer reused from read to read: what a read holds
 * of the stream is this buffer, however the stream's source chunks its bytes (workerd's R2 bodies
 * come in 4 KiB chunks, each a new buffer, unless read this way).
 */
export const STREAM_READ_BYTES = 64 * 1024;

/**
 * The reader of a `ReadableStream`: a byte stream (`type: 'bytes'`: R2 and `fetch` bodies) is read
 * with a BYOB reader into one reused buffer (the pipeline copies what it keeps of a chunk before it
 * asks for the next); any other stream with its default reader, its chunks as they come.
 */
function streamReader(stream: ReadableStream<SessionLogChunk>): ChunkReader {
  let index = 0;
  let byob: ReadableStreamBYOBReader;
  try {
    byob = stream.getReader({ mode: 'byob' });
  } catch {
    // Not a byte stream (or a stream-like object without BYOB reads): its chunks as they come.
    const reader = stream.getReader();
    return { next: async () => resultItem(await reader.read(), index++), cancel: () => reader.cancel().catch(noop) };
  }
  let buffer = new ArrayBuffer(STREAM_READ_BYTES);
  return {
    next: async () => {
      const item = resultItem(await byob.read(new Uint8Array(buffer)), index++);
      // The read hands the buffer back, holding the bytes it read; anything else gets a new buffer.
      buffer = item !== undefined && item.buffer instanceof ArrayBuffer && item.buffer.byteLength === STREAM_READ_BYTES ? item.buffer : new ArrayBuffer(STREAM_READ_BYTES);
      return item;
    },
    cancel: () => byob.cancel().catch(noop),
  };
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
export function readFailure(error: unknown): SessionReferenceError {
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

