/**
 * The search index of SPEC §16: indexed sessions and the full-text engine over them, with the
 * versioned bytes of `exportSearchIndex()` (§16.4).
 *
 * Engine choice (issue 23), measured on this machine with the same tokenizer (Intl.Segmenter,
 * folded), 300 generated sessions of 50 KB mixed English/Chinese/Turkish/Russian text:
 * | engine | min+gzip | build | one AND query | JSON | BM25 + field boost | per-term fuzzy | replace/discard |
 * |---|---:|---:|---:|---:|---|---|---|
 * | MiniSearch 7.2.0 | 6.1 KB | 187 s* | 133 ms | 3.4 MB | BM25+, `boost` | function per term | `replace`, `discard` (+vacuum) |
 * | FlexSearch 0.8.212 | 17.3 KB | 254 s* | 8.6 ms | 4.1 MB (async key/value callbacks) | no (resolution slots) | no | `update`, `remove` |
 * | Orama 3.1.18 | 22.7 KB | (stopped after 300 s) | — | `save()` object | BM25, `boost` | one `tolerance` for all terms | `update`, `remove` |
 * *The builds handed 50 KB strings to the segmenter at once, which is quadratic in V8 (1 MB of
 * text: minutes); `words.ts` segments chunks of at most 2 KB and takes ASCII words on a fast path,
 * which is what made building practical at all. FlexSearch's query ignored the fuzzy term and found
 * 1 session where MiniSearch found 300 (the AND of a misspelled and a prefix term).
 * MiniSearch is the smallest, has BM25+ with field boosts, a custom tokenizer and `processTerm`,
 * prefix and per-term fuzzy matching, `toJSON`/`loadJSON`, and incremental `add`/`discard`/
 * `replace`; it runs on Web APIs alone. So: MiniSearch.
 * @module
 */
import MiniSearch, { type AsPlainObject, type SearchResult } from 'minisearch';
import { fuzzyDistance, segmenterSignature, wordsOf } from './words.js';

/** The version of the bytes `exportSearchIndex()` writes; bytes of any other version are rebuilt. */
const FORMAT = 'dsh-session-reference/search-index@1';

/** One indexed item of a session's conversation (SPEC §8.2), newest last. */
export interface IndexedItem {
  role: 'user' | 'assistant';
  text: string;
}

/** What the index keeps of one session. */
export interface IndexedSession {
  id: string;
  /** The store's file identity when the listing gave one, else `undefined` (compare `seq`). */
  identity: string | undefined;
  /** `capturedThroughSeq` of the read that was indexed. */
  seq: number | null;
  /** The cleaned latest title (SPEC §6.6), `''` when none. */
  title: string;
  cwd: string;
  /** The newest items, at most `maxIndexBytes` UTF-8 bytes of text in all (SPEC §16.3). */
  items: IndexedItem[];
}

/** Field weights of BM25 (SPEC §16.3: the title above the conversation). */
const BOOST = { title: 3, text: 1, cwd: 1 };

const OPTIONS = {
  idField: 'id',
  fields: ['title', 'text', 'cwd'],
  // Searches pass words already folded (queryWords); indexing folds here.
  tokenize: wordsOf,
  processTerm: (term: string) => term,
  extractField: (session: IndexedSession, field: string) =>
    field === 'text' ? session.items.map((item) => item.text).join('\n') : String(session[field as 'title' | 'cwd' | 'id']),
  searchOptions: { tokenize: (query: string) => [query], processTerm: (term: string) => term },
};

/** The sessions and the engine over them. */
export class SessionSearchIndex {
  readonly sessions = new Map<string, IndexedSession>();
  private engine = new MiniSearch<IndexedSession>(OPTIONS);

  constructor(readonly maxIndexBytes: number) {}

  /** Adds `session` or replaces the indexed session with its id. */
  put(session: IndexedSession): void {
    if (this.sessions.has(session.id)) this.engine.discard(session.id);
    this.sessions.set(session.id, session);
    this.engine.add(session);
  }

  /** Forgets the session with `id`. */
  remove(id: string): void {
    if (!this.sessions.delete(id)) return;
    this.engine.discard(id);
  }

  /**
   * Sessions holding every part of every query word (AND), each part matching a word by prefix
   * or, from 5 code points on, by one edit (SPEC §16.3), BM25+ with the title boosted; best first.
   */
  search(parts: readonly string[], exclude: string): SearchResult[] {
    return this.engine.search(
      { combineWith: 'AND', queries: [...parts] },
      { prefix: true, fuzzy: fuzzyDistance, boost: BOOST, filter: (result) => result.id !== exclude },
    );
  }

  /**
   * The versioned, checksummed bytes of this index (SPEC §16.4). The same index gives the same
   * bytes however it was reached: MiniSearch lists its terms in its tree's insertion order, which
   * a loaded index does not share with the one it was saved from, so terms are sorted here — a
   * host can tell whether a search changed the index by comparing bytes (the edge Worker writes
   * its R2 object only then).
   */
  async toBytes(): Promise<Uint8Array> {
    const engine = this.engine.toJSON();
    engine.index.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const body = new TextEncoder().encode(
      JSON.stringify({ maxIndexBytes: this.maxIndexBytes, words: segmenterSignature(), sessions: [...this.sessions.values()], engine }),
    );
    const head = new TextEncoder().encode(`${FORMAT} ${await checksum(body)}\n`);
    const bytes = new Uint8Array(head.length + body.length);
    bytes.set(head);
    bytes.set(body, head.length);
    return bytes;
  }

  /**
   * The index in `bytes`, or `undefined` when they are of another format version, another
   * `maxIndexBytes`, another segmenter, or damaged in any way (checksum, JSON, shape): the caller
   * rebuilds, never fails (SPEC §16.4).
   */
  static async fromBytes(bytes: Uint8Array, maxIndexBytes: number): Promise<SessionSearchIndex | undefined> {
    try {
      const newline = bytes.indexOf(10);
      if (newline < 0) return undefined;
      const head = new TextDecoder().decode(bytes.subarray(0, newline));
      const body = bytes.subarray(newline + 1);
      const sum = await checksum(body);
      if (sum === undefined || head !== `${FORMAT} ${sum}`) return undefined;
      const data = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body)) as {
        maxIndexBytes: unknown;
        words: unknown;
        sessions: IndexedSession[];
        engine: AsPlainObject;
      };
      if (data.maxIndexBytes !== maxIndexBytes || data.words !== segmenterSignature() || !Array.isArray(data.sessions)) return undefined;
      const index = new SessionSearchIndex(maxIndexBytes);
      for (const session of data.sessions) index.sessions.set(session.id, session);
      index.engine = MiniSearch.loadJS(data.engine, OPTIONS);
      return index.engine.documentCount === index.sessions.size ? index : undefined;
    } catch {
      return undefined;
    }
  }
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
  // Our bytes are never over a SharedArrayBuffer (TextEncoder output, or the config's own copy).
  const digest = new Uint8Array(await subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
