/**
 * The catalog as the Worker calls it (SPEC §17.5): the RPC methods of a tenant's `SessionCatalog`
 * Durable Object, as fixed by the contract between the Worker and the catalog, and the one place
 * where an error crossing RPC becomes a `SessionReferenceError` again.
 * @module
 */
import { isInstance, SessionReferenceError, SESSION_REFERENCE_ERROR_CODES, type SessionReferenceErrorCode } from '../errors.js';
import type { SessionCatalog } from './catalog/index.js';

/**
 * The RPC methods of a tenant's `SessionCatalog` the Worker calls (the contract between the Worker
 * and the catalog, SPEC §17.5), as a Durable Object stub offers them.
 */
export type CatalogApi = Pick<SessionCatalog, 'indexObject' | 'removeObject' | 'applyNotification' | 'reconcile' | 'candidates' | 'search' | 'locate' | 'rows' | 'cronPlace' | 'saveCronPlace' | 'unseenFolders'>;

const CODES = new Set<string>(SESSION_REFERENCE_ERROR_CODES);
const CODED_MESSAGE = /^(SESSION_REFERENCE_[A-Z_]+): ([\s\S]*)$/;

/**
 * An error thrown inside the catalog, as it reaches the Worker (Workers RPC keeps an Error's
 * message, not its class): a `SessionReferenceError` again when its `code` survived (own
 * property, or `CODE: message`, or a JSON `{ code, message }` message); otherwise the error as it is.
 */
export function fromCatalog(error: unknown): unknown {
  if (isInstance(error)) return error;
  if (typeof error !== 'object' || error === null) return error;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof message !== 'string') return error;
  // workerd's refusal to run the catalog on a Durable Object class without SQLite (wrangler's
  // `new_classes` where `new_sqlite_classes` is needed): the deploy's fault, named as such.
  if (message.includes('SQL is not enabled for this Durable Object class')) {
    return new SessionReferenceError(
      'SESSION_REFERENCE_INVALID_CONFIG',
      'CATALOG is bound to a Durable Object class without SQLite storage: declare SessionCatalog under new_sqlite_classes (not new_classes) in the migrations of wrangler.toml',
      { cause: error },
    );
  }
  if (typeof code === 'string' && CODES.has(code)) return new SessionReferenceError(code as SessionReferenceErrorCode, message.replace(CODED_MESSAGE, '$2'));
  const coded = CODED_MESSAGE.exec(message);
  if (coded && CODES.has(coded[1]!)) return new SessionReferenceError(coded[1] as SessionReferenceErrorCode, coded[2]!);
  if (message.startsWith('{')) {
    try {
      const parsed = JSON.parse(message) as { code?: unknown; message?: unknown };
      if (typeof parsed.code === 'string' && CODES.has(parsed.code) && typeof parsed.message === 'string') {
        return new SessionReferenceError(parsed.code as SessionReferenceErrorCode, parsed.message);
      }
    } catch {
      // not JSON: the error as it is
    }
  }
  return error;
}

/** Runs one catalog call, its failure mapped back by {@link fromCatalog}. */
export async function callCatalog<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw fromCatalog(error);
  }
}
