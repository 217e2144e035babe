/**
 * Keeping the catalog true to the bucket (SPEC §17.6): objects indexed as the service writes them,
 * R2 event notifications applied idempotently and in any order, and reconcile passes that re-list
 * the tenant's prefix in pages resumable across invocations.
 * @module
 */
import type { SqlStorage } from 'cloudflare:workers';
import { describeValue, fail, SessionReferenceError } from '../../errors.js';
import { r2, readObject, type CatalogBucket, type CatalogObjectInfo, type ReadObject } from './bucket.js';
import { isSessionPath } from '../paths.js';
import { CatalogTables, type WriteOutcome } from './tables.js';
import type { CatalogLimits, R2EventNotification, ReconcileResult } from './types.js';

/** Notification actions that create an object (R2's `object-create` event type). */
const CREATES = new Set(['PutObject', 'CopyObject', 'CompleteMultipartUpload']);
/** Notification actions that delete one (`object-delete`). */
const DELETES = new Set(['DeleteObject', 'LifecycleDeletion']);

/**
 * How long a deleted key's tombstone is kept: a create notification older than the delete is
 * ignored for that long (Queues retry a message for at most days; reconcile repairs anything later).
 */
export const TOMBSTONE_MS = 7 * 24 * 60 * 60 * 1000;

/** Objects one reconcile page lists by default (R2's largest page). */
export const DEFAULT_RECONCILE_PAGE = 1000;

/** What the catalog learnt from writing one object: the outcome, and the read when there was one. */
export interface Indexed {
  outcome: WriteOutcome | 'gone';
  read?: ReadObject | undefined;
}

/** The catalog's writes from the bucket. */
export class Freshness {
  /** The logs read since {@link takeReads} was last called, by key (their items feed search). */
  private reads = new Map<string, ReadObject>();

  constructor(
    private readonly sql: SqlStorage,
    private readonly tables: CatalogTables,
    private readonly bucket: CatalogBucket,
  ) {}

  /**
   * Brings the row of `key` to the object as it is now, with one `get` (or none when a listing
   * `known` says it is unchanged): an unchanged object (same etag and upload time as its row) is
   * not read again; a gone one loses its row.
   * @throws SessionReferenceError as {@link readObject}: the catalog is left as it was.
   */
  async index(prefix: string, key: string, limits: CatalogLimits, known?: CatalogObjectInfo, pass?: number): Promise<Indexed> {
    const row = this.tables.byKey(key);
    const unchanged = (info: CatalogObjectInfo) => row !== undefined && row.etag === info.etag && row.uploaded === info.uploaded.getTime();
    // A delete of the key that lands while the object is read wins (its removal is newer than
    // what the read saw): the row follows R2's final state, not an older read (issue 27).
    const startedAt = Date.now();
    const read = known !== undefined && unchanged(known) ? 'unchanged' : await readObject(this.bucket, prefix + key, key, limits.maxLogBytes, unchanged);
    if (read === 'unchanged') {
      if (pass !== undefined) this.tables.touch(row!.row, pass);
      return { outcome: 'same' };
    }
    if (read === undefined) return this.gone(key);
    const deleted = this.tables.tombstoneOf(key);
    if (deleted !== undefined && deleted >= startedAt) return this.gone(key);
    this.reads.set(key, read);
    return { outcome: this.tables.write(read, read.uploaded, pass), read };
  }

  /** Drops the row of `key` after a delete at `eventTime` (ms), remembering the delete. */
  remove(key: string, eventTime: number): boolean {
    this.tables.tombstone(key, eventTime);
    return this.tables.drop(key);
  }

  /**
   * Applies one R2 event notification (SPEC §17.6) for objects under `prefix`: idempotent, in any
   * order. A create older than the key's row or its last delete, or of the etag the row has, is
   * ignored; other creates read the object as it is now. A delete older than the row is ignored;
 * a delete of a key whose object still exists in the bound bucket (`head`) keeps its row, brought
 * to the object as it is (the notification's `bucket` name is not trusted, issue 27).
   * An object that is not a dsh log loses its row and is remembered by etag (no retry can fix it).
   * Keys outside `prefix`, keys no `{path}` can name (see `isSessionPath`) and other actions are ignored.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` for a notification without
   * a string `action`, `object.key` or a parseable `eventTime`; R2 read failures (the message is
   * retried).
   */
  async apply(prefix: string, note: R2EventNotification, limits: CatalogLimits): Promise<Indexed | undefined> {
    const { action, key: fullKey, eTag, time } = readNotification(note);
    if (!fullKey.startsWith(prefix)) return undefined;
    const key = fullKey.slice(prefix.length);
    if (!isSessionPath(key)) return undefined;
    this.tables.pruneTombstones(Date.now() - TOMBSTONE_MS);
    const row = this.tables.byKey(key);
    if (DELETES.has(action)) {
      if (row !== undefined && row.event_time > time) return undefined;
      // The bound bucket decides, not the message (issue 27): a delete from another bucket feeding
      // the same queue (a staging or mirror bucket with the same keys), or one older than a
      // re-upload, leaves an object that still exists indexed as it is (one head; no get when its
      // etag and upload time are the row's).
      const current = await r2(`head(${describeValue(key)})`, () => this.bucket.head(prefix + key));
      if (current !== null) return this.indexOrReject(prefix, key, limits, current);
      return { outcome: this.remove(key, time) ? 'changed' : 'same' };
    }
    if (!CREATES.has(action)) return undefined;
    if (row !== undefined && (row.etag === eTag || row.event_time > time)) return undefined;
    const deleted = this.tables.tombstoneOf(key);
    if (deleted !== undefined && deleted > time) return undefined;
    return this.indexOrReject(prefix, key, limits);
  }

  /**
   * One page of a reconcile pass over `prefix` (SPEC §17.6): the page after the kept cursor is
   * listed; objects with a new etag are read, known ones marked as seen, keys no `{path}` can name
   * passed over. After the last page, rows
   * the pass did not see are removed — those uploaded before the pass began: a row written since
   * (a `PUT` through the service) may hold a key the listing had already passed — and the next
   * pass begins.
   */
  async reconcile(prefix: string, pageSize: number, limits: CatalogLimits): Promise<ReconcileResult> {
    const pass = this.pass();
    const cursor = this.meta<string>('cursor');
    if (cursor === undefined) this.setMeta('started', Date.now());
    const started = this.meta<number>('started')!;
    const page = await r2('list()', () => this.bucket.list({ prefix, limit: pageSize, ...(cursor !== undefined && { cursor }) }));
    const result: ReconcileResult = { done: false, added: 0, changed: 0, removed: 0 };
    for (const info of page.objects) {
      if (!info.key.startsWith(prefix)) continue;
      const key = info.key.slice(prefix.length);
      if (!isSessionPath(key)) continue;
      if (this.sql.exec('UPDATE catalog_rejected SET mark = ? WHERE key = ? AND etag = ?', pass, key, info.etag).rowsWritten > 0) continue;
      const indexed = await this.indexOrReject(prefix, key, limits, info, pass);
      if (indexed.outcome === 'added') result.added++;
      else if (indexed.outcome === 'changed') result.changed++;
      else if (indexed.outcome === 'gone') result.removed++;
    }
    if (page.truncated && page.cursor !== undefined) {
      this.setMeta('cursor', page.cursor);
      return result;
    }
    for (const { key } of this.sql.exec<{ key: string }>('SELECT key FROM catalog_objects WHERE mark < ? AND uploaded < ?', pass, started).toArray()) {
      if (this.tables.drop(key)) result.removed++;
    }
    this.sql.exec('DELETE FROM catalog_rejected WHERE mark < ?', pass);
    this.sql.exec(`DELETE FROM catalog_meta WHERE name = 'started'`);
    this.setMeta('pass', pass + 1);
    this.sql.exec(`DELETE FROM catalog_meta WHERE name = 'cursor'`);
    return { ...result, done: true };
  }

  /** The logs read since the last call, by key. */
  takeReads(): Map<string, ReadObject> {
    const reads = this.reads;
    this.reads = new Map();
    return reads;
  }

  /** The current reconcile pass. */
  private pass(): number {
    return this.meta<number>('pass') ?? 1;
  }

  /** {@link index}, except that an object that is not a dsh log loses its row and is remembered by etag instead of failing. */
  private async indexOrReject(prefix: string, key: string, limits: CatalogLimits, known?: CatalogObjectInfo, pass?: number): Promise<Indexed> {
    try {
      return await this.index(prefix, key, limits, known, pass);
    } catch (error) {
      if (!(error instanceof SessionReferenceError) || error.code !== 'SESSION_REFERENCE_INVALID_LOG') throw error;
      const etag = known?.etag ?? (await r2(`head(${describeValue(key)})`, () => this.bucket.head(prefix + key)))?.etag;
      if (etag !== undefined) {
        this.sql.exec('INSERT OR REPLACE INTO catalog_rejected(key, etag, mark) VALUES (?, ?, ?)', key, etag, this.pass());
      }
      return this.tables.drop(key) ? { outcome: 'gone' } : { outcome: 'same' };
    }
  }

  private gone(key: string): Indexed {
    return { outcome: this.tables.drop(key) ? 'gone' : 'same' };
  }

  private meta<T>(name: string): T | undefined {
    return this.sql.exec<{ value: never }>('SELECT value FROM catalog_meta WHERE name = ?', name).toArray()[0]?.value as T | undefined;
  }

  private setMeta(name: string, value: string | number): void {
    this.sql.exec('INSERT OR REPLACE INTO catalog_meta(name, value) VALUES (?, ?)', name, value);
  }
}

/** The notification's fields the catalog reads, checked. */
function readNotification(note: unknown): { action: string; key: string; eTag: string | undefined; time: number } {
  const { action, object, eventTime } = Object(note) as { action?: unknown; object?: unknown; eventTime?: unknown };
  const { key, eTag } = Object(object) as { key?: unknown; eTag?: unknown };
  const time = typeof eventTime === 'string' ? Date.parse(eventTime) : NaN;
  if (typeof action !== 'string' || typeof key !== 'string' || !Number.isFinite(time)) {
    throw fail('INVALID_ARGUMENT', `an R2 event notification needs a string action, object.key and an ISO eventTime, got ${describeValue(note)}`);
  }
  return { action, key, eTag: typeof eTag === 'string' ? eTag : undefined, time };
}
