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
import { CRON_CATALOG, UNSEEN_PAGE, type CronPlace, type ReconcileResult } from './catalog/index.js';
import { bucketOf, catalogOf, logLimits, settingNumber, tenantOfSegment, tenantRoot, type EdgeEnv } from './env.js';

/** Reconcile pages one invocation runs for one tenant, at most (each is one R2 list plus the reads of what changed). */
export const RECONCILE_PAGES_PER_CALL = 10;

/**
 * Subrequests one Cron invocation makes at most (issue 27): its listings of tenant folders (one R2
 * `list` each), its reconcile pages (one catalog call each; the R2 reads a page makes are the
 * catalog object's own subrequests) and the two calls that load and save its place. Under the 50
 * subrequests a Workers Free invocation may make; the next invocation resumes where this one stopped.
 */
export const CRON_SUBREQUESTS = 40;

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
 * The tenant of a folder `root` + encoded + `/`, or `undefined` when the folder is not under
 * `root`, not the tenant's canonical spelling (`tenantSegment`), or empty: another spelling of
 * the same tenant (`alice@x` beside `alice%40x`, `%2f` beside `%2F`) never feeds its catalog
 * (SPEC §17.3), as the routes and the queue ignore it.
 */
function canonicalTenant(root: string, folder: string): string | undefined {
  // `tenants//` names no tenant (a tenant is a non-empty string; `''` keeps the cron's place).
  return folder.startsWith(root) && folder.endsWith('/') ? tenantOfSegment(folder.slice(root.length, -1)) : undefined;
}

/** One Cron invocation's walk: its subrequest budget, its place, and what it did. */
class CronWalk {
  budget = CRON_SUBREQUESTS - 2;
  finished = 0;
  readonly failed: string[] = [];
  /** Tenant folders R2 listed in this invocation (saved as seen in this round at its end). */
  readonly seen = new Set<string>();
  roundDone = false;

  constructor(
    private readonly env: EdgeEnv,
    public place: CronPlace,
  ) {}

  /**
   * Reconciles the tenant of `folder` (up to the budget's pages); false when the budget ran out
   * before its pass ended (the walk stops: the folder is taken up again first next time).
   */
  async visit(folder: string, tenant: string): Promise<boolean> {
    try {
      const { total, pages } = await reconcilePages(catalogOf(this.env, tenant), folder, this.env, Math.min(this.budget, RECONCILE_PAGES_PER_CALL));
      this.budget -= pages;
      if (!total.done) return false;
      this.finished++;
    } catch (error) {
      if (isInstance(error) && error.code === 'SESSION_REFERENCE_INVALID_CONFIG') throw error;
      this.budget--;
      this.failed.push(folder);
      console.error(`dsh-session-reference edge: reconcile of tenant prefix ${JSON.stringify(folder)} failed`, error);
    }
    return true;
  }
}

/**
 * The Cron Trigger (SPEC §17.6, issue 27): continues the round over the tenants where the last
 * invocation stopped, and reconciles each tenant (up to {@link RECONCILE_PAGES_PER_CALL} pages)
 * until {@link CRON_SUBREQUESTS} are spent; a tenant not finished is taken up again first next
 * time (its own cursor is kept in its catalog). A round has two parts: the tenant folders under
 * `TENANT_PREFIX` that R2 lists (its delimited listing, in key order), then the folders a catalog
 * was fed from that R2 no longer listed (a tenant whose every object was deleted straight in R2:
 * only a reconcile removes its rows). After both, the next invocation starts a new round. A
 * tenant that fails is logged and passed over, and the invocation then throws
 * `SESSION_REFERENCE_READ_FAILED` naming how many failed (a failed Cron event, as operators see
 * it); a configuration error stops at once and is thrown as it is.
 * @returns how many tenants this invocation finished.
 */
export async function reconcileAll(env: EdgeEnv): Promise<number> {
  const keeper = catalogOf(env, CRON_CATALOG);
  const [bucket, root] = [bucketOf(env), tenantRoot(env)];
  const walk = new CronWalk(env, (await callCatalog(() => keeper.cronPlace())) ?? {});
  while (walk.budget > 0 && !walk.roundDone) {
    walk.budget--;
    const more = walk.place.known === true ? await walkKnown(walk, keeper, root) : await walkListed(walk, bucket, root);
    if (!more) break;
  }
  await callCatalog(() => keeper.saveCronPlace(walk.place, [...walk.seen], walk.roundDone));
  if (walk.failed.length > 0) throw fail('READ_FAILED', `the reconcile of ${walk.failed.length} tenant prefix(es) failed (see the log); the others ran`);
  return walk.finished;
}

/** One page of R2's listing of tenant folders; false when the walk must stop here. */
async function walkListed(walk: CronWalk, bucket: R2Bucket, root: string): Promise<boolean> {
  const { place } = walk;
  const listing = await bucket.list({ prefix: root, delimiter: '/', ...(place.cursor !== undefined && { cursor: place.cursor }) });
  for (const folder of listing.delimitedPrefixes) {
    if (place.after !== undefined && folder <= place.after) continue;
    if (walk.budget <= 0) return false;
    const tenant = canonicalTenant(root, folder);
    if (tenant !== undefined) {
      walk.seen.add(folder);
      if (!(await walk.visit(folder, tenant))) return false;
    }
    walk.place = { ...walk.place, after: folder };
  }
  walk.place = listing.truncated && listing.cursor !== undefined ? { cursor: listing.cursor } : { known: true };
  return true;
}

/** One page of the known folders R2 did not list in this round; false when the walk must stop here. */
async function walkKnown(walk: CronWalk, keeper: CatalogApi, root: string): Promise<boolean> {
  const folders = await callCatalog(() => keeper.unseenFolders(walk.place.after));
  for (const folder of folders) {
    if (walk.budget <= 0) return false;
    const tenant = walk.seen.has(folder) ? undefined : canonicalTenant(root, folder);
    if (tenant !== undefined && !(await walk.visit(folder, tenant))) return false;
    walk.place = { known: true, after: folder };
  }
  if (folders.length < UNSEEN_PAGE) {
    walk.place = {};
    walk.roundDone = true;
  }
  return true;
}
