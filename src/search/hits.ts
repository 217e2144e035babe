/**
 * The hits of a search (SPEC §16.2) from an index: the engine's AND matches, phrases, order,
 * snippets, and the check that what the index matched is what it keeps (SPEC §16.4). Shared by
 * the service (`search.ts`) and the edge catalog: it imports neither SQLite host.
 * @module
 */
import type { SessionCandidate } from '../candidates.js';
import { DamagedIndexError } from './damage.js';
import { CWD, TEXT, TITLE, type SessionSearchIndex } from './engine.js';
import { engineRoot as root } from './root.js';
import { MAX_SNIPPETS, matchedWords, snippetOf, type SessionSearchSnippet } from './snippets.js';
import type { IndexedSession } from './stored.js';
import { foldWord, fuzzyDistance, indexedWords, matchesPart } from './words.js';

/** A hit of `searchSessions` (SPEC §16.2): the §6.5 row, its score and up to three snippets. */
export interface SessionSearchHit extends SessionCandidate {
  /** BM25 score (SQLite FTS5's `bm25`, negated), higher is better; 0 for an empty query. */
  score: number;
  /** At most 3; `[]` for a hit found by its cwd alone and for an empty query. */
  snippets: SessionSearchSnippet[];
}

/** A session as the caller lists it: the §6.5 row's fields and its place in the listing (ties, §16.2). */
export interface ListedSession {
  id: string;
  createdAt: number;
  /** The listing's cwd (a hit shows it when it is a non-empty string). */
  cwd: unknown;
  /** Position in the listing. */
  order: number;
}

/** A text of a session that matches are looked for in, with its folded form once computed. */
interface Text {
  role: SessionSearchSnippet['role'] | 'cwd';
  text: string;
  folded?: string;
}

/** `text.text` folded (`foldWord`), computed once per hit. */
function folded(text: Text): string {
  return (text.folded ??= foldWord(text.text));
}

/**
 * The hits of `words` (query words, each its parts: `queryWords`) in `index` (SPEC §16.2): the
 * engine's AND matches among `listed` — the listing, or a function giving the listed sessions
 * among the matched ids — (others are skipped), a split word's parts next to each other
 * in the title, one item or the cwd, best score first, then §6.3's groups, then listing order; the
 * first `limit`, each with its snippets. With more matches than a tier holds (`TIER_SIZE`, 1,000),
 * that order holds within each tier of the most recently indexed matches, and a tier's hits come
 * after every hit of the newer tiers (issue 27; SPEC §16.2, §16.7, §17.7). The best matches are
 * chosen inside SQLite, a window at a time (`SessionSearchIndex.ranked`: `limit` first, every tie
 * of the last included), and only a
 * window's sessions are listed, sorted and looked at: JavaScript touches O(`limit`) rows unless
 * phrases or unlisted sessions skip most of them. Only the hits' items are unpacked.
 * @throws DamagedIndexError when a hit's kept title, items or cwd holds no word matching a part
 * that the index matched in it (the index's words disagree with its text: the caller rebuilds,
 * SPEC §16.4).
 */
export async function findHits(
  index: SessionSearchIndex,
  listed: readonly ListedSession[] | ((ids: readonly string[]) => readonly ListedSession[]),
  words: string[][],
  agentId: string,
  ownCwd: unknown,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<SessionSearchHit[]> {
  const parts = [...new Set(words.flat())];
  const phrases = words.filter((word) => word.length > 1);
  // A host with a catalog (the edge) lists only a window's sessions, not every session.
  const listing = typeof listed === 'function' ? undefined : new Map(listed.map((session) => [session.id, session]));
  const hits: SessionSearchHit[] = [];
  for await (const window of index.ranked(parts, agentId, limit, signal)) {
    const byId = listing ?? new Map((listed as (ids: readonly string[]) => readonly ListedSession[])(window.map((result) => result.id)).map((session) => [session.id, session]));
    const results = window
      .map((result) => ({ result, listed: byId.get(result.id)! }))
      .filter(({ listed }) => listed !== undefined)
      .sort((a, b) => b.result.score - a.result.score || root.cwdGroup(ownCwd, a.listed.cwd) - root.cwdGroup(ownCwd, b.listed.cwd) || a.listed.order - b.listed.order);
    await addHits(index, results, parts, phrases, limit, signal, hits);
    if (hits.length >= limit) break;
  }
  return hits;
}

/**
 * Adds to `hits`, until it holds `limit`, the hits among `results` (one window, in order) whose
 * kept texts hold every phrase, with their snippets. The matched columns are looked up for a page
 * of results at a time: those shown, plus those a phrase leaves out.
 */
async function addHits(
  index: SessionSearchIndex,
  results: ReadonlyArray<{ result: { id: string; score: number }; listed: ListedSession }>,
  parts: readonly string[],
  phrases: readonly string[][],
  limit: number,
  signal: AbortSignal | undefined,
  hits: SessionSearchHit[],
): Promise<void> {
  for (let page = 0; page < results.length && hits.length < limit; page += limit) {
    const shown = results.slice(page, page + limit);
    const columns = index.columnsMatched(shown.map(({ result }) => result.id), parts);
    for (const { result, listed } of shown) {
      if (hits.length >= limit) break;
      await root.pace(4);
      root.throwIfAborted(signal);
      const session = await index.session(listed.id);
      if (session === undefined) continue;
      const texts = textsOf(session);
      checkColumns(texts, parts, columns.get(session.id) ?? []);
      if (!phrases.every((phrase) => hasPhrase(texts, phrase))) continue;
      // Cleaned again (a no-op for what the service wrote): kept bytes are never trusted as a label (SPEC §6.6).
      const label = root.cleanTitleLabel(session.title) || session.id;
      hits.push({
        sessionId: session.id,
        label,
        ...(root.isNonEmptyString(listed.cwd) && { cwd: listed.cwd }),
        createdAt: listed.createdAt,
        mention: root.formatSessionReferenceMention({ sessionId: session.id, label }),
        score: result.score,
        snippets: snippetsOf(texts, parts),
      });
    }
  }
}

/** The texts of a session that the index holds the words of: its title, its items, then its cwd. */
function textsOf(session: IndexedSession): Text[] {
  const texts: Text[] = session.items.map(({ role, text }) => ({ role, text }));
  if (session.title !== '') texts.unshift({ role: 'title', text: session.title });
  if (session.cwd !== '') texts.push({ role: 'cwd', text: session.cwd });
  return texts;
}

/**
 * Throws when a column of the session that the index matched a part in (`columns`, per part, from
 * `columnsMatched`) holds no word the part matches in the kept texts, or when a part matched in
 * no column: the index's words disagree with its text, so it is damaged (SPEC §16.4).
 */
function checkColumns(texts: readonly Text[], parts: readonly string[], columns: readonly number[]): void {
  for (const [k, part] of parts.entries()) {
    const matched = columns[k] ?? 0;
    const [title, text, cwd] = [matched & TITLE, matched & TEXT, matched & CWD];
    const ok =
      (!title || holdsPart(texts.filter((t) => t.role === 'title'), part)) &&
      (!text || holdsPart(texts.filter((t) => t.role === 'user' || t.role === 'assistant'), part)) &&
      (!cwd || holdsPart(texts.filter((t) => t.role === 'cwd'), part));
    if (!ok || !(title || text || cwd)) throw new DamagedIndexError('the index matched a session by a word its kept text does not hold');
  }
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

/**
 * True when one of `texts` holds a word, as the index took its words (`indexedWords`), that
 * `part` matches. The texts that may hold it are looked at first; the others only when none
 * does, so the answer is exact whatever folding the whole text does at word boundaries.
 */
function holdsPart(texts: readonly Text[], part: string): boolean {
  const likely = texts.filter((text) => mayContain(folded(text), part));
  const has = ({ text }: Text) => indexedWords(text).some((word) => matchesPart(word, part));
  return likely.some(has) || texts.filter((text) => !likely.includes(text)).some(has);
}

/** True when one of `texts` has words matching `phrase`'s parts next to each other, in order (SPEC §16.2). */
function hasPhrase(texts: readonly Text[], phrase: readonly string[]): boolean {
  return texts.some((text) => {
    if (!phrase.every((part) => mayContain(folded(text), part))) return false;
    const found = indexedWords(text.text);
    for (let k = 0; k + phrase.length <= found.length; k++) {
      if (phrase.every((part, j) => matchesPart(found[k + j]!, part))) return true;
    }
    return false;
  });
}

/**
 * Up to {@link MAX_SNIPPETS} snippets: the title when it matches, then the newest items that hold
 * a matched word, each around its matched words (never the cwd: a hit found by its cwd alone has
 * none). Items are looked at newest first and only until the snippets are found, so a hit costs
 * what it shows plus one decoding of its kept text (at most `maxIndexBytes`), not a scan of its
 * whole session.
 */
function snippetsOf(texts: readonly Text[], parts: readonly string[]): SessionSearchSnippet[] {
  const matches = (word: string) => parts.some((part) => matchesPart(word, part));
  const shown = texts.filter((text) => text.role !== 'cwd') as Array<Text & { role: SessionSearchSnippet['role'] }>;
  const first = shown[0]?.role === 'title' ? 1 : 0;
  const order = shown.slice(0, first);
  for (let k = shown.length - 1; k >= first; k--) order.push(shown[k]!);
  const snippets: SessionSearchSnippet[] = [];
  for (const text of order) {
    if (snippets.length >= MAX_SNIPPETS) break;
    if (!parts.some((part) => mayContain(folded(text), part))) continue;
    const ranges = matchedWords(text.text, matches);
    if (ranges.length > 0) snippets.push(snippetOf(text.role, text.text, ranges));
  }
  return snippets;
}
