/**
 * The catalog's rows (see `schema.ts`): writing an object's row, picking each session's winner
 * with the core's `preferLog` (SPEC §17.5) and keeping the winners' match tables in step, reading
 * rows back as {@link CatalogRow}s.
 * @module
 */
import type { DurableObjectStorage, SqlStorage } from 'cloudflare:workers';
import { preferLog } from '../../store/prefer.js';
import type { ReadObject } from './bucket.js';
import { foldWord } from '../../fold.js';
import { cwdColumn, cwdOfColumn, idOf, sidOf, textColumn, textOfColumn } from './encoding.js';
import type { CatalogRow } from './types.js';

/** An object's row as SQLite gives it back. */
export interface ObjectRecord {
  row: number;
  key: string;
  sid: ArrayBuffer;
  etag: string;
  size: number;
  uploaded: number;
  event_time: number;
  version: number;
  created_at: number;
  cwd: string | null;
  title: string | null;
  seq: number | null;
  mark: number;
  wins: number;
  fold_id: string;
  fold_cwd: string;
  fold_title: string;
  word_id: string;
  word_cwd: string;
  word_title: string;
  [column: string]: string | number | ArrayBuffer | null;
}

/** The columns of a row the answers read. */
export const ROW_COLUMNS = 'row, key, sid, etag, size, uploaded, event_time, version, created_at, cwd, title, seq, mark, wins, fold_id, fold_cwd, fold_title, word_id, word_cwd, word_title';

/** What a write did to the catalog. */
export type WriteOutcome = 'added' | 'changed' | 'same';

/**
 * A folded field as SQLite's tests read it: a NUL becomes U+FFFD, since `instr()` and FTS5 read a
 * text only up to its first NUL and would miss a needle after one (an id `"\0 İ"`; found by the
 * property test of `/candidates`). A needle without a NUL matches here wherever it matches the
 * field; one with U+FFFD may also meet a former NUL, which the exact rule then drops, and one with
 * a NUL is decided by the exact rule alone (`queryMatcher`).
 */
function matchable(folded: string): string {
  return folded.replaceAll('\0', '\uFFFD');
}

/** The catalog's rows in one Durable Object's SQLite. */
export class CatalogTables {
  private readonly sql: SqlStorage;
  /** Sessions whose rows changed since {@link takeChanged} was last called (their search entries follow). */
  private changed = new Set<string>();

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
  }

  /** The row of `key`, or `undefined`. */
  byKey(key: string): ObjectRecord | undefined {
    return this.sql.exec<ObjectRecord>(`SELECT ${ROW_COLUMNS} FROM catalog_objects WHERE key = ?`, key).toArray()[0];
  }

  /** The winning row of session `id` (SPEC §17.5), or `undefined`. */
  winner(id: string): ObjectRecord | undefined {
    return this.sql.exec<ObjectRecord>(`SELECT ${ROW_COLUMNS} FROM catalog_objects WHERE sid = ? AND wins = 1`, sidOf(id)).toArray()[0];
  }

  /**
   * Writes the row of a log read from its object at `eventTime` (ms) — seen by reconcile pass
   * `mark` when a reconcile listing found it — and settles the session's winner (and that of the
   * session the key held before). A read older than the row already kept (an earlier upload, read
   * slower) changes nothing.
   */
  write(read: ReadObject, eventTime: number, mark?: number): WriteOutcome {
    return this.transaction(() => {
      const old = this.byKey(read.key);
      if (old !== undefined && (old.uploaded > read.uploaded || (old.etag === read.etag && old.uploaded === read.uploaded))) {
        this.sql.exec('UPDATE catalog_objects SET mark = max(mark, ?), event_time = max(event_time, ?) WHERE row = ?', mark ?? 0, eventTime, old.row);
        return 'same';
      }
      if (old !== undefined) this.unwin(old);
      const cwd = typeof read.cwd === 'string' ? read.cwd : '';
      const values = [
        read.key, sidOf(read.sessionId), read.etag, read.size, read.uploaded, Math.max(eventTime, read.uploaded), read.version, read.createdAt,
        cwdColumn(read.cwd), textColumn(read.title), read.capturedThroughSeq, Math.max(mark ?? 0, old?.mark ?? 0),
        ...[read.sessionId.toLowerCase(), cwd.toLowerCase(), (read.title ?? '').toLowerCase(), foldWord(read.sessionId), foldWord(cwd), foldWord(read.title ?? '')].map(matchable),
      ];
      const columns = 'key, sid, etag, size, uploaded, event_time, version, created_at, cwd, title, seq, mark, fold_id, fold_cwd, fold_title, word_id, word_cwd, word_title';
      if (old === undefined) this.sql.exec(`INSERT INTO catalog_objects(${columns}) VALUES (${columns.split(',').map(() => '?').join(', ')})`, ...values);
      else this.sql.exec(`UPDATE catalog_objects SET (${columns}, wins) = (${columns.split(',').map(() => '?').join(', ')}, 0) WHERE row = ?`, ...values, old.row);
      this.sql.exec('DELETE FROM catalog_tombstones WHERE key = ?', read.key);
      this.sql.exec('DELETE FROM catalog_rejected WHERE key = ?', read.key);
      this.settle(sidOf(read.sessionId));
      if (old !== undefined && idOf(old.sid) !== read.sessionId) this.settle(old.sid);
      return old === undefined ? 'added' : 'changed';
    });
  }

  /** The ids of the sessions whose rows changed since the last call. */
  takeChanged(): string[] {
    const changed = [...this.changed];
    this.changed.clear();
    return changed;
  }

  /**
   * Forgets the etag of every row, so that the next reconcile pass reads every log again (what
   * rebuilds a search index that was lost or damaged).
   */
  forgetEtags(): void {
    this.sql.exec(`UPDATE catalog_objects SET etag = ''`);
  }

  /** Forgets the etag of the winning row of each of `ids` (its next index or reconcile reads it again). */
  forgetEtagsOf(ids: readonly string[]): void {
    for (const id of ids) this.sql.exec(`UPDATE catalog_objects SET etag = '' WHERE sid = ? AND wins = 1`, sidOf(id));
  }

  /** Marks row `row` as seen by reconcile pass `mark`. */
  touch(row: number, mark: number): void {
    this.sql.exec('UPDATE catalog_objects SET mark = ? WHERE row = ?', mark, row);
  }

  /** Drops the row of `key` (and settles its session); true when there was one. */
  drop(key: string): boolean {
    return this.transaction(() => {
      const old = this.byKey(key);
      if (old === undefined) return false;
      this.unwin(old);
      this.sql.exec('DELETE FROM catalog_objects WHERE row = ?', old.row);
      this.settle(old.sid);
      return true;
    });
  }

  /** Records that `key` was deleted at `eventTime` (ms), keeping the newest time. */
  tombstone(key: string, eventTime: number): void {
    this.sql.exec(
      'INSERT INTO catalog_tombstones(key, event_time) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET event_time = max(event_time, excluded.event_time)',
      key,
      eventTime,
    );
  }

  /** The time `key` was last deleted (ms), when a tombstone is kept. */
  tombstoneOf(key: string): number | undefined {
    return this.sql.exec<{ event_time: number }>('SELECT event_time FROM catalog_tombstones WHERE key = ?', key).toArray()[0]?.event_time;
  }

  /** Forgets tombstones older than `before` (ms). */
  pruneTombstones(before: number): void {
    this.sql.exec('DELETE FROM catalog_tombstones WHERE event_time < ?', before);
  }

  /**
   * Makes the row `preferLog` picks among the rows of session `sid` its winner, and only it: a
   * winner has its entries in the match tables, other rows have none.
   */
  private settle(sid: ArrayBuffer): void {
    this.changed.add(idOf(sid));
    const rows = this.sql.exec<ObjectRecord>(`SELECT ${ROW_COLUMNS} FROM catalog_objects WHERE sid = ?`, sid).toArray();
    if (rows.length === 0) return;
    const best = rows.reduce((a, b) => preferLog(a, b));
    for (const row of rows) if (row !== best && row.wins === 1) this.unwin(row);
    if (best.wins !== 1) this.win(best);
  }

  /** Flags `row` as its session's log and adds its match entries. */
  private win(row: ObjectRecord): void {
    this.sql.exec('UPDATE catalog_objects SET wins = 1 WHERE row = ?', row.row);
    this.sql.exec(
      'INSERT INTO catalog_trigrams(rowid, fold_id, fold_cwd, fold_title, word_id, word_cwd, word_title) VALUES (?, ?, ?, ?, ?, ?, ?)',
      row.row, row.fold_id, row.fold_cwd, row.fold_title, row.word_id, row.word_cwd, row.word_title,
    );
  }

  /** Takes `row`'s match entries out and clears its flag (a row that does not win has none). */
  private unwin(row: ObjectRecord): void {
    if (row.wins !== 1) return;
    this.sql.exec('DELETE FROM catalog_trigrams WHERE rowid = ?', row.row);
    this.sql.exec('UPDATE catalog_objects SET wins = 0 WHERE row = ?', row.row);
  }

  /** Runs `work` in one SQLite transaction (all of it or none). */
  private transaction<T>(work: () => T): T {
    return this.storage.transactionSync(work);
  }
}

/** The {@link CatalogRow} of a record. */
export function catalogRow(record: ObjectRecord): CatalogRow {
  const cwd = cwdOfColumn(record.cwd);
  const title = textOfColumn(record.title);
  return {
    key: record.key,
    sessionId: idOf(record.sid),
    etag: record.etag,
    size: record.size,
    uploaded: record.uploaded,
    version: record.version,
    createdAt: record.created_at,
    ...(cwd !== undefined && { cwd }),
    ...(title !== undefined && { title }),
    capturedThroughSeq: record.seq,
  };
}
