/**
 * The bytes of `exportSearchIndex()` and the option `searchIndex` (SPEC §16.4): the search index
 * of SQLite's WebAssembly build as versioned, checksummed bytes, and back. Only the service's
 * search chunk imports it (a Durable Object's index lives in its storage and is never exported).
 *
 * Layout: a header line, the format and the SHA-256 (hex) of the body, then the body, SQLite's
 * database file (`sqlite3_serialize`), which holds the sessions and what the index was built with
 * (`search_meta`).
 * @module
 */
import { FORMAT, SCHEMA, SessionSearchIndex } from './engine.js';
import type { SqlHost } from './sql-host.js';
import { SqliteWasmHost } from './sqlite-host.js';
import { loadSqlite } from './sqlite.js';

/**
 * A new, empty index in SQLite's WebAssembly build.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` where WebAssembly cannot run (see `loadSqlite`).
 */
export async function createIndex(maxIndexBytes: number): Promise<SessionSearchIndex> {
  return SessionSearchIndex.create(await SqliteWasmHost.open(), maxIndexBytes);
}

/**
 * The versioned, checksummed bytes of `index` (an index of {@link createIndex} or
 * {@link indexFromBytes}). An index compacted since it was last written (see
 * `compactWhenWorn`), or whose file has more than an eighth of its pages free, is vacuumed first:
 * the bytes a host keeps hold the index as it is, not as large as it once was. An index loaded
 * from bytes and not changed since gives those bytes again (a host can tell whether a search
 * changed the index by comparing bytes); indexes of the same sessions reached in another order
 * answer every search alike but may differ in their bytes (rowids, FTS5's segments).
 */
export async function indexToBytes(index: SessionSearchIndex): Promise<Uint8Array> {
  const host = index.sql as SqliteWasmHost;
  const compacted = index.compactWhenWorn();
  const [[free, pages]] = host.all('SELECT (SELECT freelist_count FROM pragma_freelist_count), (SELECT page_count FROM pragma_page_count)') as [[number, number]];
  if (compacted || free * 8 > pages) host.vacuum();
  const body = host.toFile();
  const head = new TextEncoder().encode(`${FORMAT} ${await checksum(body)}\n`);
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head);
  bytes.set(body, head.length);
  return bytes;
}

/**
 * The index in `bytes`, or `undefined` when they are of another format version, another
 * `maxIndexBytes` or another segmenter, or fail the cheap checks of a load: the header, the
 * checksum, a database file SQLite opens, holding exactly the objects {@link createIndex} makes.
 * The caller then rebuilds, never fails (SPEC §16.4). Nothing else is read at load (no
 * `integrity_check`, no session unpacked: the load costs the checksum and the copy, not a pass
 * over the index); damage inside a valid checksum is found where the damaged part is used and
 * throws `DamagedIndexError` there (see `SessionSearchIndex`).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` where WebAssembly cannot run (see `loadSqlite`).
 */
export async function indexFromBytes(bytes: Uint8Array, maxIndexBytes: number): Promise<SessionSearchIndex | undefined> {
  // SQLite loads while the checksum is computed (Web Crypto hashes off the main thread where it can).
  const [body] = await Promise.all([checkedBody(bytes), loadSqlite()]);
  if (body === undefined) return undefined;
  let host: SqliteWasmHost | undefined;
  try {
    host = await SqliteWasmHost.fromFile(body);
    const index = schemaOf(host) === EXPECTED_SCHEMA ? SessionSearchIndex.open(host, maxIndexBytes) : undefined;
    if (index === undefined) host.close();
    return index;
  } catch (error) {
    host?.close();
    if (Object(error).code === 'SESSION_REFERENCE_INVALID_CONFIG') throw error;
    return undefined;
  }
}

/** Every object of a database's schema: type, name, table and SQL, by name. */
function schemaOf(sql: SqlHost): string {
  return JSON.stringify(sql.all('SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name, type'));
}

/**
 * What {@link schemaOf} gives for an index of {@link createIndex}, as constant text (a load never
 * builds an empty index to compare with): the engine's tables as `SCHEMA` creates them, FTS5's
 * shadow tables of `search_words` and the index SQLite makes for `search_sessions(id UNIQUE)`.
 * A test compares it with a new index's schema, so a change of either is caught.
 */
export const EXPECTED_SCHEMA = JSON.stringify(
  [
    ...SCHEMA.map((sql): [string, string, string, string | null] => {
      const name = /^CREATE (?:VIRTUAL )?TABLE (\w+)/.exec(sql)![1]!;
      return ['table', name, name, sql];
    }),
    ...(
      [
        ['search_words_config', '(k PRIMARY KEY, v) WITHOUT ROWID'],
        ['search_words_data', '(id INTEGER PRIMARY KEY, block BLOB)'],
        ['search_words_docsize', '(id INTEGER PRIMARY KEY, sz BLOB, origin INTEGER)'],
        ['search_words_idx', '(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID'],
      ] as const
    ).map(([name, columns]): [string, string, string, string | null] => ['table', name, name, `CREATE TABLE '${name}'${columns}`]),
    ['index', 'sqlite_autoindex_search_sessions_1', 'search_sessions', null],
  ].sort((a, b) => (a[1]! < b[1]! ? -1 : a[1]! > b[1]! ? 1 : 0)),
);

/** The body of `bytes` when their header names this format and the body's checksum, else `undefined`. */
async function checkedBody(bytes: Uint8Array): Promise<Uint8Array | undefined> {
  // The header is one short line: a file without one is damaged, never scanned whole for it.
  const newline = bytes.subarray(0, 200).indexOf(10);
  if (newline < 0) return undefined;
  const head = new TextDecoder().decode(bytes.subarray(0, newline));
  if (!head.startsWith(`${FORMAT} `)) return undefined;
  const body = bytes.subarray(newline + 1);
  const sum = await checksum(body);
  return sum !== undefined && head === `${FORMAT} ${sum}` ? body : undefined;
}

/**
 * The SHA-256 of `bytes` in hex, by the runtime's `crypto.subtle` (Web Crypto: Node, Deno, Bun,
 * workerd, and browser pages in a secure context). Where a page has no `crypto.subtle` (plain
 * http on another host) it is `undefined`: exported bytes then carry no checksum and are never
 * loaded back, so the index is rebuilt — never a stale answer (SPEC §16.4).
 */
async function checksum(bytes: Uint8Array): Promise<string | undefined> {
  const subtle = typeof crypto === 'undefined' ? undefined : crypto.subtle;
  if (subtle === undefined) return undefined;
  // Our bytes are never over a SharedArrayBuffer (SQLite's export, or the config's own copy).
  const digest = new Uint8Array(await subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
