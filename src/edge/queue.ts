/**
 * R2 event notifications (SPEC §17.6): the `queue` handler applies each `object-create` and
 * `object-delete` notification to the catalog of the tenant whose prefix holds the key, acks it,
 * and asks for a retry of any that failed. Keys outside `TENANT_PREFIX` are acked and ignored.
 * @module
 */
import { callCatalog } from './catalog-api.js';
import { catalogOf, tenantOfKey, type EdgeEnv } from './env.js';

/** An R2 event notification as the queue delivers it (the fields read here). */
export interface R2EventNotification {
  account?: string;
  bucket?: string;
  action: string;
  object: { key: string; size?: number; eTag?: string };
  eventTime?: string;
  [key: string]: unknown;
}

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
      await callCatalog(() => catalogOf(env, owner.tenant).applyNotification(owner.prefix, message.body as R2EventNotification));
      message.ack();
    } catch (error) {
      console.error(`dsh-session-reference edge: notification for ${JSON.stringify(key)} failed; retried`, error);
      message.retry();
    }
  }
}
