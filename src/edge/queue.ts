/**
 * R2 event notifications (SPEC §17.6): the `queue` handler applies each `object-create` and
 * `object-delete` notification to the catalog of the tenant whose prefix holds the key, acks it,
 * and asks for a retry of any that failed (an R2 or catalog failure). Keys outside `TENANT_PREFIX`
 * and malformed notifications are acked and dropped (no retry can fix them).
 * @module
 */
import { isInstance } from '../errors.js';
import { callCatalog } from './catalog-api.js';
import type { R2EventNotification } from './catalog/index.js';
import { catalogOf, logLimits, tenantOfKey, type EdgeEnv } from './env.js';

function keyOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const object = (body as { object?: unknown }).object;
  if (typeof object !== 'object' || object === null) return undefined;
  const key = (object as { key?: unknown }).key;
  return typeof key === 'string' ? key : undefined;
}

/** Applies a batch of notifications, one message at a time; each is acked or retried on its own. */
export async function applyNotifications(batch: MessageBatch<unknown>, env: EdgeEnv): Promise<void> {
  for (const message of batch.messages) {
    const key = keyOf(message.body);
    const owner = key === undefined ? undefined : tenantOfKey(env, key);
    if (owner === undefined) {
      if (key === undefined) console.warn('dsh-session-reference edge: a queue message that is not an R2 event notification was dropped');
      message.ack();
      continue;
    }
    try {
      await callCatalog(() => catalogOf(env, owner.tenant).applyNotification(owner.prefix, message.body as R2EventNotification, logLimits(env)));
      message.ack();
    } catch (error) {
      // A configuration error fails the batch as checkEnv does (issue 27): retried, nothing written.
      if (isInstance(error) && error.code === 'SESSION_REFERENCE_INVALID_CONFIG') throw error;
      if (isInstance(error) && error.code === 'SESSION_REFERENCE_INVALID_ARGUMENT') {
        // A malformed notification: no retry can fix it.
        console.warn(`dsh-session-reference edge: notification for ${JSON.stringify(key)} dropped: ${error.message}`);
        message.ack();
      } else {
        console.error(`dsh-session-reference edge: notification for ${JSON.stringify(key)} failed; retried`, error);
        message.retry();
      }
    }
  }
}
