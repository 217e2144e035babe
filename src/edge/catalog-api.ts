/**
 * The catalog as the Worker calls it (SPEC §17.5): the RPC methods of a tenant's `SessionCatalog`
 * Durable Object, as fixed by the contract between the Worker and the catalog, and the one place
 * where an error crossing RPC becomes a `SessionReferenceError` again.
 * @module
 */
import { isInstance, SessionReferenceError, SESSION_REFERENCE_ERROR_CODES, type SessionReferenceErrorCode } from '../errors.js';
import type { SessionCandidate } from '../candidates.js';
import type { SessionSearchHit } from '../search/search.js';

/** One log object in a tenant's catalog. */
export interface CatalogRow {
  /** The tenant-relative key (`{path}` of `PUT /sessions/{path}`). */
  key: string;
  sessionId: string;
  /** R2's etag of the object. */
  etag: string;
  /** Bytes of the object. */
  size: number;
  /** Upload time, ms since the epoch. */
  uploaded: number;
  /** The header's `version`. */
  version: number;
  createdAt: string | number;
  cwd?: string;
  title?: string;
  capturedThroughSeq: number | null;
}

/** What one reconcile page did. */
export interface ReconcilePage {
  done: boolean;
  added: number;
  changed: number;
  removed: number;
}

/** The RPC surface of a tenant's catalog the Worker uses. */
export interface CatalogApi {
  indexObject(prefix: string, key: string): Promise<CatalogRow | undefined>;
  removeObject(key: string, eventTime?: number): Promise<void>;
  applyNotification(prefix: string, note: unknown): Promise<void>;
  reconcile(prefix: string, options?: { pageSize?: number }): Promise<ReconcilePage>;
  candidates(query: { as: string; q?: string; limit?: number; titles?: boolean; match?: 'substring' | 'words' }): Promise<SessionCandidate[]>;
  search(query: { as: string; q: string; limit?: number }): Promise<SessionSearchHit[]>;
  locate(sessionIds: string[]): Promise<(CatalogRow | undefined)[]>;
  rows(cursor?: string, limit?: number): Promise<{ rows: CatalogRow[]; cursor?: string }>;
}

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
