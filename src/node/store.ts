/**
 * dsh's on-disk session store as a `SessionQuery` (SPEC §12.1). Node only.
 *
 * Layout: `<root>/<project dir>/<session dir>/<log>`, `<log>` being `session.jsonl` or
 * `session.v<N>.jsonl`, each optionally compressed as `<name>.zstd` (multi-frame zstd, SPEC §11.2).
 * @module
 */
import { closeSync, constants, fstatSync, open, read as readFd, readdir, stat, statSync, type Dirent, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { deflateRawSync } from 'node:zlib';
import { join, resolve, sep } from 'node:path';
import { raceAbort, throwIfAborted } from '../abort.js';
import { copyCallerData, readCallerOptions } from '../caller-data.js';
import { useTurn } from '../pace.js';
import { useHostDeflate } from '../host-deflate.js';
import { useSegmenterFingerprint } from '../host-segmenter.js';
import { check, describeValue, fail, SessionReferenceError } from '../errors.js';
import type { ReadOptions, ReadRequest, SizedSource } from '../store/pipeline.js';
import { checkBudget, checkReadOptions, enter, type SessionLogReadOptions } from '../store/read-checks.js';
import { Limiter, mapLimited } from '../store/limit.js';
import type { SessionRead } from '../store/surface-read.js';
import { LruCache } from './lru.js';
import type { SessionHeader, SessionQuery, SessionSurface, SessionTitleSnapshot } from '../types.js';

/** Options of {@link createDshStoreSessionQuery}. */
export interface DshStoreOptions extends SessionLogReadOptions {
  /**
   * The store's root directory (`<root>/<project dir>/<session dir>/<log>`); relative paths are
   * resolved against the current directory once, at creation. Default: {@link defaultSessionStoreRoot}.
   */
  root?: string | undefined;
}

/** A `SessionQuery` over a dsh store on disk, plus where it reads from. */
export interface DshStoreSessionQuery extends SessionQuery {
  /** The absolute root directory this query reads. */
  readonly root: string;
  readTitleSnapshots(sessionIds: string[], signal?: AbortSignal): Promise<SessionTitleSnapshot[]>;
  readRetainedSurface(sessionId: string, maxReferenceBytes: number, signal?: AbortSignal): Promise<SessionSurface>;
}

/** One session found on disk: the log chosen for it and its header. */
interface IndexedSession {
  header: SessionHeader;
  /** The session directory. */
  dir: string;
  /** The log file read for this session (the highest version in `dir`). */
  path: string;
  /** The directory entry is a regular file (else a symlink, followed when opened). */
  regular: boolean;
  /** The identity of the log file when its header was read (SPEC §16.4). */
  identity: string;
}

/** A log chosen in a session directory. */
interface LogEntry {
  path: string;
  /** The directory entry is a regular file, so opening it cannot open a FIFO (else a symlink). */
  regular: boolean;
  /**
   * The log's identity as a `stat` just saw it (a regular file), when the choice was checked by
   * stating it: a cache check of its header or title then needs no other `stat`. Never cached.
   */
  current?: string | undefined;
}

/** `session.jsonl`, `session.v<N>.jsonl`, each optionally `.zstd`. */
const LOG_NAME = /^session(?:\.v(\d+))?\.jsonl(\.zstd)?$/;

/** Header reads while listing, and title rows checked against the caches, in flight at once (far below the usual fd limits). */
const LIST_CONCURRENCY = 16;

/** Whole-log reads (titles, surfaces) in flight at once in one query; cache checks are not held to it. */
const READ_CONCURRENCY = 4;

/** First read of a header, in bytes; each further read doubles, up to {@link CHUNK_BYTES}. */
const HEADER_CHUNK = 4 * 1024;

/**
 * Milliseconds since a directory's last change after which its listing may be cached: coarser
 * than any file system's mtime granularity (FAT's is 2 s), so a later change always changes it.
 */
const SETTLED_MS = 2000;

/**
 * Entries each cache of a query (headers, titles, the log chosen in each session directory) holds
 * at most (SPEC §11.2.5), least recently used first out: more sessions than a dsh store holds, so a
 * listing finds every header it read before in the cache.
 */
export const CACHE_ENTRIES = 100_000;

/** Bytes each cache holds at most, as {@link entryBytes} estimates them (SPEC §11.2.5). */
export const CACHE_BYTES = 64 * 1024 * 1024;

/** What a cache entry holds, estimated: 2 bytes per UTF-16 unit of its strings and of its values as JSON, plus 200 for its objects. */
function entryBytes(...parts: unknown[]): number {
  let units = 0;
  for (const part of parts) units += typeof part === 'string' ? part.length : part === undefined ? 0 : JSON.stringify(part).length;
  return 200 + 2 * units;
}

/** Bytes per read of a whole log. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * The first read of a whole log of `size` bytes: all of it up to {@link CHUNK_BYTES}, so a small
 * log costs one read into one buffer of its size, not a 1 MiB one.
 */
function wholeFirstChunk(size: number): number {
  return Math.max(1, Math.min(CHUNK_BYTES, size));
}

/** How a read reads a file (see {@link FileReads}): the size of its first read for a file of `size` bytes, and whether it reads ahead. */
interface ReadPlan {
  first: (size: number) => number;
  ahead: boolean;
}

/** A header read: 4 KiB first, no read ahead (most headers are in the first read). */
const HEADER_READ: ReadPlan = { first: () => HEADER_CHUNK, ahead: false };

/** A whole read: the file up to 1 MiB first, each next chunk read ahead. */
const WHOLE_READ: ReadPlan = { first: wholeFirstChunk, ahead: true };

/**
 * The default store root (SPEC §12.1): `$DSH_HOME/sessions` when `DSH_HOME` is a non-empty
 * string, else `~/.dsh/sessions`.
 * @param env - environment to read `DSH_HOME` from; default `process.env`.
 * @param home - home directory; default `os.homedir()`.
 */
export function defaultSessionStoreRoot(
  env: Readonly<Record<string, string | undefined>> = process.env,
  home: string = homedir(),
): string {
  const dshHome = env.DSH_HOME;
  return dshHome ? join(dshHome, 'sessions') : join(home, '.dsh', 'sessions');
}

/**
 * A `SessionQuery` (SPEC §4.2) over dsh's on-disk store (SPEC §12.1).
 *
 * - `listSessions(signal?)` scans `<root>/<project>/<session>/` and reads **only the header** of
 *   each session's log — the first line, decoding at most 1 MiB of it (SPEC §11.2.1) — never
 *   whole logs. Records are newest first (`createdAt` descending, then id ascending by UTF-16 code
 *   units). The session id is the header's `id`, never a folder name. A missing root lists no
 *   sessions. Each record's `identity` is the log file's device, inode, size, mtime and ctime when its
 *   header was read (search re-reads a log only when it moved, SPEC §16.4).
 * - Only regular files (or symlinks to them) are logs: a FIFO, socket or device named like a log
 *   is skipped without being opened.
 * - Several logs in one session directory: the highest `v<N>` wins (`session.jsonl` ranks below
 *   every `session.v<N>.jsonl`); at the same rank the plain `.jsonl` wins over its `.zstd`
 *   (a crash while compressing leaves the plain log complete and the compressed one truncated).
 *   Other files are ignored.
 * - A log without a complete header yet (empty file, torn first line, truncated first frame:
 *   a session being created) is not listed. Two session directories whose headers carry the
 *   same id: the one whose log path sorts first (code units) is used, the other ignored.
 * - `readSurface(id, signal?)` streams that session's whole log (SPEC §11.2.2) and resolves to
 *   `{ session: header, capturedThroughSeq: seq of the last event (null without events),
 *   events: folded surface (SPEC §8.2) }`, keeping only what projection can use (events it never
 *   reads are placeholders `{ type, seq, time, surfaceOp? }`; events off the surface are not kept).
 * - `readRetainedSurface(id, maxReferenceBytes, signal?)` (what `prepare` calls, SPEC §11.2.2):
 *   the same, less the messages retention cannot keep in a reference object of
 *   `maxReferenceBytes`, counted in `withheld: { messages, bytes }`. Message texts are held up to
 *   16 MiB (or 4 × `maxReferenceBytes`); past that, only the newest within 1 MiB (or 4 ×
 *   `maxReferenceBytes`), and the log is read a second time, on the same open file, only for kept
 *   messages older than that. So a 1 GiB log never compacted is cited in bounded memory. `SESSION_REFERENCE_INVALID_ARGUMENT` for a `maxReferenceBytes`
 *   that is not a positive safe integer; `SESSION_REFERENCE_READ_FAILED` when the file changed
 *   between the two passes.
 * - `readTitleSnapshots(ids, signal?)`: one row per id in order: `fulfilled` with
 *   `value.title = { title }` from the last `session/title` event's `data.title` (`value: {}` when
 *   there is none), or `rejected` with the error as `reason` (also for a log that fails to read
 *   whole). A title read parses every line but keeps nothing else.
 * - Headers and titles are cached by file identity (device, inode, size, mtime, ctime): a later call
 *   reads no file it has read before unless the file changed. The log chosen in a session
 *   directory is cached by the directory's identity (not for a directory changed in the last 2 s),
 *   so a later listing, or reading a known session again, lists no session directory: a listing
 *   of an unchanged store, or a second title read, costs a `stat` per log (16 in flight), and one
 *   per session directory made synchronously once they are done (each log's path has just been
 *   walked through its directory: it waits for no disk), as is the `stat` of a directory just listed. The caches are bounded (SPEC §11.2.5):
 *   each holds at most 100,000 entries and 64 MiB (estimated as 2 bytes per UTF-16 unit of the
 *   path, identity and JSON of the header and title, plus 200 per entry), least recently used
 *   first out, and every listing drops the entries of logs and directories it no longer finds, so
 *   a long-lived query over sessions created and deleted all day stays flat in memory.
 * - A read reads the file as it was when opened (SPEC §11.2.4): bytes appended meanwhile are not
 *   read, and a file that ends before its size at open (truncated or shrunk while read) is
 *   `SESSION_REFERENCE_READ_FAILED` ("short read: 70 of 100 bytes"), never a shorter snapshot.
 * - At most 4 logs are read whole (titles, surfaces) at once per query; cache checks run 16 at a
 *   time. A whole read starts with one buffer of the file's size (up to 1 MiB) and never reads
 *   past that size; a larger log is read 1 MiB ahead of the chunk being parsed (two buffers).
 * - Ids are resolved against the index of the last scan; an id missing from it triggers a rescan.
 * - Every read checks `signal` between chunks.
 *
 * @param options - `{ root?, maxLogBytes?, verifyChecksums? }`; `root` defaults to
 *   {@link defaultSessionStoreRoot}, `maxLogBytes` (decoded bytes a whole read may pass) to 4 GiB,
 *   `verifyChecksums` (zstd content checksums) to `true`.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` for options that are not an
 * object, unknown keys, a `root` that is not a non-empty string, or a bad `maxLogBytes` /
 * `verifyChecksums`. The methods reject with `SESSION_REFERENCE_NOT_FOUND` (unknown id),
 * `SESSION_REFERENCE_INVALID_LOG` (a log or header that is not a dsh log, or a log past
 * `maxLogBytes`), `SESSION_REFERENCE_READ_FAILED` (a filesystem error) — the last two name the
 * file's path — and `SESSION_REFERENCE_CANCELLED` (cause `signal.reason`).
 * @example
 * const sessionQuery = createDshStoreSessionQuery();          // ~/.dsh/sessions
 * const refs = createSessionReferences({ sessionQuery });
 */
export function createDshStoreSessionQuery(options: DshStoreOptions = {}): DshStoreSessionQuery {
  return openDshStore(options).query;
}

/**
 * A store of {@link createDshStoreSessionQuery} whose listing can be carried from one process to
 * the next (the CLI keeps it in its cache file beside the search index, SPEC §16.4). Not part of
 * the package's entry: only the CLI uses it.
 */
export interface CarriedDshStore {
  /** The query, as {@link createDshStoreSessionQuery} returns it. */
  readonly query: DshStoreSessionQuery;
  /**
   * What the last listing learned, as JSON text: the root, each session directory's identity with
   * the log chosen in it, and each chosen log's identity with its header. Handed back to
   * {@link openDshStore}, a listing of an unchanged store costs one `stat` per session directory
   * and one per log, and reads only the headers of logs new or changed since.
   */
  exportListing(): string;
}

/** How {@link openDshStore} starts. */
export interface CarriedDshStoreOptions {
  /** The text an earlier {@link CarriedDshStore.exportListing} gave; default none (a cold start). */
  listing?: string | undefined;
  /**
   * Check cached identities with `statSync` instead of `stat` on the thread pool: for a process
   * that waits for the listing and runs nothing else meanwhile (the CLI), where 4,000 stats of an
   * unchanged store cost a fraction of their round trips through the thread pool. A host serving
   * others keeps the default, `false`: a stat on a slow disk would block its event loop.
   */
  statSync?: boolean | undefined;
}

/**
 * {@link createDshStoreSessionQuery} of `options`, its caches of session directories and headers
 * first filled from `carried.listing` (the text an earlier {@link CarriedDshStore.exportListing} gave). A
 * cached entry is used only while the directory or log still has the identity recorded with it
 * (device, inode, size, mtime, ctime: one `stat`), as the caches of one process are (SPEC §11.2.5). A
 * `listing` that is not such text, or is of another root, is ignored, and so is each entry of it
 * that is malformed (a header that is not a session header, a log that is not a log name inside
 * its session directory): those are read from the store, never trusted.
 * @throws SessionReferenceError as {@link createDshStoreSessionQuery}.
 */
export function openDshStore(options: DshStoreOptions = {}, carried: CarriedDshStoreOptions = {}): CarriedDshStore {
  const checked = checkOptions(options);
  // Reads yield through Node's check phase, not a 1 ms-clamped timer (src/pace.ts).
  useTurn(setImmediate);
  // The search index packs kept items with zlib, not fflate (src/host-deflate.ts).
  useHostDeflate(deflateRaw);
  // A cached index names Node's segmentation; loaded under the same, it is not checked by segmenting (src/host-segmenter.ts).
  useSegmenterFingerprint(nodeSegmentation);
  const root = resolve(checked.root);
  const reads = new LogReads(checked.read, carried.statSync === true ? statNow : statOf);
  if (carried.listing !== undefined) reads.seed(root, carried.listing);
  let index = new Map<string, IndexedSession>();

  async function scan(signal: AbortSignal | undefined): Promise<IndexedSession[]> {
    const found = await scanStore(root, reads, signal);
    const next = new Map<string, IndexedSession>();
    for (const session of found) {
      // Of two logs with one id, the one whose path sorts first (code units).
      const known = next.get(session.header.id);
      if (known === undefined || session.path < known.path) next.set(session.header.id, session);
    }
    index = next;
    return [...next.values()];
  }

  /** The session's current log; rescans once (when `rescan`) if the id is unknown or its directory moved. */
  async function locate(sessionId: string, signal: AbortSignal | undefined, rescan: boolean): Promise<IndexedSession> {
    checkId(sessionId);
    const known = index.get(sessionId);
    if (known) {
      const log = await reads.chooseLog(known.dir, signal);
      if (log !== undefined) return { ...known, ...log };
    }
    if (rescan) await scan(signal);
    const session = index.get(sessionId);
    if (!session) throw notFound(sessionId);
    return session;
  }

  function notFound(sessionId: string): SessionReferenceError {
    return fail('NOT_FOUND', `no session with id ${describeValue(sessionId)} in the dsh store at ${quotePath(root)}`);
  }

  /**
   * `read(path)` of the log of `sessionId`, checking that its header still carries that id; when
   * the log was removed or replaced since the last scan, looks again, once.
   */
  async function readSession<T extends { header: SessionHeader }>(
    sessionId: string,
    signal: AbortSignal | undefined,
    rescan: boolean,
    read: (log: LogEntry) => Promise<T | undefined>,
  ): Promise<T> {
    throwIfAborted(signal);
    const session = await locate(sessionId, signal, rescan);
    const first = await read(session).catch((error: unknown) => {
      if (isErrno((error as SessionReferenceError).cause, 'ENOENT')) return undefined;
      throw error;
    });
    if (first?.header.id === sessionId) return first;
    await scan(signal);
    const moved = index.get(sessionId);
    if (!moved) throw notFound(sessionId);
    const again = await read(moved);
    if (again?.header.id !== sessionId) throw fail('READ_FAILED', `${quotePath(moved.path)} changed while it was being read`);
    return again;
  }

  /** The title row of `sessionId` read the slower way (see {@link LogReads.title}): a failure is a `rejected` row, a cancellation rejects. */
  async function readTitleRow(sessionId: string, signal: AbortSignal | undefined): Promise<SessionTitleSnapshot> {
    try {
      const { title } = await readSession(sessionId, signal, false, (log) => reads.title(log, signal));
      return titleRow(sessionId, title);
    } catch (reason) {
      if (reason instanceof SessionReferenceError && reason.code === 'SESSION_REFERENCE_CANCELLED') throw reason;
      return { sessionId, status: 'rejected', reason };
    }
  }

  const query: DshStoreSessionQuery = Object.freeze({
    root,
    async listSessions(signal?: AbortSignal): Promise<Array<{ header: SessionHeader; identity: string }>> {
      enter(signal);
      const sessions = await scan(signal);
      sessions.sort(newestFirst);
      return sessions.map((session) => ({ header: session.header, identity: session.identity }));
    },
    async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
      enter(signal);
      const log = await readSession(sessionId, signal, true, (log) => reads.surface(log, signal));
      return { session: log.header, capturedThroughSeq: log.capturedThroughSeq, events: log.events };
    },
    async readRetainedSurface(sessionId: string, maxReferenceBytes: number, signal?: AbortSignal): Promise<SessionSurface> {
      enter(signal);
      checkBudget(maxReferenceBytes);
      const log = await readSession(sessionId, signal, true, (log) => reads.surface(log, signal, maxReferenceBytes));
      const surface: SessionSurface = { session: log.header, capturedThroughSeq: log.capturedThroughSeq, events: log.events };
      if (log.withheld) surface.withheld = log.withheld;
      return surface;
    },
    async readTitleSnapshots(given: string[], signal?: AbortSignal): Promise<SessionTitleSnapshot[]> {
      const sessionIds = copyCallerData(given, 'sessionIds') as string[];
      if (!Array.isArray(sessionIds)) {
        throw fail('INVALID_ARGUMENT', `sessionIds must be an array of strings, got ${describeValue(sessionIds)}`);
      }
      enter(signal);
      // One rescan up front for ids the last scan did not see, instead of one per id.
      if (sessionIds.some((id) => typeof id !== 'string' || !index.has(id))) await scan(signal);
      // Titles the caches answer for, their stats batched, then each other id the slower way.
      const cached = await reads.cachedTitles(sessionIds.map((id) => index.get(id)?.dir), signal);
      // As readSession checks the header's id, so does a title the caches answer for.
      const answered = (i: number) => cached[i]?.header.id === sessionIds[i];
      const missed = sessionIds.filter((_, i) => !answered(i));
      const read = await mapLimited(missed, LIST_CONCURRENCY, signal, (sessionId) => readTitleRow(sessionId, signal));
      let next = 0;
      return sessionIds.map((sessionId, i) => (answered(i) ? titleRow(sessionId, cached[i]!.title) : read[next++]!));
    },
  });
  return { query, exportListing: () => reads.exportListing(root) };
}

function checkOptions(given: unknown): { root: string; read: Required<SessionLogReadOptions> } {
  // Each option read once (SPEC §10.4): a revoked proxy or a throwing getter is INVALID_CONFIG naming it.
  const options = readCallerOptions(given, 'options', 'INVALID_CONFIG');
  if (options === undefined) {
    throw fail('INVALID_CONFIG', `options must be an object like { root }, got ${describeValue(given)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'root' && key !== 'maxLogBytes' && key !== 'verifyChecksums') throw fail('INVALID_CONFIG', `unknown option ${describeValue(key)}`);
  }
  const read = checkReadOptions(options, 'INVALID_CONFIG');
  const { root } = options;
  if (root === undefined) return { root: defaultSessionStoreRoot(), read };
  if (typeof root !== 'string' || root === '') {
    throw fail('INVALID_CONFIG', `root must be a non-empty path, got ${describeValue(root)}`);
  }
  return { root, read };
}

/** The `fulfilled` title row of `sessionId`: `value: {}` for a session without a title. */
function titleRow(sessionId: string, title: string | undefined): SessionTitleSnapshot {
  return { sessionId, status: 'fulfilled', value: title === undefined ? {} : { title: { title } } };
}

function checkId(sessionId: unknown): asserts sessionId is string {
  check(typeof sessionId === 'string', 'INVALID_ARGUMENT', 'sessionId must be a string', sessionId);
}

function newestFirst(a: IndexedSession, b: IndexedSession): number {
  const byTime = b.header.createdAt - a.header.createdAt;
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
  return a.header.id < b.header.id ? -1 : a.header.id > b.header.id ? 1 : 0;
}

/**
 * The log chosen in one session directory of the store (SPEC §12.1), as `push` uploads it (SPEC
 * §17.8): its session id, or the failure that kept it from being read — then `path` is the log,
 * or the directory that could not be listed.
 */
export type SessionLogFile = { path: string; sessionId: string; error?: undefined } | { path: string; sessionId?: undefined; error: SessionReferenceError };

/**
 * The log chosen in every session directory of the store at `root` (SPEC §12.1), one directory at
 * a time: the highest version by file name (`.zstd` or not), its header read as a listing reads it
 * (the first line, at most 1 MiB decoded), and of two directories with one id the one whose log
 * path sorts first; sorted by path. Unlike `listSessions`, a project or session directory that
 * cannot be listed, or a log whose header is malformed, is an entry with its `error`
 * (`SESSION_REFERENCE_READ_FAILED`, `SESSION_REFERENCE_INVALID_LOG`) and the others are still
 * listed; a log without a complete header yet (empty, torn first line) is not a session and is
 * left out, as `listSessions` leaves it out.
 * @throws SessionReferenceError `SESSION_REFERENCE_READ_FAILED` when `root` itself cannot be
 * listed; `SESSION_REFERENCE_CANCELLED` when `signal` aborts.
 */
export async function listSessionLogs(root: string, signal?: AbortSignal): Promise<SessionLogFile[]> {
  const reads = new LogReads(checkReadOptions({}, 'INVALID_CONFIG'), statOf);
  const files: SessionLogFile[] = [];
  const sessionDirs: string[] = [];
  const projects = await listDirectories(resolve(root), signal, true);
  const listed = await mapLimited(projects, LIST_CONCURRENCY, signal, (project) => settled(project, () => listDirectories(project, signal, false)));
  for (const entry of listed) {
    if (Array.isArray(entry)) sessionDirs.push(...entry);
    else files.push(entry);
  }
  const found = await mapLimited(sessionDirs, LIST_CONCURRENCY, signal, async (dir): Promise<SessionLogFile | undefined> => {
    const log = await settled(dir, () => chooseLog(dir, signal));
    if (log === undefined || 'error' in log) return log;
    const read = await settled(log.path, () => reads.header(log, signal));
    if (read === undefined || 'error' in read) return read;
    return read.header === undefined ? undefined : { path: log.path, sessionId: read.header.id };
  });
  for (const file of found) if (file !== undefined) files.push(file);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const seen = new Set<string>();
  return files.filter(({ sessionId }) => {
    if (sessionId === undefined) return true;
    if (seen.has(sessionId)) return false;
    seen.add(sessionId);
    return true;
  });
}

/** What `read` gives, or the failure entry of `path` (a cancellation still rejects). */
async function settled<T>(path: string, read: () => Promise<T>): Promise<T | { path: string; error: SessionReferenceError }> {
  try {
    return await read();
  } catch (error) {
    const reason = error instanceof SessionReferenceError ? error : readFailed(error, path);
    if (reason.code === 'SESSION_REFERENCE_CANCELLED') throw reason;
    return { path, error: reason };
  }
}

// ---------------------------------------------------------------------------------------------
// Scanning

/**
 * Every session with a complete header, in the order of the session directories; the caches keep
 * only what it found. A session directory and a log whose identities are cached cost one `stat`
 * each (the directory's synchronous, see {@link LogReads.chooseLog}).
 */
async function scanStore(root: string, reads: LogReads, signal: AbortSignal | undefined): Promise<IndexedSession[]> {
  const projects = await listDirectories(root, signal, true);
  const sessionDirs = (await mapLimited(projects, LIST_CONCURRENCY, signal, (project) => listDirectories(project, signal, false))).flat();
  throwIfAborted(signal);
  // Sessions the caches answer for, their stats batched, then the others.
  const found = await reads.cachedSessions(sessionDirs, signal);
  const missed = sessionDirs.filter((_, i) => found[i] === undefined);
  const logs = new Set<string>();
  const read = await mapLimited(missed, LIST_CONCURRENCY, signal, async (dir): Promise<IndexedSession | undefined> => {
    const log = await reads.chooseLog(dir, signal);
    if (log === undefined) return undefined;
    logs.add(log.path);
    const header = await reads.header(log, signal);
    return header?.header === undefined ? undefined : { header: header.header, identity: header.identity, dir, path: log.path, regular: log.regular };
  });
  const sessions: IndexedSession[] = [];
  for (let i = 0, next = 0; i < found.length; i++) {
    const session = found[i] ?? read[next++];
    if (session === undefined) continue;
    sessions.push(session);
    logs.add(session.path);
  }
  reads.retain(logs, new Set(sessionDirs));
  return sessions;
}

/** Subdirectories of `dir` (symlinks to directories included), sorted; none when `dir` is missing. */
async function listDirectories(dir: string, signal: AbortSignal | undefined, isRoot: boolean): Promise<string[]> {
  throwIfAborted(signal);
  let entries: Dirent[];
  try {
    entries = await fsCall<Dirent[]>((done) => readdir(dir, { withFileTypes: true }, done));
  } catch (error) {
    // A missing root lists nothing; a project directory removed or replaced meanwhile too.
    if (isErrno(error, 'ENOENT') || (!isRoot && isErrno(error, 'ENOTDIR'))) return [];
    return rethrowRead(error, dir);
  }
  const dirs: string[] = [];
  for (const entry of entries) {
    const path = entryPath(dir, entry.name);
    if (entry.isDirectory()) dirs.push(path);
    else if (entry.isSymbolicLink() && (await statOf(path).then((s) => s.isDirectory(), () => false))) dirs.push(path);
  }
  return dirs.sort();
}

/**
 * The log dsh would read in a session directory: the highest `v<N>` (unversioned lowest), the
 * plain `.jsonl` before the `.zstd` at the same rank, then by name. `undefined` when there is none.
 */
async function chooseLog(dir: string, signal: AbortSignal | undefined): Promise<LogEntry | undefined> {
  throwIfAborted(signal);
  let entries: Dirent[];
  try {
    entries = await fsCall<Dirent[]>((done) => readdir(dir, { withFileTypes: true }, done));
  } catch (error) {
    if (isErrno(error, 'ENOENT') || isErrno(error, 'ENOTDIR')) return undefined;
    return rethrowRead(error, dir);
  }
  let best: { name: string; version: bigint; zstd: boolean; regular: boolean } | undefined;
  for (const entry of entries) {
    const match = LOG_NAME.exec(entry.name);
    // Regular files and symlinks (checked when opened): never a FIFO, socket or device (SPEC §12.1).
    if (!match || !(entry.isFile() || entry.isSymbolicLink())) continue;
    const candidate = { name: entry.name, version: match[1] === undefined ? -1n : BigInt(match[1]), zstd: match[2] !== undefined, regular: entry.isFile() };
    if (best === undefined || compareLogs(candidate, best) > 0) best = candidate;
  }
  return best === undefined ? undefined : { path: entryPath(dir, best.name), regular: best.regular };
}

/**
 * The path of the entry `name` of the directory `dir` (a path already normalized, as every
 * directory here is): what `join(dir, name)` gives, without normalizing `dir` again for each of
 * thousands of entries.
 */
function entryPath(dir: string, name: string): string {
  return dir.endsWith(sep) ? dir + name : dir + sep + name;
}

/** > 0 when `a` is preferred over `b`. */
function compareLogs(a: { name: string; version: bigint; zstd: boolean }, b: { name: string; version: bigint; zstd: boolean }): number {
  if (a.version !== b.version) return a.version > b.version ? 1 : -1;
  if (a.zstd !== b.zstd) return a.zstd ? -1 : 1;
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Reading

/**
 * What decides how Node's `Intl.Segmenter` splits words (src/host-segmenter.ts): it is ICU's, so
 * Node's version, ICU's and Unicode's versions, and the ICU data in use — small or full ICU, a data
 * directory given by `NODE_ICU_DATA` or `--icu-data-dir` (on the command line or in `NODE_OPTIONS`).
 */
function nodeSegmentation(): string {
  const icuDataDirs = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].filter((arg) => arg.startsWith('--icu-data-dir'));
  const small = (process.config.variables as { icu_small?: unknown }).icu_small === true;
  return JSON.stringify(['node', process.version, process.versions.icu, process.versions.unicode, small, process.env.NODE_ICU_DATA ?? null, icuDataDirs]);
}

/** Raw deflate by Node's zlib, for the search index (src/host-deflate.ts). */
function deflateRaw(bytes: Uint8Array, level: number): Uint8Array {
  return deflateRawSync(bytes, { level });
}

/**
 * Runs one callback-style `node:fs` call as a promise. The callback API, on plain descriptors,
 * costs far less per call than `FileHandle`, which matters when a listing opens thousands of logs.
 */
function fsCall<T = void>(call: (done: (error: NodeJS.ErrnoException | null, value?: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => call((error, value) => (error ? reject(error) : resolve(value as T))));
}

function statOf(path: string): Promise<Stats> {
  return fsCall<Stats>((done) => stat(path, done));
}

/** {@link statOf} done synchronously (see {@link CarriedDshStoreOptions.statSync}). */
function statNow(path: string): Promise<Stats> {
  try {
    return Promise.resolve(statSync(path));
  } catch (error) {
    return Promise.reject(error as Error);
  }
}

/** `statSync(path)`, or `undefined` for any failure (the caller's slower way then reports it). */
function statOrNothing(path: string): Stats | undefined {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * `stat` of every one of `paths` on the thread pool, at most `limit` in flight, `each(i, stats)`
 * called as the stat of `paths[i]` ends (`stats` `undefined` for any failure: the caller's slower
 * way then reports it). One promise for the batch, not one per path: what thousands of cache checks
 * cost is then the stats themselves. Rejects with `SESSION_REFERENCE_CANCELLED` once `signal` has
 * aborted, starting no stat after; those in flight end unseen.
 */
function statEach(paths: readonly string[], limit: number, signal: AbortSignal | undefined, each: (i: number, stats: Stats | undefined) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let started = 0;
    let ended = 0;
    let cancelled = false;
    const start = (): void => {
      const i = started++;
      stat(paths[i]!, (error, stats) => {
        if (cancelled) return;
        each(i, error ? undefined : stats);
        if (++ended === paths.length) resolve();
        else if (signal?.aborted) cancel();
        else if (started < paths.length) start();
      });
    };
    const cancel = (): void => {
      cancelled = true;
      try {
        throwIfAborted(signal);
      } catch (error) {
        reject(error);
      }
    };
    if (signal?.aborted) cancel();
    else if (paths.length === 0) resolve();
    else while (started < Math.min(limit, paths.length)) start();
  });
}

/** The store's read pipeline: what a read of a log runs, loaded by the first read. */
type Pipeline = typeof import('../store/pipeline.js') & typeof import('../store/read.js') & typeof import('../store/surface-read.js');

let pipelineLoad: Promise<Pipeline> | undefined;
/** The read pipeline once loaded: later reads take it without a turn of the microtask queue. */
let loadedPipeline: Pipeline | undefined;

/**
 * The read pipeline, loaded on the first read of a log: a listing whose headers are all cached (a
 * warm CLI search, issue 30 item 3) reads no log and never loads it (~20 ms of CPU in Node 20).
 */
function loadPipeline(): Promise<Pipeline> {
  pipelineLoad ??= Promise.all([import('../store/pipeline.js'), import('../store/read.js'), import('../store/surface-read.js')]).then(([a, b, c]) => (loadedPipeline = { ...a, ...b, ...c }));
  return pipelineLoad;
}

/**
 * A file's identity (device, inode, size, mtime, ctime) as one flat string: the caches hold thousands.
 * The ctime, which no user can set, catches a file rewritten in place with its size and mtime
 * put back (`touch -r`, `utimes`), and a directory whose mtime was put back after a new log
 * version came in; beyond SPEC §16.4's size and mtime, it costs one re-read of a log whose mode
 * or owner changed.
 * From `Stats` as numbers, not `bigint` ones: a `bigint` stat cost three times as much (Node 20
 * makes its four `Date`s at once; 4,000 stats, a warm listing of 2,000 sessions: 58 ms against
 * 19 ms of CPU). `mtimeMs` keeps the mtime to a quarter of a microsecond (a double of today's
 * milliseconds), and a log that changes changes its size too; an inode past 2^53 (far beyond
 * what common file systems allocate) would be rounded, which only two files of the same device, size
 * and mtime could share.
 */
function identityOf(stats: Stats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

/**
 * The identity (device, inode, size, mtime, ctime) of the log at `path` when it is a regular file (SPEC
 * §12.1): `stat` only, so a FIFO, socket or device is never opened.
 * @returns `undefined` when `path` is gone or is not a regular file.
 */
async function logIdentity(path: string, statPath: (path: string) => Promise<Stats> = statOf): Promise<string | undefined> {
  try {
    const stats = await statPath(path);
    return stats.isFile() ? identityOf(stats) : undefined;
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    return rethrowRead(error, path);
  }
}

/**
 * The stats of a session directory whose path a call on the thread pool has just walked (the
 * `stat` or listing of its log, its own listing), synchronously: it waits for no disk.
 * @returns `undefined` when the directory is gone or no longer a directory.
 */
function walkedDirStats(dir: string): Stats | undefined {
  try {
    return statSync(dir);
  } catch (error) {
    return goneDir(error, dir);
  }
}

/** The error of a `stat` of a session directory: `undefined` when it is gone or no longer a directory, else thrown as `READ_FAILED`. */
function goneDir(error: unknown, dir: string): undefined {
  if (isErrno(error, 'ENOENT') || isErrno(error, 'ENOTDIR')) return undefined;
  return rethrowRead(error, dir);
}

/** An open log: its descriptor, the identity of the file opened and its size when opened. */
interface OpenLog {
  fd: number;
  identity: string;
  size: number;
}

/**
 * Opens a log that is a regular file (SPEC §12.1: a FIFO, socket or device is never opened). An
 * entry the directory listing showed to be a regular file is opened at once; a symlink is
 * followed with `stat` first. The open is non-blocking, so a file swapped for a FIFO in between
 * cannot block it, and the descriptor's own `fstat` (the identity) tells the swap: it is closed
 * unread. `fstat` and `close` of a descriptor opened for reading never wait for the disk, so they
 * run synchronously: a listing of thousands of logs then pays the thread pool only for the open
 * and the read, as reading the same bytes at all would.
 * @returns `undefined` when the log is gone or is not a regular file.
 */
async function openLog(log: LogEntry): Promise<OpenLog | undefined> {
  const { path } = log;
  if (!log.regular && (await logIdentity(path)) === undefined) return undefined;
  let fd: number;
  try {
    fd = await fsCall<number>((done) => open(path, constants.O_RDONLY | constants.O_NONBLOCK, done));
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    return rethrowRead(error, path);
  }
  let stats: Stats;
  try {
    stats = fstatSync(fd);
  } catch (error) {
    closeLog(fd);
    return rethrowRead(error, path);
  }
  if (stats.isFile()) return { fd, identity: identityOf(stats), size: stats.size };
  closeLog(fd);
  return undefined;
}

/** Closes a log's descriptor (see {@link openLog}); nothing is left to report once its bytes are read. */
function closeLog(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // A read-only descriptor has nothing to flush: a failing close loses nothing.
  }
}

/**
 * Closes a log's descriptor once none of `reads` has a read in flight (at once when none has): a
 * read given up on (an abort) or read ahead and never asked for must not land in a descriptor
 * reused by another open. Their header buffers go back to the pool then too (the read of the file
 * has ended: nothing holds its chunks any more, see {@link FileReads}).
 */
function closeWhenSettled(fd: number, reads: readonly FileReads[]): void {
  const settled = () => {
    closeLog(fd);
    for (const each of reads) each.release();
  };
  const inFlight: Promise<unknown>[] = [];
  for (const each of reads) if (each.inFlight !== undefined) inFlight.push(each.inFlight);
  if (inFlight.length === 0) settled();
  else void Promise.allSettled(inFlight).then(settled);
}

const noop = () => {};

/**
 * {@link HEADER_CHUNK}-byte buffers given back by reads that ended, for the next ones: a listing
 * reads thousands of headers, never more than {@link LIST_CONCURRENCY} plus {@link READ_CONCURRENCY}
 * at once, so it allocates a few dozen, not one per log (4 KiB each of memory to zero and collect).
 */
const headerPool: Uint8Array[] = [];

/** Header buffers the pool keeps at most. */
const HEADER_POOL = 4 * LIST_CONCURRENCY;

/** A {@link HEADER_CHUNK}-byte buffer no other read holds: from the pool, else new. */
function headerBuffer(): Uint8Array {
  return headerPool.pop() ?? new Uint8Array(HEADER_CHUNK);
}

/** The chunk read ahead by a {@link FileReads}: its read, the size it asked for, and the position and read length before it. */
interface ReadAhead {
  read: Promise<Uint8Array | undefined>;
  asked: number;
  position: number;
  length: number;
}

/**
 * The reads of an open file's bytes, one chunk per {@link FileReads.next} (`undefined` at the
 * end): reads of `first` bytes, doubling up to {@link CHUNK_BYTES}, into buffers reused from read
 * to read (grown as the reads grow): the pipeline copies what it keeps of a chunk before it asks
 * for the next (src/store/pipeline.ts), so a 100 MB log costs one or two 1 MiB buffers, not a
 * hundred. Never past `size`, the file's size when it was opened: the snapshot is the file as it
 * was then (SPEC §11.2.4), so bytes appended meanwhile are not read, and the end is known without
 * one more read. A short read before `size` (a file system that returns them mid-file) reads on;
 * the end of the file before `size` (a file truncated while it is read) ends the chunks early,
 * which the pipeline, given `size`, reports as a short read. A request (SPEC §11.2.1.1) moves the
 * position past a skippable frame's content, never read (the next read is `first` bytes again),
 * and caps the read at its limit.
 *
 * With `ahead` (whole reads), the next chunk is read into a second buffer while the pipeline works
 * on the one just handed out, so the thread pool's read overlaps the parse instead of the parse
 * waiting for it (a round trip through the thread pool per MiB, each a wait on a busy machine).
 * A request that skips or caps the read gives up the chunk read ahead: the read is made again as
 * the request says, as without `ahead`. One read at most is in flight at a time.
 */
class FileReads {
  private position = 0;
  private length: number;
  private ended: boolean;
  /** The buffers of reads over {@link HEADER_CHUNK} bytes, reused in turn (two when reading ahead). */
  private readonly buffers: Uint8Array[] = [];
  /** The header buffers of reads of at most {@link HEADER_CHUNK} bytes, each taken for this file's read alone ({@link FileReads.release}). */
  private readonly headerBuffers: Uint8Array[] = [];
  private turn = 0;
  private ahead: ReadAhead | undefined;
  /** The read in flight, if any (one given up on, or one read ahead and never asked for): the descriptor is closed once it settles. */
  inFlight: Promise<unknown> | undefined;

  constructor(
    private readonly fd: number,
    private readonly path: string,
    private readonly first: number,
    private readonly size: number,
    private readonly readsAhead: boolean,
  ) {
    this.length = first;
    this.ended = size === 0;
  }

  /** The next chunk (`undefined` at the end), as {@link PulledChunks} reads it. */
  next(request?: ReadRequest): Promise<Uint8Array | undefined> {
    const ahead = this.ahead;
    this.ahead = undefined;
    if (ahead !== undefined) return this.nextAfter(ahead, request);
    if (request !== undefined && request.skip > 0) {
      this.position += request.skip;
      this.length = this.first;
      this.ended = this.position >= this.size;
    }
    const read = this.read(request?.limit ?? Infinity);
    // Without reading ahead the chunk is handed out as read: no promise of its own (a listing reads thousands of headers).
    return this.readsAhead ? read.then((chunk) => this.handOut(chunk)) : read;
  }

  /** {@link FileReads.next} when a chunk was read ahead: that one, unless the request skips or caps the read (then it is read again as asked). */
  private async nextAfter(ahead: ReadAhead, request: ReadRequest | undefined): Promise<Uint8Array | undefined> {
    if (request === undefined || (request.skip === 0 && request.limit >= ahead.asked)) return this.handOut(await ahead.read);
    await ahead.read.catch(noop); // given up: read again as the request says
    this.position = ahead.position;
    this.length = ahead.length;
    this.ended = this.position >= this.size;
    return this.next(request);
  }

  /** `chunk`, once the read of the next one has started when reading ahead. */
  private handOut(chunk: Uint8Array | undefined): Uint8Array | undefined {
    if (this.readsAhead && !this.ended) {
      const { position, length } = this;
      const asked = Math.min(length, this.size - position);
      const read = this.read(Infinity);
      read.catch(noop); // a failure is the next call's; a read never asked for fails unseen
      this.ahead = { read, asked, position, length };
    }
    return chunk;
  }

  /** Reads the next chunk, at most `limit` bytes. */
  private read(limit: number): Promise<Uint8Array | undefined> {
    if (this.ended) return Promise.resolve(undefined);
    const asked = Math.max(1, Math.min(this.length, this.size - this.position, limit));
    const buffer = this.buffer(asked);
    const read = new Promise<Uint8Array | undefined>((resolve, reject) => {
      readFd(this.fd, buffer, 0, asked, this.position, (error, bytesRead) => {
        this.inFlight = undefined;
        if (error) return reject(readFailed(error, this.path));
        this.position += bytesRead;
        this.ended = bytesRead === 0 || this.position >= this.size;
        this.length = Math.min(this.length * 2, CHUNK_BYTES);
        resolve(bytesRead === 0 ? undefined : bytesRead === asked ? buffer : buffer.subarray(0, bytesRead));
      });
    });
    this.inFlight = read;
    return read;
  }

  /**
   * Gives the header buffers back to the pool: once the read of the file has ended and none of its
   * reads is in flight (the pipeline keeps nothing of a chunk past the read, see above).
   */
  release(): void {
    for (const buffer of this.headerBuffers) if (headerPool.length < HEADER_POOL) headerPool.push(buffer);
    this.headerBuffers.length = 0;
  }

  /** A buffer of `asked` bytes: a header buffer of this read's own, else the next reused one. */
  private buffer(asked: number): Uint8Array {
    if (asked <= HEADER_CHUNK) {
      const buffer = headerBuffer();
      this.headerBuffers.push(buffer);
      return asked === HEADER_CHUNK ? buffer : buffer.subarray(0, asked);
    }
    if (this.readsAhead) this.turn = 1 - this.turn;
    const reused = this.buffers[this.turn];
    if (reused !== undefined && reused.length >= asked) return reused.subarray(0, asked);
    return (this.buffers[this.turn] = new Uint8Array(asked));
  }
}

/** A header read (`undefined`: no complete header yet) and the identity of the file it was read from. */
interface HeaderRead {
  identity: string;
  header: SessionHeader | undefined;
}

/** A title read (the latest `session/title`, `undefined` for none), its log's header, and the identity of the file it was read from. */
interface TitleEntry {
  identity: string;
  header: SessionHeader;
  title: string | undefined;
}

/**
 * Reads of log files through the store pipeline (SPEC §11.2.2), with the header and title caches
 * keyed by file identity.
 */
class LogReads {
  private readonly headers = new LruCache<HeaderRead>(CACHE_ENTRIES, CACHE_BYTES, (path, entry) => entryBytes(path, entry.identity, entry.header));
  /** Whole reads in flight (each may hold up to a chunk and its longest line). */
  private readonly whole = new Limiter(READ_CONCURRENCY);
  /** The log chosen in a session directory, by the directory's identity (an entry added, removed or renamed changes it). */
  private readonly chosen = new LruCache<{ identity: string; log: LogEntry | undefined }>(CACHE_ENTRIES, CACHE_BYTES, (dir, entry) =>
    entryBytes(dir, entry.identity, entry.log?.path),
  );
  private readonly titles = new LruCache<TitleEntry>(CACHE_ENTRIES, CACHE_BYTES, (path, entry) =>
    entryBytes(path, entry.identity, entry.header, entry.title),
  );

  /** The text the caches were seeded from, and their count of changes right after. */
  private seeded: { text: string; changes: number } | undefined;

  /**
   * @param statPath How a cached identity is checked: {@link statOf}, or {@link statNow} where blocking is fine.
   */
  constructor(
    private readonly options: Required<SessionLogReadOptions>,
    private readonly statPath: (path: string) => Promise<Stats>,
  ) {}

  /**
   * Drops the cache entries of logs and session directories a listing no longer finds (SPEC
   * §11.2.5): a session deleted costs nothing afterwards.
   * @param logs The paths of the logs the listing chose. @param dirs The session directories it listed.
   */
  retain(logs: ReadonlySet<string>, dirs: ReadonlySet<string>): void {
    this.headers.retain(logs);
    this.titles.retain(logs);
    this.chosen.retain(dirs);
  }

  /**
   * The session-directory cache, with the header of each directory's log, as {@link CarriedListing}
   * JSON text, paths relative to `root`, sorted (the order of use, which concurrent reads shuffle,
   * would make an unchanged store give other text). A header not cached, or not complete yet, is
   * left out: it is read again. When neither cache changed since {@link seed}, the text seeded
   * (no work: a warm run over an unchanged store compares it and writes nothing).
   */
  exportListing(root: string): string {
    // Nothing set or dropped since the seed: the text it was seeded from (what this would write).
    if (this.seeded !== undefined && this.seeded.changes === this.chosen.changes + this.headers.changes) return this.seeded.text;
    const prefix = entryPath(root, '');
    const sessions: CarriedSession[] = [];
    for (const [dir, { identity, log }] of this.chosen.entriesOf()) {
      if (!dir.startsWith(prefix)) continue;
      const read = log === undefined ? undefined : this.headers.peek(log.path);
      const name = log === undefined ? null : log.path.slice(dir.length + 1);
      sessions.push([dir.slice(prefix.length), identity, name, log?.regular ?? false, read?.header === undefined ? null : read.identity, read?.header ?? null]);
    }
    sessions.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return JSON.stringify({ version: LISTING_VERSION, root, sessions } satisfies CarriedListing);
  }

  /** Fills the caches from {@link exportListing}'s text for `root`; what is not well formed is left out. */
  seed(root: string, text: string): void {
    let listing: Partial<CarriedListing>;
    try {
      listing = JSON.parse(text) as Partial<CarriedListing>;
    } catch {
      return;
    }
    if (!isRecord(listing) || listing.version !== LISTING_VERSION || listing.root !== root || !Array.isArray(listing.sessions)) return;
    const prefix = entryPath(root, '');
    for (const row of listing.sessions as unknown[]) {
      if (!Array.isArray(row) || row.length !== 6) continue;
      const [relative, identity, name, regular, logIdentity, header] = row as unknown[];
      if (typeof relative !== 'string' || typeof identity !== 'string' || typeof regular !== 'boolean') continue;
      const dir = prefix + relative;
      if (name === null) {
        this.chosen.set(dir, { identity, log: undefined });
        continue;
      }
      if (typeof name !== 'string' || name.includes(sep) || !LOG_NAME.test(name)) continue;
      const path = entryPath(dir, name);
      this.chosen.set(dir, { identity, log: { path, regular } });
      if (typeof logIdentity === 'string' && isSessionHeader(header)) this.headers.set(path, { identity: logIdentity, header });
    }
    this.seeded = { text, changes: this.chosen.changes + this.headers.changes };
  }

  /**
   * The session in each of `dirs` as the caches hold it, or `undefined` (then {@link chooseLog} and
   * {@link header} take over, which handle every other case): answered when the directory and its
   * log both keep the identities cached with the choice and the header, and the header is
   * complete. See {@link cachedEntries}.
   */
  async cachedSessions(dirs: readonly string[], signal: AbortSignal | undefined): Promise<Array<IndexedSession | undefined>> {
    const hits = await this.cachedEntries(dirs, this.headers, signal);
    return hits.map((hit, i) => {
      const header = hit?.entry.header;
      return header === undefined ? undefined : { header, identity: hit!.entry.identity, dir: dirs[i]!, path: hit!.log.path, regular: hit!.log.regular };
    });
  }

  /**
   * The header and latest title of the session in each of `dirs` as the caches hold them, or
   * `undefined` (no directory given, or not answered from the caches: then {@link chooseLog} and
   * {@link title} take over). See {@link cachedEntries}.
   */
  async cachedTitles(dirs: ReadonlyArray<string | undefined>, signal: AbortSignal | undefined): Promise<Array<TitleEntry | undefined>> {
    return (await this.cachedEntries(dirs, this.titles, signal)).map((hit) => hit?.entry);
  }

  /**
   * The log cached as chosen in each of `dirs` and the entry `cache` holds for it, when both are
   * current: the log is still a regular file of the identity of the entry, and its directory still
   * has the identity cached with the choice (else `undefined`, as for a directory or log not
   * cached). These are the two stats {@link chooseLog} and {@link unchanged} make, but for many
   * sessions at once: the logs' stats on the thread pool run {@link LIST_CONCURRENCY} at a time
   * behind one promise ({@link statEach}), not a chain of promises per session, and then the
   * directories of the logs found unchanged are stat'ed synchronously (their paths have just been
   * walked: those stats wait for no disk), once the thread pool is done: between its stats they
   * cost twice as much. Where stats may block ({@link statNow}: the CLI, issue 30 item 3) the logs'
   * are `statSync` calls too. A failing stat only leaves its session to the slower way, which
   * stats again and reports it.
   */
  private async cachedEntries<T extends { identity: string }>(
    dirs: ReadonlyArray<string | undefined>,
    cache: LruCache<T>,
    signal: AbortSignal | undefined,
  ): Promise<Array<{ log: LogEntry; entry: T } | undefined>> {
    const checks: Array<{ at: number; dir: string; dirIdentity: string; log: LogEntry; entry: T; current?: boolean }> = [];
    for (let at = 0; at < dirs.length; at++) {
      const dir = dirs[at];
      const chosen = dir === undefined ? undefined : this.chosen.get(dir);
      const entry = chosen?.log === undefined ? undefined : cache.get(chosen.log.path);
      if (entry !== undefined) checks.push({ at, dir: dir!, dirIdentity: chosen!.identity, log: chosen!.log!, entry });
    }
    const logStats = (check: (typeof checks)[number], stats: Stats | undefined) => {
      check.current = stats !== undefined && stats.isFile() && identityOf(stats) === check.entry.identity;
    };
    if (this.statPath === statNow) for (const check of checks) logStats(check, statOrNothing(check.log.path));
    else await statEach(checks.map((check) => check.log.path), LIST_CONCURRENCY, signal, (i, stats) => logStats(checks[i]!, stats));
    const hits = new Array<{ log: LogEntry; entry: T } | undefined>(dirs.length);
    for (const { at, dir, dirIdentity, log, entry, current } of checks) {
      if (!current) continue;
      const stats = statOrNothing(dir);
      if (stats !== undefined && identityOf(stats) === dirIdentity) hits[at] = { log, entry };
    }
    return hits;
  }

  /**
   * {@link chooseLog} of a session directory, from the cache while the directory is unchanged: the
   * log chosen is stat'ed on the thread pool, then the directory, synchronously (the log's `stat`
   * has just walked the path through it, so its own waits for no disk), and when the directory's
   * identity is the one cached the log comes back with its identity ({@link LogEntry.current}).
   * An unchanged store thus costs one `stat` on the thread pool per session. Else (or for a
   * directory without a log) the directory is listed: see {@link LogReads.listLog}.
   */
  chooseLog(dir: string, signal: AbortSignal | undefined): Promise<LogEntry | undefined> {
    throwIfAborted(signal);
    const cached = this.chosen.get(dir);
    // No await of its own without a cache entry: a first listing goes straight to the listing.
    return cached === undefined ? this.listLog(dir, signal) : this.cachedLog(dir, cached, signal);
  }

  /** {@link LogReads.chooseLog} of a directory whose choice is cached: kept while the directory keeps its identity. */
  private async cachedLog(dir: string, cached: { identity: string; log: LogEntry | undefined }, signal: AbortSignal | undefined): Promise<LogEntry | undefined> {
    const { log } = cached;
    // A failure is left to the read, which stats or opens the log itself.
    const current = log === undefined ? undefined : await logIdentity(log.path, this.statPath).catch(() => undefined);
    const stats = log === undefined ? await this.statPath(dir).catch((error: unknown) => goneDir(error, dir)) : walkedDirStats(dir);
    if (stats === undefined) return undefined;
    if (identityOf(stats) === cached.identity) return current === undefined ? log : { ...log!, current };
    return this.listLog(dir, signal);
  }

  /**
   * {@link chooseLog} of a session directory, listed, then stat'ed synchronously (the listing has
   * just read it: its `stat` waits for no disk); the choice is cached by that identity unless the
   * directory changed later than {@link SETTLED_MS} before the listing began: a change within its
   * mtime's granularity (a coarse kernel clock tick, FAT's 2 s) would leave its identity as it
   * was, and so would a change between the listing and the `stat`.
   */
  private async listLog(dir: string, signal: AbortSignal | undefined): Promise<LogEntry | undefined> {
    const started = Date.now();
    const log = await chooseLog(dir, signal);
    const stats = walkedDirStats(dir);
    if (stats === undefined) return undefined;
    if (stats.mtimeMs < started - SETTLED_MS) this.chosen.set(dir, { identity: identityOf(stats), log });
    else this.chosen.delete(dir);
    return log;
  }

  /**
   * The header of the log at `path` (line 1, at most 1 MiB of it decoded). `undefined` when the
   * log has no complete header yet (empty, torn first line, truncated first frame), vanished, or
   * is not a regular file.
   */
  header(log: LogEntry, signal: AbortSignal | undefined): Promise<HeaderRead | undefined> {
    // No await of its own without a cache entry: a first listing goes straight to the read.
    return this.headers.has(log.path) ? this.cachedHeader(log, signal) : this.readHeader(log, signal);
  }

  /** {@link LogReads.header} of a log read before: from the cache while the file is unchanged. */
  private async cachedHeader(log: LogEntry, signal: AbortSignal | undefined): Promise<HeaderRead | undefined> {
    const cached = await this.unchanged(this.headers, log);
    return cached !== undefined ? cached : this.readHeader(log, signal);
  }

  /** Reads the header of the log at `path` and caches it by the identity of the file read. */
  private readHeader(log: LogEntry, signal: AbortSignal | undefined): Promise<HeaderRead | undefined> {
    return this.read(log, signal, HEADER_READ, (source, _reopen, options, pipeline) => pipeline.readSessionHeader(source, options)).then((read) => {
      if (read === undefined) return undefined;
      const entry = { identity: read.identity, header: read.value };
      this.headers.set(log.path, entry);
      return entry;
    });
  }

  /** The header and latest title of the log at `path`, from the cache when the file is unchanged. */
  async title(log: LogEntry, signal: AbortSignal | undefined): Promise<{ header: SessionHeader; title: string | undefined } | undefined> {
    const cached = await this.unchanged(this.titles, log);
    if (cached !== undefined) return cached;
    const read = await this.whole.run(() => this.read(log, signal, WHOLE_READ, (source, _reopen, options, pipeline) => pipeline.readSessionTitle(source, options)), signal);
    if (read === undefined) return undefined;
    this.titles.set(log.path, { identity: read.identity, ...read.value });
    return read.value;
  }

  /** The surface and title of the whole log at `path`, at `budget` bytes of reference when given (two passes may open the file twice). */
  async surface(log: LogEntry, signal: AbortSignal | undefined, budget?: number): Promise<SessionRead | undefined> {
    const read = await this.whole.run(
      () => this.read(log, signal, WHOLE_READ, (source, reopen, options, pipeline) => pipeline.readSessionSurface(pipeline.firstThen(source, reopen), options, budget)),
      signal,
    );
    if (read === undefined) return undefined;
    const { header, title } = read.value;
    this.titles.set(log.path, { identity: read.identity, header, title });
    return read.value;
  }

  /**
   * The cache entry of the log when the file still has its identity: {@link LogEntry.current},
   * else one `stat`. Without an entry nothing is looked at: the read's own `fstat` gives the identity.
   */
  private async unchanged<T extends { identity: string }>(cache: LruCache<T>, log: LogEntry): Promise<T | undefined> {
    const cached = cache.get(log.path);
    if (cached === undefined) return undefined;
    return (log.current ?? (await logIdentity(log.path, this.statPath))) === cached.identity ? cached : undefined;
  }

  /**
   * Opens the file and runs `read` over its chunks from its start, read as `plan` says; `undefined` when the file is gone or not a regular file.
   * The first chunk is read here and handed to the pipeline with the reads of the rest
   * ({@link PulledChunks}): a header within it costs the open and that one read, and no other
   * turn of the event loop. `reopen()` reads the file from its start again, on the same open file
   * (a read at a budget may read it twice). The file is closed once no read of it is in flight.
   */
  private async read<T>(
    log: LogEntry,
    signal: AbortSignal | undefined,
    plan: ReadPlan,
    read: (source: SizedSource, reopen: () => Promise<SizedSource>, options: ReadOptions, pipeline: Pipeline) => T | Promise<T>,
  ): Promise<{ value: T; identity: string } | undefined> {
    throwIfAborted(signal);
    const pipeline = loadedPipeline ?? (await loadPipeline());
    const file = await openLog(log);
    if (file === undefined) return undefined;
    const opened: FileReads[] = [];
    try {
      /** The file's chunks from its start: the first one read, the reads of the rest. */
      const open = (): Promise<SizedSource> => {
        throwIfAborted(signal); // as the pipeline checks before each read
        const reads = new FileReads(file.fd, log.path, plan.first(file.size), file.size, plan.ahead);
        opened.push(reads);
        return raceAbort(reads.next(), signal).then((chunk) => new pipeline.SizedSource(new pipeline.PulledChunks(chunk, (request) => reads.next(request)), file.size));
      };
      const result = read(await open(), open, { ...this.options, signal }, pipeline);
      const value = result instanceof Promise ? await result : result;
      return { value, identity: file.identity };
    } catch (error) {
      throw withPath(log.path, error);
    } finally {
      closeWhenSettled(file.fd, opened);
    }
  }
}

/** Format version of {@link CarriedListing}: text of another version is ignored. */
const LISTING_VERSION = 1;

/**
 * A session directory in {@link CarriedListing}: its path relative to the root, its identity, the
 * name of the log chosen in it (`null`: none) and whether that entry is a regular file, the log's
 * identity and header (`null`: not known).
 */
type CarriedSession = [dir: string, identity: string, log: string | null, regular: boolean, logIdentity: string | null, header: SessionHeader | null];

/** What {@link LogReads.exportListing} writes: the rows of the caches a listing uses. */
interface CarriedListing {
  version: typeof LISTING_VERSION;
  /** The store root the rows belong to. */
  root: string;
  sessions: CarriedSession[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for what a header read gives (SPEC §11.1): `{"type":"session","version":N,"id":string,"createdAt":number,…}`. */
function isSessionHeader(value: unknown): value is SessionHeader {
  return (
    isRecord(value) &&
    value.type === 'session' &&
    Number.isInteger(value.version) &&
    typeof value.id === 'string' &&
    typeof value.createdAt === 'number' &&
    Number.isFinite(value.createdAt)
  );
}

/** The error of a read of `path`: a `SessionReferenceError` whose message starts with the path. */
function withPath(path: string, error: unknown): SessionReferenceError {
  if (!(error instanceof SessionReferenceError)) return fail('INVALID_LOG', `${quotePath(path)}: ${describeValue(error)}`, error);
  if (error.code === 'SESSION_REFERENCE_CANCELLED' || error.message.includes(quotePath(path))) return error;
  return new SessionReferenceError(error.code, `${quotePath(path)}: ${error.message}`, { cause: error });
}

function rethrowRead(error: unknown, path: string): never {
  throw readFailed(error, path);
}

/** `SESSION_REFERENCE_READ_FAILED` naming `path` and the file system's error code. */
function readFailed(error: unknown, path: string): SessionReferenceError {
  const code = (error as { code?: unknown } | null)?.code;
  const detail = typeof code === 'string' ? code : describeValue(error);
  return fail('READ_FAILED', `cannot read ${quotePath(path)}: ${detail}`, error);
}

function isErrno(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | null)?.code === code;
}

/** A path for an error message: JSON-quoted, never cut (the path is what the user needs). */
function quotePath(path: string): string {
  return JSON.stringify(path);
}
