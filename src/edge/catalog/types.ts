/**
 * The shapes the catalog takes and answers over Workers RPC (the contract between the edge Worker
 * and its `SessionCatalog`, SPEC §17.5): plain, structured-clonable data.
 * @module
 */

/** One log object of a tenant's catalog (SPEC §17.5). */
export interface CatalogRow {
  /** The tenant-relative key (`{path}` of SPEC §17.4), without the tenant's prefix. */
  key: string;
  /** The `id` of the log's header. */
  sessionId: string;
  /** R2's etag of the object. */
  etag: string;
  /** The object's size in bytes. */
  size: number;
  /** Upload time, milliseconds since the epoch (R2's `uploaded`). */
  uploaded: number;
  /** The header's `version` (SPEC §17.5: of two objects with one id, the higher wins). */
  version: number;
  /** The header's `createdAt`, epoch milliseconds (a number, as the store reads headers, SPEC §11.1). */
  createdAt: number;
  /** The header's cwd, when a non-empty string. */
  cwd?: string;
  /** The latest title as a label (cleaned as SPEC §6.6), when one is left after cleaning. */
  title?: string;
  /** `seq` of the log's last event, `null` for a log without events. */
  capturedThroughSeq: number | null;
}

/** Bounds of one log read by the catalog. */
export interface CatalogLimits {
  /** Decoded bytes one log read may pass (SPEC §11.2.1); default the store's 4 GiB. */
  maxLogBytes?: number;
}

/** What `candidates` takes: the `GET /candidates` query of SPEC §17.4. */
export interface CatalogCandidateQuery {
  /** The session the prompt is for: never offered, and its cwd ranks (SPEC §6.3); it need not be in the catalog. */
  as: string;
  /** The agent's cwd: ranks instead of the cwd of `as`'s row (absent: the row's; neither: none). */
  cwd?: string | undefined;
  /** The text typed after `@` (SPEC §6.2); empty or absent keeps every session. */
  q?: string | undefined;
  /** At most this many rows (a positive safe integer; default 50, the library's `candidateLimit`). */
  limit?: number | undefined;
  /** Match titles too (SPEC §6.7, `matchTitles`). */
  titles?: boolean | undefined;
  /** `'substring'` (default, SPEC §6.2) or `'words'` (SPEC §15.10). */
  match?: 'substring' | 'words' | undefined;
}

/** What `search` takes: the `GET /search` query of SPEC §17.4. */
export interface CatalogSearchQuery {
  /** The session the prompt is for, left out of the hits; it need not be in the catalog. */
  as: string;
  /** The agent's cwd (ranks ties, SPEC §16.3) instead of the cwd of `as`'s row. */
  cwd?: string | undefined;
  q: string;
  limit?: number | undefined;
}

/** One page of `rows` (`GET /sessions`). */
export interface CatalogRowsPage {
  rows: CatalogRow[];
  /** Where the next page starts; absent on the last page. */
  cursor?: string;
}

/** What one `reconcile` call did (SPEC §17.6). */
export interface ReconcileResult {
  /** True when this page finished a full pass (rows not seen in it were removed). */
  done: boolean;
  added: number;
  changed: number;
  removed: number;
}

/**
 * An R2 event notification as a Queue delivers it (SPEC §17.6): the fields the catalog reads.
 * `action` is `PutObject`, `CopyObject`, `CompleteMultipartUpload` (object-create) or
 * `DeleteObject`, `LifecycleDeletion` (object-delete); `eventTime` is ISO 8601.
 */
export interface R2EventNotification {
  account?: string;
  bucket?: string;
  action: string;
  object: { key: string; size?: number; eTag?: string };
  eventTime: string;
  copySource?: { bucket: string; object: string };
}

/**
 * Where the Cron Trigger's round over the tenants stands (issue 27): the R2 listing `cursor` of
 * the page of tenant folders it is in (none: the first page), and the last tenant folder of that
 * page it finished (`after`; none: none yet). With `known`, the listing is done and the round is
 * visiting the known folders R2 no longer listed, `after` the last one finished.
 */
export interface CronPlace {
  cursor?: string;
  after?: string;
  known?: true;
}
