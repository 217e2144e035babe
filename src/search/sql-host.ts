/**
 * The SQL seam of the search engine (SPEC §16.5, §17.5: one engine, two SQLite hosts). The engine
 * (`engine.ts`) runs its statements through a {@link SqlHost} and nothing else, so the same engine
 * and schema run on SQLite's WebAssembly build (`sqlite-host.ts`, the service's index) and on a
 * Cloudflare Durable Object's own SQLite (`ctx.storage.sql`, the edge catalog). This module
 * imports nothing: the Durable Object path never bundles SQLite's WebAssembly build or its
 * JavaScript.
 * @module
 */

/**
 * A value SQLite stores or returns, as a {@link SqlHost} hands it over: `null`, a number (integers
 * within ±2^53; SQLite's 64-bit integers beyond that are not used by the engine), a string, or a
 * blob as a `Uint8Array`.
 */
export type SqlValue = null | number | string | Uint8Array;

/**
 * One SQLite database as the search engine uses it: one statement at a time, positional bindings,
 * rows as arrays, transactions around a synchronous function. The engine never asks for anything
 * else (no prepared-statement handles, no `BEGIN`/`COMMIT`, no export), so a host is a thin
 * adapter:
 *
 * - SQLite's WebAssembly build: `sqlite-host.ts` ({@link SqlHost} over an `oo1.DB`, statements
 *   prepared once per SQL text).
 * - A Durable Object's `ctx.storage.sql` (SQLite-backed class; FTS5, fts5vocab and the JSON
 *   functions are built in):
 *   ```ts
 *   const toBinding = (v: SqlValue) => (v instanceof Uint8Array ? v.slice().buffer : v);
 *   const fromValue = (v: unknown) => (v instanceof ArrayBuffer ? new Uint8Array(v) : v) as SqlValue;
 *   const host: SqlHost = {
 *     run: (sql, ...bindings) => void ctx.storage.sql.exec(sql, ...bindings.map(toBinding)).toArray(),
 *     all: (sql, ...bindings) => [...ctx.storage.sql.exec(sql, ...bindings.map(toBinding)).raw()].map((row) => row.map(fromValue)),
 *     transaction: (fn) => ctx.storage.transactionSync(fn),
 *   };
 *   ```
 *   `exec` caches its statements itself; blobs go in and come out as `ArrayBuffer`, hence the two
 *   conversions; `transactionSync` nests (a savepoint) and rolls back when `fn` throws.
 *
 * Every method throws what the database throws (a SQLite error: the engine's caller rebuilds the
 * index, SPEC §16.4).
 */
export interface SqlHost {
  /**
   * Runs one statement (SQL text with `?` or `?NNN` placeholders) with `bindings` in order, to
   * completion; its rows, if any, are dropped.
   */
  run(sql: string, ...bindings: SqlValue[]): void;
  /** Runs one statement with `bindings` and returns every row, each as an array of its columns in order. */
  all(sql: string, ...bindings: SqlValue[]): SqlValue[][];
  /**
   * Runs `fn` (synchronous: it must not await) in a transaction: everything `fn` wrote is committed
   * when it returns, and nothing when it throws (the error is thrown on). A call inside `fn` runs
   * in the same transaction.
   */
  transaction<T>(fn: () => T): T;
  /** Frees the database, for hosts whose database lives only as long as the index (optional). */
  close?(): void;
}
