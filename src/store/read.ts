/**
 * Streaming reads of dsh session logs (SPEC §11.2.2), shared by every store: the whole log, its
 * surface and title, its title alone, or its header, each through the one pipeline.
 * @module
 */
import { checkSignal } from '../abort.js';
import { describeValue, fail, type ErrorCodeInput } from '../errors.js';
import { foldSurface } from '../surface.js';
import type { SessionEvent, SessionHeader } from '../types.js';
import { LogCollector } from './collect.js';
import type { SessionLog } from './log.js';
import { collectLog, DEFAULT_MAX_LOG_BYTES, type PulledChunks, type ReadOptions, type SessionLogSource } from './pipeline.js';

export type { SessionLogSource } from './pipeline.js';

/** Options of {@link readSessionLog} and of the stores' log reads. */
export interface SessionLogReadOptions {
  /**
   * A read fails with `SESSION_REFERENCE_INVALID_LOG` once the decoded log passes this many bytes
   * (SPEC §11.2.1). Positive safe integer; default 4 GiB.
   */
  maxLogBytes?: number;
  /** Verify zstd frame content checksums (XXH64); default `true`. */
  verifyChecksums?: boolean;
}

/**
 * Checks read options (`maxLogBytes`, `verifyChecksums`) found among `options`.
 * @throws SessionReferenceError with `code` naming the bad key.
 */
export function checkReadOptions(options: Record<string, unknown>, code: ErrorCodeInput): Required<SessionLogReadOptions> {
  const { maxLogBytes = DEFAULT_MAX_LOG_BYTES, verifyChecksums = true } = options;
  if (typeof maxLogBytes !== 'number' || !Number.isSafeInteger(maxLogBytes) || maxLogBytes < 1) {
    throw fail(code, `maxLogBytes must be a positive safe integer (bytes), got ${describeValue(maxLogBytes)}`);
  }
  if (typeof verifyChecksums !== 'boolean') {
    throw fail(code, `verifyChecksums must be a boolean, got ${describeValue(verifyChecksums)}`);
  }
  return { maxLogBytes, verifyChecksums };
}

/**
 * Reads a whole dsh session log from a stream (SPEC §11.1, §11.2, §11.2.2): the same result and
 * errors as `parseSessionLog`, but the input may be a `ReadableStream` or an async iterable of
 * `Uint8Array` chunks (or one buffer, or text), read chunk by chunk, and the zstd decoder is loaded
 * (dynamic `import()`) only when the bytes are zstd.
 * @param source The log: `string`, `Uint8Array`, `ArrayBuffer`, `ReadableStream<Uint8Array>` or `AsyncIterable<Uint8Array>`.
 * @param options `{ maxLogBytes?, verifyChecksums?, signal? }`.
 * @returns `{ header, events }` like `parseSessionLog`.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` (bad source, options or
 * signal), `SESSION_REFERENCE_INVALID_LOG` (as `parseSessionLog`, and past `maxLogBytes`),
 * `SESSION_REFERENCE_READ_FAILED` (the stream failed or gave a chunk that is not bytes; cause kept),
 * `SESSION_REFERENCE_CANCELLED` (cause `signal.reason`; the stream is cancelled).
 */
export async function readSessionLog(
  source: SessionLogSource | string,
  options: SessionLogReadOptions & { signal?: AbortSignal } = {},
): Promise<SessionLog> {
  if (typeof options !== 'object' || options === null) {
    throw fail('INVALID_ARGUMENT', `options must be an object like { maxLogBytes, verifyChecksums, signal }, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'maxLogBytes' && key !== 'verifyChecksums' && key !== 'signal') throw fail('INVALID_ARGUMENT', `unknown option ${describeValue(key)}`);
  }
  const signal = checkSignal(options.signal);
  const collector = await collectLog(source, (event) => event, { ...checkReadOptions(options as Record<string, unknown>, 'INVALID_ARGUMENT'), signal });
  return { header: collector.finish(), events: collector.events };
}

/** What a store serves from one log read: its header, folded surface and title (SPEC §11.3, §8). */
export interface SessionRead {
  header: SessionHeader;
  /** `seq` of the log's last event, `null` without events. */
  capturedThroughSeq: number | null;
  /** The folded surface of the log's surface entries (placeholders for what projection never reads). */
  events: SessionEvent[];
  /** `data.title` of the last `session/title` event. */
  title: string | undefined;
}

/** Event types whose data projection reads (SPEC §8.2); every other event is kept as a placeholder. */
const PROJECTED_TYPES: ReadonlySet<string> = new Set(['user/message', 'steering/message', 'assistant/message']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Shared type strings, so a placeholder costs no string of its own. */
const TYPE_NAMES = new Map<string, string>();

function sharedType(type: string): string {
  let shared = TYPE_NAMES.get(type);
  if (shared === undefined) {
    shared = type;
    if (TYPE_NAMES.size < 1024) TYPE_NAMES.set(type, type);
  }
  return shared;
}

/**
 * What a surface read keeps of an event (SPEC §8): the event itself for the user and steering
 * messages projection reads; an assistant message without its non-text blocks (reasoning, tool
 * calls: never projected); anything else as a placeholder holding what folding reads.
 */
function surfaceEntry(event: SessionEvent): SessionEvent {
  const { type, seq, time, data, surfaceOp } = event;
  if (!PROJECTED_TYPES.has(type)) {
    const placeholder: SessionEvent = { type: sharedType(type), seq, time, data: undefined };
    if (surfaceOp !== undefined) placeholder.surfaceOp = surfaceOp;
    return placeholder;
  }
  if (type !== 'assistant/message' || !isRecord(data) || !isRecord(data.message)) return event;
  const { content } = data.message;
  if (!Array.isArray(content) || content.every((block) => isRecord(block) && block.type === 'text')) return event;
  const text = content.filter((block) => isRecord(block) && block.type === 'text');
  return { ...event, data: { ...data, message: { ...data.message, content: text } } };
}

/** Reads a log's surface and title, keeping only what projection and retention can use (SPEC §8). */
export async function readSessionSurface(source: SessionLogSource | PulledChunks, options: ReadOptions): Promise<SessionRead> {
  // Folded as the lines go by, so shadowed events (a compacted history) are not held to the end.
  const collector = await collectLog(source, surfaceEntry, options, foldSurface);
  const header = collector.finish();
  return { header, capturedThroughSeq: collector.lastSeq, events: foldSurface(collector.events), title: collector.title };
}

/** Reads a log's header and latest title, parsing only the lines that can hold a title. */
export async function readSessionTitle(source: SessionLogSource | PulledChunks, options: ReadOptions): Promise<{ header: SessionHeader; title: string | undefined }> {
  const collector = await collectLog(source, undefined, options);
  return { header: collector.finish(), title: collector.title };
}

/**
 * Reads a log's header (SPEC §11.2.1): line 1 only, at most 1 MiB of it decoded.
 * @returns `undefined` when the log has no complete header yet (empty, torn first line, truncated
 * first frame: a session being created); at once, without a promise, when the first of
 * {@link PulledChunks} holds the header (see `collect`).
 */
export function readSessionHeader(source: SessionLogSource | PulledChunks, options: ReadOptions): SessionHeader | undefined | Promise<SessionHeader | undefined> {
  const collected = collectLog(source, 'header', options);
  return collected instanceof LogCollector ? collected.header : collected.then((collector) => collector.header);
}
