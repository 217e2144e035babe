/**
 * The part of workerd's `cloudflare:workers` module the catalog uses (the Durable Object base class
 * and its state), declared structurally: the package carries no Workers type package. Apps that
 * have `@cloudflare/workers-types` or `wrangler types` get the full declarations from there.
 */
declare module 'cloudflare:workers' {
  /** A cursor over the rows of one `sql.exec` (workerd's `SqlStorageCursor`). */
  export interface SqlStorageCursor<Row extends Record<string, SqlStorageValue>> extends Iterable<Row> {
    toArray(): Row[];
    one(): Row;
    raw<R extends SqlStorageValue[] = SqlStorageValue[]>(): IterableIterator<R>;
    readonly rowsRead: number;
    readonly rowsWritten: number;
  }
  export type SqlStorageValue = ArrayBuffer | string | number | null;
  /** A Durable Object's SQLite database (`ctx.storage.sql`). */
  export interface SqlStorage {
    exec<Row extends Record<string, SqlStorageValue> = Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]): SqlStorageCursor<Row>;
    readonly databaseSize: number;
  }
  export interface DurableObjectStorage {
    readonly sql: SqlStorage;
    transactionSync<T>(closure: () => T): T;
  }
  export interface DurableObjectState {
    readonly storage: DurableObjectStorage;
    blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>;
  }
  export abstract class DurableObject<Env = unknown> {
    protected ctx: DurableObjectState;
    protected env: Env;
    constructor(ctx: DurableObjectState, env: Env);
  }
}
