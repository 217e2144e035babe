/**
 * `searchSessions` and `exportSearchIndex` (SPEC §16): the lazy chunk the service loads on the
 * first search, so apps that never search never ship the engine (§16.5).
 * @module
 */
import type { ResolvedSessionReferenceConfig } from '../config.js';
import type { SessionQuery } from '../types.js';
import { root } from './root.js';
import { isIndexDamage, type KnownSession, type SessionSearchIndex } from './engine.js';
import { findHits, type ListedSession, type SessionSearchHit } from './hits.js';
import { createIndex, indexFromBytes, indexToBytes } from './index-bytes.js';
import type { IndexedSession } from './stored.js';
import { MAX_QUERY_LENGTH, queryWords } from './words.js';

export type { SessionSearchSnippet } from './snippets.js';
export type { SessionSearchHit } from './hits.js';
export { useRoot } from './root.js';

/** What the service keeps for search between calls (SPEC §16.4). */
export interface SearchState {
  readonly sessionQuery: SessionQuery;
  readonly config: Readonly<ResolvedSessionReferenceConfig>;
  index?: SessionSearchIndex;
  /** Searches run one after the other: each brings the index up to date first. */
  queue: Promise<unknown>;
}

/** Sessions read at once while the index catches up. */
const READ_BATCH = 8;

/**
 * Sessions written to the index at once, at most (one transaction: FTS5 writes one segment for
 * them, and fewer segments cost fewer merges: the bench's 2,000 sessions of about 2 KB of text
 * took 331 ms of SQLite in batches of 64, 233 in batches of 256, 253 in batches of 512;
 * docs/performance.md, "Building the index").
 */
const WRITE_BATCH = 256;

/** UTF-16 code units of text that, waiting to be written, make a write happen before {@link WRITE_BATCH} sessions. */
const WRITE_BATCH_TEXT = 4 << 20;

const LIST_SESSIONS = 'sessionQuery.listSessions()';

/** A listed session: header fields, its place in the listing and the store's file identity, when it gives one. */
interface Listed extends ListedSession {
  identity: string | undefined;
}

/**
 * `searchSessions(agent, query, { limit?, signal? })` of SPEC §16.2, over the agent and options the
 * service read once (SPEC §10.4).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` (agent, query, a query longer
 * than `MAX_QUERY_LENGTH` UTF-16 code units, options, limit, signal), `SESSION_REFERENCE_READ_FAILED` (a listing, surface or title answer the host failed or
 * malformed; cause kept), `SESSION_REFERENCE_CANCELLED`.
 */
export async function searchSessions(
  state: SearchState,
  agent: { id: string; cwd: unknown },
  query: unknown,
  options: Record<string, unknown>,
): Promise<SessionSearchHit[]> {
  root.check(typeof query === 'string', 'INVALID_ARGUMENT', 'query must be a string', query);
  if (query.length > MAX_QUERY_LENGTH) throw root.fail('INVALID_ARGUMENT', `query must be at most ${MAX_QUERY_LENGTH} UTF-16 code units long, got one of ${query.length}`);
  const { limit: limitInput, signal: signalInput, ...rest } = options;
  const [unknown] = Object.keys(rest);
  root.check(unknown === undefined, 'INVALID_ARGUMENT', 'unknown search option', unknown);
  const limit = limitInput ?? state.config.candidateLimit;
  root.check(root.isPositiveSafeInteger(limit), 'INVALID_ARGUMENT', 'limit must be a positive safe integer', limitInput);
  const signal = root.checkSignal(signalInput);
  root.throwIfAborted(signal);
  if (query.trim() === '') {
    const rows = await root.listCandidates(state.sessionQuery, state.config, agent, '', limit, signal);
    return rows.map((row) => ({ ...row, score: 0, snippets: [] }));
  }
  const words = await queryWords(query, async (work) => {
    await root.pace(work);
    root.throwIfAborted(signal);
  });
  const ownCwd = agent.cwd;
  const search = async () => {
    const { index, listed } = await syncIndex(state, signal);
    if (words.length === 0) return [];
    return findHits(index, listed, words, agent.id, ownCwd, limit, signal);
  };
  return queued(state, signal, () =>
    search().catch(async (error: unknown) => {
      if (!isIndexDamage(error)) throw error;
      // A part of the index that the cheap checks at load do not look at (a page only a query
      // reads, kept items past their bound, words its text does not hold) is damaged: the index is
      // dropped and rebuilt from the store, once — never an error for it (SPEC §16.4).
      state.index?.close();
      state.index = await createIndex(state.config.maxIndexBytes);
      return search();
    }),
  );
}

/**
 * The bytes of the service's search index (SPEC §16.4) as the last search left it, after any
 * search already started; before any search, the index given as `searchIndex` when usable (or an
 * empty one).
 */
export function exportSearchIndex(state: SearchState): Promise<Uint8Array> {
  return queued(state, undefined, async () => indexToBytes(await indexOf(state)));
}

/** Runs `task` after every search or export started before it (the index is shared). */
function queued<T>(state: SearchState, signal: AbortSignal | undefined, task: () => Promise<T>): Promise<T> {
  const run = state.queue.then(() => {
    root.throwIfAborted(signal);
    return task();
  });
  state.queue = run.catch(() => undefined);
  return root.raceAbort(run, signal);
}

/** The service's index: the one given as `searchIndex` when it is usable, else a new one (SPEC §16.4). */
async function indexOf(state: SearchState): Promise<SessionSearchIndex> {
  const { maxIndexBytes, searchIndex } = state.config;
  state.index ??= (searchIndex && (await indexFromBytes(searchIndex, maxIndexBytes))) || (await createIndex(maxIndexBytes));
  return state.index;
}

/**
 * Brings the index up to the store (SPEC §16.4): one listing; sessions it no longer lists are
 * forgotten; sessions new or with another file identity are read and indexed again; a session
 * listed without an identity is read every time and indexed again only when its
 * `capturedThroughSeq` moved (dsh logs are append-only: any change appends an event). Reads go
 * {@link READ_BATCH} at a time, the signal checked between batches, and are written
 * {@link WRITE_BATCH} at a time; each session is replaced whole, so a cancelled update leaves a
 * consistent index that the next search continues (what was read and not yet written is read again).
 */
async function syncIndex(state: SearchState, signal: AbortSignal | undefined): Promise<{ index: SessionSearchIndex; listed: Listed[] }> {
  // The engine loads (on the first search) while the host lists.
  const [index, listed] = await Promise.all([
    indexOf(state),
    root.callHost(() => state.sessionQuery.listSessions(signal), signal, LIST_SESSIONS, readListing),
  ]);
  const present = new Set(listed.map((session) => session.id));
  const known = index.known();
  index.remove([...known.keys()].filter((id) => !present.has(id)));
  const stale = listed.filter(({ id, identity }) => identity === undefined || known.get(id)?.identity !== identity);
  // Sessions read are written WRITE_BATCH at a time (or once WRITE_BATCH_TEXT of text waits): one
  // transaction, one FTS5 segment, for many sessions.
  let pending: IndexedSession[] = [];
  let pendingText = 0;
  for (let start = 0; start < stale.length; start += READ_BATCH) {
    root.throwIfAborted(signal);
    for (const session of await readBatch(state, index, known, stale.slice(start, start + READ_BATCH), signal)) {
      pending.push(session);
      for (const item of session.items) pendingText += item.text.length;
    }
    if (pending.length >= WRITE_BATCH || pendingText >= WRITE_BATCH_TEXT || start + READ_BATCH >= stale.length) {
      await index.put(pending, signal);
      pending = [];
      pendingText = 0;
    }
  }
  root.throwIfAborted(signal);
  return { index, listed };
}

/**
 * Reads `batch`: one surface read each, one title read for those that changed (`known`: what the
 * index held before); sessions gone since the listing are removed from the index. Returns the
 * sessions to put.
 */
async function readBatch(
  state: SearchState,
  index: SessionSearchIndex,
  known: ReadonlyMap<string, KnownSession>,
  batch: Listed[],
  signal: AbortSignal | undefined,
): Promise<IndexedSession[]> {
  const { sessionQuery, config } = state;
  // A read at a reference budget holds about what search keeps (SPEC §16.7): twice the text bytes
  // leaves room for the JSON of the items.
  const budget = config.maxIndexBytes * 2 + 4096;
  // A session deleted since the listing is forgotten like one the listing no longer has (SPEC §16.4).
  const read = ({ id }: Listed) => root.readSnapshot(sessionQuery, id, budget, signal).catch((error: unknown) => (vanished(error) ? undefined : Promise.reject(error)));
  const snapshots = await Promise.all(batch.map(read));
  index.remove(batch.filter((_listed, k) => snapshots[k] === undefined).map((listed) => listed.id));
  const changed = batch.flatMap((listed, k) => {
    const old = known.get(listed.id);
    const snapshot = snapshots[k];
    if (snapshot === undefined) return [];
    return listed.identity === undefined && old !== undefined && old.identity === undefined && old.seq === snapshot.capturedThroughSeq
      ? []
      : [{ listed, snapshot }];
  });
  if (changed.length === 0) return [];
  const headers = changed.map(({ listed }) => ({ id: listed.id, createdAt: listed.createdAt }));
  const failed = new Set<string>();
  const titles = await root.readTitleLabels(sessionQuery, headers, signal, failed);
  root.throwIfAborted(signal);
  // A session whose title read failed is kept as changed (no identity, no seq): the next search
  // reads it and its title again, so its label never stays its id (SPEC §16.4: never stale).
  return changed.map(({ listed, snapshot }): IndexedSession => {
    const retry = failed.has(listed.id);
    return {
      id: listed.id,
      identity: retry ? undefined : listed.identity,
      seq: retry ? null : snapshot.capturedThroughSeq,
      title: titles.get(listed.id) ?? '',
      cwd: root.isNonEmptyString(listed.cwd) ? listed.cwd : '',
      // The index keeps the newest maxIndexBytes of them (SPEC §16.3).
      items: snapshot.items,
    };
  });
}

/** True when `error` is the store saying a listed session is not there (deleted after the listing). */
function vanished(error: unknown): boolean {
  const { code, cause } = Object(error) as { code?: unknown; cause?: unknown };
  return code === 'SESSION_REFERENCE_READ_FAILED' && (Object(cause) as { code?: unknown }).code === 'SESSION_REFERENCE_NOT_FOUND';
}

/**
 * The listing as plain data (read once, inside `callHost`): id, createdAt, cwd and the optional
 * string `identity` of each record.
 * @throws SessionReferenceError `SESSION_REFERENCE_READ_FAILED` for an answer that is not an
 * array, a hole, or a record without a header with a string id and a finite `createdAt`.
 */
function readListing(records: unknown): Listed[] {
  root.check(Array.isArray(records), 'READ_FAILED', `${LIST_SESSIONS} must resolve to an array`, records);
  const list = root.presentEntries(records, (index) => {
    throw root.fail('READ_FAILED', `${LIST_SESSIONS} record ${index} is missing (a hole in a sparse array)`);
  });
  const listed: Listed[] = [];
  for (let order = 0; order < list.count; order++) {
    const { header, identity } = Object(list.at(order)) as Record<string, unknown>;
    const { id, createdAt, cwd } = Object(header) as Record<string, unknown>;
    root.check(
      typeof id === 'string' && Number.isFinite(createdAt),
      'READ_FAILED',
      `${LIST_SESSIONS} record ${order} must have a header { id: string, createdAt: number }`,
      list.at(order),
    );
    listed.push({ id, createdAt: createdAt as number, cwd, identity: typeof identity === 'string' ? identity : undefined, order });
  }
  return listed;
}
