/**
 * `searchSessions` and `exportSearchIndex` (SPEC §16): the lazy chunk the service loads on the
 * first search, so apps that never search never ship the engine (§16.5).
 * @module
 */
import type { SessionCandidate } from '../candidates.js';
import type { ResolvedSessionReferenceConfig } from '../config.js';
import type { SessionQuery } from '../types.js';
import { root } from './root.js';
import { SessionSearchIndex, type KnownSession } from './engine.js';
import type { IndexedItem, IndexedSession } from './stored.js';
import { MAX_SNIPPETS, matchedWords, snippetOf, type SessionSearchSnippet } from './snippets.js';
import { foldWord, fuzzyDistance, matchesPart, queryWords, wordsOf } from './words.js';

export type { SessionSearchSnippet } from './snippets.js';
export { useRoot } from './root.js';

/** A hit of `searchSessions` (SPEC §16.2): the §6.5 row, its score and up to three snippets. */
export interface SessionSearchHit extends SessionCandidate {
  /** BM25 score (SQLite FTS5's `bm25`, negated), higher is better; 0 for an empty query. */
  score: number;
  /** At most 3; `[]` for a hit found by its cwd alone and for an empty query. */
  snippets: SessionSearchSnippet[];
}

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

const LIST_SESSIONS = 'sessionQuery.listSessions()';

/** A listed session: header fields and the store's file identity, when it gives one. */
interface Listed {
  id: string;
  createdAt: number;
  cwd: unknown;
  identity: string | undefined;
  /** Position in the listing. */
  order: number;
}

/**
 * `searchSessions(agent, query, { limit?, signal? })` of SPEC §16.2, over the agent and options the
 * service read once (SPEC §10.4).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` (agent, query, options, limit,
 * signal), `SESSION_REFERENCE_READ_FAILED` (a listing, surface or title answer the host failed or
 * malformed; cause kept), `SESSION_REFERENCE_CANCELLED`.
 */
export async function searchSessions(
  state: SearchState,
  agent: { id: string; cwd: unknown },
  query: unknown,
  options: Record<string, unknown>,
): Promise<SessionSearchHit[]> {
  root.check(typeof query === 'string', 'INVALID_ARGUMENT', 'query must be a string', query);
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
  const words = queryWords(query);
  const ownCwd = agent.cwd;
  const search = async () => {
    const { index, listed } = await syncIndex(state, signal);
    if (words.length === 0) return [];
    return findHits(index, listed, words, agent.id, ownCwd, limit, signal);
  };
  return queued(state, signal, () =>
    search().catch(async (error: unknown) => {
      if (!engineFault(error)) throw error;
      // A database damaged in a way the checks at load did not see (a page only a query reads): it
      // is dropped and the index rebuilt from the store, once — never an error for it (SPEC §16.4).
      state.index?.close();
      state.index = await SessionSearchIndex.create(state.config.maxIndexBytes);
      return search();
    }),
  );
}

/** True for an error SQLite raised (its result code set): the index's database failed, not the host or the caller. */
function engineFault(error: unknown): boolean {
  return typeof (Object(error) as { resultCode?: unknown }).resultCode === 'number';
}

/**
 * The bytes of the service's search index (SPEC §16.4) as the last search left it, after any
 * search already started; before any search, the index given as `searchIndex` when usable (or an
 * empty one).
 */
export function exportSearchIndex(state: SearchState): Promise<Uint8Array> {
  return queued(state, undefined, async () => (await indexOf(state)).toBytes());
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
  state.index ??= (searchIndex && (await SessionSearchIndex.fromBytes(searchIndex, maxIndexBytes))) || (await SessionSearchIndex.create(maxIndexBytes));
  return state.index;
}

/**
 * Brings the index up to the store (SPEC §16.4): one listing; sessions it no longer lists are
 * forgotten; sessions new or with another file identity are read and indexed again; a session
 * listed without an identity is read every time and indexed again only when its
 * `capturedThroughSeq` moved (dsh logs are append-only: any change appends an event). Reads go
 * {@link READ_BATCH} at a time, the signal checked between batches; each session is replaced
 * whole, so a cancelled update leaves a consistent index that the next search continues.
 */
async function syncIndex(state: SearchState, signal: AbortSignal | undefined): Promise<{ index: SessionSearchIndex; listed: Listed[] }> {
  // The engine loads (on the first search) while the host lists.
  const [index, listed] = await Promise.all([
    indexOf(state),
    root.callHost(() => state.sessionQuery.listSessions(signal), signal, LIST_SESSIONS, readListing),
  ]);
  const present = new Set(listed.map((session) => session.id));
  const known = index.known();
  for (const id of known.keys()) if (!present.has(id)) await index.remove(id, signal);
  const stale = listed.filter(({ id, identity }) => identity === undefined || known.get(id)?.identity !== identity);
  for (let start = 0; start < stale.length; start += READ_BATCH) {
    root.throwIfAborted(signal);
    await indexBatch(state, index, known, stale.slice(start, start + READ_BATCH), signal);
  }
  root.throwIfAborted(signal);
  return { index, listed };
}

/** Reads and indexes `batch`: one surface read each, one title read for those that changed (`known`: what the index held before). */
async function indexBatch(
  state: SearchState,
  index: SessionSearchIndex,
  known: ReadonlyMap<string, KnownSession>,
  batch: Listed[],
  signal: AbortSignal | undefined,
): Promise<void> {
  const { sessionQuery, config } = state;
  // A read at a reference budget holds about what search keeps (SPEC §16.7): twice the text bytes
  // leaves room for the JSON of the items.
  const budget = config.maxIndexBytes * 2 + 4096;
  // A session deleted since the listing is forgotten like one the listing no longer has (SPEC §16.4).
  const read = ({ id }: Listed) => root.readSnapshot(sessionQuery, id, budget, signal).catch((error: unknown) => (vanished(error) ? undefined : Promise.reject(error)));
  const snapshots = await Promise.all(batch.map(read));
  for (const [k, listed] of batch.entries()) if (snapshots[k] === undefined) await index.remove(listed.id, signal);
  const changed = batch.flatMap((listed, k) => {
    const old = known.get(listed.id);
    const snapshot = snapshots[k];
    if (snapshot === undefined) return [];
    return listed.identity === undefined && old !== undefined && old.identity === undefined && old.seq === snapshot.capturedThroughSeq
      ? []
      : [{ listed, snapshot }];
  });
  if (changed.length === 0) return;
  const headers = changed.map(({ listed }) => ({ id: listed.id, createdAt: listed.createdAt }));
  const failed = new Set<string>();
  const titles = await root.readTitleLabels(sessionQuery, headers, signal, failed);
  root.throwIfAborted(signal);
  for (const { listed, snapshot } of changed) {
    // A session whose title read failed is kept as changed (no identity, no seq): the next search
    // reads it and its title again, so its label never stays its id (SPEC §16.4: never stale).
    const retry = failed.has(listed.id);
    await index.put({
      id: listed.id,
      identity: retry ? undefined : listed.identity,
      seq: retry ? null : snapshot.capturedThroughSeq,
      title: titles.get(listed.id) ?? '',
      cwd: root.isNonEmptyString(listed.cwd) ? listed.cwd : '',
      items: newestText(snapshot.items, config.maxIndexBytes),
    }, signal);
  }
}

/** True when `error` is the store saying a listed session is not there (deleted after the listing). */
function vanished(error: unknown): boolean {
  const { code, cause } = Object(error) as { code?: unknown; cause?: unknown };
  return code === 'SESSION_REFERENCE_READ_FAILED' && (Object(cause) as { code?: unknown }).code === 'SESSION_REFERENCE_NOT_FOUND';
}

/** The newest items holding at most `maxBytes` UTF-8 bytes of text; the oldest one kept keeps its end (SPEC §16.3). */
function newestText(items: ReadonlyArray<{ role: 'user' | 'assistant'; text: string }>, maxBytes: number): IndexedItem[] {
  const kept: IndexedItem[] = [];
  let room = maxBytes;
  for (let k = items.length - 1; k >= 0 && room > 0; k--) {
    const { role, text } = items[k]!;
    const bytes = root.utf8ByteLength(text);
    kept.push({ role, text: bytes <= room ? text : utf8Tail(text, room) });
    room -= bytes;
  }
  return kept.reverse();
}

/** The longest end of `text` of at most `maxBytes` UTF-8 bytes, whole code points, not starting inside a word. */
function utf8Tail(text: string, maxBytes: number): string {
  let start = text.length;
  let bytes = 0;
  while (start > 0) {
    const code = text.charCodeAt(start - 1);
    const pair = start > 1 && code >= 0xdc00 && code <= 0xdfff && /[\ud800-\udbff]/.test(text[start - 2]!);
    const size = pair ? 4 : code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    start -= pair ? 2 : 1;
  }
  // A word the cut split is left out: its end alone would be indexed and shown as a word. The
  // segmenter says where that end stops (text without spaces, Chinese or Thai, loses one word).
  if (start > 0 && WORD_CHAR.test(text[start - 1]!) && WORD_CHAR.test(text[start]!)) {
    const [first] = new Intl.Segmenter(undefined, { granularity: 'word' }).segment(text.slice(start, start + 256));
    start += first?.segment.length ?? 0;
  }
  return text.slice(start);
}

/** A code unit that may be inside a word: a letter, digit, mark or `_` (a surrogate counts as one). */
const WORD_CHAR = /[\p{L}\p{N}\p{M}_\ud800-\udfff]/u;

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

/**
 * The hits of `words` (SPEC §16.2): the engine's AND matches, a split word's parts next to each
 * other, best score first, then §6.3's groups, then listing order; the first `limit`, each with
 * its snippets.
 */
async function findHits(
  index: SessionSearchIndex,
  listed: readonly Listed[],
  words: string[][],
  agentId: string,
  ownCwd: unknown,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<SessionSearchHit[]> {
  const byId = new Map(listed.map((session) => [session.id, session]));
  const parts = [...new Set(words.flat())];
  const phrases = words.filter((word) => word.length > 1);
  const results = (await index.search(parts, agentId, signal))
    .map((result) => ({ result, listed: byId.get(result.id)! }))
    .filter(({ listed }) => listed !== undefined)
    .sort((a, b) => b.result.score - a.result.score || root.cwdGroup(ownCwd, a.listed.cwd) - root.cwdGroup(ownCwd, b.listed.cwd) || a.listed.order - b.listed.order);
  const hits: SessionSearchHit[] = [];
  for (const { result, listed } of results) {
    if (hits.length >= limit) break;
    await root.pace(4);
    root.throwIfAborted(signal);
    const session = index.session(listed.id);
    if (session === undefined) continue;
    const texts = textsOf(session);
    if (!phrases.every((phrase) => hasPhrase(texts, phrase))) continue;
    const label = session.title || session.id;
    hits.push({
      sessionId: session.id,
      label,
      ...(root.isNonEmptyString(listed.cwd) && { cwd: listed.cwd }),
      createdAt: listed.createdAt,
      mention: root.formatSessionReferenceMention({ sessionId: session.id, label }),
      score: result.score,
      snippets: snippetsOf(texts, session.title !== '', parts),
    });
  }
  return hits;
}

/** The texts of a session that snippets and phrases are looked for in: its title, then its items. */
function textsOf(session: IndexedSession): Array<{ role: SessionSearchSnippet['role']; text: string }> {
  return session.title === '' ? session.items : [{ role: 'title', text: session.title }, ...session.items];
}

/**
 * False only when `folded` (a folded text) cannot hold a word that `part` matches: a prefix match
 * contains `part`; a one-edit match keeps `part`'s first half or the rest after its middle.
 */
function mayContain(folded: string, part: string): boolean {
  if (folded.includes(part)) return true;
  if (fuzzyDistance(part) === 0) return false;
  const half = part.length >> 1;
  return folded.includes(part.slice(0, half)) || folded.includes(part.slice(half + 1));
}

/** True when one of a session's `texts` has words matching `phrase`'s parts next to each other, in order (SPEC §16.2). */
function hasPhrase(texts: ReturnType<typeof textsOf>, phrase: readonly string[]): boolean {
  return texts.some(({ text }) => {
    const folded = foldWord(text);
    if (!phrase.every((part) => mayContain(folded, part))) return false;
    const found = wordsOf(text);
    for (let k = 0; k + phrase.length <= found.length; k++) {
      if (phrase.every((part, j) => matchesPart(found[k + j]!, part))) return true;
    }
    return false;
  });
}

/**
 * Up to {@link MAX_SNIPPETS} snippets: the title when it matches, then the newest items that hold
 * a matched word, each around its matched words. Items are looked at newest first and only until
 * the snippets are found, so a hit costs what it shows plus one decoding of its kept text (at most
 * `maxIndexBytes`), not a scan of its whole session.
 */
function snippetsOf(texts: ReturnType<typeof textsOf>, titled: boolean, parts: readonly string[]): SessionSearchSnippet[] {
  const matches = (word: string) => parts.some((part) => matchesPart(word, part));
  const first = titled ? 1 : 0;
  const order = texts.slice(0, first);
  for (let k = texts.length - 1; k >= first; k--) order.push(texts[k]!);
  const snippets: SessionSearchSnippet[] = [];
  for (const { role, text } of order) {
    if (snippets.length >= MAX_SNIPPETS) break;
    const folded = foldWord(text);
    if (!parts.some((part) => mayContain(folded, part))) continue;
    const ranges = matchedWords(text, matches);
    if (ranges.length > 0) snippets.push(snippetOf(role, text, ranges));
  }
  return snippets;
}
