/**
 * dsh's on-disk session store as a `SessionQuery` (SPEC §12.1). Node only.
 *
 * Layout: `<root>/<project dir>/<session dir>/<log>`, `<log>` being `session.jsonl` or
 * `session.v<N>.jsonl`, each optionally compressed as `<name>.zstd` (multi-frame zstd, SPEC §11.2).
 * @module
 */
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { throwIfAborted } from '../abort.js';
import { check, describeValue, fail, SessionReferenceError } from '../errors.js';
import { parseSessionLog, parseSessionLogHeader, type SessionLog } from '../store/index.js';
import { isZstd, scanZstdFrame } from '../store/zstd.js';
import { foldSurface } from '../surface.js';
import type { SessionEvent, SessionHeader, SessionQuery, SessionSurface, SessionTitleSnapshot } from '../types.js';

/** Options of {@link createDshStoreSessionQuery}. */
export interface DshStoreOptions {
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

/** First read of a header, in bytes; doubled as needed. */
const HEADER_CHUNK = 16 * 1024;

/** A header line or header frame larger than this is not a dsh header (bytes). */
const MAX_HEADER_BYTES = 4 * 1024 * 1024;

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
 *   each session's log — the first line of a `.jsonl` (a bounded read up to the first `\n`) or
 *   the first zstd frame of a `.jsonl.zstd` — never whole logs. Records are newest first
 *   (`createdAt` descending, then id ascending by UTF-16 code units). The session id is the
 *   header's `id`, never a folder name. A missing root lists no sessions.
 * - Several logs in one session directory: the highest `v<N>` wins (`session.jsonl` ranks below
 *   every `session.v<N>.jsonl`); at the same rank the plain `.jsonl` wins over its `.zstd`
 *   (a crash while compressing leaves the plain log complete and the compressed one truncated).
 *   Other files are ignored.
 * - A log without a complete header yet (empty file, torn first line, truncated first frame:
 *   a session being created) is not listed. Two session directories whose headers carry the
 *   same id: the one whose log path sorts first (code units) is used, the other ignored.
 * - `readSurface(id, signal?)` reads that session's whole log on demand and resolves to
 *   `{ session: header, capturedThroughSeq: seq of the last event (null without events),
 *   events: folded surface (SPEC §8.2) }`.
 * - `readTitleSnapshots(ids, signal?)` reads the whole logs of the given ids, one row per id in
 *   order: `fulfilled` with `value.title = { title }` from the last `session/title` event's
 *   `data.title` (`value: {}` when there is none), or `rejected` with the error as `reason`.
 * - Ids are resolved against the index of the last scan; an id missing from it triggers a rescan.
 *
 * @param options - `{ root? }`; `root` defaults to {@link defaultSessionStoreRoot}.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` for options that are not an
 * object, unknown keys, or a `root` that is not a non-empty string. The methods reject with
 * `SESSION_REFERENCE_NOT_FOUND` (unknown id), `SESSION_REFERENCE_INVALID_LOG` (a log or header that
 * is not a dsh log), `SESSION_REFERENCE_READ_FAILED` (a filesystem error) — the last two name the
 * file's path — and `SESSION_REFERENCE_CANCELLED` (cause `signal.reason`).
 * @example
 * const sessionQuery = createDshStoreSessionQuery();          // ~/.dsh/sessions
 * const refs = createSessionReferences({ sessionQuery });
 */
export function createDshStoreSessionQuery(options: DshStoreOptions = {}): DshStoreSessionQuery {
  const root = resolve(checkOptions(options));
  let index = new Map<string, IndexedSession>();

  async function scan(signal: AbortSignal | undefined): Promise<IndexedSession[]> {
    const found = await scanStore(root, signal);
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

  /** The whole log of `sessionId`, checking that its header still carries that id. */
  async function readLog(sessionId: string, signal: AbortSignal | undefined, rescan = true): Promise<SessionLog> {
    throwIfAborted(signal);
    const session = await locate(sessionId, signal, rescan);
    const log = await readWholeLog(session.path, signal).catch((error: unknown) => {
      if (isErrno((error as SessionReferenceError).cause, 'ENOENT')) return undefined;
      throw error;
    });
    if (log?.header.id === sessionId) return log;
    // The log was removed or replaced since the last scan: look again, once.
    await scan(signal);
    const moved = index.get(sessionId);
    if (!moved) throw notFound(sessionId);
    const again = await readWholeLog(moved.path, signal);
    if (again.header.id !== sessionId) {
      throw fail('READ_FAILED', `${quotePath(moved.path)} changed while it was being read`);
    }
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
      const log = await readLog(sessionId, signal);
      const last = log.events.at(-1);
      return {
        session: log.header,
        capturedThroughSeq: last === undefined ? null : last.seq,
        events: foldSurface(log.events),
      };
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
          const log = await readLog(sessionId, signal, false);
          const title = lastTitle(log.events);
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

function checkOptions(options: unknown): string {
  if (typeof options !== 'object' || options === null) {
    throw fail('INVALID_CONFIG', `options must be an object like { root }, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'root') throw fail('INVALID_CONFIG', `unknown option ${describeValue(key)}`);
  }
  const { root } = options as DshStoreOptions;
  if (root === undefined) return defaultSessionStoreRoot();
  if (typeof root !== 'string' || root === '') {
    throw fail('INVALID_CONFIG', `root must be a non-empty path, got ${describeValue(root)}`);
  }
  return root;
}

function checkId(sessionId: unknown): asserts sessionId is string {
  check(typeof sessionId === 'string', 'INVALID_ARGUMENT', 'sessionId must be a string', sessionId);
}

function newestFirst(a: IndexedSession, b: IndexedSession): number {
  const byTime = b.header.createdAt - a.header.createdAt;
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
  return a.header.id < b.header.id ? -1 : a.header.id > b.header.id ? 1 : 0;
}

/** `data.title` of the last `session/title` event that has a string title. */
function lastTitle(events: readonly SessionEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    if (event.type !== 'session/title') continue;
    const title = (event.data as { title?: unknown } | null | undefined)?.title;
    if (typeof title === 'string') return title;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Scanning

/** Every session with a complete header, sorted by log path (code units). */
async function scanStore(root: string, signal: AbortSignal | undefined): Promise<IndexedSession[]> {
  const projects = await listDirectories(root, signal, true);
  const sessionDirs: string[] = [];
  for (const project of projects) {
    for (const dir of await listDirectories(project, signal, false)) sessionDirs.push(dir);
  }
  const found = await mapLimited(sessionDirs, LIST_CONCURRENCY, async (dir) => {
    const path = await chooseLog(dir, signal);
    if (path === undefined) return undefined;
    const header = await readHeader(path, signal);
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
    if (!match || entry.isDirectory()) continue;
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

/**
 * The header of the log at `path`, reading only the first line or the first zstd frame.
 * `undefined` when the log has no complete header yet (empty, torn first line, truncated first
 * frame) or vanished since the directory was listed.
 */
async function readHeader(path: string, signal: AbortSignal | undefined): Promise<SessionHeader | undefined> {
  throwIfAborted(signal);
  let file;
  try {
    file = await open(path, 'r');
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    return rethrowRead(error, path);
  }
  try {
    const reader = new PrefixReader(file);
    const first = await reader.ensure(4);
    if (first.length === 0) return undefined;
    const zstd = isZstd(first);
    const headerBytes = zstd ? await readFirstFrame(reader, path) : await readFirstLine(reader, path);
    if (headerBytes === undefined) return undefined;
    throwIfAborted(signal);
    if (!zstd) return withPath(path, () => parseSessionLogHeader(headerBytes));
    try {
      return parseSessionLogHeader(headerBytes);
    } catch {
      // dsh writes the header line as the first frame; should it span several, read on (bounded).
      const prefix = await reader.ensure(MAX_HEADER_BYTES);
      return withPath(path, () => parseSessionLogHeader(prefix));
    }
  } catch (error) {
    if (error instanceof SessionReferenceError) throw error;
    return rethrowRead(error, path);
  } finally {
    await file.close().catch(() => {});
  }
}

/** The bytes of the first line, `\n` included; `undefined` when it is torn (no `\n`, not JSON). */
async function readFirstLine(reader: PrefixReader, path: string): Promise<Uint8Array | undefined> {
  let searched = 0;
  for (;;) {
    const bytes = reader.bytes;
    const newline = bytes.indexOf(0x0a, searched);
    if (newline >= 0) return bytes.subarray(0, newline + 1);
    searched = bytes.length;
    if (reader.eof) {
      // A header without its final newline counts only when it is complete JSON.
      try {
        JSON.parse(new TextDecoder().decode(bytes));
        return bytes;
      } catch {
        return undefined;
      }
    }
    if (bytes.length >= MAX_HEADER_BYTES) {
      throw fail('INVALID_LOG', `${quotePath(path)}: the first line is longer than ${MAX_HEADER_BYTES} bytes; not a dsh session header`);
    }
    await reader.ensure(Math.min(bytes.length * 2, MAX_HEADER_BYTES));
  }
}

/**
 * The bytes up to the end of the first zstd data frame (skippable frames before it included),
 * found from the frame and block headers without decompressing; `undefined` when the file ends
 * inside it (a crash while writing the header).
 */
async function readFirstFrame(reader: PrefixReader, path: string): Promise<Uint8Array | undefined> {
  let at = 0;
  for (;;) {
    const extent = withPath(path, () => scanZstdFrame(reader.bytes, at));
    if (extent === undefined) {
      if (reader.eof) return undefined;
      if (reader.bytes.length >= MAX_HEADER_BYTES) {
        throw fail('INVALID_LOG', `${quotePath(path)}: the first zstd frame is larger than ${MAX_HEADER_BYTES} bytes; not a dsh session header`);
      }
      await reader.ensure(Math.min(reader.bytes.length * 2, MAX_HEADER_BYTES));
      continue;
    }
    if (extent.kind === 'data') return reader.bytes.subarray(0, extent.end);
    at = extent.end;
  }
}

/** Incremental reads of a file's prefix. */
class PrefixReader {
  bytes: Uint8Array = new Uint8Array(0);
  eof = false;

  constructor(private readonly file: import('node:fs/promises').FileHandle) {}

  /** Reads until at least `length` bytes are buffered (reading at least a chunk) or the file ends. */
  async ensure(length: number): Promise<Uint8Array> {
    while (this.bytes.length < length && !this.eof) {
      const want = Math.max(length - this.bytes.length, HEADER_CHUNK);
      const chunk = new Uint8Array(want);
      const { bytesRead } = await this.file.read(chunk, 0, want, this.bytes.length);
      if (bytesRead === 0) {
        this.eof = true;
        break;
      }
      const grown = new Uint8Array(this.bytes.length + bytesRead);
      grown.set(this.bytes);
      grown.set(chunk.subarray(0, bytesRead), this.bytes.length);
      this.bytes = grown;
    }
    return this.bytes;
  }
}

/** A whole log, parsed (SPEC §11.1, §11.2). */
async function readWholeLog(path: string, signal: AbortSignal | undefined): Promise<SessionLog> {
  throwIfAborted(signal);
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path, signal ? { signal } : undefined);
  } catch (error) {
    throwIfAborted(signal);
    return rethrowRead(error, path);
  }
  throwIfAborted(signal);
  return withPath(path, () => parseSessionLog(bytes));
}

/** Runs a parser, prefixing the path to the message of the `SessionReferenceError` it throws. */
function withPath<T>(path: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof SessionReferenceError) throw new SessionReferenceError(error.code, `${quotePath(path)}: ${error.message}`, { cause: error });
    throw fail('INVALID_LOG', `${quotePath(path)}: ${describeValue(error)}`, error);
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
