/**
 * Repairing catalogs from the bucket (SPEC §17.6): `POST /reconcile` and the Cron Trigger re-list a
 * tenant's prefix through the catalog's resumable `reconcile`, page by page, within a bounded
 * number of pages per invocation (the cursor is kept in the catalog: the next call resumes).
 * @module
 */
import { callCatalog, type CatalogApi } from './catalog-api.js';
import type { ReconcileResult } from './catalog/index.js';
import { bucketOf, catalogOf, logLimits, settingNumber, tenantRoot, type EdgeEnv } from './env.js';

/** Reconcile pages one invocation runs for one tenant, at most (each is one R2 list plus the reads of what changed). */
export const RECONCILE_PAGES_PER_CALL = 10;

/** Runs up to {@link RECONCILE_PAGES_PER_CALL} pages of the tenant's reconcile and sums them. */
export async function reconcileTenant(catalog: CatalogApi, prefix: string, env: EdgeEnv): Promise<ReconcileResult> {
  const pageSize = settingNumber(env, 'RECONCILE_PAGE_SIZE');
  const total: ReconcileResult = { done: false, added: 0, changed: 0, removed: 0 };
  for (let page = 0; page < RECONCILE_PAGES_PER_CALL && !total.done; page++) {
    const result = await callCatalog(() => catalog.reconcile(prefix, { ...logLimits(env), ...(pageSize !== undefined && { pageSize }) }));
    total.done = result.done;
    total.added += result.added;
    total.changed += result.changed;
    total.removed += result.removed;
  }
  return total;
}

/**
 * The Cron Trigger: every tenant found under `TENANT_PREFIX` (R2's delimited listing) gets one
 * {@link reconcileTenant} call; a folder whose name is not the tenant's canonical
 * `encodeURIComponent` spelling is skipped. A tenant that fails is logged and the others still run.
 */
export async function reconcileAll(env: EdgeEnv): Promise<void> {
  const bucket = bucketOf(env);
  const root = tenantRoot(env);
  let cursor: string | undefined;
  do {
    const listing = await bucket.list({ prefix: root, delimiter: '/', ...(cursor !== undefined && { cursor }) });
    for (const tenantPrefix of listing.delimitedPrefixes) {
      const encoded = tenantPrefix.slice(root.length, -1);
      let tenant: string;
      try {
        tenant = decodeURIComponent(encoded);
      } catch {
        continue;
      }
      // Only the canonical spelling of a tenant's folder feeds its catalog (SPEC §17.3): another
      // spelling of the same tenant (`alice@x` beside `alice%40x`, `%2f` beside `%2F`) is ignored,
      // as the routes and the queue ignore it.
      if (encodeURIComponent(tenant) !== encoded) continue;
      try {
        await reconcileTenant(catalogOf(env, tenant), tenantPrefix, env);
      } catch (error) {
        console.error(`dsh-session-reference edge: reconcile of tenant prefix ${JSON.stringify(tenantPrefix)} failed`, error);
      }
    }
    cursor = listing.truncated ? listing.cursor : undefined;
  } while (cursor !== undefined);
}
