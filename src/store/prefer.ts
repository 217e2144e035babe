/**
 * Which of two logs holding one session id is the session's log (SPEC §17.5): one rule for every
 * store that can see two (the object store's listing, the edge catalog).
 * @module
 */

/** What the rule reads of a stored log: its key, its header's `version` and when it was uploaded. */
export interface StoredLog {
  /** The object's key (or path). */
  readonly key: string;
  /** The header's `version` (an integer: the dsh log format, higher is newer). */
  readonly version: number;
  /** Upload time in milliseconds since the epoch, when the store reports one (R2 does). */
  readonly uploaded?: number | undefined;
}

/**
 * The preferred of two logs holding one session id (SPEC §17.5): the higher header `version`
 * wins (a mirrored dsh store with `session.v2.jsonl` beside `session.v3.jsonl` serves the v3
 * log); at one version, the newer upload (a log without an upload time counts as older than any
 * with one); at one version and upload time, the key that sorts first (UTF-16 code units), so the
 * answer never depends on the order the two were seen in.
 * @returns `a` or `b`, never a copy.
 */
export function preferLog<T extends StoredLog>(a: T, b: T): T {
  if (a.version !== b.version) return a.version > b.version ? a : b;
  const au = a.uploaded ?? -Infinity;
  const bu = b.uploaded ?? -Infinity;
  if (au !== bu) return au > bu ? a : b;
  return b.key < a.key ? b : a;
}
