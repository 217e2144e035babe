/**
 * The edge service (SPEC §17): an authenticated, multi-tenant Cloudflare Worker over dsh session
 * logs in R2, with a catalog per tenant in a SQLite-backed Durable Object. workerd only.
 * A whole Worker:
 * ```ts
 * export { SessionCatalog } from 'dsh-session-reference/edge';
 * import { createEdgeWorker } from 'dsh-session-reference/edge';
 * export default createEdgeWorker();
 * ```
 * @module dsh-session-reference/edge
 */
export { createEdgeWorker, type EdgeWorker } from './worker.js';
export { createEdgeApp, type EdgeOptions } from './app.js';
export type { Authenticate } from './auth.js';
export { NO_AUTH_TENANT, DEFAULT_TENANT_PREFIX, DEFAULT_MAX_UPLOAD_BYTES, EDGE_MAX_LOG_BYTES, type EdgeEnv } from './env.js';
export {
  SessionCatalog,
  type SessionCatalogEnv,
  type CatalogBucket,
  type CatalogObjectBody,
  type CatalogObjectInfo,
  type CatalogRow,
  type CatalogRowsPage,
  type CatalogLimits,
  type CatalogCandidateQuery,
  type CatalogSearchQuery,
  type ReconcileResult,
  type CronPlace,
  type R2EventNotification,
} from './catalog/index.js';
export type { EdgeVariables } from './app.js';
export type { SessionCandidate } from '../candidates.js';
export type { SessionSearchHit } from '../search/hits.js';
export type { SessionSearchSnippet } from '../search/snippets.js';
