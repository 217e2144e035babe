/**
 * `SessionCatalog`, the Durable Object holding one tenant's catalog (SPEC §17.5): SQLite-backed
 * (wrangler `new_sqlite_classes`), one object per tenant (`env.CATALOG.idFromName(tenant)`), with
 * the tenant's R2 bucket bound as `SESSIONS`. Its RPC methods are the contract the edge Worker
 * calls (see `types.ts`); each answers from the catalog's SQLite, reading R2 only to index an
 * object (`indexObject`, `applyNotification`, `reconcile`).
 * @module
 */
import { DurableObject, type DurableObjectState } from 'cloudflare:workers';
import { base64urlOfJsonString, decodeBase64url } from '../../base64url.js';
import type { SessionCandidate } from '../../candidates.js';
import { isPositiveSafeInteger } from '../../config.js';
import { check, describeValue, fail, SessionReferenceError } from '../../errors.js';
import type { ListedSession, SessionSearchHit } from '../../search/hits.js';
import type { IndexedSession } from '../../search/stored.js';
import { MAX_QUERY_LENGTH } from '../../search/words.js';
import { decodeUtf8Strict } from '../../utf8.js';
import { readObject, type CatalogBucket, type ReadObject } from './bucket.js';
import { candidateOf, queryMatcher, selectCandidates } from './candidates.js';
import { cwdColumn, cwdOfColumn, idOf, sidOf, textOfColumn } from './encoding.js';
import { CronFolders } from './cron-folders.js';
import { DEFAULT_RECONCILE_PAGE, Freshness } from './freshness.js';
import { migrate } from './schema.js';
import { CatalogSearch } from './search.js';
import { CatalogTables, catalogRow, type ObjectRecord, ROW_COLUMNS } from './tables.js';
import type { CatalogCandidateQuery, CatalogLimits, CatalogRow, CatalogRowsPage, CatalogSearchQuery, CronPlace, R2EventNotification, ReconcileResult } from './types.js';

/** The bindings the catalog reads. */
export interface SessionCatalogEnv {
  /** The R2 bucket of the logs (an R2 bucket binding). */
  SESSIONS: CatalogBucket;
  /** The namespace of the catalogs themselves (the Worker's `CATALOG` binding): a catalog registers its folder with the cron's. */
  CATALOG: DurableObjectNamespace;
}

/** The name of the catalog object that keeps the Cron Trigger's state: `''` is never a tenant (SPEC §17.3: a non-empty string). */
export const CRON_CATALOG = '';

function cronCatalog(env: SessionCatalogEnv): Pick<SessionCatalog, 'registerFolder'> {
  return env.CATALOG.get(env.CATALOG.idFromName(CRON_CATALOG)) as unknown as Pick<SessionCatalog, 'registerFolder'>;
}

/** `limit` of `candidates` when absent: the library's `candidateLimit` default (SPEC §5). */
export const DEFAULT_CANDIDATE_LIMIT = 50;

/** Rows of one `rows` page when `limit` is absent. */
export const DEFAULT_ROWS_PAGE = 100;
/** The largest `limit` of one `rows` page. */
export const MAX_ROWS_PAGE = 1000;

/**
 * A tenant's catalog: a row per log object and the winner of each session id (SPEC §17.5).
 * Methods reject with an `Error` whose message is `SESSION_REFERENCE_…: message` (Workers RPC
 * keeps an error's message, not its class): the code of the `SessionReferenceError` it stands for.
 */
export class SessionCatalog extends DurableObject<SessionCatalogEnv> {
  private readonly tables: CatalogTables;
  private readonly freshness: Freshness;
  private readonly index: CatalogSearch;
  private readonly cron: CronFolders;
  /** The tenant's R2 prefix, as the last write call gave it (kept in `catalog_meta` for calls without one). */
  private prefix: string | undefined;
  /** Reconcile pages run one at a time (a cron and `POST /reconcile` may overlap). */
  private reconciling: Promise<unknown> = Promise.resolve();

  /** @internal workerd constructs the catalog (one object per tenant); apps never call this. */
  constructor(ctx: DurableObjectState, env: SessionCatalogEnv) {
    super(ctx, env);
    const dropped = migrate(ctx.storage.sql);
    this.tables = new CatalogTables(ctx.storage);
    this.freshness = new Freshness(ctx.storage.sql, this.tables, env.SESSIONS);
    this.index = new CatalogSearch(ctx.storage, dropped);
    this.cron = new CronFolders(ctx.storage.sql);
    this.prefix = ctx.storage.sql.exec<{ value: string }>(`SELECT value FROM catalog_meta WHERE name = 'prefix'`).toArray()[0]?.value;
    // A search index made anew (first use, another format) over existing rows: every log is read again by the next reconcile pass.
    if (this.index.fresh) this.tables.forgetEtags();
  }

  /**
   * Reads the object `prefix + key` (one streamed get; its body is cancelled when its etag and upload time are those of its row) through
   * the store pipeline (SPEC §11.2.2) and writes its row (idempotent). `undefined` when the object
   * is gone (its row dropped).
   * @param options `{ maxLogBytes? }` (decoded bytes the read may pass, SPEC §11.2.1).
   * @throws `SESSION_REFERENCE_INVALID_LOG` (not a dsh log: the catalog is left as it was),
   * `SESSION_REFERENCE_READ_FAILED` (R2 failed), `SESSION_REFERENCE_INVALID_ARGUMENT`.
   */
  indexObject(prefix: string, key: string, options?: CatalogLimits): Promise<CatalogRow | undefined> {
    return rpc(async () => {
      checkText(prefix, 'prefix');
      checkText(key, 'key');
      await this.usePrefix(prefix);
      await this.freshness.index(prefix, key, limitsOf(options));
      await this.followSearch();
      const row = this.tables.byKey(key);
      return row === undefined ? undefined : catalogRow(row);
    });
  }

  /** Drops the row of `key` after a delete (`eventTime` ms, default now): a create notification older than it is then ignored (SPEC §17.6). */
  removeObject(key: string, eventTime?: number): Promise<void> {
    return rpc(async () => {
      checkText(key, 'key');
      check(eventTime === undefined || Number.isFinite(eventTime), 'INVALID_ARGUMENT', 'eventTime must be milliseconds since the epoch', eventTime);
      this.freshness.remove(key, eventTime ?? Date.now());
      await this.followSearch();
    });
  }

  /**
   * Applies one R2 event notification for the objects under `prefix` (SPEC §17.6): idempotent and
   * in any order (see `Freshness.apply`). A notification for another prefix is ignored.
   */
  applyNotification(prefix: string, note: R2EventNotification, options?: CatalogLimits): Promise<void> {
    return rpc(async () => {
      checkText(prefix, 'prefix');
      await this.usePrefix(prefix);
      await this.freshness.apply(prefix, note, limitsOf(options));
      await this.followSearch();
    });
  }

  /**
   * One page of a resumable re-list of `prefix` (SPEC §17.6): `pageSize` objects (default 1000);
   * the cursor and the pass are kept in the object's storage, so the next call continues.
   * `done` when the page ended a pass; rows that pass did not see were removed.
   */
  reconcile(prefix: string, options?: { pageSize?: number } & CatalogLimits): Promise<ReconcileResult> {
    const run = this.reconciling.then(() =>
      rpc(async () => {
        checkText(prefix, 'prefix');
        const pageSize = options?.pageSize ?? DEFAULT_RECONCILE_PAGE;
        check(isPositiveSafeInteger(pageSize) && pageSize <= 1000, 'INVALID_ARGUMENT', 'pageSize must be an integer from 1 to 1000', pageSize);
        await this.usePrefix(prefix);
        const result = await this.freshness.reconcile(prefix, pageSize, limitsOf(options));
        await this.followSearch();
        return result;
      }),
    );
    this.reconciling = run.catch(() => undefined);
    return run;
  }

  /**
   * Where the Cron Trigger's round over the tenants stands (issue 27), or `undefined` to start a
   * round. Only the catalog object named `''` keeps one (see `cron-folders.ts`).
   */
  cronPlace(): Promise<CronPlace | undefined> {
    return rpc(async () => this.cron.place());
  }

  /**
   * Saves the Cron Trigger's place for its next invocation, marks the tenant folders R2 listed
   * (`seen`) as seen in this round, and starts the next round when `roundDone`.
   */
  saveCronPlace(place: CronPlace, seen: readonly string[] = [], roundDone = false): Promise<void> {
    return rpc(async () => this.cron.save(place, seen, roundDone === true));
  }

  /** The known tenant folders after `after` that R2 did not list in this round (the cron's second part). */
  unseenFolders(after?: string): Promise<string[]> {
    return rpc(async () => this.cron.unseen(after));
  }

  /** Remembers a tenant folder a catalog is fed from, so that the cron visits it even when R2 no longer lists it. */
  registerFolder(folder: string): Promise<void> {
    return rpc(async () => this.cron.register(folder));
  }

  /**
   * `/candidates` (SPEC §6, §15.10, §17.5): the rows of the core's `listCandidates` over the
   * tenant's sessions, from the catalog alone (no R2 operation), at a cost that does not grow with
   * the number of sessions (see `candidates.ts`).
   * @throws `SESSION_REFERENCE_INVALID_ARGUMENT` for a malformed query, cwd or limit.
   */
  candidates(query: CatalogCandidateQuery): Promise<SessionCandidate[]> {
    return rpc(async () => {
      const { as, cwd, q = '', limit = DEFAULT_CANDIDATE_LIMIT, titles = false, match = 'substring' } = Object(query) as CatalogCandidateQuery;
      checkText(as, 'as');
      check(typeof q === 'string', 'INVALID_ARGUMENT', 'query must be a string', q);
      check(isPositiveSafeInteger(limit), 'INVALID_ARGUMENT', 'limit must be a positive safe integer', limit);
      check(match === 'substring' || match === 'words', 'INVALID_ARGUMENT', "match must be 'substring' or 'words'", match);
      const own = this.agent(as, cwd);
      const matcher = queryMatcher(match, q, titles === true);
      return selectCandidates(this.ctx.storage.sql, own.sid, own.cwd, limit, matcher).map(candidateOf);
    });
  }

  /**
   * `/search` (SPEC §16.2, §17.5): the hits of `q` among the tenant's sessions, from the search
   * index in the catalog's SQLite (no R2 operation); a blank `q` gives the candidate rows with
   * `score: 0` and no snippets.
   * @throws `SESSION_REFERENCE_INVALID_ARGUMENT` for a malformed or too long query, a malformed cwd or limit.
   */
  search(query: CatalogSearchQuery): Promise<SessionSearchHit[]> {
    return rpc(async () => {
      const { as, cwd, q, limit = DEFAULT_CANDIDATE_LIMIT } = Object(query) as CatalogSearchQuery;
      checkText(as, 'as');
      checkText(q, 'query');
      check(q.length <= MAX_QUERY_LENGTH, 'INVALID_ARGUMENT', `query must be at most ${MAX_QUERY_LENGTH} UTF-16 code units long`, `a query of ${q.length}`);
      check(isPositiveSafeInteger(limit), 'INVALID_ARGUMENT', 'limit must be a positive safe integer', limit);
      const own = this.agent(as, cwd);
      if (q.trim() === '') return selectCandidates(this.ctx.storage.sql, own.sid, own.cwd, limit, undefined).map((row) => ({ ...candidateOf(row), score: 0, snippets: [] }));
      return this.index.search(q, as, cwdOfColumn(own.cwd), limit, (ids) => this.listed(ids), () => this.tables.forgetEtags());
    });
  }

  /** The winning row of each id (SPEC §17.5: higher version, then newer upload), `undefined` for an id the catalog lacks; for `/prepare`. */
  locate(sessionIds: string[]): Promise<(CatalogRow | undefined)[]> {
    return rpc(async () => {
      check(Array.isArray(sessionIds) && sessionIds.every((id) => typeof id === 'string'), 'INVALID_ARGUMENT', 'sessionIds must be an array of strings', sessionIds);
      return sessionIds.map((id) => {
        const row = this.tables.winner(id);
        return row === undefined ? undefined : catalogRow(row);
      });
    });
  }

  /**
   * One page of every row (every object, winners or not) by key, `limit` rows (default 100, at
   * most 1000), from the start without a `cursor` (`undefined` or `null`); for `GET /sessions`.
   * @throws `SESSION_REFERENCE_INVALID_ARGUMENT` for a cursor that names no key (not the base64url of a JSON string) or a bad limit.
   */
  rows(cursor?: string | null, limit: number = DEFAULT_ROWS_PAGE): Promise<CatalogRowsPage> {
    return rpc(async () => {
      check(cursor == null || typeof cursor === 'string', 'INVALID_ARGUMENT', 'cursor must be a string', cursor);
      check(isPositiveSafeInteger(limit) && limit <= MAX_ROWS_PAGE, 'INVALID_ARGUMENT', `limit must be an integer from 1 to ${MAX_ROWS_PAGE}`, limit);
      const after = cursor == null ? undefined : afterKey(cursor);
      const records = this.ctx.storage.sql
        .exec<ObjectRecord>(`SELECT ${ROW_COLUMNS} FROM catalog_objects WHERE key > ? ORDER BY key LIMIT ?`, after ?? '', limit + 1)
        .toArray();
      const rows = records.slice(0, limit).map(catalogRow);
      return records.length > limit ? { rows, cursor: base64urlOfJsonString(rows[rows.length - 1]!.key) } : { rows };
    });
  }

  /** The listed sessions among `ids` (winners), in listing order (SPEC §11.3), for search's ties. */
  private listed(ids: readonly string[]): ListedSession[] {
    const rows: Array<{ sid: ArrayBuffer; created_at: number; cwd: string | null }> = [];
    for (let start = 0; start < ids.length; start += 50) {
      const batch = ids.slice(start, start + 50);
      const marks = batch.map(() => '?').join(', ');
      rows.push(...this.ctx.storage.sql.exec<{ sid: ArrayBuffer; created_at: number; cwd: string | null }>(`SELECT sid, created_at, cwd FROM catalog_objects WHERE wins = 1 AND sid IN (${marks})`, ...batch.map(sidOf)).toArray());
    }
    const listed = rows.map((row) => ({ id: idOf(row.sid), createdAt: row.created_at, cwd: row.cwd === '#' ? true : cwdOfColumn(row.cwd), order: 0 }));
    listed.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    listed.forEach((session, order) => (session.order = order));
    return listed;
  }

  /**
   * Brings the search index to the rows written since the last call: each changed session's
   * winner is indexed (its log's items from the read that wrote it, else read again), a session
   * without rows forgotten. A winner whose log cannot be read now has its etag forgotten, so the
   * next reconcile pass reads it again.
   */
  private async followSearch(): Promise<void> {
    const reads = this.freshness.takeReads();
    const puts: IndexedSession[] = [];
    const gone: string[] = [];
    const retry: string[] = [];
    for (const id of this.tables.takeChanged()) {
      const row = this.tables.winner(id);
      if (row === undefined) {
        gone.push(id);
        continue;
      }
      let read: ReadObject | 'unchanged' | undefined = reads.get(row.key);
      if (read === undefined || read.etag !== row.etag) read = this.prefix === undefined ? undefined : await readObject(this.env.SESSIONS, this.prefix + row.key, row.key).catch(() => undefined);
      if (read === undefined || read === 'unchanged') retry.push(id);
      else puts.push(indexedSession(row, read));
    }
    this.index.remove(gone);
    this.tables.forgetEtagsOf(retry);
    try {
      await this.index.put(puts);
    } catch (error) {
      this.tables.forgetEtagsOf(puts.map((session) => session.id));
      throw error;
    }
  }

  /**
   * Keeps `prefix` (and in `catalog_meta`) for calls that come without one. A new prefix is first
   * registered with the Cron Trigger's catalog (see `cron-folders.ts`), so that the cron repairs
   * this catalog even after R2 stops listing its folder.
   */
  private async usePrefix(prefix: string): Promise<void> {
    if (prefix === this.prefix) return;
    await cronCatalog(this.env).registerFolder(prefix);
    this.prefix = prefix;
    this.ctx.storage.sql.exec(`INSERT OR REPLACE INTO catalog_meta(name, value) VALUES ('prefix', ?)`, prefix);
  }

  /**
   * The agent (SPEC §4.1, §6): its id's key and `cwd` column — the caller's `cwd` when it gives one
   * (as the local service takes the agent's), else its row's. An agent the catalog lacks (the
   * session being typed in, not uploaded yet) is no error, as locally (the probe's F9): nothing is
   * left out for it, and it ranks by the given cwd.
   */
  private agent(id: string, cwd: string | undefined): { sid: ArrayBuffer; cwd: string | null } {
    check(cwd === undefined || typeof cwd === 'string', 'INVALID_ARGUMENT', 'cwd must be a string', cwd);
    const row = cwd === undefined ? this.tables.winner(id) : undefined;
    return { sid: row?.sid ?? sidOf(id), cwd: row?.cwd ?? cwdColumn(cwd) };
  }
}

/** The search entry of a winning row and its log's read (SPEC §16.3: items, title, cwd; the etag as identity). */
function indexedSession(row: ObjectRecord, read: ReadObject): IndexedSession {
  return {
    id: idOf(row.sid),
    identity: `${row.key}#${row.etag}`,
    seq: row.seq,
    title: textOfColumn(row.title) ?? '',
    cwd: cwdOfColumn(row.cwd) ?? '',
    items: read.items,
  };
}

/**
 * The key a `rows` cursor names (the last key of the page before): base64url of the key's JSON, in
 * the codec of session-reference URIs (Web APIs only, lone surrogates kept).
 */
function afterKey(cursor: string): string {
  const bytes = decodeBase64url(cursor, 0);
  const json = bytes === undefined ? undefined : decodeUtf8Strict(bytes);
  let key: unknown;
  try {
    key = json === undefined ? undefined : JSON.parse(json);
  } catch {
    key = undefined;
  }
  // Only the exact text a page wrote is a cursor: garbage that happens to decode is refused too.
  if (typeof key !== 'string' || base64urlOfJsonString(key) !== cursor) {
    throw fail('INVALID_ARGUMENT', `cursor is not one a page of rows gave: ${describeValue(cursor)}`);
  }
  return key;
}

function checkText(value: unknown, name: string): asserts value is string {
  check(typeof value === 'string', 'INVALID_ARGUMENT', `${name} must be a string`, value);
}

function limitsOf(options: CatalogLimits | undefined): CatalogLimits {
  const maxLogBytes = options?.maxLogBytes;
  check(maxLogBytes === undefined || isPositiveSafeInteger(maxLogBytes), 'INVALID_ARGUMENT', 'maxLogBytes must be a positive safe integer', maxLogBytes);
  return maxLogBytes === undefined ? {} : { maxLogBytes };
}

/**
 * Runs one RPC method: a `SessionReferenceError` leaves as an `Error` whose message is
 * `CODE: message` (Workers RPC keeps an error's message only), any other failure as it is.
 */
async function rpc<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof SessionReferenceError) throw new Error(`${error.code}: ${error.message}`);
    throw error;
  }
}
