/**
 * `/search` from the catalog (SPEC §16, §17.5: one engine, two SQLite hosts): the search engine of
 * `searchSessions` (`SessionSearchIndex`, its schema and `findHits`) run on the Durable Object's own
 * SQLite through the engine's SQL seam (`SqlHost`), over the winners of the tenant's sessions.
 * @module
 */
import type { DurableObjectStorage, SqlStorageValue } from 'cloudflare:workers';
import { isIndexDamage, SessionSearchIndex } from '../../search/engine.js';
import { findHits, type ListedSession, type SessionSearchHit } from '../../search/hits.js';
import * as kit from '../../search/kit.js';
import { useRoot } from '../../search/root.js';
import type { SqlHost, SqlValue } from '../../search/sql-host.js';
import type { IndexedSession } from '../../search/stored.js';
import { queryWords } from '../../search/words.js';

/** UTF-8 bytes of conversation text kept per session (SPEC §16.3): the library's default `maxIndexBytes`. */
export const CATALOG_MAX_INDEX_BYTES = 256 * 1024;

/** The engine's {@link SqlHost} over a Durable Object's SQLite (blobs cross as `ArrayBuffer` there). */
export function durableObjectSqlHost(storage: DurableObjectStorage): SqlHost {
  const toBinding = (value: SqlValue) => (value instanceof Uint8Array ? value.slice().buffer : value);
  const fromValue = (value: SqlStorageValue) => (value instanceof ArrayBuffer ? new Uint8Array(value) : value);
  return {
    run: (sql, ...bindings) => void storage.sql.exec(sql, ...bindings.map(toBinding)).toArray(),
    all: (sql, ...bindings) => [...storage.sql.exec(sql, ...bindings.map(toBinding)).raw()].map((row) => row.map(fromValue)),
    transaction: (work) => storage.transactionSync(work),
  };
}

/** The search index of a catalog. */
export class CatalogSearch {
  private readonly sql: SqlHost;
  private index: SessionSearchIndex;
  /** True when the index was made anew over a catalog that may hold rows: every log must be indexed again. */
  readonly fresh: boolean;

  /** `drop`: the catalog's rows were dropped, so is the index (it would hold sessions no row lists). */
  constructor(storage: DurableObjectStorage, drop = false) {
    useRoot(kit);
    this.sql = durableObjectSqlHost(storage);
    if (drop) SessionSearchIndex.drop(this.sql);
    const { index, fresh } = SessionSearchIndex.attach(this.sql, CATALOG_MAX_INDEX_BYTES);
    this.index = index;
    this.fresh = fresh;
  }

  /** Indexes `sessions` (replacing what it held of their ids). */
  put(sessions: readonly IndexedSession[]): Promise<void> {
    return sessions.length === 0 ? Promise.resolve() : this.index.put(sessions);
  }

  /** Forgets the sessions with `ids`. */
  remove(ids: readonly string[]): void {
    this.index.remove(ids);
  }

  /**
   * The hits of `query` (SPEC §16.2; a non-blank query), the agent `agentId` never one, ranked
   * with `ownCwd`; `listedOf` gives the listed sessions among matched ids. A damaged index
   * (`isIndexDamage`) is dropped and made anew, and `onRebuild` called (the catalog then reads every
   * log again); the answer is then that of the new index.
   */
  async search(query: string, agentId: string, ownCwd: unknown, limit: number, listedOf: (ids: readonly string[]) => ListedSession[], onRebuild: () => void): Promise<SessionSearchHit[]> {
    const words = await queryWords(query, async (work) => {
      await kit.pace(work);
    });
    if (words.length === 0) return [];
    try {
      return await findHits(this.index, listedOf, words, agentId, ownCwd, limit, undefined);
    } catch (error) {
      if (!isIndexDamage(error)) throw error;
      SessionSearchIndex.drop(this.sql);
      this.index = SessionSearchIndex.create(this.sql, CATALOG_MAX_INDEX_BYTES);
      onRebuild();
      return findHits(this.index, listedOf, words, agentId, ownCwd, limit, undefined);
    }
  }
}
