/**
 * The catalog's tables in the Durable Object's SQLite (SPEC §17.5): one row per log object, the
 * winner of each session id flagged, and the indexes `/candidates` needs so that a request costs
 * what it returns, not what the tenant holds (SPEC §17.7).
 *
 * - `catalog_objects`: one row per object (key, etag, size, upload time; header id, version,
 *   createdAt, cwd; title label; `capturedThroughSeq`), `wins = 1` on the one row per session id
 *   that `preferLog` picks (SPEC §17.5). The session id is kept as its UTF-16 code units,
 *   big-endian (`sid`): SQLite compares blobs bytewise, so `ORDER BY created_at DESC, sid` is the
 *   listing order of SPEC §11.3 (createdAt descending, then id by UTF-16 code units), and an id
 *   with a lone surrogate comes back exactly. `cwd` is the JSON of a non-empty string cwd, `'#'`
 *   for a cwd that is present but not a string (SPEC §6.3's "other cwd" group), `NULL` for none;
 *   `title` the JSON of the cleaned label. `fold_*` are the id, cwd and label lowercased by
 *   `toLowerCase()` (SPEC §6.2), `word_*` the same folded as SPEC §16.3 (`foldWord`: diacritics
 *   removed), what SPEC §15.10's query words are looked for in.
 *   `event_time` is the newest event applied to the row (ms), `mark` the reconcile pass that last
 *   saw it (SPEC §17.6).
 * - `catalog_listing` / `catalog_by_cwd`: the listing order of winners, overall and per cwd,
 *   each holding the cwd and the folded fields (a walk of a group, query tests included, reads the
 *   index alone): each §6.3 group is an ordered index walk that stops at `limit`.
 * - `catalog_trigrams`: FTS5 `trigram` over the winners' `fold_*` and `word_*` (contentless): the
 *   rows a substring of 3 or more characters (SPEC §6.2), or a query word of 3 or more (SPEC
 *   §15.10: a word stands in its folded field), can be in.
 * - `catalog_tombstones`: deleted keys with the delete's event time (a late create notification
 *   older than the delete is ignored); `catalog_rejected`: objects that are not dsh logs, by etag
 *   (a reconcile pass does not read them again); `catalog_meta`: the reconcile cursor and pass.
 * - `catalog_cron_folders`: only in the catalog named `''`, the Cron Trigger's: every tenant folder
 *   a catalog was fed from, with the round in which R2 last listed it (see `cron-folders.ts`).
 * @module
 */
import type { SqlStorage } from 'cloudflare:workers';

/**
 * The schema's version: a catalog of another version is dropped and rebuilt by reconcile. 5 since
 * the folded fields hold U+FFFD for a NUL (`tables.ts`, `matchable`).
 */
export const SCHEMA_VERSION = 5;

/** The folded fields a query is tested against: in the listing indexes too, so a walk reads the index alone. */
const MATCHED = 'fold_id, fold_cwd, fold_title, word_id, word_cwd, word_title';

const TABLES = [
  `CREATE TABLE IF NOT EXISTS catalog_meta(name TEXT PRIMARY KEY, value) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS catalog_objects(
    row INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    sid BLOB NOT NULL,
    etag TEXT NOT NULL,
    size INTEGER NOT NULL,
    uploaded INTEGER NOT NULL,
    event_time INTEGER NOT NULL,
    version INTEGER NOT NULL,
    created_at REAL NOT NULL,
    cwd TEXT,
    title TEXT,
    seq INTEGER,
    mark INTEGER NOT NULL,
    wins INTEGER NOT NULL DEFAULT 0,
    fold_id TEXT NOT NULL,
    fold_cwd TEXT NOT NULL,
    fold_title TEXT NOT NULL,
    word_id TEXT NOT NULL,
    word_cwd TEXT NOT NULL,
    word_title TEXT NOT NULL)`,
  `CREATE INDEX IF NOT EXISTS catalog_by_session ON catalog_objects(sid)`,
  `CREATE INDEX IF NOT EXISTS catalog_listing ON catalog_objects(created_at DESC, sid, cwd, ${MATCHED}) WHERE wins = 1`,
  `CREATE INDEX IF NOT EXISTS catalog_by_cwd ON catalog_objects(cwd, created_at DESC, sid, ${MATCHED}) WHERE wins = 1`,
  `CREATE INDEX IF NOT EXISTS catalog_marks ON catalog_objects(mark)`,
  `CREATE VIRTUAL TABLE IF NOT EXISTS catalog_trigrams USING fts5(fold_id, fold_cwd, fold_title, word_id, word_cwd, word_title, tokenize = 'trigram case_sensitive 1', content = '', contentless_delete = 1)`,
  `CREATE TABLE IF NOT EXISTS catalog_tombstones(key TEXT PRIMARY KEY, event_time INTEGER NOT NULL) WITHOUT ROWID`,
  `CREATE INDEX IF NOT EXISTS catalog_tombstone_age ON catalog_tombstones(event_time)`,
  `CREATE TABLE IF NOT EXISTS catalog_rejected(key TEXT PRIMARY KEY, etag TEXT NOT NULL, mark INTEGER NOT NULL) WITHOUT ROWID`,
  `CREATE TABLE IF NOT EXISTS catalog_cron_folders(folder TEXT PRIMARY KEY, round INTEGER NOT NULL) WITHOUT ROWID`,
];

/** Every table of the catalog, for a rebuild. */
const DROP = ['catalog_objects', 'catalog_trigrams', 'catalog_words', 'catalog_tombstones', 'catalog_rejected', 'catalog_cron_folders', 'catalog_meta'];

/**
 * Creates the tables (idempotent). A catalog written by another schema version is dropped first:
 * it is a cache of the bucket, which the next reconcile pass fills again (SPEC §17.6).
 * @returns true when an older catalog was dropped (its search index must go too).
 */
export function migrate(sql: SqlStorage): boolean {
  sql.exec(TABLES[0]!);
  const found = sql.exec<{ value: number }>(`SELECT value FROM catalog_meta WHERE name = 'schema'`).toArray()[0]?.value;
  const dropped = found !== undefined && found !== SCHEMA_VERSION;
  if (dropped) for (const table of DROP) sql.exec(`DROP TABLE IF EXISTS ${table}`);
  for (const statement of TABLES) sql.exec(statement);
  sql.exec(`INSERT OR REPLACE INTO catalog_meta(name, value) VALUES ('schema', ?)`, SCHEMA_VERSION);
  return dropped;
}
