/**
 * A `SessionQuery` over an object store — Cloudflare R2 or anything with the same two calls —
 * where each object is one dsh session log (SPEC §4.2, §11). Web APIs only.
 * @module
 */
import { raceAbort, throwIfAborted } from '../abort.js';
import { readCallerFields, readCallerOptions } from '../caller-data.js';
import { presentEntries } from '../host.js';
import { describeValue, fail, SessionReferenceError } from '../errors.js';
import type { SessionHeader, SessionQuery, SessionSurface, SessionTitleSnapshot } from '../types.js';
import { pace } from '../pace.js';
import { mapLimited } from './limit.js';
import { preferLog } from './prefer.js';
import { PulledChunks, SizedSource, sizeMismatch, type ReadOptions, type ReadRequest } from './pipeline.js';
import { checkReadOptions, enter, readSessionHeader, readSessionIds, readSessionTitle, type SessionLogReadOptions } from './read.js';
import { checkBudget, firstThen, readSessionSurface, type SessionRead } from './surface-read.js';

/** A byte range of an object: `length` bytes from `offset` (an R2 `R2Range`). */
export interface ObjectStoreRange {
  offset: number;
  length: number;
}

/** What `get` resolves to (an R2 `R2ObjectBody` fits). */
export interface ObjectStoreObjectBody {
  /** The object's bytes, or the requested range of them. */
  arrayBuffer(): Promise<ArrayBuffer>;
  /** The same bytes as a stream (R2 has it): whole logs are read from it chunk by chunk when present. */
  readonly body?: ReadableStream<Uint8Array> | undefined;
  /** The whole object's size in bytes, when the store reports it (R2 does). */
  readonly size?: number | undefined;
}

/** One page of `list` (an R2 `R2Objects` fits). */
export interface ObjectStoreListing {
  /**
   * `etag` (R2 gives it): the object's version, which search uses as the log's identity (SPEC §16.4).
   * `uploaded` (R2 gives it, a `Date`; or milliseconds since the epoch): of two objects with one
   * session id and one header `version`, the newer upload is the session's log (SPEC §17.5).
   */
  objects: ReadonlyArray<{ key: string; size?: number | undefined; etag?: string | undefined; uploaded?: Date | number | undefined }>;
  /** More keys follow; fetch them with `cursor`. */
  truncated: boolean;
  /** Where the next page starts, when `truncated`. */
  cursor?: string | undefined;
}

/**
 * The minimal blob store {@link createObjectStoreSessionQuery} reads. A Cloudflare R2 bucket
 * binding satisfies it as it is. A store that ignores `options.range` (and answers with the whole
 * object) works too, only less cheaply.
 */
export interface ObjectStoreBucket {
  list(options?: { prefix?: string; cursor?: string }): Promise<ObjectStoreListing>;
  get(key: string, options?: { range?: ObjectStoreRange }): Promise<ObjectStoreObjectBody | null>;
}

/** Options of {@link createObjectStoreSessionQuery}. */
export interface ObjectStoreSessionQueryOptions extends SessionLogReadOptions {
  /** Read only objects whose key starts with this prefix (default: every object). */
  prefix?: string | undefined;
  /**
   * Read headers with ranged `get(key, { range })` calls (default `true`). With `false`, or with a
   * store that ignores ranges, the whole object is fetched once and kept for later reads.
   */
  rangeReads?: boolean | undefined;
  /** Object reads in flight at once (default 6, the Workers limit of simultaneous connections). */
  concurrency?: number | undefined;
}

/** The {@link SessionQuery} returned by {@link createObjectStoreSessionQuery}. */
export interface ObjectStoreSessionQuery extends SessionQuery {
  readTitleSnapshots(sessionIds: string[], signal?: AbortSignal): Promise<SessionTitleSnapshot[]>;
  /**
   * The header of one session, read through the listing (headers only): e.g. the target agent of
   * a request, whose cwd drives candidate ranking.
   * @throws SessionReferenceError `SESSION_REFERENCE_NOT_FOUND` for an id no object carries, and
   * the listing's errors.
   */
  readHeader(sessionId: string, signal?: AbortSignal): Promise<SessionHeader>;
  readRetainedSurface(sessionId: string, maxReferenceBytes: number, signal?: AbortSignal): Promise<SessionSurface>;
}

/** First ranged read of a header, in bytes; each further read doubles what was read. */
const FIRST_READ_BYTES = 4096;
/** A whole object a header read had to fetch (a store without ranges) is kept when it is at most this big. */
const KEEP_WHOLE_BYTES = 16 * 1024 * 1024;
const DEFAULT_CONCURRENCY = 6;
/** Pages a listing follows at most (SPEC §10.3): a bucket that never stops answering `truncated` fails there. */
export const MAX_LIST_PAGES = 100_000;

/** One listed session: its object and header, and what was read of it so far. */
interface Entry {
  readonly key: string;
  readonly header: SessionHeader;
  /** `key#etag` when the listing gave an etag (SPEC §16.4). */
  readonly identity: string | undefined;
  /** The header's `version` and the object's upload time (ms), which pick one of two objects with one id (SPEC §17.5). */
  readonly version: number;
  readonly uploaded: number | undefined;
  /**
   * The object's size in bytes as the listing or the header read's gets reported it: what a whole
   * `get` whose body reports no `size` must answer (SPEC §11.2.4).
   */
  readonly size: number | undefined;
  /** The whole object, when the header read already fetched it (a store without ranges). */
  bytes?: Uint8Array | undefined;
  /** The log's surface and title, read on first use. */
  readonly surface: Slot<SessionRead>;
  /** The log's surface read at a budget (`readRetainedSurface`), which serves any smaller budget too. */
  retained?: { budget: number; slot: Slot<SessionRead> } | undefined;
  /** The log's title, when read without the surface. */
  readonly title: Slot<string | undefined>;
}

interface Index {
  readonly byId: ReadonlyMap<string, Entry>;
  /** Newest first: `createdAt` descending, then id ascending by UTF-16 code units. */
  readonly ordered: readonly Entry[];
}

/**
 * A {@link SessionQuery} (SPEC §4.2) over an object store where every object is one dsh session
 * log — JSON Lines (`.jsonl`) or multi-frame zstd (`.jsonl.zstd`), told apart by their bytes, not
 * their keys. The session id is the `id` of the log's header, never the key.
 *
 * - `listSessions(signal?)` lists the keys (following `cursor` while `truncated`) and reads **only
 *   each log's header** (SPEC §11.2.1): ranged reads of 4 KiB, then doubling, through the store
 *   pipeline, stopping once line 1 is decoded (at most 1 MiB of it), whatever the zstd frame
 *   layout. A store that ignores ranges answers with whole objects; one of at most 16 MiB is kept
 *   so that it is not fetched twice. Records are newest first
 *   (`createdAt` descending, then id ascending by UTF-16 code units). An object without a complete
 *   header (empty, torn first line, truncated first frame: a log being created) is not listed; two
 *   objects with one id: the higher header `version`, then the newer `uploaded`, then the key that
 *   sorts first (code units) is used (`preferLog`, SPEC §17.5).
 * - `readSurface(id, signal?)` streams that session's whole log (from `body` when the store gives
 *   one; SPEC §11.1, §11.2, §11.2.2): `{ session: header, capturedThroughSeq: seq of the last event
 *   (null without events), events: folded surface (SPEC §8.2) }`, events projection never reads
 *   kept as placeholders `{ type, seq, time, surfaceOp? }`.
 * - `readRetainedSurface(id, maxReferenceBytes, signal?)` (what `prepare` calls, SPEC §11.2.2):
 *   the same, less the messages retention cannot keep in a reference object of
 *   `maxReferenceBytes`, counted in `withheld: { messages, bytes }`. Message texts are held up to
 *   16 MiB (or 4 × `maxReferenceBytes`); past that, only the newest within 1 MiB (or 4 ×
 *   `maxReferenceBytes`), and the object is fetched a second time only for kept messages older
 *   than that, so a long log never compacted is cited in bounded memory (a Worker has 128 MB).
 *   `SESSION_REFERENCE_READ_FAILED` when the object changed between the two reads.
 * - `readTitleSnapshots(ids, signal?)`: one row per id from the last `session/title` event of its
 *   log, `rejected` (with the error as `reason`) for an unknown id or a failed read.
 * - `readHeader(id, signal?)`: one session's header, from the listing.
 *
 * - Short reads fail (SPEC §11.2.4): a whole body ending before the object's `size` — the one the
 *   body reports, else the listing's (or an earlier get's) — a ranged get shorter than the length
 *   it asked for within that size, a streamed `body` ending early, is
 *   `SESSION_REFERENCE_READ_FAILED` (`object "k": get("k"): short read: 70 of 100 bytes`); a
 *   whole body longer than that size, or a ranged get answering more than it asked for
 *   ("long read: 4106 of 4096 bytes"), or a size changing between the ranged gets of one header
 *   read, too. Nothing partial is returned.
 * - A `list()` answer is host data (SPEC §10.1): a throwing getter, a revoked proxy or a malformed
 *   entry anywhere in it (no string `key`, a `size` that is not a byte count such as `-5` or
 *   `NaN`, an `etag` that is not a string) is `SESSION_REFERENCE_READ_FAILED`, never an object
 *   silently left out.
 * - Listings follow `cursor` while `truncated`, and fail with `SESSION_REFERENCE_READ_FAILED` at a
 *   cursor seen before or after 100,000 pages; they yield to the event loop
 *   as they go, so an abort takes effect even with a bucket that answers at once (SPEC §10.3).
 *
 * An instance lists the store once, on first use, and caches what it reads (the key of every id,
 * headers, each read surface and title, never whole logs): create one per request, as a Worker
 * does, to see new sessions.
 * @param bucket An R2 bucket binding or any {@link ObjectStoreBucket}.
 * @param options `{ prefix?, rangeReads?, concurrency?, maxLogBytes?, verifyChecksums? }`
 *   (`maxLogBytes`: decoded bytes a whole read may pass, default 4 GiB; `verifyChecksums`: zstd
 *   content checksums, default `true`).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` naming the problem when `bucket`
 * lacks `list`/`get` or an option is unknown or malformed. The methods reject with
 * `SESSION_REFERENCE_NOT_FOUND` (unknown id), `SESSION_REFERENCE_INVALID_LOG` (an object that is
 * not a dsh log or is past `maxLogBytes`, naming its key), `SESSION_REFERENCE_READ_FAILED` (a failing or malformed store
 * call; cause kept), `SESSION_REFERENCE_INVALID_ARGUMENT` (bad id, id list or signal) and
 * `SESSION_REFERENCE_CANCELLED` (cause `signal.reason`).
 * @example
 * // In a Worker with an R2 binding SESSIONS:
 * const sessionQuery = createObjectStoreSessionQuery(env.SESSIONS);
 * const refs = createSessionReferences({ sessionQuery });
 */
export function createObjectStoreSessionQuery(
  bucket: ObjectStoreBucket,
  options: ObjectStoreSessionQueryOptions = {},
): ObjectStoreSessionQuery {
  checkBucket(bucket);
  const { prefix, rangeReads, concurrency, read } = checkOptions(options);
  /** The listing, built once per instance. */
  const listing: Slot<Index> = {};

  function index(signal: AbortSignal | undefined): Promise<Index> {
    return shared(listing, signal, buildIndex);
  }

  async function buildIndex(signal: AbortSignal | undefined): Promise<Index> {
    const objects = await listObjects(bucket, prefix, signal);
    const reader = { bucket, rangeReads, signal, read };
    const found = await mapLimited(objects, concurrency, signal, (object) => readEntry(reader, object));
    const byId = new Map<string, Entry>();
    for (const entry of found) {
      if (entry === undefined) continue;
      const other = byId.get(entry.header.id);
      byId.set(entry.header.id, other === undefined ? entry : preferLog(other, entry));
    }
    const ordered = [...byId.values()].sort(newestFirst);
    return { byId, ordered };
  }

  async function locate(sessionId: unknown, signal: AbortSignal | undefined): Promise<Entry> {
    const id = checkSessionId(sessionId);
    const entry = (await index(signal)).byId.get(id);
    if (!entry) throw notFound(id);
    return entry;
  }

  /** The entry's surface and title, fetched and read once. */
  function surfaceOf(entry: Entry, signal: AbortSignal | undefined): Promise<SessionRead> {
    return shared(entry.surface, signal, (started) => readLog(bucket, entry, { ...read, signal: started }));
  }

  /**
   * The entry's surface at `budget` (SPEC §11.2.2): the whole surface when that was read, else a
   * read at a budget at least as large, else a new read at `budget`.
   */
  function retainedOf(entry: Entry, budget: number, signal: AbortSignal | undefined): Promise<SessionRead> {
    if (entry.surface.current) return surfaceOf(entry, signal);
    if (!entry.retained || entry.retained.budget < budget) entry.retained = { budget, slot: {} };
    return shared(entry.retained.slot, signal, (started) => readLog(bucket, entry, { ...read, signal: started }, budget));
  }

  /** The entry's title: from its surface when that was read, else from a title read (once). */
  async function titleOf(entry: Entry, signal: AbortSignal | undefined): Promise<string | undefined> {
    if (entry.surface.current) return (await surfaceOf(entry, signal)).title;
    if (entry.retained?.slot.current) return (await retainedOf(entry, entry.retained.budget, signal)).title;
    return shared(entry.title, signal, (started) => readTitle(bucket, entry, { ...read, signal: started }));
  }

  return {
    async listSessions(signal?: AbortSignal) {
      const checked = enter(signal);
      const { ordered } = await index(checked);
      return ordered.map((entry) => ({ header: { ...entry.header }, ...(entry.identity !== undefined && { identity: entry.identity }) }));
    },
    async readHeader(sessionId: string, signal?: AbortSignal) {
      const checked = enter(signal);
      return { ...(await locate(sessionId, checked)).header };
    },
    async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
      const checked = enter(signal);
      const entry = await locate(sessionId, checked);
      const { header, capturedThroughSeq, events } = await surfaceOf(entry, checked);
      return { session: { ...header }, capturedThroughSeq, events: events.slice() };
    },
    async readRetainedSurface(sessionId: string, maxReferenceBytes: number, signal?: AbortSignal): Promise<SessionSurface> {
      const checked = enter(signal);
      checkBudget(maxReferenceBytes);
      const entry = await locate(sessionId, checked);
      const { header, capturedThroughSeq, events, withheld } = await retainedOf(entry, maxReferenceBytes, checked);
      const surface: SessionSurface = { session: { ...header }, capturedThroughSeq, events: events.slice() };
      if (withheld) surface.withheld = { ...withheld };
      return surface;
    },
    async readTitleSnapshots(sessionIds: string[], signal?: AbortSignal) {
      const checked = enter(signal);
      const ids = readSessionIds(sessionIds);
      const { byId } = await index(checked);
      return mapLimited(ids, concurrency, checked, async (sessionId): Promise<SessionTitleSnapshot> => {
        const entry = byId.get(sessionId);
        if (!entry) return { sessionId, status: 'rejected', reason: notFound(sessionId) };
        try {
          const title = await titleOf(entry, checked);
          return { sessionId, status: 'fulfilled', value: title === undefined ? {} : { title: { title } } };
        } catch (reason) {
          if (isCancelled(reason)) throw reason;
          return { sessionId, status: 'rejected', reason };
        }
      });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Checks

function checkBucket(bucket: unknown): void {
  // Read once, as caller data (SPEC §10.4): a revoked proxy or a throwing getter is INVALID_CONFIG naming `bucket`.
  const { list, get } = readCallerFields(bucket, ['list', 'get'], 'bucket', 'INVALID_CONFIG');
  if (typeof bucket !== 'object' || bucket === null || typeof list !== 'function' || typeof get !== 'function') {
    throw fail(
      'INVALID_CONFIG',
      `bucket must be an object store with list() and get() (an R2 bucket binding), got ${describeValue(bucket)}`,
    );
  }
}

const OPTION_KEYS = ['prefix', 'rangeReads', 'concurrency', 'maxLogBytes', 'verifyChecksums'];

function checkOptions(options: unknown): { prefix: string | undefined; rangeReads: boolean; concurrency: number; read: Required<SessionLogReadOptions> } {
  // Each option read once (SPEC §10.4).
  const fields = readCallerOptions(options, 'options', 'INVALID_CONFIG');
  if (fields === undefined) {
    throw fail('INVALID_CONFIG', `options must be an object, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(fields)) {
    if (!OPTION_KEYS.includes(key)) {
      throw fail('INVALID_CONFIG', `unknown option ${describeValue(key)}`);
    }
  }
  const { prefix, rangeReads = true, concurrency = DEFAULT_CONCURRENCY } = fields as ObjectStoreSessionQueryOptions;
  if (prefix !== undefined && typeof prefix !== 'string') {
    throw fail('INVALID_CONFIG', `prefix must be a string, got ${describeValue(prefix)}`);
  }
  if (typeof rangeReads !== 'boolean') {
    throw fail('INVALID_CONFIG', `rangeReads must be a boolean, got ${describeValue(rangeReads)}`);
  }
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw fail('INVALID_CONFIG', `concurrency must be a positive safe integer, got ${describeValue(concurrency)}`);
  }
  return { prefix, rangeReads, concurrency, read: checkReadOptions(fields, 'INVALID_CONFIG') };
}

function checkSessionId(sessionId: unknown): string {
  if (typeof sessionId !== 'string') {
    throw fail('INVALID_ARGUMENT', `sessionId must be a string, got ${describeValue(sessionId)}`);
  }
  return sessionId;
}

function notFound(sessionId: string) {
  return fail('NOT_FOUND', `no session with id ${describeValue(sessionId)} in the object store`);
}

function isCancelled(error: unknown): boolean {
  return error instanceof SessionReferenceError && error.code === 'SESSION_REFERENCE_CANCELLED';
}

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function newestFirst(a: Entry, b: Entry): number {
  if (a.header.createdAt !== b.header.createdAt) return b.header.createdAt - a.header.createdAt;
  return compareCodeUnits(a.header.id, b.header.id);
}

/** A promise shared by concurrent callers, and the signal of the call that started it. */
interface Slot<T> {
  current?: { promise: Promise<T>; signal: AbortSignal | undefined } | undefined;
}

/**
 * The slot's promise, started by the first caller with its signal. A failure is not kept (the next
 * call starts again), and no caller fails because another caller's signal aborted the shared work.
 */
async function shared<T>(slot: Slot<T>, signal: AbortSignal | undefined, start: (signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
  for (;;) {
    let current = slot.current;
    if (!current) {
      const started = { promise: start(signal), signal };
      started.promise.catch(() => {
        if (slot.current === started) slot.current = undefined;
      });
      slot.current = current = started;
    }
    try {
      return await raceAbort(current.promise, signal);
    } catch (error) {
      if (isCancelled(error) && !signal?.aborted && current.signal !== signal && current.signal?.aborted) continue;
      throw error;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Store calls

/** A store call, its failure turned into `SESSION_REFERENCE_READ_FAILED` (cause kept). */
async function storeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof SessionReferenceError) throw error;
    throw fail('READ_FAILED', `object store ${what} failed: ${describeValue(error)}`, error);
  }
}

function malformed(what: string, value: unknown) {
  return fail('READ_FAILED', `object store ${what} answered ${describeValue(value)}`);
}

/** A listed object. */
interface Listed {
  key: string;
  size?: number;
  etag?: string;
  /** Upload time, ms since the epoch. */
  uploaded?: number;
}

/**
 * Every object under `prefix`, following cursors: at most {@link MAX_LIST_PAGES} pages, no cursor
 * twice (SPEC §10.3), yielding to the event loop as {@link pace} says so that a bucket answering
 * at once forever cannot keep an abort from running.
 */
async function listObjects(
  bucket: ObjectStoreBucket,
  prefix: string | undefined,
  signal: AbortSignal | undefined,
): Promise<Listed[]> {
  const objects: Listed[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 1; ; pages++) {
    throwIfAborted(signal);
    const options: { prefix?: string; cursor?: string } = {};
    if (prefix !== undefined) options.prefix = prefix;
    if (cursor !== undefined) options.cursor = cursor;
    const page = readPage(await storeCall('list()', () => bucket.list(options)));
    for (const object of page.objects) objects.push(object);
    if (!page.truncated) return objects;
    const next = page.cursor;
    if (typeof next !== 'string' || seen.has(next)) throw malformed(`list() cursor of truncated page ${pages}`, next);
    cursor = next;
    if (pages === MAX_LIST_PAGES) throw fail('READ_FAILED', `object store list() answered ${MAX_LIST_PAGES} pages and still more (truncated): not following further`);
    seen.add(cursor);
    await pace(1 + (page.objects.length >>> 6));
  }
}

/**
 * One `list()` page read into plain data, each field once (SPEC §10.1, §10.3): host data, so a
 * throwing getter, a revoked proxy or a malformed shape anywhere in it — an object without a
 * string `key`, a `size` that is not a byte count (`-5`, `1.5`, `NaN`), an `etag` that is not a
 * string — is `SESSION_REFERENCE_READ_FAILED` (cause kept), never an object silently left out.
 * Holes in `objects` are not entries, and cost nothing.
 */
function readPage(page: unknown): { objects: Listed[]; truncated: boolean; cursor: unknown } {
  try {
    if (typeof page !== 'object' || page === null) throw malformed('list()', page);
    const { objects: listed, truncated, cursor } = page as { objects?: unknown; truncated?: unknown; cursor?: unknown };
    if (!Array.isArray(listed)) throw malformed('list()', page);
    const entries = presentEntries(listed as unknown[]);
    const objects: Listed[] = [];
    for (let k = 0; k < entries.count; k++) objects.push(readListed(entries.at(k)));
    return { objects, truncated: Boolean(truncated), cursor };
  } catch (error) {
    if (error instanceof SessionReferenceError) throw error;
    throw fail('READ_FAILED', `object store list() answered unreadable data: ${describeValue(error)}`, error);
  }
}

/** One listed object: a string `key`, and a `size` (a byte count) and `etag` (a string) when present. */
function readListed(object: unknown): Listed {
  const { key, size, etag, uploaded } = (typeof object === 'object' && object !== null ? object : {}) as { key?: unknown; size?: unknown; etag?: unknown; uploaded?: unknown };
  if (typeof key !== 'string') throw malformed('list() object', object);
  if (size !== undefined && (!Number.isSafeInteger(size) || (size as number) < 0)) throw malformed(`list() object ${describeValue(key)} size`, size);
  if (etag !== undefined && typeof etag !== 'string') throw malformed(`list() object ${describeValue(key)} etag`, etag);
  const time = uploadTime(uploaded);
  if (uploaded !== undefined && time === undefined) throw malformed(`list() object ${describeValue(key)} uploaded`, uploaded);
  return { key, ...(size !== undefined && { size: size as number }), ...(etag !== undefined && { etag }), ...(time !== undefined && { uploaded: time }) };
}

/** An upload time as milliseconds since the epoch: a valid `Date` (R2's) or a finite number; else `undefined`. */
function uploadTime(value: unknown): number | undefined {
  const time = value instanceof Date ? value.getTime() : value;
  return typeof time === 'number' && Number.isFinite(time) ? time : undefined;
}

/** A body's bytes, and the whole object's size in bytes when the body reports one. */
async function bodyOf(body: ObjectStoreObjectBody, what: string): Promise<{ bytes: Uint8Array; size: number | undefined }> {
  const size = reportedSize(body, what);
  const buffer = await storeCall(`${what}.arrayBuffer()`, () => body.arrayBuffer());
  if (buffer instanceof Uint8Array) return { bytes: buffer, size };
  if (Object.prototype.toString.call(buffer) !== '[object ArrayBuffer]') throw malformed(`${what}.arrayBuffer()`, buffer);
  return { bytes: new Uint8Array(buffer), size };
}

/**
 * The `size` of a body (the whole object's, in bytes) when it reports one, checking the body.
 * @throws SessionReferenceError `SESSION_REFERENCE_READ_FAILED` for a body without
 * `arrayBuffer()`, a throwing `size` getter or a `size` that is not a byte count.
 */
function reportedSize(body: ObjectStoreObjectBody, what: string): number | undefined {
  if (typeof body !== 'object' || body === null || typeof body.arrayBuffer !== 'function') throw malformed(what, body);
  let size: unknown;
  try {
    size = body.size;
  } catch (error) {
    throw fail('READ_FAILED', `object store ${what}.size failed: ${describeValue(error)}`, error);
  }
  if (size === undefined) return undefined;
  if (!Number.isSafeInteger(size) || (size as number) < 0) throw malformed(`${what}.size`, size);
  return size as number;
}

/**
 * The whole object and its size; `undefined` when it is gone. Fewer or more bytes than the `size`
 * the body reports, else than `listed` (the size the listing gave), are READ_FAILED (SPEC §11.2.4).
 */
async function getWhole(bucket: ObjectStoreBucket, key: string, listed: number | undefined): Promise<{ bytes: Uint8Array; size: number } | undefined> {
  const what = `get(${describeValue(key)})`;
  const body = await storeCall(what, () => bucket.get(key));
  if (body === null) return undefined;
  const { bytes, size = listed } = await bodyOf(body, what);
  if (size !== undefined && bytes.length !== size) throw sizeMismatch(bytes.length, size, what);
  return { bytes, size: bytes.length };
}

/**
 * The bytes of one object as a header read wants them ({@link PulledChunks}, the first read
 * done): ranged reads of 4 KiB, then doubling, each starting where the last one ended, for as
 * long as the reader asks for more; or the whole object at once (`rangeReads: false`, a store
 * that ignores ranges, a first range refused). A whole object of at most
 * {@link KEEP_WHOLE_BYTES} is kept in `kept.bytes` for the later whole read. The reader's
 * requests (SPEC §11.2.1.1) skip a skippable frame's content (the next read starts after it, 4
 * KiB again) and cap each read at what a header read may still take.
 */
async function headerChunks(
  bucket: ObjectStoreBucket,
  object: Listed,
  rangeReads: boolean,
  kept: Kept,
  signal: AbortSignal | undefined,
): Promise<PulledChunks> {
  const { key } = object;
  /** The object's size: the listing's, then what the gets report (kept in `kept.size` for the whole read). */
  let size = (kept.size = object.size);
  /** The size the first get that reported one reported: every later one must report the same. */
  let reported: number | undefined;
  let ranged = rangeReads && size !== 0;
  let offset = 0;
  /** Where the reads started doubling: the object's start, or the end of the last skip. */
  let since = 0;
  let ended = false;
  const next = async (request?: ReadRequest): Promise<Uint8Array | undefined> => {
    if (request !== undefined && request.skip > 0) {
      offset += request.skip;
      since = offset;
    }
    if (ended || (size !== undefined && offset >= size)) return undefined;
    if (!ranged) {
      ended = true;
      const whole = await getWhole(bucket, key, size);
      if (whole === undefined) kept.missing = true;
      else {
        kept.size = whole.size;
        if (whole.size <= KEEP_WHOLE_BYTES) kept.bytes = whole.bytes;
      }
      return whole?.bytes;
    }
    let want = Math.max(1, Math.min(Math.max(offset - since, FIRST_READ_BYTES), request?.limit ?? Infinity));
    if (size !== undefined) want = Math.min(want, size - offset);
    const what = `get(${describeValue(key)}, { range: { offset: ${offset}, length: ${want} } })`;
    let body: ObjectStoreObjectBody | null;
    try {
      body = await storeCall(what, () => bucket.get(key, { range: { offset, length: want } }));
    } catch (error) {
      // A first ranged read may be refused for an object of unknown size (R2 refuses ranges of an
      // empty object): read the whole object instead.
      if (offset > 0 || size !== undefined) throw error;
      ranged = false;
      return next();
    }
    if (body === null) {
      kept.missing = true;
      ended = true;
      return undefined;
    }
    const { bytes: chunk, size: whole } = await bodyOf(body, what);
    if (whole !== undefined) {
      if (reported !== undefined && whole !== reported) {
        throw fail('READ_FAILED', `changed while it was being read: ${what} reports ${whole} bytes, an earlier get ${reported}`);
      }
      reported = kept.size = size = whole;
    }
    if (offset === 0 && (size === undefined ? chunk.length > want : chunk.length === size)) {
      // The whole object: the store ignored the range, or the range covered the object.
      ended = true;
      if (chunk.length <= KEEP_WHOLE_BYTES) kept.bytes = chunk;
      return chunk;
    }
    // More than asked is a long read (against the length asked); what the range holds of an
    // object of known size is exact; of one of unknown size, fewer bytes than asked are its end.
    if (chunk.length > want) throw sizeMismatch(chunk.length, want, what);
    const expected = size === undefined ? undefined : Math.max(0, Math.min(want, size - offset));
    if (expected !== undefined && chunk.length !== expected) throw sizeMismatch(chunk.length, expected, what);
    offset += chunk.length;
    if (chunk.length < want) ended = true;
    return chunk.length > 0 ? chunk : undefined;
  };
  return new PulledChunks(await raceAbort(next(), signal), next);
}

/** Runs `read`, naming `key` in its `SESSION_REFERENCE_INVALID_LOG` or `SESSION_REFERENCE_READ_FAILED` error (the edge catalog's reads too). */
export async function inObject<T>(key: string, read: () => T | Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof SessionReferenceError && (error.code === 'SESSION_REFERENCE_INVALID_LOG' || error.code === 'SESSION_REFERENCE_READ_FAILED')) {
      throw new SessionReferenceError(error.code, `object ${describeValue(key)}: ${error.message}`, { cause: error.cause });
    }
    throw error;
  }
}

/** What a header read learnt of the object beyond its header. */
interface Kept {
  /** The object's size in bytes: the listing's, then the one its gets reported. */
  size?: number | undefined;
  /** The whole object, when the header read fetched it whole (at most {@link KEEP_WHOLE_BYTES}). */
  bytes?: Uint8Array | undefined;
  /** The object was gone. */
  missing?: boolean;
}

/**
 * The listed session of one object, reading only its header (SPEC §11.2.1); `undefined` when the
 * object is gone or has no complete header yet.
 */
async function readEntry(
  { bucket, rangeReads, signal, read }: { bucket: ObjectStoreBucket; rangeReads: boolean; signal: AbortSignal | undefined; read: Required<SessionLogReadOptions> },
  object: Listed,
): Promise<Entry | undefined> {
  const kept: Kept = {};
  const header = await inObject(object.key, async () => readSessionHeader(await headerChunks(bucket, object, rangeReads, kept, signal), { ...read, signal }));
  if (header === undefined || kept.missing) return undefined;
  const identity = object.etag === undefined ? undefined : `${object.key}#${object.etag}`;
  const version = header.version as number;
  return { key: object.key, header, identity, version, uploaded: object.uploaded, size: kept.size, bytes: kept.bytes, surface: {}, title: {} };
}

/**
 * The whole object as a log source: the bytes kept from the listing, else a `get` streamed when
 * it can be; held to the `size` the body reports, else to the size the listing and the header
 * read's gets reported (SPEC §11.2.4: a body ending early is a short read, not a torn log).
 */
async function wholeSource(bucket: ObjectStoreBucket, entry: Entry): Promise<Uint8Array | ReadableStream<Uint8Array> | SizedSource> {
  const kept = entry.bytes;
  if (kept !== undefined) return kept;
  const what = `get(${describeValue(entry.key)})`;
  const body = await storeCall(what, () => bucket.get(entry.key));
  if (body === null) {
    throw fail('NOT_FOUND', `session ${describeValue(entry.header.id)}: object ${describeValue(entry.key)} is gone from the object store`);
  }
  const size = reportedSize(body, what) ?? entry.size;
  const stream = streamOf(body, what);
  if (stream === undefined) {
    const { bytes } = await bodyOf(body, what);
    if (size !== undefined && bytes.length !== size) throw sizeMismatch(bytes.length, size, what);
    return bytes;
  }
  return size === undefined ? stream : new SizedSource(stream, size);
}

/** The body's `body` stream, when it has one. */
function streamOf(body: ObjectStoreObjectBody, what: string): ReadableStream<Uint8Array> | undefined {
  try {
    const stream: unknown = body.body;
    return isStream(stream) ? stream : undefined;
  } catch (error) {
    throw fail('READ_FAILED', `object store ${what}.body failed: ${describeValue(error)}`, error);
  }
}

function isStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof value === 'object' && value !== null && typeof (value as ReadableStream).getReader === 'function';
}

/** Checks that a whole read still found the listed session. */
function checkSameSession(entry: Entry, header: SessionHeader): void {
  if (header.id !== entry.header.id) {
    throw fail(
      'READ_FAILED',
      `object ${describeValue(entry.key)} changed while it was being read: it was listed as session ${describeValue(entry.header.id)}, it now holds ${describeValue(header.id)}`,
    );
  }
}

/**
 * Fetches and reads an entry's whole log, at `budget` bytes of reference when given (which may
 * fetch it a second time), checking it still carries the listed id.
 */
async function readLog(bucket: ObjectStoreBucket, entry: Entry, options: ReadOptions, budget?: number): Promise<SessionRead> {
  throwIfAborted(options.signal);
  const source = await inObject(entry.key, () => wholeSource(bucket, entry));
  entry.bytes = undefined;
  const open = firstThen(source, () => wholeSource(bucket, entry));
  const read = await inObject(entry.key, () => readSessionSurface(open, options, budget));
  checkSameSession(entry, read.header);
  return read;
}

/** Fetches an entry's log and reads its title (once), checking it still carries the listed id. */
async function readTitle(bucket: ObjectStoreBucket, entry: Entry, options: ReadOptions): Promise<string | undefined> {
  throwIfAborted(options.signal);
  const source = await inObject(entry.key, () => wholeSource(bucket, entry));
  const read = await inObject(entry.key, () => readSessionTitle(source, options));
  checkSameSession(entry, read.header);
  return read.title;
}
