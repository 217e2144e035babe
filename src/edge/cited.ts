/**
 * The sessions a `/prepare` cites, read from R2 (SPEC §17.5, §17.6): a `SessionQuery` over the
 * catalog rows `locate` gave — one R2 get per cited session, read through the store pipeline
 * (§11.2.2: streamed, at the reference budget) — that never answers from what the catalog only
 * remembers. An object that is gone is dropped from the catalog (and the session looked up once
 * more: another object may hold it); one whose etag moved is read as it is now and its row
 * refreshed through `indexObject`.
 * @module
 */
import { describeValue, fail, isInstance } from '../errors.js';
import { SizedSource, type ReadOptions } from '../store/pipeline.js';
import { firstThen, readSessionSurface, type SessionRead } from '../store/surface-read.js';
import type { SessionQuery, SessionSurface } from '../types.js';
import { callCatalog, type CatalogApi } from './catalog-api.js';
import type { CatalogRow } from './catalog/index.js';

/** Where cited logs are read from: the tenant's bucket, prefix and catalog. */
export interface CitedStore {
  bucket: R2Bucket;
  catalog: CatalogApi;
  prefix: string;
  /** Decoded bytes one read may pass (SPEC §11.2.1). */
  maxLogBytes: number;
}

function notFound(sessionId: string) {
  return fail('NOT_FOUND', `no session with id ${describeValue(sessionId)}`);
}

/** The body of `get`, or a `SESSION_REFERENCE_READ_FAILED` naming the key. */
async function getObject(bucket: R2Bucket, key: string, onlyIf?: R2Conditional): Promise<R2ObjectBody | R2Object | null> {
  try {
    return await bucket.get(key, onlyIf === undefined ? undefined : { onlyIf });
  } catch (error) {
    throw fail('READ_FAILED', `object ${describeValue(key)}: get failed: ${describeValue(error)}`, error);
  }
}

function hasBody(object: R2ObjectBody | R2Object): object is R2ObjectBody {
  return 'body' in object && object.body !== undefined && object.body !== null;
}

/** Runs a read of `key`, naming it in the message of a log or read failure. */
async function inObject<T>(key: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (isInstance(error) && (error.code === 'SESSION_REFERENCE_INVALID_LOG' || error.code === 'SESSION_REFERENCE_READ_FAILED')) {
      throw fail(error.code === 'SESSION_REFERENCE_INVALID_LOG' ? 'INVALID_LOG' : 'READ_FAILED', `object ${describeValue(key)}: ${error.message}`, error.cause);
    }
    throw error;
  }
}

/**
 * A `SessionQuery` (SPEC §4.2) over the rows `locate` found for the cited sessions. `rows` maps a
 * session id to its winning row (SPEC §17.5).
 */
export function citedSessionQuery(store: CitedStore, rows: ReadonlyMap<string, CatalogRow>): SessionQuery {
  const { bucket, catalog, prefix } = store;

  /** One object read at `budget`; `undefined` when the object no longer holds `sessionId`. */
  async function readRow(row: CatalogRow, sessionId: string, budget: number | undefined, options: ReadOptions): Promise<SessionRead | undefined> {
    const key = prefix + row.key;
    const object = await getObject(bucket, key);
    if (object === null || !hasBody(object)) {
      await callCatalog(() => catalog.removeObject(row.key));
      return undefined;
    }
    const etag = object.etag;
    // A second pass (texts retention dropped, then needed) must read the very same object.
    const reopen = async () => {
      const again = await getObject(bucket, key, { etagMatches: etag });
      if (again === null || !hasBody(again)) throw fail('READ_FAILED', 'the log changed while it was being read');
      return new SizedSource(again.body, again.size);
    };
    const read = await inObject(key, () => readSessionSurface(firstThen(new SizedSource(object.body, object.size), reopen), options, budget));
    if (etag !== row.etag || read.header.id !== sessionId) await callCatalog(() => catalog.indexObject(prefix, row.key, { maxLogBytes: store.maxLogBytes }));
    return read.header.id === sessionId ? read : undefined;
  }

  async function read(sessionId: string, budget: number | undefined, signal: AbortSignal | undefined): Promise<SessionSurface> {
    const options: ReadOptions = { maxLogBytes: store.maxLogBytes, signal };
    let row = rows.get(sessionId);
    if (row === undefined) throw notFound(sessionId);
    let found = await readRow(row, sessionId, budget, options);
    if (found === undefined) {
      // The catalog's row was stale (now dropped or refreshed): ask once more where the session is.
      const [again] = await callCatalog(() => catalog.locate([sessionId]));
      if (again === undefined || (again.key === row.key && again.etag === row.etag)) throw notFound(sessionId);
      row = again;
      found = await readRow(row, sessionId, budget, options);
      if (found === undefined) throw notFound(sessionId);
    }
    const surface: SessionSurface = { session: found.header, capturedThroughSeq: found.capturedThroughSeq, events: found.events };
    if (found.withheld) surface.withheld = found.withheld;
    return surface;
  }

  return {
    async listSessions() {
      return [...rows.values()].map((row) => ({
        header: { type: 'session', version: row.version, id: row.sessionId, createdAt: Number(row.createdAt), ...(row.cwd !== undefined && { cwd: row.cwd }) },
        identity: `${row.key}#${row.etag}`,
      }));
    },
    readSurface: (sessionId, signal) => read(sessionId, undefined, signal),
    readRetainedSurface: (sessionId, maxReferenceBytes, signal) => read(sessionId, maxReferenceBytes, signal),
  };
}
