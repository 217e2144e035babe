/**
 * The catalog of the edge service (SPEC §17.5): the `SessionCatalog` Durable Object and the shapes
 * of its RPC methods.
 * @module
 */
export { SessionCatalog, CRON_CATALOG, DEFAULT_CANDIDATE_LIMIT, DEFAULT_ROWS_PAGE, MAX_ROWS_PAGE, type SessionCatalogEnv } from './catalog.js';
export type { CatalogBucket, CatalogObjectBody, CatalogObjectInfo } from './bucket.js';
export { DEFAULT_RECONCILE_PAGE, TOMBSTONE_MS } from './freshness.js';
export { UNSEEN_PAGE } from './cron-folders.js';
export type { CatalogCandidateQuery, CatalogLimits, CatalogRow, CatalogRowsPage, CatalogSearchQuery, CronPlace, R2EventNotification, ReconcileResult } from './types.js';
