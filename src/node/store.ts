/**
 * dsh's on-disk session store as a `SessionQuery` (SPEC §12.1). Node only.
 *
 * Layout: `<root>/<project dir>/<session dir>/<log>`, `<log>` being `session.jsonl` or
 * `session.v<N>.jsonl`, each optionally compressed as `<name>.zstd` (multi-frame zstd, SPEC §11.2).
 * @module
 */
import { constants, type BigIntStats } from 'node:fs';
import { open, readdir, stat, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { throwIfAborted } from '../abort.js';
import { check, describeValue, fail, SessionReferenceError } from '../errors.js';
import type { ReadOptions } from '../store/pipeline.js';
import { checkReadOptions, readSessionHeader, readSessionSurface, readSessionTitle, type SessionLogReadOptions, type SessionRead } from '../store/read.js';
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
}

/** One session found on disk: the log chosen for it and its header. */
interface IndexedSession {
  header: SessionHeader;
  /** The session directory. */
  dir: string;
  /** The log file read for this session (the highest version in `dir`). */
  path: string;
}

/** `session.jsonl`, `session.v<N>.jsonl`, each optionally `.zstd`. */
const LOG_NAME = /^session(?:\.v(\d+))?\.jsonl(\.zstd)?$/;

/** Header reads in flight at once while listing (keeps far below the usual fd limits). */
const LIST_CONCURRENCY = 16;

/** Whole-log reads in flight at once for titles. */
const READ_CONCURRENCY = 4;

/** First read of a header, in bytes; each further read doubles, up to {@link CHUNK_BYTES}. */
const HEADER_CHUNK = 4 * 1024;

/** Bytes per read of a whole log. */
const CHUNK_BYTES = 1024 * 1024;

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
 *   sessions.
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
 *   reads are placeholders `{ type, seq, time, surfaceOp? }`).
 * - `readTitleSnapshots(ids, signal?)`: one row per id in order: `fulfilled` with
 *   `value.title = { title }` from the last `session/title` event's `data.title` (`value: {}` when
 *   there is none), or `rejected` with the error as `reason` (also for a log that fails to read
 *   whole). A title read parses every line but keeps nothing else.
 * - Headers and titles are cached by file identity (device, inode, size, mtime): a later call
 *   reads no file it has read before unless the file changed.
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
  const checked = checkOptions(options);
  const root = resolve(checked.root);
  const reads = new LogReads(checked.read);
  let index = new Map<string, IndexedSession>();

  async function scan(signal: AbortSignal | undefined): Promise<IndexedSession[]> {
    const found = await scanStore(root, reads, signal);
    const next = new Map<string, IndexedSession>();
    for (const session of found) if (!next.has(session.header.id)) next.set(session.header.id, session);
    index = next;
    return [...next.values()];
  }

  /** The session's current log; rescans once (when `rescan`) if the id is unknown or its directory moved. */
  async function locate(sessionId: string, signal: AbortSignal | undefined, rescan: boolean): Promise<IndexedSession> {
    checkId(sessionId);
    const known = index.get(sessionId);
    if (known) {
      const path = await chooseLog(known.dir, signal);
      if (path !== undefined) return { ...known, path };
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
    read: (path: string) => Promise<T | undefined>,
  ): Promise<T> {
    throwIfAborted(signal);
    const session = await locate(sessionId, signal, rescan);
    const first = await read(session.path).catch((error: unknown) => {
      if (isErrno((error as SessionReferenceError).cause, 'ENOENT')) return undefined;
      throw error;
    });
    if (first?.header.id === sessionId) return first;
    await scan(signal);
    const moved = index.get(sessionId);
    if (!moved) throw notFound(sessionId);
    const again = await read(moved.path);
    if (again?.header.id !== sessionId) throw fail('READ_FAILED', `${quotePath(moved.path)} changed while it was being read`);
    return again;
  }

  return Object.freeze({
    root,
    async listSessions(signal?: AbortSignal): Promise<Array<{ header: SessionHeader }>> {
      throwIfAborted(signal);
      const sessions = await scan(signal);
      sessions.sort(newestFirst);
      return sessions.map((session) => ({ header: session.header }));
    },
    async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
      const log = await readSession(sessionId, signal, true, (path) => reads.surface(path, signal));
      return { session: log.header, capturedThroughSeq: log.capturedThroughSeq, events: log.events };
    },
    async readTitleSnapshots(sessionIds: string[], signal?: AbortSignal): Promise<SessionTitleSnapshot[]> {
      if (!Array.isArray(sessionIds)) {
        throw fail('INVALID_ARGUMENT', `sessionIds must be an array of strings, got ${describeValue(sessionIds)}`);
      }
      throwIfAborted(signal);
      // One rescan up front for ids the last scan did not see, instead of one per id.
      if (sessionIds.some((id) => typeof id !== 'string' || !index.has(id))) await scan(signal);
      const rows = await mapLimited(sessionIds, READ_CONCURRENCY, async (sessionId): Promise<SessionTitleSnapshot> => {
        try {
          const { title } = await readSession(sessionId, signal, false, (path) => reads.title(path, signal));
          return { sessionId, status: 'fulfilled', value: title === undefined ? {} : { title: { title } } };
        } catch (reason) {
          if (reason instanceof SessionReferenceError && reason.code === 'SESSION_REFERENCE_CANCELLED') throw reason;
          return { sessionId, status: 'rejected', reason };
        }
      });
      return rows;
    },
  });
}

function checkOptions(options: unknown): { root: string; read: Required<SessionLogReadOptions> } {
  if (typeof options !== 'object' || options === null) {
    throw fail('INVALID_CONFIG', `options must be an object like { root }, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'root' && key !== 'maxLogBytes' && key !== 'verifyChecksums') throw fail('INVALID_CONFIG', `unknown option ${describeValue(key)}`);
  }
  const read = checkReadOptions(options as Record<string, unknown>, 'INVALID_CONFIG');
  const { root } = options as DshStoreOptions;
  if (root === undefined) return { root: defaultSessionStoreRoot(), read };
  if (typeof root !== 'string' || root === '') {
    throw fail('INVALID_CONFIG', `root must be a non-empty path, got ${describeValue(root)}`);
  }
  return { root, read };
}

function checkId(sessionId: unknown): asserts sessionId is string {
  check(typeof sessionId === 'string', 'INVALID_ARGUMENT', 'sessionId must be a string', sessionId);
}

function newestFirst(a: IndexedSession, b: IndexedSession): number {
  const byTime = b.header.createdAt - a.header.createdAt;
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
  return a.header.id < b.header.id ? -1 : a.header.id > b.header.id ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Scanning

/** Every session with a complete header, sorted by log path (code units). */
async function scanStore(root: string, reads: LogReads, signal: AbortSignal | undefined): Promise<IndexedSession[]> {
  const projects = await listDirectories(root, signal, true);
  const sessionDirs: string[] = [];
  for (const project of projects) {
    for (const dir of await listDirectories(project, signal, false)) sessionDirs.push(dir);
  }
  const found = await mapLimited(sessionDirs, LIST_CONCURRENCY, async (dir) => {
    const path = await chooseLog(dir, signal);
    if (path === undefined) return undefined;
    const header = await reads.header(path, signal);
    return header === undefined ? undefined : { header, dir, path };
  });
  const sessions = found.filter((session): session is IndexedSession => session !== undefined);
  sessions.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return sessions;
}

/** Subdirectories of `dir` (symlinks to directories included), sorted; none when `dir` is missing. */
async function listDirectories(dir: string, signal: AbortSignal | undefined, isRoot: boolean): Promise<string[]> {
  throwIfAborted(signal);
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    // A missing root lists nothing; a project directory removed or replaced meanwhile too.
    if (isErrno(error, 'ENOENT') || (!isRoot && isErrno(error, 'ENOTDIR'))) return [];
    return rethrowRead(error, dir);
  }
  const dirs: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) dirs.push(path);
    else if (entry.isSymbolicLink() && (await stat(path).then((s) => s.isDirectory(), () => false))) dirs.push(path);
  }
  return dirs.sort();
}

/**
 * The log dsh would read in a session directory: the highest `v<N>` (unversioned lowest), the
 * plain `.jsonl` before the `.zstd` at the same rank, then by name. `undefined` when there is none.
 */
async function chooseLog(dir: string, signal: AbortSignal | undefined): Promise<string | undefined> {
  throwIfAborted(signal);
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (isErrno(error, 'ENOENT') || isErrno(error, 'ENOTDIR')) return undefined;
    return rethrowRead(error, dir);
  }
  let best: { name: string; version: bigint; zstd: boolean } | undefined;
  for (const entry of entries) {
    const match = LOG_NAME.exec(entry.name);
    // Regular files and symlinks (checked when opened): never a FIFO, socket or device (SPEC §12.1).
    if (!match || !(entry.isFile() || entry.isSymbolicLink())) continue;
    const candidate = { name: entry.name, version: match[1] === undefined ? -1n : BigInt(match[1]), zstd: match[2] !== undefined };
    if (best === undefined || compareLogs(candidate, best) > 0) best = candidate;
  }
  return best === undefined ? undefined : join(dir, best.name);
}

/** > 0 when `a` is preferred over `b`. */
function compareLogs(a: { name: string; version: bigint; zstd: boolean }, b: { name: string; version: bigint; zstd: boolean }): number {
  if (a.version !== b.version) return a.version > b.version ? 1 : -1;
  if (a.zstd !== b.zstd) return a.zstd ? -1 : 1;
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; results in input order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

// ---------------------------------------------------------------------------------------------
// Reading

function identityOf(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}`;
}

/**
 * The identity (device, inode, size, mtime) of the log at `path` when it is a regular file (SPEC
 * §12.1): `stat` only, so a FIFO, socket or device is never opened.
 * @returns `undefined` when `path` is gone or is not a regular file.
 */
async function logIdentity(path: string): Promise<string | undefined> {
  try {
    const stats = await stat(path, { bigint: true });
    return stats.isFile() ? identityOf(stats) : undefined;
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    return rethrowRead(error, path);
  }
}

/**
 * Opens a log {@link logIdentity} found to be a regular file. Non-blocking, so a file swapped for
 * a FIFO in between cannot block the open (nor a read: it fails instead).
 * @returns `undefined` when it is gone meanwhile.
 */
async function openLog(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    return rethrowRead(error, path);
  }
}

/**
 * The bytes of an open file as a stream of chunks: reads of `first` bytes, doubling up to
 * {@link CHUNK_BYTES}, each into a fresh buffer (the pipeline may keep references to them).
 */
async function* fileChunks(file: FileHandle, path: string, first: number): AsyncGenerator<Uint8Array> {
  for (let position = 0, size = first; ; size = Math.min(size * 2, CHUNK_BYTES)) {
    const buffer = new Uint8Array(size);
    let bytesRead: number;
    try {
      ({ bytesRead } = await file.read(buffer, 0, size, position));
    } catch (error) {
      return rethrowRead(error, path);
    }
    if (bytesRead === 0) return;
    position += bytesRead;
    yield bytesRead === size ? buffer : buffer.subarray(0, bytesRead);
  }
}

/**
 * Reads of log files through the store pipeline (SPEC §11.2.2), with the header and title caches
 * keyed by file identity.
 */
class LogReads {
  private readonly headers = new Map<string, { identity: string; header: SessionHeader | undefined }>();
  private readonly titles = new Map<string, { identity: string; header: SessionHeader; title: string | undefined }>();

  constructor(private readonly options: Required<SessionLogReadOptions>) {}

  /**
   * The header of the log at `path` (line 1, at most 1 MiB of it decoded). `undefined` when the
   * log has no complete header yet (empty, torn first line, truncated first frame), vanished, or
   * is not a regular file.
   */
  async header(path: string, signal: AbortSignal | undefined): Promise<SessionHeader | undefined> {
    const identity = await logIdentity(path);
    if (identity === undefined) return undefined;
    const cached = this.headers.get(path);
    if (cached?.identity === identity) return cached.header;
    const read = await this.read(path, signal, HEADER_CHUNK, (source, options) => readSessionHeader(source, options));
    if (read === undefined) return undefined;
    this.headers.set(path, { identity, header: read.value });
    return read.value;
  }

  /** The header and latest title of the log at `path`, from the cache when the file is unchanged. */
  async title(path: string, signal: AbortSignal | undefined): Promise<{ header: SessionHeader; title: string | undefined } | undefined> {
    const identity = await logIdentity(path);
    if (identity === undefined) return undefined;
    const cached = this.titles.get(path);
    if (cached?.identity === identity) return cached;
    const read = await this.read(path, signal, CHUNK_BYTES, (source, options) => readSessionTitle(source, options));
    if (read === undefined) return undefined;
    this.titles.set(path, { identity, ...read.value });
    return read.value;
  }

  /** The surface and title of the whole log at `path`. */
  async surface(path: string, signal: AbortSignal | undefined): Promise<SessionRead | undefined> {
    const identity = await logIdentity(path);
    if (identity === undefined) return undefined;
    const read = await this.read(path, signal, CHUNK_BYTES, (source, options) => readSessionSurface(source, options));
    if (read === undefined) return undefined;
    const { header, title } = read.value;
    this.titles.set(path, { identity, header, title });
    return read.value;
  }

  /** Opens the file and runs `read` over its chunks; `undefined` when the file is gone. */
  private async read<T>(
    path: string,
    signal: AbortSignal | undefined,
    first: number,
    read: (source: AsyncIterable<Uint8Array>, options: ReadOptions) => Promise<T>,
  ): Promise<{ value: T } | undefined> {
    throwIfAborted(signal);
    const file = await openLog(path);
    if (file === undefined) return undefined;
    try {
      return { value: await withPath(path, () => read(fileChunks(file, path, first), { ...this.options, signal })) };
    } finally {
      await file.close().catch(() => {});
    }
  }
}

/** Runs a read, prefixing the path to the message of the `SessionReferenceError` it throws. */
async function withPath<T>(path: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!(error instanceof SessionReferenceError)) throw fail('INVALID_LOG', `${quotePath(path)}: ${describeValue(error)}`, error);
    if (error.code === 'SESSION_REFERENCE_CANCELLED' || error.message.includes(quotePath(path))) throw error;
    throw new SessionReferenceError(error.code, `${quotePath(path)}: ${error.message}`, { cause: error });
  }
}

function rethrowRead(error: unknown, path: string): never {
  const code = (error as { code?: unknown } | null)?.code;
  const detail = typeof code === 'string' ? code : describeValue(error);
  throw fail('READ_FAILED', `cannot read ${quotePath(path)}: ${detail}`, error);
}

function isErrno(error: unknown, code: string): boolean {
  return (error as { code?: unknown } | null)?.code === code;
}

/** A path for an error message: JSON-quoted, never cut (the path is what the user needs). */
function quotePath(path: string): string {
  return JSON.stringify(path);
}
