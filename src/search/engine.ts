/**
 * The search index of SPEC §16: indexed sessions and the full-text engine over them, with the
 * versioned bytes of `exportSearchIndex()` (§16.4).
 *
 * Engine choice (issue 23). First, with the same tokenizer (Intl.Segmenter, folded), 300
 * generated sessions of 50 KB mixed English/Chinese/Turkish/Russian text:
 * | engine | min+gzip | build | one AND query | JSON | BM25 + field boost | per-term fuzzy | replace/discard |
 * |---|---:|---:|---:|---:|---|---|---|
 * | MiniSearch 7.2.0 | 6.1 KB | 187 s* | 133 ms | 3.4 MB | BM25+, `boost` | function per term | `replace`, `discard` (+vacuum) |
 * | FlexSearch 0.8.212 | 17.3 KB | 254 s* | 8.6 ms | 4.1 MB (async key/value callbacks) | no (resolution slots) | no | `update`, `remove` |
 * | Orama 3.1.18 | 22.7 KB | (stopped after 300 s) | — | `save()` object | BM25, `boost` | one `tolerance` for all terms | `update`, `remove` |
 * *The builds handed 50 KB strings to the segmenter at once, which is quadratic in V8 (1 MB of
 * text: minutes); `words.ts` segments chunks of at most 2 KB and takes ASCII words on a fast path,
 * which is what made building practical at all. FlexSearch's query ignored the fuzzy term and found
 * 1 session where MiniSearch found 300 (the AND of a misspelled and a prefix term).
 *
 * MiniSearch was chosen then, and failed SPEC §16.7's memory bound: on 10–40 MB of real technical
 * text (node_modules `*.md`/`*.js`/`*.d.ts` cut into 20 KB documents, our `wordsOf`), its index
 * alone, without the snippet text, took 3.2–3.9× the indexed text (6–8× on smaller corpora): a
 * radix tree node and two Maps per distinct term, ~500 bytes each. FlexSearch (resolution 1) took
 * 3.6×, with no BM25 and no fuzzy terms. So the engine is now SQLite FTS5, measured against
 * MiniSearch on the same 40 MB (2,000 such documents, Node 20, a busy 2-core machine):
 * | engine | search chunk, min+gzip | index memory / text, text kept for snippets included | build | `function return` | `modle` (fuzzy) | `parser optoins` (fuzzy, no hit) | export |
 * |---|---:|---:|---:|---:|---:|---:|---:|
 * | MiniSearch 7.2.0 | 9.3 KB | 4.92× (3.92× without the text) | 20.2 s | 34 ms | 2.3 ms | 2.7 ms | 7.6 s, 56.4 MB |
 * | SQLite 3.54.1 FTS5 | 71.3 KB + the 879 KB module (lazy) | 1.47× (1.64× with all of SQLite's WebAssembly memory) | 16.0 s | 47 ms | 9.6 ms | 3.9 ms | 2.3 s, 60.4 MB |
 * | SQLite FTS5, sessions and their text (fflate) in the database | 75.7 KB + the module | 0.77× (0.92×) | 14.4 s | 22 ms | 4.5 ms | 5.1 ms | 0.6 s, 30.5 MB |
 * (Both rows: the same harness and files, the lead's list of node_modules files; JavaScript heap
 * after GC plus the growth of SQLite's WebAssembly memory, or its database's pages when larger;
 * queries warm, one run each. `node scripts/measure-search-index.mjs 2000` measures SQLite the
 * same way over its own walk of node_modules: 1.41×, 1.54× with all its WebAssembly memory.) SQLite has
 * BM25 with column weights, prefix queries, incremental deletes of contentless rows, and its
 * database file as the bytes to keep; it is the official build, WebAssembly on Web APIs alone.
 *
 * How the index uses FTS5:
 * - Table `words(title, text, cwd)`: contentless (`content=''`, `contentless_delete=1`), so it
 *   stores no text, only the inverted index. Table `sessions` holds, per session, what tells
 *   whether it changed (identity, seq), its title and cwd, and its items compressed (`stored.ts`)
 *   for snippets and phrases; its `row` is the session's rowid in `words`. Nothing is kept per
 *   session in JavaScript: a session's conversation is often a few KB (tool output, most of a log,
 *   is never indexed), so a JavaScript object and strings per session (~1.5 KB) and the text as is
 *   would alone pass SPEC §16.7's twice the indexed text.
 *   It is fed our own words (`wordsOf`, SPEC §16.3) joined by spaces, under FTS5's `ascii`
 *   tokenizer, which splits at ASCII characters other than letters and digits and keeps every
 *   other character: every ASCII character of a word that is not `[a-z0-9]` (`_ . ' : ,`…) is
 *   written as the private-use character U+E000 + its code ({@link encodeWord}), in the index
 *   and in queries alike, so each of our words is exactly one FTS5 token. No word holds a
 *   private-use character of its own (they are word break `Other`: never part of a word).
 * - A query part matches its prefix (`"part"*`) and, from 5 code points on, the words one edit
 *   away (SPEC §16.3), found in a plain table, `vocabulary`: every indexed word of 4 or more code
 *   points (no shorter word is one edit from a 5-code-point part). A session's words enter it as
 *   the session is indexed (`INSERT OR IGNORE`); the words a replaced or removed session held
 *   leave it when FTS5's own list of its words (`fts5vocab`, looked up by those words only) no
 *   longer has them. (Counting sessions per word instead cost twice as much per indexed
 *   session: an update of every word's row.) At each position of the
 *   part, one query ({@link ONE_EDIT}) looks up the deletion, and the substitutions and insertions
 *   by each character that follows the part's head in some word, visited by a skip scan: one
 *   B-tree seek per distinct character, about 1 ms for a whole part. Candidates pass
 *   `matchesPart`. Each part is one FTS5 query for its prefix and one for its one-edit words
 *   (ORed); sessions must match every part (AND, intersected here). Score: the sum over the
 *   parts of −`bm25(words, 3, 1, 1)` (title weighted 3), one-edit matches weighted 0.45 as
 *   MiniSearch weighted them (BM25 is a sum over the query's terms, so the parts' scores add up
 *   to what one query of them all would give, less the weight). The design first given (range scans of `fts5vocab`, with a second FTS5
 *   table of reversed words for suffixes) read every word sharing the part's head or tail: a
 *   common head (the bench's `term…` words, `get…` and `use…` in code) meant the whole
 *   vocabulary, 550 ms at 195,000 words, as fts5vocab walks each word's postings.
 * @module
 */
import { root } from './root.js';
import { loadSqlite, type BindingSpec, type Database, type PreparedStatement, type SqlValue, type Sqlite3Static } from './sqlite.js';
import { packItems, unpackItems, type IndexedSession } from './stored.js';
import { fuzzyDistance, matchesPart, segmenterSignature, wordsOf } from './words.js';

export type { IndexedItem, IndexedSession } from './stored.js';

/** The version of the bytes `exportSearchIndex()` writes; bytes of any other version are rebuilt. */
const FORMAT = 'dsh-session-reference/search-index@3';

/** What the index holds of a session besides its text: what tells whether it changed (SPEC §16.4). */
export interface KnownSession {
  identity: string | undefined;
  seq: number | null;
}

/** A session the engine matched: its id and BM25 score (higher is better). */
export interface SearchResult {
  id: string;
  score: number;
}

/** The tables (SPEC §16.5; see the module doc). */
const SCHEMA = `
CREATE VIRTUAL TABLE words USING fts5(title, text, cwd, tokenize='ascii', content='', contentless_delete=1);
CREATE TABLE vocabulary(word TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE sessions(row INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, identity TEXT, seq INTEGER, title TEXT NOT NULL, cwd TEXT NOT NULL, items BLOB NOT NULL);`;

/** FTS5's own list of the words it holds (where a word still is, after a session left), never exported. */
const WORDS_VOCABULARY = `CREATE VIRTUAL TABLE temp.words_vocabulary USING fts5vocab(main, words, 'row')`;

/**
 * The words one edit at one position from a query part, `$head || $here || $rest`: the deletion
 * (`$head || $rest`), and the substitutions and insertions by each character `c` that follows
 * `$head` in some word (`$head || c || $rest`, `$head || c || $here || $rest`). The characters
 * are found by a skip scan: one B-tree seek per distinct character, however many words share the
 * head (a range scan of every word starting with a common head, `get`, `use`, the bench's `term`,
 * could read the whole vocabulary).
 */
const ONE_EDIT = `
WITH RECURSIVE follows(word) AS (
  SELECT (SELECT word FROM vocabulary WHERE word > $head AND word < $head || char(1114111) LIMIT 1)
  UNION ALL
  SELECT (SELECT word FROM vocabulary WHERE word >= $head || char(unicode(substr(follows.word, length($head) + 1, 1)) + 1) AND word < $head || char(1114111) LIMIT 1)
  FROM follows WHERE follows.word IS NOT NULL
),
spellings(word) AS (
  SELECT $head || $rest
  UNION SELECT $head || substr(word, length($head) + 1, 1) || $rest FROM follows WHERE word IS NOT NULL
  UNION SELECT $head || substr(word, length($head) + 1, 1) || $here || $rest FROM follows WHERE word IS NOT NULL
)
SELECT vocabulary.word FROM spellings JOIN vocabulary ON vocabulary.word = spellings.word`;

/** The words of a JSON array (a session's distinct words). */
const EACH = 'SELECT value FROM json_each(?)';

/**
 * The weight of a match one edit away against a match of the prefix itself: MiniSearch's default
 * (the engine before), so a word typed right ranks its sessions above those of its neighbours.
 */
const FUZZY_WEIGHT = 0.45;

/** Field weights of BM25, in column order (SPEC §16.3: the title above the conversation). */
const RANK = 'bm25(words, 3, 1, 1)';

/**
 * `word` with every ASCII character other than `[a-z0-9]` written as U+E000 + its code: one
 * token of FTS5's `ascii` tokenizer (see the module doc).
 */
export function encodeWord(word: string): string {
  // eslint-disable-next-line no-control-regex
  return word.replace(/[\0-/:-`{-\x7f]/g, (char) => String.fromCharCode(0xe000 + char.charCodeAt(0)));
}

/** `word` quoted as an FTS5 string (`"` doubled; encoded words hold none). */
function quote(word: string): string {
  return `"${word.replaceAll('"', '""')}"`;
}

/**
 * True when `word` has 4 or more code points: only such words can be one edit from a query part,
 * which needs 5 (SPEC §16.3), so only they enter `vocabulary`.
 */
function mayBeOneEditAway(word: string): boolean {
  if (word.length < 4) return false;
  let count = 0;
  for (const _ of word) if (++count >= 4) return true;
  return false;
}

/**
 * Text segmented between two chances to yield, in UTF-16 code units (about a millisecond of
 * work): a session holds up to `maxIndexBytes` of text, which must not block the event loop
 * whole (SPEC §10.3).
 */
const SLICE = 16_384;

/**
 * Where the slice of `text` from `start` ends: at the first whitespace from {@link SLICE} code
 * units on (words never hold one), else {@link SLICE} further on (text without spaces), never
 * inside a surrogate pair.
 */
function sliceEnd(text: string, start: number): number {
  if (text.length - start <= SLICE) return text.length;
  const space = text.slice(start + SLICE, start + 2 * SLICE).search(/\s/);
  let end = space === -1 ? start + 2 * SLICE : start + SLICE + space;
  if (/[\udc00-\udfff]/.test(text[end] ?? '')) end--;
  return Math.min(end, text.length);
}

/**
 * The encoded words of `texts`, joined by spaces (what a column of `words` is given); those
 * {@link mayBeOneEditAway} are also added to `seen`. Yields to the event loop and checks `signal`
 * between slices of text.
 */
async function tokensOf(texts: readonly string[], seen: Set<string>, signal: AbortSignal | undefined): Promise<string> {
  const tokens: string[] = [];
  for (const text of texts) {
    for (let start = 0; start < text.length; ) {
      const end = sliceEnd(text, start);
      for (const word of wordsOf(text.slice(start, end))) {
        const token = encodeWord(word);
        tokens.push(token);
        if (mayBeOneEditAway(token)) seen.add(token);
      }
      await root.pace(1 + ((end - start) >> 10));
      root.throwIfAborted(signal);
      start = end;
    }
  }
  return tokens.join(' ');
}

/** The columns of `words` for a session (title, text, cwd); its words are added to `seen`. */
async function columnsOf(session: Omit<IndexedSession, 'items'>, items: readonly { text: string }[], seen: Set<string>, signal: AbortSignal | undefined): Promise<[string, string, string]> {
  const texts = items.map((item) => item.text);
  return [await tokensOf([session.title], seen, signal), await tokensOf(texts, seen, signal), await tokensOf([session.cwd], seen, signal)];
}

/**
 * A string as the `sessions` table keeps it: its JSON. SQLite stores text as UTF-8, where a lone
 * surrogate (a host's id may hold one) would become U+FFFD and two ids could become one; JSON
 * writes it as an escape, so every string comes back exactly (SPEC §6.6: ids are returned as given).
 */
function toText(value: string): string {
  return JSON.stringify(value);
}

/** The string {@link toText} kept. */
function fromText(text: string): string {
  return JSON.parse(text) as string;
}

/** Closes the database of an index that was collected without being closed. */
const finalizer = typeof FinalizationRegistry === 'undefined' ? undefined : new FinalizationRegistry<Database>((db) => db.close());

/** The sessions and the engine over them. */
export class SessionSearchIndex {
  /** Statements prepared once (SQL text → statement); the database finalizes them when it closes. */
  private readonly statements = new Map<string, PreparedStatement>();
  /** Sessions replaced or removed since the database was last compacted (see `toBytes`). */
  private deletions = 0;
  /** Writes since the last search or export run in one transaction (FTS5 flushes at commit). */
  private writing = false;

  private constructor(
    readonly maxIndexBytes: number,
    private readonly sqlite: Sqlite3Static,
    private readonly db: Database,
  ) {
    finalizer?.register(this, db, this);
  }

  /**
   * A new, empty index.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` where WebAssembly cannot run (see `loadSqlite`).
   */
  static async create(maxIndexBytes: number): Promise<SessionSearchIndex> {
    const sqlite = await loadSqlite();
    const db = new sqlite.oo1.DB(':memory:');
    db.exec(SCHEMA);
    db.exec(WORDS_VOCABULARY);
    return new SessionSearchIndex(maxIndexBytes, sqlite, db);
  }

  /** The number of sessions indexed. */
  private size(): number {
    return Number(this.db.selectValue('SELECT count(*) FROM sessions'));
  }

  /** Every indexed session's id, with what tells whether it changed. */
  known(): Map<string, KnownSession> {
    const known = new Map<string, KnownSession>();
    for (const [id, identity, seq] of this.rows<[string, string | null, number | null]>('SELECT json_group_array(json_array(id, identity, seq)) FROM sessions')) {
      known.set(fromText(id), { identity: identity === null ? undefined : fromText(identity), seq });
    }
    return known;
  }

  /** The indexed session `id` with its items, or `undefined`. */
  session(id: string): IndexedSession | undefined {
    const row = this.first('SELECT identity, seq, title, cwd, items FROM sessions WHERE id = ?', [toText(id)]);
    if (row === undefined) return undefined;
    const [identity, seq, title, cwd, items] = row;
    return {
      id,
      identity: identity === null ? undefined : fromText(identity as string),
      seq: seq === null ? null : Number(seq),
      title: fromText(title as string),
      cwd: fromText(cwd as string),
      items: unpackItems(items as Uint8Array),
    };
  }

  /**
   * Adds `session` or replaces the indexed session with its id. Its words are found first,
   * yielding to the event loop as they are (`signal` checked: a cancelled put writes nothing), then
   * written at once.
   */
  async put(session: IndexedSession, signal?: AbortSignal): Promise<void> {
    const items = packItems(session.items);
    const old = this.session(session.id);
    const before = old === undefined ? undefined : await this.wordsOf(old, signal);
    const seen = new Set<string>();
    const columns = await columnsOf(session, session.items, seen, signal);
    this.begin();
    if (old !== undefined) this.deleteSession(old.id);
    this.run('INSERT INTO sessions(id, identity, seq, title, cwd, items) VALUES (?, ?, ?, ?, ?, ?)', [
      toText(session.id),
      session.identity === undefined ? null : toText(session.identity),
      session.seq,
      toText(session.title),
      toText(session.cwd),
      items,
    ]);
    this.run('INSERT INTO words(rowid, title, text, cwd) VALUES (last_insert_rowid(), ?, ?, ?)', columns);
    this.run(`INSERT OR IGNORE INTO vocabulary(word) ${EACH}`, [JSON.stringify([...seen])]);
    if (before !== undefined) this.forget([...before].filter((word) => !seen.has(word)));
  }

  /** Forgets the session with `id` (`signal` checked while its words are found: a cancelled remove changes nothing). */
  async remove(id: string, signal?: AbortSignal): Promise<void> {
    const old = this.session(id);
    if (old === undefined) return;
    const words = await this.wordsOf(old, signal);
    this.begin();
    this.deleteSession(id);
    this.forget([...words]);
  }

  /** The vocabulary words of an indexed session (found from its text again). */
  private async wordsOf(session: IndexedSession, signal: AbortSignal | undefined): Promise<Set<string>> {
    const seen = new Set<string>();
    await columnsOf(session, session.items, seen, signal);
    return seen;
  }

  /** Deletes the session with `id`: its row of `sessions` and of `words`. */
  private deleteSession(id: string): void {
    this.deletions++;
    const [row] = this.first('SELECT row FROM sessions WHERE id = ?', [toText(id)])!;
    this.run('DELETE FROM words WHERE rowid = ?', [row as number]);
    this.run('DELETE FROM sessions WHERE row = ?', [row as number]);
  }

  /** Takes out of the vocabulary those of `words` (words a session no longer holds) that no session holds any more. */
  private forget(words: string[]): void {
    if (words.length === 0) return;
    const gone = `DELETE FROM vocabulary WHERE word IN (${EACH}) AND word NOT IN (SELECT term FROM words_vocabulary WHERE term IN (${EACH}))`;
    const list = JSON.stringify(words);
    this.run(gone, [list, list]);
  }

  /** Runs `sql` (one statement, prepared once per index) with `bind`. */
  private run(sql: string, bind: BindingSpec): void {
    this.statement(sql).bind(bind).stepReset();
  }

  /**
   * The rows of `sql`, a query of one value, the JSON array of its rows (`json_group_array`):
   * thousands of rows come back as one string, where reading them column by column through
   * sqlite's JavaScript API costs microseconds each.
   */
  private rows<Row>(sql: string, bind?: BindingSpec): Row[] {
    const statement = this.statement(sql);
    if (bind !== undefined) statement.bind(bind);
    try {
      return statement.step() ? (JSON.parse(statement.getString(0) ?? '[]') as Row[]) : [];
    } finally {
      statement.reset();
    }
  }

  /** The first row of `sql` (prepared once per index: it runs for every put and every hit) with `bind`, or `undefined`. */
  private first(sql: string, bind: BindingSpec): SqlValue[] | undefined {
    const statement = this.statement(sql).bind(bind);
    try {
      return statement.step() ? statement.get([]) : undefined;
    } finally {
      statement.reset();
    }
  }

  /** The first column of every row of `sql` (prepared once per index) with `bind`. */
  private all(sql: string, bind: BindingSpec): SqlValue[] {
    const statement = this.statement(sql).bind(bind);
    const values: SqlValue[] = [];
    try {
      while (statement.step()) values.push(statement.get(0));
    } finally {
      statement.reset();
    }
    return values;
  }

  private statement(sql: string): PreparedStatement {
    let statement = this.statements.get(sql);
    if (statement === undefined) this.statements.set(sql, (statement = this.db.prepare(sql)));
    return statement;
  }

  private begin(): void {
    if (this.writing) return;
    this.db.exec('BEGIN');
    this.writing = true;
  }

  private commit(): void {
    if (!this.writing) return;
    this.db.exec('COMMIT');
    this.writing = false;
  }

  /**
   * Sessions holding every part of every query word (AND), each part matching a word by prefix
   * or, from 5 code points on, by one edit (SPEC §16.3), scored by BM25 with the title weighted;
   * `exclude` is never a result. Unordered (the caller orders).
   */
  async search(parts: readonly string[], exclude: string, signal?: AbortSignal): Promise<SearchResult[]> {
    this.commit();
    let scores: Map<number, number> | undefined;
    // A part given twice matches what it matched once (a query of one word repeated costs one).
    for (const part of new Set(parts)) {
      await root.pace(8);
      root.throwIfAborted(signal);
      const found = this.partScores(encodeWord(part));
      // AND: a session must match every part; its score is the sum of the parts' (BM25 is a sum over the query's terms).
      for (const [row, score] of scores === undefined ? [] : found) {
        const before = scores!.get(row);
        if (before === undefined) found.delete(row);
        else found.set(row, before + score);
      }
      scores = found;
      if (scores.size === 0) break;
    }
    const results: SearchResult[] = [];
    if (scores === undefined || scores.size === 0) return results;
    const ids = this.rows<[number, string]>(`SELECT json_group_array(json_array(row, id)) FROM sessions WHERE row IN (${EACH})`, [JSON.stringify([...scores.keys()])]);
    for (const [row, text] of ids) {
      const id = fromText(text);
      if (id !== exclude) results.push({ id, score: scores.get(row)! });
    }
    return results;
  }

  /**
   * The sessions matching one encoded query part, with the part's BM25 score: what its prefix
   * matches, plus {@link FUZZY_WEIGHT} times what its words one edit away match (so an exact
   * word ranks above a typo's neighbours, as MiniSearch ranked them).
   */
  private partScores(part: string): Map<number, number> {
    const scores = new Map<number, number>();
    const add = (expression: string, weight: number) => {
      for (const [row, rank] of this.rows<[number, number]>(`WITH ranked AS MATERIALIZED (SELECT rowid, ${RANK} AS rank FROM words WHERE words MATCH ?) SELECT json_group_array(json_array(rowid, rank)) FROM ranked`, [expression])) {
        scores.set(row, (scores.get(row) ?? 0) - weight * rank);
      }
    };
    add(`${quote(part)}*`, 1);
    const near = fuzzyDistance(part) === 1 ? this.oneEditWords(part) : [];
    if (near.length > 0) add(near.map(quote).join(' OR '), FUZZY_WEIGHT);
    return scores;
  }

  /**
   * The indexed words (encoded) one edit from `part` that do not start with it (SPEC §16.3): at
   * each position, the deletion, and the substitutions and insertions by every character that
   * follows the part's head in a word of `vocabulary` ({@link ONE_EDIT}).
   */
  private oneEditWords(part: string): string[] {
    const points = [...part];
    const found = new Set<string>();
    for (let at = 0; at < points.length; at++) {
      const bind = { $head: points.slice(0, at).join(''), $here: points[at]!, $rest: points.slice(at + 1).join('') };
      for (const word of this.all(ONE_EDIT, bind)) found.add(word as string);
    }
    return [...found].filter((word) => !word.startsWith(part) && matchesPart(word, part));
  }

  /** Frees the database now (an index that is dropped is freed when collected). */
  close(): void {
    finalizer?.unregister(this);
    this.db.close();
  }

  /**
   * The versioned, checksummed bytes of this index (SPEC §16.4): a header line with the format
   * and the SHA-256 of the body; the body is one line of JSON (what the index was built with),
   * then the database file (`sqlite3_serialize`), which holds the sessions too. The same index gives
   * the same bytes however it was reached (a loaded index that did not change exports the bytes it
   * was loaded from): a host can tell whether a search changed the index by comparing bytes (the
   * edge Worker writes its R2 object only then).
   */
  async toBytes(): Promise<Uint8Array> {
    this.commit();
    // Once a quarter as many sessions as it holds were replaced or removed, FTS5's segments are
    // merged (dropping the deleted entries) and the freed pages given back before the file is
    // written: the bytes a host keeps hold the index as it is, not as large as it once was.
    if (this.deletions * 4 > this.size()) {
      this.db.exec("INSERT INTO words(words) VALUES ('optimize')");
      this.db.exec('VACUUM');
      this.deletions = 0;
    }
    const json = new TextEncoder().encode(
      JSON.stringify({
        maxIndexBytes: this.maxIndexBytes,
        words: segmenterSignature(),
      }),
    );
    const file = this.sqlite.capi.sqlite3_js_db_export(this.db);
    const body = new Uint8Array(json.length + 1 + file.length);
    body.set(json);
    body[json.length] = 10;
    body.set(file, json.length + 1);
    const head = new TextEncoder().encode(`${FORMAT} ${await checksum(body)}\n`);
    const bytes = new Uint8Array(head.length + body.length);
    bytes.set(head);
    bytes.set(body, head.length);
    return bytes;
  }

  /**
   * The index in `bytes`, or `undefined` when they are of another format version, another
   * `maxIndexBytes`, another segmenter, or damaged in any way (checksum, JSON, shape, a database
   * that fails SQLite's checks or holds other tables or other rows): the caller rebuilds, never
   * fails (SPEC §16.4).
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` where WebAssembly cannot run (see `loadSqlite`).
   */
  static async fromBytes(bytes: Uint8Array, maxIndexBytes: number): Promise<SessionSearchIndex | undefined> {
    const body = await checkedBody(bytes);
    if (body === undefined) return undefined;
    const sqlite = await loadSqlite();
    let index: SessionSearchIndex | undefined;
    try {
      const newline = body.indexOf(10);
      const data = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body.subarray(0, newline))) as { maxIndexBytes: unknown; words: unknown };
      if (data.maxIndexBytes !== maxIndexBytes || data.words !== segmenterSignature()) return undefined;
      index = new SessionSearchIndex(maxIndexBytes, sqlite, deserialize(sqlite, body.subarray(newline + 1)));
      if (!index.healthy()) {
        index.close();
        return undefined;
      }
      index.db.exec(WORDS_VOCABULARY);
      return index;
    } catch {
      index?.close();
      return undefined;
    }
  }

  /**
   * True when the loaded database passes SQLite's `integrity_check` and FTS5's `integrity-check`,
   * holds exactly the tables {@link create} makes, a row of `words` for each session and no other,
   * sessions of the types `put` writes, and items that unpack (a database damaged inside a valid
   * checksum is never searched). Reads every session once: linear in the index.
   */
  private healthy(): boolean {
    const db = this.db;
    if (db.selectValue('PRAGMA integrity_check') !== 'ok' || schemaOf(db) !== emptySchema(this.sqlite)) return false;
    db.exec("INSERT INTO words(words) VALUES ('integrity-check')");
    const rows = (db.selectValues('SELECT row FROM sessions ORDER BY row') as number[]).join();
    if ((db.selectValues('SELECT id FROM words_docsize ORDER BY id') as number[]).join() !== rows) return false;
    const typed = `json_type(id) = 'text' AND (identity IS NULL OR json_type(identity) = 'text') AND typeof(seq) IN ('integer', 'null')
      AND json_type(title) = 'text' AND json_type(cwd) = 'text'
      AND typeof(id) = 'text' AND typeof(identity) IN ('text', 'null')
      AND typeof(title) = 'text' AND typeof(cwd) = 'text' AND typeof(items) = 'blob'`;
    if (db.selectValue(`SELECT count(*) FROM sessions WHERE NOT (${typed})`) !== 0) return false;
    for (const items of db.selectValues('SELECT items FROM sessions')) unpackItems(items as Uint8Array);
    return true;
  }
}

/** A new database holding the file `file` (a copy in SQLite's memory, freed when it closes). */
function deserialize(sqlite: Sqlite3Static, file: Uint8Array): Database {
  const db = new sqlite.oo1.DB(':memory:');
  try {
    const { capi, wasm } = sqlite;
    const pointer = wasm.allocFromTypedArray(file);
    const rc = capi.sqlite3_deserialize(db, 'main', pointer, file.length, file.length, capi.SQLITE_DESERIALIZE_FREEONCLOSE | capi.SQLITE_DESERIALIZE_RESIZEABLE);
    db.checkRc(rc);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The schema of a database: every object's type, name and SQL. */
function schemaOf(db: Database): string {
  return JSON.stringify(db.selectArrays('SELECT type, name, sql FROM sqlite_schema ORDER BY name'));
}

let empty: string | undefined;

/** The schema {@link SessionSearchIndex.create} makes. */
function emptySchema(sqlite: Sqlite3Static): string {
  if (empty === undefined) {
    const db = new sqlite.oo1.DB(':memory:');
    db.exec(SCHEMA);
    empty = schemaOf(db);
    db.close();
  }
  return empty;
}

/** The body of `bytes` when their header names this format and the body's checksum, else `undefined`. */
async function checkedBody(bytes: Uint8Array): Promise<Uint8Array | undefined> {
  const newline = bytes.indexOf(10);
  if (newline < 0) return undefined;
  const head = new TextDecoder().decode(bytes.subarray(0, newline));
  const body = bytes.subarray(newline + 1);
  if (!head.startsWith(`${FORMAT} `)) return undefined;
  const sum = await checksum(body);
  return sum !== undefined && head === `${FORMAT} ${sum}` && body.includes(10) ? body : undefined;
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
