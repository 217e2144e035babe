/**
 * The {@link SqlHost} of SQLite's WebAssembly build (SPEC §16.5): an in-memory database per index,
 * which a host keeps as bytes (`sqlite3_serialize`) and gives back (`sqlite3_deserialize`).
 * Only the service's search chunk imports it; the edge catalog runs the engine on its Durable
 * Object's own SQLite instead (see `sql-host.ts`).
 * @module
 */
import { loadSqlite, type Database, type PreparedStatement, type Sqlite3Static } from './sqlite.js';
import type { SqlHost, SqlValue } from './sql-host.js';

/** Closes the database of a host that was collected without being closed. */
const finalizer = typeof FinalizationRegistry === 'undefined' ? undefined : new FinalizationRegistry<Database>((db) => db.close());

/** A {@link SqlHost} over one in-memory database of SQLite's WebAssembly build. */
export class SqliteWasmHost implements SqlHost {
  /** Statements prepared once (SQL text → statement); the database finalizes them when it closes. */
  private readonly statements = new Map<string, PreparedStatement>();
  /** True inside {@link transaction}. */
  private inTransaction = false;

  private constructor(
    private readonly sqlite: Sqlite3Static,
    private readonly db: Database,
  ) {
    finalizer?.register(this, db, this);
  }

  /**
   * A new, empty in-memory database.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` where WebAssembly cannot run (see `loadSqlite`).
   */
  static async open(): Promise<SqliteWasmHost> {
    const sqlite = await loadSqlite();
    return new SqliteWasmHost(sqlite, new sqlite.oo1.DB(':memory:'));
  }

  /**
   * A database holding a copy of the database file `file` (bytes a host kept, so untrusted): SQLite
   * runs it in defensive mode, with `trusted_schema` off and cell sizes checked as pages are read,
   * so a damaged file fails the statement that reads it (SQLITE_CORRUPT), never more.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` where WebAssembly cannot run;
   * a SQLite error when `file` is no database.
   */
  static async fromFile(file: Uint8Array): Promise<SqliteWasmHost> {
    const sqlite = await loadSqlite();
    const { capi, wasm } = sqlite;
    const db = new sqlite.oo1.DB(':memory:');
    try {
      db.checkRc(capi.sqlite3_db_config(db, capi.SQLITE_DBCONFIG_DEFENSIVE, 1, 0));
      // A plain view: SQLite's copy picks its heap by the array's constructor, which a subclass (Node's Buffer) is not.
      const pointer = wasm.allocFromTypedArray(new Uint8Array(file.buffer, file.byteOffset, file.byteLength));
      db.checkRc(capi.sqlite3_deserialize(db, 'main', pointer, file.length, file.length, capi.SQLITE_DESERIALIZE_FREEONCLOSE | capi.SQLITE_DESERIALIZE_RESIZEABLE));
      db.exec('PRAGMA trusted_schema = OFF; PRAGMA cell_size_check = ON');
      return new SqliteWasmHost(sqlite, db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Runs one statement with `bindings` to completion (see {@link SqlHost.run}); the statement is prepared once per SQL text. */
  run(sql: string, ...bindings: SqlValue[]): void {
    const statement = this.statement(sql);
    try {
      if (bindings.length > 0) statement.bind(bindings);
      while (statement.step());
    } finally {
      statement.reset();
    }
  }

  /** Every row of one statement with `bindings`, as arrays (see {@link SqlHost.all}); 64-bit integers come back as numbers. */
  all(sql: string, ...bindings: SqlValue[]): SqlValue[][] {
    const statement = this.statement(sql);
    const rows: SqlValue[][] = [];
    try {
      if (bindings.length > 0) statement.bind(bindings);
      while (statement.step()) rows.push((statement.get([]) as unknown[]).map(toValue));
    } finally {
      statement.reset();
    }
    return rows;
  }

  /** Runs `fn` between `BEGIN` and `COMMIT`, rolled back when it throws; a call inside `fn` joins the transaction (see {@link SqlHost.transaction}). */
  transaction<T>(fn: () => T): T {
    if (this.inTransaction) return fn();
    this.db.exec('BEGIN');
    this.inTransaction = true;
    try {
      const result = fn();
      this.db.exec('COMMIT');
      return result;
    } catch (error) {
      this.db.exec('ROLLBACK');
      throw error;
    } finally {
      this.inTransaction = false;
    }
  }

  /** Gives the pages that deleted rows freed back (`VACUUM`), so the file is no larger than what it holds. */
  vacuum(): void {
    this.db.exec('VACUUM');
  }

  /** The database file (`sqlite3_serialize`): a copy, the same bytes for the same pages. */
  toFile(): Uint8Array {
    return this.sqlite.capi.sqlite3_js_db_export(this.db);
  }

  /** Frees the database now (a host that is dropped is freed when collected). */
  close(): void {
    finalizer?.unregister(this);
    this.db.close();
  }

  private statement(sql: string): PreparedStatement {
    let statement = this.statements.get(sql);
    if (statement === undefined) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }
}

/** A column as a {@link SqlValue}: SQLite's 64-bit integers come back as numbers. */
function toValue(value: unknown): SqlValue {
  return typeof value === 'bigint' ? Number(value) : (value as SqlValue);
}
