/**
 * What the search engine throws when a part of its index that it uses breaks a bound or disagrees
 * with itself (SPEC §16.4): the index is damaged and is rebuilt from the store, never kept and never
 * an error for the caller.
 * @module
 */

/**
 * A damaged search index, found where the damaged part was used (kept items past their bound, a
 * row of another type than the engine writes, words that the stored text does not hold). Whoever
 * holds the index drops it and builds it again (the service once per search; the edge catalog
 * likewise), so it never reaches a caller of `searchSessions`.
 */
export class DamagedIndexError extends Error {
  override readonly name = 'DamagedIndexError';
}

/**
 * True when `error` means the index's database is damaged: a {@link DamagedIndexError}, or an
 * error SQLite raised (its result code set: SQLITE_CORRUPT and the like), never the host's or the
 * caller's.
 */
export function isIndexDamage(error: unknown): boolean {
  return error instanceof DamagedIndexError || typeof (Object(error) as { resultCode?: unknown }).resultCode === 'number';
}
