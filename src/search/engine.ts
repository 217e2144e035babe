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
 * How the index uses FTS5 (on any SQLite host, `sql-host.ts`; every table is named `search_…`):
 * - Table `search_words(title, text, cwd)`: contentless (`content=''`, `contentless_delete=1`),
 *   so it stores no text, only the inverted index. Table `search_sessions` holds, per session,
 *   what tells whether it changed (identity, seq), its title and cwd, and its items compressed
 *   (`stored.ts`) for snippets and phrases; its `row` is the session's rowid in `search_words`.
 *   Table `search_meta` holds what the index was built with (format, `maxIndexBytes`, the
 *   segmenter's signature, the host's segmentation fingerprint where it gives one). Nothing is kept per
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
 *   away (SPEC §16.3), found in a plain table, `search_vocabulary`: every indexed word of 4 or
 *   more code points (no shorter word is one edit from a 5-code-point part). A session's words
 *   enter it as the session is indexed (`INSERT OR IGNORE`); words no session holds any more
 *   leave it when the index is compacted (FTS5's own list of its words, `search_terms`, an
 *   `fts5vocab` table), and find nothing until then. (Counting sessions per word instead cost
 *   twice as much per indexed session: an update of every word's row; finding a replaced
 *   session's words again from its old text cost as much as indexing it.) At each position of the
 *   part, one query ({@link ONE_EDIT}) looks up the deletion, and the substitutions and insertions
 *   by each character that follows the part's head in some word, visited by a skip scan: one
 *   B-tree seek per distinct character, about 1 ms for a whole part. Candidates pass
 *   `matchesPart`. Each part is one FTS5 query for its prefix and one for its one-edit words
 *   (ORed); sessions must match every part (AND: the parts joined in SQL, and the best scores
 *   chosen there, {@link SessionSearchIndex.ranked}, so that a search of a word most sessions
 *   hold hands JavaScript a window of `limit` rows, not every match). A search ranks in tiers
 *   of the {@link TIER_SIZE} most recently indexed matching sessions (issue 27; SPEC §16.3,
 *   §16.7, §17.7): exact BM25 top-k is linear in the matches, so the set ranked first is bounded
 *   (a rowid range FTS5 seeks) and older tiers follow only when a tier runs out of hits. Score: the sum over the
 *   parts of −`bm25(words, 3, 1, 1)` (title weighted 3), one-edit matches weighted 0.45 as
 *   MiniSearch weighted them (BM25 is a sum over the query's terms, so the parts' scores add up
 *   to what one query of them all would give, less the weight). BM25's collection statistics
 *   (rows, average length, each phrase's row count) are the whole index's, so a session scores
 *   the same in any tier and on either host; the one cost of a search that still grows with the
 *   index is theirs: FTS5's `bm25()` counts a phrase's rows by walking its whole doclist, once
 *   per ranking statement, whatever rowid range the statement has (see {@link IN_TIER}).
 *   The design first given (range scans of `fts5vocab`, with a second FTS5
 *   table of reversed words for suffixes) read every word sharing the part's head or tail: a
 *   common head (the bench's `term…` words, `get…` and `use…` in code) meant the whole
 *   vocabulary, 550 ms at 195,000 words, as fts5vocab walks each word's postings.
 * @module
 */
import { DamagedIndexError } from './damage.js';
import { engineRoot as root } from './root.js';
import type { SqlHost, SqlValue } from './sql-host.js';
import { keptItems, loadDeflate, packItems, unpackItems, type IndexedSession } from './stored.js';
import { forEachWord, fuzzyDistance, matchesPart, segmenterSignature, slicesOf, sliceWork } from './words.js';

export type { IndexedItem, IndexedSession } from './stored.js';
export { DamagedIndexError, isIndexDamage } from './damage.js';

/** The version of the engine's tables (and of the bytes `exportSearchIndex()` writes); any other is rebuilt. */
export const FORMAT = 'dsh-session-reference/search-index@4';

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

/**
 * The engine's tables (SPEC §16.5; see the module doc), all named `search_…` so that they sit
 * beside a host's own tables (the edge catalog's) in one database. `search_meta` holds what the
 * index was built with ({@link meta}); `search_terms` is FTS5's own list of the words it holds.
 * A load compares a database's schema with what these make (`EXPECTED_SCHEMA` of `index-bytes.ts`).
 */
export const SCHEMA: readonly string[] = [
  'CREATE TABLE search_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID',
  "CREATE VIRTUAL TABLE search_words USING fts5(title, text, cwd, tokenize='ascii', content='', contentless_delete=1)",
  "CREATE VIRTUAL TABLE search_terms USING fts5vocab(search_words, 'row')",
  'CREATE TABLE search_vocabulary(word TEXT PRIMARY KEY) WITHOUT ROWID',
  'CREATE TABLE search_sessions(row INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, identity TEXT, seq INTEGER, title TEXT NOT NULL, cwd TEXT NOT NULL, items BLOB NOT NULL)',
];

/**
 * The words one edit at one position from a query part, `?1 || ?2 || ?3` (head, the character
 * here, rest): the deletion (`head || rest`), and the substitutions and insertions by each
 * character `c` that follows the head in some word (`head || c || rest`, `head || c || here ||
 * rest`). The characters are found by a skip scan: one B-tree seek per distinct character, however
 * many words share the head (a range scan of every word starting with a common head, `get`, `use`,
 * the bench's `term`, could read the whole vocabulary).
 */
const ONE_EDIT = `
WITH RECURSIVE follows(word) AS (
  SELECT (SELECT word FROM search_vocabulary WHERE word > ?1 AND word < ?1 || char(1114111) LIMIT 1)
  UNION ALL
  SELECT (SELECT word FROM search_vocabulary WHERE word >= ?1 || char(unicode(substr(follows.word, length(?1) + 1, 1)) + 1) AND word < ?1 || char(1114111) LIMIT 1)
  FROM follows WHERE follows.word IS NOT NULL
),
spellings(word) AS (
  SELECT ?1 || ?3
  UNION SELECT ?1 || substr(word, length(?1) + 1, 1) || ?3 FROM follows WHERE word IS NOT NULL
  UNION SELECT ?1 || substr(word, length(?1) + 1, 1) || ?2 || ?3 FROM follows WHERE word IS NOT NULL
)
SELECT json_group_array(search_vocabulary.word) FROM spellings JOIN search_vocabulary ON search_vocabulary.word = spellings.word`;

/**
 * 1 when `search_words` holds as many rows as `search_sessions` and none past its highest row:
 * words left behind by a session whose row is gone would otherwise be counted again for the
 * session that takes the row next.
 */
const ONE_ROW_EACH = `SELECT (SELECT count(*) FROM search_sessions) = (SELECT count(*) FROM search_words_docsize)
  AND coalesce((SELECT max(id) FROM search_words_docsize), 0) <= coalesce((SELECT max(row) FROM search_sessions), 0)`;

/**
 * The first two words of `search_vocabulary` starting with `?1`, as a JSON array. The table holds
 * every indexed word of 4 or more code points (and, until a compaction, words no session holds
 * any more), so for a part of 4 or more one word found is the only word FTS5 holds with that
 * prefix (a stale word makes two: the prefix is then queried as such).
 */
const PREFIXED = `SELECT json_group_array(word) FROM (SELECT word FROM search_vocabulary WHERE word >= ?1 AND word < ?1 || char(1114111) LIMIT 2)`;

/** The words of a JSON array (a session's distinct words). */
const EACH = 'SELECT value FROM json_each(?)';

/**
 * The weight of a match one edit away against a match of the prefix itself: MiniSearch's default
 * (the engine before), so a word typed right ranks its sessions above those of its neighbours.
 */
const FUZZY_WEIGHT = 0.45;

/**
 * The bound value `?n` as a rowid bound FTS5 seeks: `CAST(?n AS INTEGER)`. FTS5 takes a rowid
 * constraint as a range of its doclists only when its value is an INTEGER (`fts5GetRowidLimit`);
 * a value of another type is no bound to it, and SQLite then filters the rows of the whole
 * doclist. A Durable Object's SQL API binds every JavaScript number as a REAL (issue 27: the
 * edge's tier and matched-columns statements walked every posting of a common word, 15–50 ms
 * at 100,000 sessions, where SQLite's WebAssembly build binds an integer as one).
 */
function rowid(n: number): string {
  return `CAST(?${n} AS INTEGER)`;
}

/** Field weights of BM25, in column order (SPEC §16.3: the title above the conversation). */
const RANK = 'bm25(search_words, 3, 1, 1)';

/**
 * The rows of one tier ({@link SessionSearchIndex.ranked}): rowids from `?6` (the floor) up to
 * below `?7`. FTS5 takes both as a range of its doclists (its `xBestIndex` uses rowid bounds), so
 * a statement ranks the tier's matches, not every match; BM25's statistics (the number of rows,
 * each phrase's row count, the average length) stay those of the whole table, so a row scores
 * the same in any tier.
 *
 * What that costs (issue 27, `npm run bench -- --only catalog`, workerd, a word 98% of the
 * sessions hold): `bm25()` counts each phrase's rows through FTS5's `xQueryPhrase`, a walk of the
 * phrase's whole doclist that ignores the statement's rowid range, about 13–15 ms at 100,000
 * sessions (0.6 ms at 1,000; up to 21 ms on a busier machine) against 1–1.5 ms for the tier's
 * rows themselves. With it a whole edge `/search` of that word took 1.23–1.47× as long at
 * 100,000 sessions as at 1,000 (three runs, load average 11–14): within SPEC §17.7's 1.5× at
 * that size, not beyond it, as the walk grows by about 0.15 µs per posting. Merging the index
 * into one segment (FTS5's `optimize`, 0.8 s at 100,000 sessions) does not shorten that walk
 * (15.0 against 15.7 ms), so the index is not kept merged for it. Statistics over a bounded part
 * of the index (Elasticsearch's shard-local ones) would bound it, but need either FTS5 tables per
 * shard of sessions (every statement, the vocabulary and the exported schema over a varying set
 * of tables) or a ranking of our own, which a Durable Object cannot give: it runs no user
 * functions, so a row's term frequencies are known only to `bm25()`.
 */
const IN_TIER = `rowid >= ${rowid(6)} AND rowid < ${rowid(7)}`;

/**
 * The score of one query part per matching row, `name(row, score)`: −BM25 of the part's prefix
 * expression (`prefix`, SQL giving the FTS5 expression), and, with words one edit away (`near`),
 * minus {@link FUZZY_WEIGHT} times their BM25 — computed as JavaScript computed it before the
 * ranking moved into SQLite (the same IEEE operations in the same order: `0 − prefix`, then
 * `− weight × near`), so scores are unchanged.
 */
function partTable(name: string, prefix: string, near: string | undefined): string {
  if (near === undefined) return `${name}(row, score) AS MATERIALIZED (SELECT rowid, 0 - ${RANK} FROM search_words WHERE search_words MATCH ${prefix} AND ${IN_TIER})`;
  return `${name}(row, score) AS MATERIALIZED (SELECT row, coalesce(0 - max(prefix), 0) - coalesce(${FUZZY_WEIGHT} * max(near), 0) FROM (
    SELECT rowid AS row, ${RANK} AS prefix, NULL AS near FROM search_words WHERE search_words MATCH ${prefix} AND ${IN_TIER}
    UNION ALL SELECT rowid, NULL, ${RANK} FROM search_words WHERE search_words MATCH ${near} AND ${IN_TIER}) GROUP BY row)`;
}

/**
 * Query parts ranked in one statement, at most: the rest are ranked before, their matches and
 * partial scores carried into the next statement as JSON (SQLite joins at most 64 tables, and a
 * Durable Object binds at most 100 values and 100 KB of SQL per statement). SQLite 3.54's JSON
 * writes a score exactly; a Durable Object's SQLite writes 15 significant digits, so there a
 * carried score may differ from the exact sum in its last digit (as every part's score did when
 * the parts were summed in JavaScript through JSON).
 */
const PARTS_PER_STATEMENT = 16;

/**
 * The ranking of some query parts in SQL: `ranked(row, score)`, the rows matching every part (AND:
 * a join of the parts' tables, after the rows `?5` carries from the parts before, when not null),
 * the score their sum in the query's order (BM25 is a sum over the query's terms), the agent's
 * own session (`?1`, its id as kept) left out. `?4` is the JSON array of the parts' FTS5
 * expressions (`expressions`: each part's prefix expression and, when it has some, its one-edit
 * words), `?6` and `?7` the tier's rowids ({@link IN_TIER}), so a statement binds seven values
 * however many parts it ranks.
 */
function rankedTables(expressions: ReadonlyArray<readonly [string, string | undefined]>): string {
  const tables = ['carried(row, score) AS MATERIALIZED (SELECT json_extract(value, \'$[0]\'), json_extract(value, \'$[1]\') FROM json_each(?5))'];
  let at = 0;
  const expression = () => `json_extract(?4, '$[${at++}]')`;
  for (const [k, [, near]] of expressions.entries()) {
    const prefix = expression();
    tables.push(partTable(`part${k}`, prefix, near === undefined ? undefined : expression()));
  }
  const sum = ['CASE WHEN ?5 IS NULL THEN 0 ELSE carried.score END', ...expressions.map((_, k) => `part${k}.score`)];
  // Without carried rows the first part's score is its own (0 + s is s, bit for bit, for every s but −0, which no BM25 gives).
  const joins = expressions.slice(1).map((_, k) => ` JOIN part${k + 1} ON part${k + 1}.row = part0.row`).join('');
  const from = `part0${joins} LEFT JOIN carried ON carried.row = part0.row WHERE (?5 IS NULL OR carried.row IS NOT NULL) AND part0.row NOT IN (SELECT row FROM search_sessions WHERE id = ?1)`;
  tables.push(`ranked(row, score) AS MATERIALIZED (SELECT part0.row, ${sum.join(' + ')} FROM ${from})`);
  return tables.join(',\n');
}

/** A query's ranking: its SQL tables ({@link rankedTables}) and what they bind from `?4` on. */
interface Ranking {
  tables: string;
  bindings: SqlValue[];
}

/**
 * A window of {@link Ranking}, best first: the `?2` best scores below `?3` (`null`: from the top),
 * and every row tied with the last of them (so the host's tie-breaks, SPEC §16.2, see every tied
 * row at once), each with its session's id as kept (`null` when the row has none: damage).
 * SQLite keeps the `?2` best in a bounded sorter; only the window crosses into JavaScript.
 */
const WINDOW = `edge(score) AS (SELECT score FROM ranked WHERE ?3 IS NULL OR score < ?3 ORDER BY score DESC LIMIT 1 OFFSET ?2 - 1)
SELECT ranked.row, search_sessions.id, ranked.score FROM ranked LEFT JOIN search_sessions ON search_sessions.row = ranked.row
WHERE (?3 IS NULL OR ranked.score < ?3) AND ranked.score >= coalesce((SELECT score FROM edge), -9e999) ORDER BY ranked.score DESC`;

/** Every row of {@link Ranking}, best first, with its session's id as kept. */
const EVERY = `SELECT ranked.row, search_sessions.id, ranked.score FROM ranked LEFT JOIN search_sessions ON search_sessions.row = ranked.row ORDER BY ranked.score DESC`;

/**
 * The floor of a tier ({@link SessionSearchIndex.ranked}): the rowid of the `?3 + 1`-th highest
 * row below `?2` matching `?1` (the whole query: its parts ANDed, each its prefix expression ORed
 * with its one-edit words), or no row when fewer match. FTS5 walks the doclists in descending
 * rowid order and stops at that row.
 */
const TIER_FLOOR = `SELECT rowid FROM search_words WHERE search_words MATCH ?1 AND rowid < ${rowid(2)} ORDER BY rowid DESC LIMIT 1 OFFSET ?3`;

/**
 * The matching sessions ranked in one tier (issue 27): chosen from measurements (docs/performance.md,
 * "The edge `/search` of a common word"; see {@link SessionSearchIndex.ranked}).
 */
export const TIER_SIZE = 1000;

/** The most rows one window asks for (a bound for SQLite's `OFFSET`; larger windows are walked on). */
const MAX_WINDOW = 2 ** 30;

/**
 * The rows of a JSON array (`?1`) that match an FTS5 expression, each with the columns it matched
 * in (bit 1 the title, 2 the text, 4 the cwd), as one JSON array: `?4`, `?5`, `?6` are the
 * expression under a column filter each (`{title} : (…)`, …), a row matching one in the columns
 * it names. Only rows from the lowest of the list to the highest are visited (`?2`, `?3`: a rowid
 * range FTS5 seeks, so a page of one tier of {@link SessionSearchIndex.ranked} walks that tier's
 * postings, not every match); no BM25, whose statistics would count every row holding the words
 * (issue 27), and no `rowid IN` constraint, which makes FTS5 evaluate the whole expression once per
 * row of the list.
 */
const COLUMNS = `WITH shown(row) AS MATERIALIZED (SELECT value FROM json_each(?1)),
matched(row, bit) AS MATERIALIZED (
  SELECT rowid, 1 FROM search_words WHERE search_words MATCH ?4 AND rowid >= ${rowid(2)} AND rowid <= ${rowid(3)}
  UNION ALL SELECT rowid, 2 FROM search_words WHERE search_words MATCH ?5 AND rowid >= ${rowid(2)} AND rowid <= ${rowid(3)}
  UNION ALL SELECT rowid, 4 FROM search_words WHERE search_words MATCH ?6 AND rowid >= ${rowid(2)} AND rowid <= ${rowid(3)})
SELECT json_group_array(json_array(row, columns)) FROM (SELECT row, sum(bit) AS columns FROM matched WHERE row IN shown GROUP BY row)`;

/** The column bit of {@link SessionSearchIndex.columnsMatched} for the title. */
export const TITLE = 1;
/** The column bit of {@link SessionSearchIndex.columnsMatched} for the conversation text. */
export const TEXT = 2;
/** The column bit of {@link SessionSearchIndex.columnsMatched} for the cwd. */
export const CWD = 4;

/**
 * `word` with every ASCII character other than `[a-z0-9]` written as U+E000 + its code: one
 * token of FTS5's `ascii` tokenizer (see the module doc).
 */
export function encodeWord(word: string): string {
  // Most words are `[a-z0-9]` or not ASCII at all: a scan of their code units, no regular expression, returns them as they are.
  for (let k = 0; k < word.length; k++) {
    const code = word.charCodeAt(k);
    if (code < 0x80 && !(code >= 0x61 && code <= 0x7a) && !(code >= 0x30 && code <= 0x39)) {
      // eslint-disable-next-line no-control-regex
      return word.replace(/[\0-/:-`{-\x7f]/g, (char) => String.fromCharCode(0xe000 + char.charCodeAt(0)));
    }
  }
  return word;
}

/** `word` quoted as an FTS5 string (`"` doubled; encoded words hold none). */
function quote(word: string): string {
  return `"${word.replaceAll('"', '""')}"`;
}

/**
 * True when `word` has 4 or more code points: only such words can be one edit from a query part,
 * which needs 5 (SPEC §16.3), so only they enter `search_vocabulary`.
 */
function mayBeOneEditAway(word: string): boolean {
  if (word.length < 4) return false;
  let count = 0;
  for (const _ of word) if (++count >= 4) return true;
  return false;
}

/**
 * The encoded words of `texts`, joined by spaces (what a column of `search_words` is given); those
 * {@link mayBeOneEditAway} are also added to `seen`. Yields to the event loop and checks `signal`
 * between slices of text ({@link slicesOf}).
 */
async function tokensOf(texts: readonly string[], seen: Set<string>, signal: AbortSignal | undefined): Promise<string> {
  const tokens: string[] = [];
  const visit = (_start: number, _end: number, folded: string) => {
    const token = encodeWord(folded);
    tokens.push(token);
    if (mayBeOneEditAway(token)) seen.add(token);
  };
  for (const text of texts) {
    for (const slice of slicesOf(text)) {
      // Most slices need no turn of the event loop: no promise awaited then.
      const turn = root.pace(sliceWork(slice, forEachWord(slice, visit)));
      if (turn !== undefined) await turn;
      root.throwIfAborted(signal);
    }
  }
  return tokens.join(' ');
}

/**
 * The longest JSON text of a kept title: a label of 120 code points (SPEC §6.6), each of its 240
 * UTF-16 code units at most a 6-character escape, and the quotes.
 */
const MAX_TITLE_TEXT = 120 * 2 * 6 + 2;

/**
 * A string as `search_sessions` keeps it: its JSON. SQLite stores text as UTF-8, where a lone
 * surrogate (a host's id may hold one) would become U+FFFD and two ids could become one; JSON
 * writes it as an escape, so every string comes back exactly (SPEC §6.6: ids are returned as given).
 */
function toText(value: string): string {
  return JSON.stringify(value);
}

/** The string {@link toText} kept in `text`. @throws DamagedIndexError for anything else. */
function fromText(text: SqlValue): string {
  if (typeof text === 'string') {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'string') return value;
    } catch {
      // damaged: below
    }
  }
  throw new DamagedIndexError('a kept string is not what the engine writes');
}

/**
 * What an index is built with, as `search_meta` keeps it: another value of any of them is another
 * index. `wordsBy`, the host's segmentation fingerprint where it gives one (src/host-segmenter.ts),
 * names the runtime whose segmenter answered `words`.
 */
function meta(maxIndexBytes: number): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['format', FORMAT],
    ['maxIndexBytes', String(maxIndexBytes)],
    ['words', segmenterSignature()],
  ];
  const by = root.segmenterFingerprint();
  if (by !== undefined) rows.push(['wordsBy', by]);
  return rows;
}

/**
 * True when the rows of `search_meta` (`kept` by key, `rows` of them) are those {@link meta} writes
 * for `maxIndexBytes` here, under this host's `fingerprint`: the same format and `maxIndexBytes`,
 * and words split alike — where the index names the fingerprint
 * this host gives, its `words` is the answer of a runtime that splits as this one does and is
 * taken as it is (no sample segmented, see src/host-segmenter.ts); else the sample is segmented
 * and compared.
 */
function sameMeta(kept: ReadonlyMap<SqlValue, SqlValue>, rows: number, maxIndexBytes: number, fingerprint: string | undefined): boolean {
  if (kept.size !== rows || kept.get('format') !== FORMAT || kept.get('maxIndexBytes') !== String(maxIndexBytes)) return false;
  const by = kept.get('wordsBy');
  if (kept.size !== (by === undefined ? 3 : 4) || typeof kept.get('words') !== 'string') return false;
  return (by !== undefined && by === fingerprint) || kept.get('words') === segmenterSignature();
}

/** A session's words and packed items, found before anything is written (see {@link SessionSearchIndex.put}). */
interface Prepared {
  session: IndexedSession;
  columns: [string, string, string];
  items: Uint8Array;
}

/**
 * The most words {@link SessionSearchIndex} remembers writing to its vocabulary (a few MB at
 * most): past it, it starts again empty. A vocabulary this large repeats few of its words between
 * writes.
 */
const WRITTEN_WORDS = 1 << 17;

/**
 * The sessions and the engine over them, on any SQLite ({@link SqlHost}: SQLite's WebAssembly
 * build for the service, a Durable Object's storage for the edge catalog; SPEC §17.5). Hand it
 * the root's functions first (`useEngineRoot` of `root.ts` with `engine-kit.ts`; the service's
 * search chunk does it through `useRoot`): the engine paces its work through them.
 *
 * Nothing read from the database is believed without a check where it is used, and no load reads
 * the whole index: a row of another type than the engine writes, kept items past their bound
 * (`unpackItems`), or a match whose session is missing throws {@link DamagedIndexError}; the
 * holder then drops the index and builds it again (SPEC §16.4).
 */
export class SessionSearchIndex {
  /** Sessions replaced or removed since the index was last compacted. */
  private deletions = 0;

  /**
   * Words {@link put} wrote to `search_vocabulary` since the index was last compacted (a
   * compaction drops the words no session holds any more): a later put writes only the others, so
   * a build writing many batches writes each word once, not once per batch (text repeats its
   * words: the bench's 2,000 sessions in batches of 64 held 89,000 such words per batch summed,
   * 31,000 distinct; writing them cost 89 ms of SQLite, 43 ms once each).
   */
  private readonly written = new Set<string>();

  /**
   * The most words {@link written} holds: {@link WRITTEN_WORDS}. Internal, not an option: tests
   * set it to 0 to write every word every time.
   * @internal
   */
  writtenWords = WRITTEN_WORDS;

  /**
   * Matching sessions per tier of {@link ranked}: {@link TIER_SIZE}. Internal, not an option:
   * tests lower it to walk many tiers over few sessions.
   * @internal
   */
  tierSize = TIER_SIZE;

  private constructor(
    /** UTF-8 bytes of conversation text kept per session (SPEC §16.3). */
    readonly maxIndexBytes: number,
    /** The database the index lives in. */
    readonly sql: SqlHost,
  ) {}

  /**
   * A new, empty index: the engine's tables created in `sql` (which must hold none of them).
   * @throws what `sql` throws (a SQLite error: tables already there).
   */
  static create(sql: SqlHost, maxIndexBytes: number): SessionSearchIndex {
    sql.transaction(() => {
      for (const statement of SCHEMA) sql.run(statement);
      for (const [key, value] of meta(maxIndexBytes)) sql.run('INSERT INTO search_meta(key, value) VALUES (?, ?)', key, value);
    });
    return new SessionSearchIndex(maxIndexBytes, sql);
  }

  /**
   * The index already in `sql`, or `undefined` when its tables are missing or were built with
   * another format, another `maxIndexBytes` or another word segmentation (a runtime with other
   * ICU data), or whose words are not one row per session (counts, highest row): the caller then
   * drops and rebuilds it ({@link drop}, {@link create}). Cheap: reads the meta rows and two counts,
   * never a session.
   */
  static open(sql: SqlHost, maxIndexBytes: number): SessionSearchIndex | undefined {
    try {
      const rows = sql.all('SELECT key, value FROM search_meta');
      const kept = new Map(rows.map(([key, value]): [SqlValue, SqlValue] => [key!, value!]));
      const fingerprint = root.segmenterFingerprint();
      if (!sameMeta(kept, rows.length, maxIndexBytes, fingerprint)) return undefined;
      const [[consistent]] = sql.all(ONE_ROW_EACH) as [[number]];
      if (consistent !== 1) return undefined;
      // Words split as here, under another host's name or none: named for this host, so that its
      // next export is trusted here without segmenting.
      if (fingerprint !== undefined && kept.get('wordsBy') !== fingerprint) {
        sql.run("INSERT OR REPLACE INTO search_meta(key, value) VALUES ('wordsBy', ?)", fingerprint);
      }
    } catch {
      return undefined;
    }
    return new SessionSearchIndex(maxIndexBytes, sql);
  }

  /**
   * The index in `sql`, opened when usable ({@link open}), else made anew over its dropped
   * tables: what a host whose database persists (a Durable Object) calls when it starts. `fresh`
   * is true when the index is new and empty (every session must be put again).
   */
  static attach(sql: SqlHost, maxIndexBytes: number): { index: SessionSearchIndex; fresh: boolean } {
    const index = SessionSearchIndex.open(sql, maxIndexBytes);
    if (index !== undefined) return { index, fresh: false };
    SessionSearchIndex.drop(sql);
    return { index: SessionSearchIndex.create(sql, maxIndexBytes), fresh: true };
  }

  /** Drops every table of the engine from `sql` (those of {@link create}, and older formats' `search_…` tables). */
  static drop(sql: SqlHost): void {
    sql.transaction(() => {
      // FTS5 drops its shadow tables with its own table; a forged or older shadow table left alone goes too.
      const names = sql.all("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE 'search\\_%' ESCAPE '\\' AND sql LIKE 'CREATE VIRTUAL TABLE%'");
      for (const [name] of names) sql.run(`DROP TABLE IF EXISTS "${String(name).replaceAll('"', '""')}"`);
      const rest = sql.all("SELECT type, name FROM sqlite_schema WHERE name LIKE 'search\\_%' ESCAPE '\\' AND type IN ('table', 'view', 'trigger', 'index')");
      for (const [type, name] of rest) sql.run(`DROP ${String(type).toUpperCase()} IF EXISTS "${String(name).replaceAll('"', '""')}"`);
    });
  }

  /** The number of sessions indexed. */
  size(): number {
    return Number(this.sql.all('SELECT count(*) FROM search_sessions')[0]![0]);
  }

  /**
   * Every indexed session's id, with what tells whether it changed.
   * @throws DamagedIndexError for a row of another type than the engine writes.
   */
  known(): Map<string, KnownSession> {
    const known = new Map<string, KnownSession>();
    for (const [id, identity, seq] of this.json<[string, string | null, unknown]>('SELECT json_group_array(json_array(id, identity, seq)) FROM search_sessions')) {
      if (seq !== null && !Number.isSafeInteger(seq)) throw new DamagedIndexError('a kept seq is not an integer');
      known.set(fromText(id), { identity: identity === null ? undefined : fromText(identity), seq: seq as number | null });
    }
    return known;
  }

  /**
   * The indexed session `id` with its items (unpacked within their bound), or `undefined`.
   * @throws DamagedIndexError for a row of another type than the engine writes or items past their bound.
   */
  async session(id: string): Promise<IndexedSession | undefined> {
    // A title is a label (SPEC §6.6: at most 120 code points) as JSON: what is longer than any
    // label's JSON can be is damage, found without reading it whole.
    const row = this.sql.all('SELECT identity, seq, substr(title, 1, ?2), cwd, items FROM search_sessions WHERE id = ?1', toText(id), MAX_TITLE_TEXT + 1)[0];
    if (row === undefined) return undefined;
    await loadDeflate();
    const [identity, seq, title, cwd, items] = row;
    if ((seq !== null && !Number.isSafeInteger(seq)) || !(items instanceof Uint8Array) || (typeof title === 'string' && title.length > MAX_TITLE_TEXT)) {
      throw new DamagedIndexError('a kept session is not what the engine writes');
    }
    return {
      id,
      identity: identity === null ? undefined : fromText(identity!),
      seq: seq as number | null,
      title: fromText(title!),
      cwd: fromText(cwd!),
      items: unpackItems(items, this.maxIndexBytes),
    };
  }

  /**
   * Adds `sessions` or replaces the indexed sessions with their ids (an id given twice: the last),
   * each keeping its newest
   * `maxIndexBytes` of text (`keptItems`). Their words are found and their items packed first,
   * yielding to the event loop as they are (`signal` checked: a cancelled put writes nothing), then
   * all are written in one transaction (FTS5 writes its segment once per transaction: one write of
   * many sessions costs far less than many writes of one). Words already in the vocabulary by an
   * earlier put are not written again ({@link written}).
   */
  async put(sessions: readonly IndexedSession[], signal?: AbortSignal): Promise<void> {
    await loadDeflate();
    const seen = new Set<string>();
    const prepared: Prepared[] = [];
    // A session given twice is put once, as given last.
    for (const given of new Map(sessions.map((session) => [session.id, session])).values()) {
      const session = { ...given, items: keptItems(given.items, this.maxIndexBytes) };
      const texts = session.items.map((item) => item.text);
      const columns: [string, string, string] = [await tokensOf([session.title], seen, signal), await tokensOf(texts, seen, signal), await tokensOf([session.cwd], seen, signal)];
      prepared.push({ session, columns, items: packItems(session.items) });
    }
    // After the last await: a compaction meanwhile has emptied the set.
    const fresh = [...seen].filter((word) => !this.written.has(word));
    this.sql.transaction(() => {
      // The rows of those already indexed, in one look-up for the whole write.
      const ids = JSON.stringify(prepared.map(({ session }) => toText(session.id)));
      const rows = new Map(this.json<[string, number]>(`SELECT json_group_array(json_array(id, row)) FROM search_sessions WHERE id IN (${EACH})`, ids));
      for (const { session, columns, items } of prepared) {
        const row = rows.get(toText(session.id));
        if (row !== undefined) this.deleteRow(row);
        this.sql.run(
          'INSERT INTO search_sessions(id, identity, seq, title, cwd, items) VALUES (?, ?, ?, ?, ?, ?)',
          toText(session.id),
          session.identity === undefined ? null : toText(session.identity),
          session.seq,
          toText(session.title),
          toText(session.cwd),
          items,
        );
        this.sql.run('INSERT INTO search_words(rowid, title, text, cwd) VALUES (last_insert_rowid(), ?, ?, ?)', ...columns);
      }
      if (fresh.length > 0) this.sql.run(`INSERT OR IGNORE INTO search_vocabulary(word) ${EACH}`, JSON.stringify(fresh));
    });
    if (this.written.size + fresh.length > this.writtenWords) this.written.clear();
    else for (const word of fresh) this.written.add(word);
    this.compactWhenWorn();
  }

  /** Forgets the sessions with `ids` (those not indexed are skipped). */
  remove(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.sql.transaction(() => {
      for (const id of ids) this.deleteSession(id);
    });
    this.compactWhenWorn();
  }

  /** Deletes the session with `id`, if indexed. */
  private deleteSession(id: string): void {
    const found = this.sql.all('SELECT row FROM search_sessions WHERE id = ?', toText(id))[0];
    if (found !== undefined) this.deleteRow(found[0] as number);
  }

  /** Deletes the session of `row`: its row of `search_sessions` and of `search_words`. */
  private deleteRow(row: number): void {
    this.deletions++;
    this.sql.run('DELETE FROM search_words WHERE rowid = ?', row);
    this.sql.run('DELETE FROM search_sessions WHERE row = ?', row);
  }

  /**
   * Once a quarter as many sessions as the index holds were replaced or removed
   * since the last time: FTS5's segments are merged, dropping deleted entries (`optimize`), and
   * the vocabulary loses the words no session holds any more (a replaced or removed session's
   * words are not looked for one by one: that would mean finding its words again from its text).
   * Returns true when it compacted (the WebAssembly host then also gives freed pages back).
   */
  compactWhenWorn(): boolean {
    if (this.deletions === 0 || this.deletions * 4 <= this.size()) return false;
    this.compact();
    return true;
  }

  /** Compacts the index now (see {@link compactWhenWorn}). */
  compact(): void {
    this.sql.transaction(() => {
      this.sql.run("INSERT INTO search_words(search_words) VALUES ('optimize')");
      this.sql.run('DELETE FROM search_vocabulary WHERE word NOT IN (SELECT term FROM search_terms)');
    });
    this.deletions = 0;
    this.written.clear();
  }

  /**
   * The rows of `sql`, a query of one value, the JSON array of its rows (`json_group_array`):
   * thousands of rows come back as one string, where reading them column by column through a
   * host's API costs microseconds each.
   */
  private json<Row>(sql: string, ...bindings: SqlValue[]): Row[] {
    const value = this.sql.all(sql, ...bindings)[0]?.[0];
    return typeof value === 'string' ? (JSON.parse(value) as Row[]) : [];
  }

  /**
   * Sessions holding every part of every query word (AND), each part matching a word by prefix
   * or, from 5 code points on, by one edit (SPEC §16.3), scored by BM25 with the title weighted;
   * `exclude` is never a result. Best score first (ties in no set order: the caller breaks them).
   * Every match crosses into JavaScript, ranked as one tier: {@link ranked} walks the best ones only.
   * @throws DamagedIndexError when a matched row has no session.
   */
  async search(parts: readonly string[], exclude: string, signal?: AbortSignal): Promise<SearchResult[]> {
    const expressions = await this.expressionsOf(parts, signal);
    if (expressions.length === 0) return [];
    const ranking = await this.rankingOf(expressions, exclude, [-Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER], signal);
    // `?2` and `?3` (the window's) are bound unused, so that the parts' bindings keep their numbers.
    return this.resultsOf(`WITH ${ranking.tables} ${EVERY}`, [toText(exclude), null, null, ...ranking.bindings]);
  }

  /**
   * The matches of {@link search}, in tiers of the most recently indexed matching sessions (issue
   * 27, SPEC §16.3, §16.7, §17.7), each tier best score first, in windows chosen inside SQLite.
   *
   * Tiers: exact BM25 top-k is linear in the matches of an FTS5 table (it has no ranked early
   * exit), so the set ranked first is bounded. A tier's floor is the rowid of the
   * {@link tierSize}-th newest match of the whole query below the tier before ({@link TIER_FLOOR}:
   * FTS5 walks the doclists from the highest rowid and stops there); the tier is the matches from
   * that floor up, every ranking statement bound to those rowids ({@link IN_TIER}, a range FTS5
   * seeks). The next tier, the next {@link tierSize} older matches, follows only when the caller
   * walks on (its first tier excluded or unlisted sessions before it kept enough hits); its hits
   * come after every hit of the tier before, whatever their scores. A row's rowid grows with the
   * order sessions were indexed: `put` gives each session, new or replaced, a row above every row
   * held, so "most recently indexed" is "added or changed most recently". With at most
   * {@link tierSize} matches there is one tier: the order of ranking every match. Scores do not
   * depend on the tier (BM25's statistics are the whole table's).
   *
   * Windows, within a tier: the first holds the `first` best (at most {@link MAX_WINDOW}), each
   * next one twice as many below the last score of the one before; a window also holds every match
   * tied with its last, so a host that breaks ties its own way (SPEC §16.2: §6.3's groups, then
   * listing order) sorts each window alone and gets the order of sorting the tier. A caller that
   * stops early reads O(what it shows) rows, and SQLite visits O({@link tierSize}) postings per
   * statement beyond what BM25's statistics read.
   * @throws DamagedIndexError when a matched row has no session.
   */
  async *ranked(parts: readonly string[], exclude: string, first: number, signal?: AbortSignal): AsyncGenerator<SearchResult[], void, undefined> {
    const expressions = await this.expressionsOf(parts, signal);
    if (expressions.length === 0) return;
    const query = expressions.map(([prefix, near]) => `(${near === undefined ? prefix : `${prefix} OR ${near}`})`).join(' AND ');
    for (let ceiling: number | null = Number.MAX_SAFE_INTEGER; ceiling !== null; ) {
      await root.pace(8);
      root.throwIfAborted(signal);
      const found: SqlValue | undefined = this.sql.all(TIER_FLOOR, query, ceiling, Math.max(1, Math.floor(this.tierSize)) - 1)[0]?.[0];
      if (found !== undefined && typeof found !== 'number') throw new DamagedIndexError('a rowid of the words is not a number');
      const floor: number | null = found ?? null;
      yield* this.windows(await this.rankingOf(expressions, exclude, [floor ?? -Number.MAX_SAFE_INTEGER, ceiling], signal), exclude, first, signal);
      ceiling = floor;
    }
  }

  /** The windows of one tier's ranking, best first ({@link ranked}). */
  private async *windows(ranking: Ranking, exclude: string, first: number, signal: AbortSignal | undefined): AsyncGenerator<SearchResult[], void, undefined> {
    const sql = `WITH ${ranking.tables}, ${WINDOW}`;
    let below: number | null = null;
    for (let count = Math.min(Math.max(1, first), MAX_WINDOW); ; count = Math.min(count * 2, MAX_WINDOW)) {
      await root.pace(8);
      root.throwIfAborted(signal);
      const window = this.resultsOf(sql, [toText(exclude), count, below, ...ranking.bindings]);
      if (window.length === 0) return;
      yield window;
      if (window.length < count) return;
      below = window[window.length - 1]!.score;
    }
  }

  /**
   * Each part's FTS5 expressions: its prefix expression and, when it has some, its words one edit
   * away ORed (looked up here, once per search). A part given twice counts once.
   */
  private async expressionsOf(parts: readonly string[], signal: AbortSignal | undefined): Promise<Array<[string, string | undefined]>> {
    const expressions: Array<[string, string | undefined]> = [];
    // A part given twice matches what it matched once (a query of one word repeated costs one).
    for (const part of new Set(parts)) {
      await root.pace(8);
      root.throwIfAborted(signal);
      const encoded = encodeWord(part);
      const near = fuzzyDistance(encoded) === 1 ? this.oneEditWords(encoded) : [];
      expressions.push([this.prefixExpression(encoded), near.length > 0 ? near.map(quote).join(' OR ') : undefined]);
    }
    return expressions;
  }

  /**
   * The SQL ranking of the rows `tier` (`[floor, ceiling)`, rowids) matching `expressions` (at
   * least one; {@link Ranking}); bindings from `?4` on (after those of {@link WINDOW}). Parts
   * past the first {@link PARTS_PER_STATEMENT} are ranked in statements before, whose matches the
   * last one carries.
   */
  private async rankingOf(expressions: ReadonlyArray<readonly [string, string | undefined]>, exclude: string, tier: readonly [number, number], signal: AbortSignal | undefined): Promise<Ranking> {
    let carried: string | null = null;
    for (let start = 0; ; start += PARTS_PER_STATEMENT) {
      const chunk = expressions.slice(start, start + PARTS_PER_STATEMENT);
      const tables = rankedTables(chunk);
      const bindings: SqlValue[] = [JSON.stringify(chunk.flat().filter((expression) => expression !== undefined)), carried, ...tier];
      if (start + PARTS_PER_STATEMENT >= expressions.length) return { tables, bindings };
      await root.pace(8);
      root.throwIfAborted(signal);
      carried = String(this.sql.all(`WITH ${tables} SELECT json_group_array(json_array(row, score)) FROM ranked`, toText(exclude), null, null, ...bindings)[0]![0]);
    }
  }

  /**
   * The rows of a ranking query (`row, id, score`) as results.
   * @throws DamagedIndexError when a row has no session or holds another type than the engine writes.
   */
  private resultsOf(sql: string, bindings: SqlValue[]): SearchResult[] {
    return this.sql.all(sql, ...bindings).map(([, id, score]) => {
      if (id === null) throw new DamagedIndexError('a matched row of the words has no session');
      if (typeof score !== 'number') throw new DamagedIndexError('a score is not a number');
      return { id: fromText(id!), score };
    });
  }

  /**
   * Per session of `ids` (indexed ones), per part of `parts`: the columns it matched the part in,
   * by prefix or one edit as {@link search} matched ({@link TITLE} | {@link TEXT} | {@link CWD}),
   * what the session's kept title, items and cwd must then hold (`findHits` checks). One query
   * per part for all of `ids`.
   */
  columnsMatched(ids: readonly string[], parts: readonly string[]): Map<string, number[]> {
    const rows = this.json<[string, number]>(`SELECT json_group_array(json_array(id, row)) FROM search_sessions WHERE id IN (${EACH})`, JSON.stringify(ids.map(toText)));
    const byRow = new Map(rows.map(([id, row]) => [row, fromText(id)]));
    const columns = new Map<string, number[]>([...byRow.values()].map((id) => [id, parts.map(() => 0)]));
    const list = JSON.stringify([...byRow.keys()]);
    if (byRow.size === 0) return columns;
    const [low, high] = [Math.min(...byRow.keys()), Math.max(...byRow.keys())];
    for (const [k, part] of parts.entries()) {
      const encoded = encodeWord(part);
      const near = fuzzyDistance(encoded) === 1 ? this.oneEditWords(encoded) : [];
      const expression = [this.prefixExpression(encoded), ...near.map(quote)].join(' OR ');
      for (const [row, matched] of this.json<[number, number]>(COLUMNS, list, low, high, ...['title', 'text', 'cwd'].map((column) => `{${column}} : (${expression})`))) {
        const id = byRow.get(row);
        if (id !== undefined) columns.get(id)![k] = matched;
      }
    }
    return columns;
  }

  /**
   * The FTS5 expression of the words `part` (encoded) matches by prefix: `"part"*`, or, when the
   * part has 4 or more code points and one indexed word only starts with it ({@link PREFIXED}),
   * that word, `"word"`. Both match the same rows with the same hits, so BM25 scores them alike,
   * bit for bit (one phrase, the same counts); but FTS5 answers a prefix by merging the whole
   * doclist of every word it covers, at every use, where a word's doclist is seeked within a
   * tier's rowids (issue 27: a word in most sessions costs that merge, about 12 ms per statement
   * at 100,000 sessions).
   */
  private prefixExpression(part: string): string {
    if (mayBeOneEditAway(part)) {
      const words = this.json<string>(PREFIXED, part);
      if (words.length === 1 && typeof words[0] === 'string') return quote(words[0]);
    }
    return `${quote(part)}*`;
  }

  /**
   * The indexed words (encoded) one edit from `part` that do not start with it (SPEC §16.3): at
   * each position, the deletion, and the substitutions and insertions by every character that
   * follows the part's head in a word of `search_vocabulary` ({@link ONE_EDIT}).
   */
  private oneEditWords(part: string): string[] {
    const points = [...part];
    const found = new Set<string>();
    for (let at = 0; at < points.length; at++) {
      for (const word of this.json<string>(ONE_EDIT, points.slice(0, at).join(''), points[at]!, points.slice(at + 1).join(''))) found.add(word);
    }
    return [...found].filter((word) => !word.startsWith(part) && matchesPart(word, part));
  }

  /** Frees the database when the index owns it (the WebAssembly host); a persistent host's stays. */
  close(): void {
    this.sql.close?.();
  }
}
