/**
 * Repairing catalogs from the bucket (SPEC §17.6): `POST /reconcile` and the Cron Trigger re-list a
 * tenant's prefix through the catalog's resumable `reconcile`, page by page, within a bounded
 * number of pages per invocation (the cursor is kept in the catalog: the next call resumes). The
 * Cron Trigger walks the tenants the same way: a bounded number of subrequests per invocation,
 * its place among the tenants kept for the next invocation (issue 27).
 * @module
 */
import { fail, isInstance } from '../errors.js';
import { callCatalog, type CatalogApi } from './catalog-api.js';
import type { CronPlace, ReconcileResult } from './catalog/index.js';
import { bucketOf, catalogOf, logLimits, settingNumber, tenantRoot, type EdgeEnv } from './env.js';

/** Reconcile pages one invocation runs for one tenant, at most (each is one R2 list plus the reads of what changed). */
export const RECONCILE_PAGES_PER_CALL = 10;

/**
 * Subrequests one Cron invocation makes at most (issue 27): its listings of tenant folders (one R2
 * `list` each), its reconcile pages (one catalog call each; the R2 reads a page makes are the
 * catalog object's own subrequests) and the two calls that load and save its place. Under the 50
 * subrequests a Workers Free invocation may make; the next invocation resumes where this one stopped.
 */
export const CRON_SUBREQUESTS = 40;

/** The catalog object that keeps the Cron Trigger's place: `''` is never a tenant (SPEC §17.3: a non-empty string). */
export const CRON_CATALOG = '';

/** Runs up to `maxPages` pages of the tenant's reconcile; the sum of the pages and how many ran. */
async function reconcilePages(catalog: CatalogApi, prefix: string, env: EdgeEnv, maxPages: number): Promise<{ total: ReconcileResult; pages: number }> {
  const pageSize = settingNumber(env, 'RECONCILE_PAGE_SIZE');
  const total: ReconcileResult = { done: false, added: 0, changed: 0, removed: 0 };
  let pages = 0;
  while (pages < maxPages && !total.done) {
    pages++;
    const result = await callCatalog(() => catalog.reconcile(prefix, { ...logLimits(env), ...(pageSize !== undefined && { pageSize }) }));
    total.done = result.done;
    total.added += result.added;
    total.changed += result.changed;
    total.removed += result.removed;
  }
  return { total, pages };
}

/** Runs up to {@link RECONCILE_PAGES_PER_CALL} pages of the tenant's reconcile and sums them. */
export async function reconcileTenant(catalog: CatalogApi, prefix: string, env: EdgeEnv): Promise<ReconcileResult> {
  return (await reconcilePages(catalog, prefix, env, RECONCILE_PAGES_PER_CALL)).total;
}

/**
 * The tenant of a folder `root` + encoded + `/`, or `undefined` when the folder is not the
 * tenant's canonical `encodeURIComponent` spelling, or empty: another spelling of the same tenant
 * (`alice@x` beside `alice%40x`, `%2f` beside `%2F`) never feeds its catalog (SPEC §17.3), as the
 * routes and the queue ignore it.
 */
function canonicalTenant(root: string, folder: string): string | undefined {
  const encoded = folder.slice(root.length, -1);
  try {
    const tenant = decodeURIComponent(encoded);
    // `tenants//` names no tenant (a tenant is a non-empty string; `''` keeps the cron's place).
    return tenant !== '' && encodeURIComponent(tenant) === encoded ? tenant : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The Cron Trigger (SPEC §17.6, issue 27): continues the round over the tenant folders under
 * `TENANT_PREFIX` (R2's delimited listing, in key order) where the last invocation stopped, and
 * reconciles each tenant (up to {@link RECONCILE_PAGES_PER_CALL} pages) until
 * {@link CRON_SUBREQUESTS} are spent; a tenant not finished is taken up again first next time
 * (its own cursor is kept in its catalog). After the last folder the next invocation starts a
 * new round. A tenant that fails is logged and passed over, and the invocation then throws
 * `SESSION_REFERENCE_READ_FAILED` naming how many failed (a failed Cron event, as operators see
 * it); a configuration error stops at once and is thrown as it is.
 * @returns how many tenants this invocation finished.
 */
export async function reconcileAll(env: EdgeEnv): Promise<number> {
  const bucket = bucketOf(env);
  const root = tenantRoot(env);
  const keeper = catalogOf(env, CRON_CATALOG);
  let place: CronPlace = (await callCatalog(() => keeper.cronPlace())) ?? {};
  let budget = CRON_SUBREQUESTS - 2;
  let finished = 0;
  const failed: string[] = [];
  round: while (budget > 0) {
    budget--;
    const listing = await bucket.list({ prefix: root, delimiter: '/', ...(place.cursor !== undefined && { cursor: place.cursor }) });
    for (const folder of listing.delimitedPrefixes) {
      if (place.after !== undefined && folder <= place.after) continue;
      if (budget <= 0) break round;
      const tenant = canonicalTenant(root, folder);
      if (tenant !== undefined) {
        try {
          const { total, pages } = await reconcilePages(catalogOf(env, tenant), folder, env, Math.min(budget, RECONCILE_PAGES_PER_CALL));
          budget -= pages;
          if (!total.done) break round;
          finished++;
        } catch (error) {
          if (isInstance(error) && error.code === 'SESSION_REFERENCE_INVALID_CONFIG') throw error;
          budget--;
          failed.push(folder);
          console.error(`dsh-session-reference edge: reconcile of tenant prefix ${JSON.stringify(folder)} failed`, error);
        }
      }
      place = { ...place, after: folder };
    }
    if (!listing.truncated || listing.cursor === undefined) {
      place = {};
      break;
    }
    place = { cursor: listing.cursor };
  }
  const saved = place;
  await callCatalog(() => keeper.saveCronPlace(saved));
  if (failed.length > 0) throw fail('READ_FAILED', `the reconcile of ${failed.length} tenant prefix(es) failed (see the log); the others ran`);
  return finished;
}
