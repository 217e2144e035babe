/**
 * Streaming reads of dsh session logs (SPEC §11.2.2), shared by every store: the whole log, its
 * title alone, or its header, each through the one pipeline (a surface read: `surface-read.ts`).
 * @module
 */
import { checkSignal } from '../abort.js';
import { copyCallerData, readCallerOptions } from '../caller-data.js';
import { describeValue, fail } from '../errors.js';
import type { SessionEvent, SessionHeader } from '../types.js';
import { LogCollector } from './collect.js';
import type { SessionLog } from './log.js';
import { collectLog, type ReadOptions, type SessionLogSource, type StoreSource } from './pipeline.js';
import { checkReadOptions, type SessionLogReadOptions } from './read-checks.js';

export { checkReadOptions, enter, type SessionLogReadOptions } from './read-checks.js';

export type { SessionLogChunk, SessionLogSource } from './pipeline.js';

/**
 * The caller's list of session ids read once into a private copy (SPEC §10.4: a sparse array is
 * the entries it holds), checked to hold strings only.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` otherwise.
 */
export function readSessionIds(sessionIds: unknown): string[] {
  const ids = copyCallerData(sessionIds, 'sessionIds');
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) {
    throw fail('INVALID_ARGUMENT', `sessionIds must be an array of strings, got ${describeValue(ids)}`);
  }
  return ids;
}

/**
 * Reads a whole dsh session log from a stream (SPEC §11.1, §11.2, §11.2.2): the same result and
 * errors as `parseSessionLog`, but the input may be a `ReadableStream` or an async iterable of
 * `Uint8Array` chunks (or one buffer, or text), read chunk by chunk, and the zstd decoder is loaded
 * (dynamic `import()`) only when the bytes are zstd.
 * Streams are read strictly (SPEC §11.2.3): each chunk is a `Uint8Array`, an `ArrayBuffer` or any
 * other `ArrayBufferView` (read as the bytes it covers; empty chunks are fine), and memory does not
 * depend on the chunking (the longest line plus one chunk plus a fixed overhead). A source that is
 * always ready still lets an abort run (SPEC §10.3).
 * @param source The log: `string`, `Uint8Array`, `ArrayBuffer`, or a `ReadableStream` or
 *   `AsyncIterable` of byte chunks.
 * @param options `{ maxLogBytes?, verifyChecksums?, signal? }`.
 * @returns `{ header, events }` like `parseSessionLog`.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` (bad source, options or
 * signal), `SESSION_REFERENCE_INVALID_LOG` (as `parseSessionLog`, and past `maxLogBytes`),
 * `SESSION_REFERENCE_READ_FAILED` (the stream failed, cause kept; or gave an item that is not
 * bytes — `undefined`, `null`, a number, a string, an iterator result that is not
 * `{ done: boolean, value }` — naming its index, never taken for the end),
 * `SESSION_REFERENCE_CANCELLED` (cause `signal.reason`; the stream is cancelled).
 */
export async function readSessionLog(
  source: SessionLogSource | string,
  options: SessionLogReadOptions & { signal?: AbortSignal | undefined } = {},
): Promise<SessionLog> {
  // Each option read once, before anything is awaited (SPEC §10.4).
  const fields = readCallerOptions(options, 'options');
  if (fields === undefined) {
    throw fail('INVALID_ARGUMENT', `options must be an object like { maxLogBytes, verifyChecksums, signal }, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(fields)) {
    if (key !== 'maxLogBytes' && key !== 'verifyChecksums' && key !== 'signal') throw fail('INVALID_ARGUMENT', `unknown option ${describeValue(key)}`);
  }
  const signal = checkSignal(fields.signal);
  const collector = await collectLog(source, (event) => event, { ...checkReadOptions(fields, 'INVALID_ARGUMENT'), signal });
  return { header: collector.finish(), events: collector.events };
}

/** A title read uses the data of no row but `session/title` (which every read reads in full). */
const noRowData = () => false;

/**
 * Reads a log's header and latest title, parsing only the lines that can hold a title: every other
 * row is validated by a scan of its bytes, never decoded or parsed (SPEC §11.2.6).
 */
export async function readSessionTitle(source: StoreSource, options: ReadOptions): Promise<{ header: SessionHeader; title: string | undefined }> {
  const collector = await collectLog(source, undefined, options, undefined, undefined, noRowData);
  return { header: collector.finish(), title: collector.title };
}

/**
 * Reads a log's header (SPEC §11.2.1): line 1 only, at most 1 MiB of it decoded.
 * @returns `undefined` when the log has no complete header yet (empty, torn first line, truncated
 * first frame: a session being created); at once, without a promise, when the first of
 * {@link PulledChunks} holds the header (see `collect`).
 */
export function readSessionHeader(source: StoreSource, options: ReadOptions): SessionHeader | undefined | Promise<SessionHeader | undefined> {
  const collected = collectLog(source, 'header', options);
  return collected instanceof LogCollector ? collected.header : collected.then((collector) => collector.header);
}
