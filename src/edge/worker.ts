/**
 * `createEdgeWorker(options?)` (SPEC §17.2): the module Worker's default export — `fetch` (the
 * routes of {@link createEdgeApp}), `queue` (R2 event notifications, §17.6) and `scheduled`
 * (reconcile, §17.6).
 * @module
 */
import { createEdgeApp, type EdgeOptions } from './app.js';
import { checkEnv, type EdgeEnv } from './env.js';
import { applyNotifications } from './queue.js';
import { reconcileAll } from './reconcile.js';

/** The default export of a module Worker, as {@link createEdgeWorker} returns it. */
export interface EdgeWorker<E extends EdgeEnv = EdgeEnv> {
  /** Answers one HTTP request (SPEC §17.3, §17.4). */
  fetch(request: Request, env: E, ctx: ExecutionContext): Response | Promise<Response>;
  /** Applies a batch of R2 event notifications to the tenants' catalogs (SPEC §17.6). */
  queue(batch: MessageBatch<unknown>, env: E, ctx: ExecutionContext): Promise<void>;
  /**
   * The Cron Trigger: reconciles the tenants' catalogs with the bucket, a bounded number of
   * subrequests per invocation, each invocation resuming where the last stopped (SPEC §17.6).
   */
  scheduled(controller: ScheduledController, env: E, ctx: ExecutionContext): Promise<void>;
}

/**
 * The edge service as a whole Worker (SPEC §17.2):
 * `export default createEdgeWorker();` beside `export { SessionCatalog } from 'dsh-session-reference/edge';`,
 * with bindings `SESSIONS` (R2) and `CATALOG` (the `SessionCatalog` namespace).
 *
 * Every handler checks the settings first, as `fetch` does (`checkEnv`, issue 27): with a
 * malformed setting `fetch` answers 500 `SESSION_REFERENCE_INVALID_CONFIG`, and `queue` and
 * `scheduled` throw that same error before any catalog is touched (deny by default: the queue
 * then retries the whole batch, so notifications are applied once the deploy is fixed, and no
 * catalog is written while it is wrong).
 * @param options `{ authenticate?, basePath? }` (see {@link EdgeOptions}).
 */
export function createEdgeWorker<E extends EdgeEnv = EdgeEnv>(options: EdgeOptions<E> = {}): EdgeWorker<E> {
  const app = createEdgeApp<E>(options);
  return {
    fetch: (request, env, ctx) => app.fetch(request, env, ctx),
    queue: async (batch, env) => {
      checkEnv(env, options.authenticate === undefined);
      await applyNotifications(batch, env);
    },
    scheduled: async (_controller, env) => {
      checkEnv(env, options.authenticate === undefined);
      await reconcileAll(env);
    },
  };
}
