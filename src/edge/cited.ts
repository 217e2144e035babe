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

/**
 * A cited session no object holds any more: the very message of an id the catalog never knew
 * (SPEC §17.3: another tenant's id, an unknown id and a vanished one answer alike).
 */
export function unknownSession(sessionId: string) {
  return fail('NOT_FOUND', `unknown session id ${describeValue(sessionId)}: no session of this tenant has it`);
}

/** The body of `get` of `prefix + key`, or a `SESSION_REFERENCE_READ_FAILED` naming the tenant-relative `key`. */
async function getObject(bucket: R2Bucket, prefix: string, key: string, onlyIf?: R2Conditional): Promise<R2ObjectBody | R2Object | null> {
  try {
    return await bucket.get(prefix + key, onlyIf === undefined ? undefined : { onlyIf });
  } catch (error) {
    throw fail('READ_FAILED', `the log ${describeValue(key)}: get failed: ${describeValue(error)}`, error);
  }
}

function hasBody(object: R2ObjectBody | R2Object): object is R2ObjectBody {
  return 'body' in object && object.body !== undefined && object.body !== null;
}

/**
 * Runs a read of the tenant-relative `key`, naming it (never the tenant's prefix) in the message
 * of a log or read failure. An object that is no longer a readable dsh log loses its catalog row
 * first (`drop`), as a queue notification or a reconcile pass would drop it (issue 27).
 */
async function inObject<T>(key: string, read: () => Promise<T>, drop: () => Promise<void>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (isInstance(error) && error.code === 'SESSION_REFERENCE_INVALID_LOG') {
      await drop();
      throw fail('INVALID_LOG', `the log ${describeValue(key)} is not a readable dsh log (its row is dropped from the catalog): ${error.message}`, error.cause);
    }
    if (isInstance(error) && error.code === 'SESSION_REFERENCE_READ_FAILED') throw fail('READ_FAILED', `the log ${describeValue(key)}: ${error.message}`, error.cause);
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
    const object = await getObject(bucket, prefix, row.key);
    if (object === null || !hasBody(object)) {
      await callCatalog(() => catalog.removeObject(row.key));
      return undefined;
    }
    const etag = object.etag;
    // A second pass (texts retention dropped, then needed) must read the very same object.
    const reopen = async () => {
      const again = await getObject(bucket, prefix, row.key, { etagMatches: etag });
      if (again === null || !hasBody(again)) throw fail('READ_FAILED', 'the log changed while it was being read');
      return new SizedSource(again.body, again.size);
    };
    const read = await inObject(row.key, () => readSessionSurface(firstThen(new SizedSource(object.body, object.size), reopen), options, budget), () => callCatalog(() => catalog.removeObject(row.key)));
    if (etag !== row.etag || read.header.id !== sessionId) await callCatalog(() => catalog.indexObject(prefix, row.key, { maxLogBytes: store.maxLogBytes }));
    return read.header.id === sessionId ? read : undefined;
  }

  async function read(sessionId: string, budget: number | undefined, signal: AbortSignal | undefined): Promise<SessionSurface> {
    const options: ReadOptions = { maxLogBytes: store.maxLogBytes, signal };
    let row = rows.get(sessionId);
    if (row === undefined) throw unknownSession(sessionId);
    let found = await readRow(row, sessionId, budget, options);
    if (found === undefined) {
      // The catalog's row was stale (now dropped or refreshed): ask once more where the session is.
      const [again] = await callCatalog(() => catalog.locate([sessionId]));
      if (again === undefined || (again.key === row.key && again.etag === row.etag)) throw unknownSession(sessionId);
      row = again;
      found = await readRow(row, sessionId, budget, options);
      if (found === undefined) throw unknownSession(sessionId);
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
