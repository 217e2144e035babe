/**
 * `/candidates` from the catalog alone (SPEC §6, §15.10, §17.5, §17.7): the winners of the
 * tenant's sessions in §6.3's three groups, each group an ordered index walk that stops at
 * `limit`; a query narrows each walk. The rows, their order and the limit are those of the core's
 * `listCandidates` over the same sessions (its `candidateMatcher` is the exact rule); the cost is
 * what the answer needs, not the number of sessions:
 *
 * - no query: `ORDER BY created_at DESC, sid LIMIT n` on a partial index of the winners, per group;
 * - a query: its index — the rows FTS5's trigram table finds for its longest needle of 3 or more
 *   characters — is counted once, to {@link indexProbe}`(limit)` rows: when it finds fewer (a
 *   rare needle), only those are read and sorted, in one statement for the three groups; else each group's first rows are looked at in
 *   order (a query one session in ten matches, or most, is answered there, whatever the number of
 *   sessions), four times as many each time they hold too few matches, the index counted again
 *   before each longer walk and read instead once it finds fewer rows than that walk would look
 *   at. A needle of 1 or 2 characters has no such index and is walked to `limit`. So a request
 *   reads a constant times `limit` rows for a rare needle and for a query one session in a
 *   constant number matches, at any size (issue 27: the index was counted to the walk's budget
 *   first, and read, per group, which read a tenth of a small tenant's sessions six times over). SQLite's
 *   own test (`instr` on the folded fields) narrows every read; the exact rule is checked again in
 *   JavaScript on what comes back (SQLite keeps a lone surrogate as U+FFFD).
 * @module
 */
import type { SqlStorage } from 'cloudflare:workers';
import type { SessionCandidate } from '../../candidates.js';
import { isNonEmptyString } from '../../host.js';
import { formatSessionReferenceMention } from '../../mention.js';
import { candidateMatcher, type CandidateMatch } from '../../candidate-match.js';
import { foldWord } from '../../fold.js';
import { hasLoneSurrogate } from '../../utf8.js';
import { cwdOfColumn, idOf, textOfColumn } from './encoding.js';
import { ROW_COLUMNS, type ObjectRecord } from './tables.js';

/** The folded fields the SQL tests of a query read (held by the listing indexes). */
const MATCHED_COLUMNS = 'fold_id, fold_cwd, fold_title, word_id, word_cwd, word_title';

/** How a query narrows the rows (see the module doc). */
export interface Matcher {
  /** A SQL condition every match meets (it may let a few more through). */
  readonly sql: string;
  readonly binds: readonly unknown[];
  /** `SELECT row …`: the rows that can match, when an index finds them. */
  readonly index?: { sql: string; binds: readonly unknown[] } | undefined;
  /** The exact rule. */
  test(record: ObjectRecord): boolean;
}

/** One §6.3 group: its condition and the index that walks it in listing order. */
interface Group {
  where: string;
  binds: unknown[];
  index: 'catalog_by_cwd' | 'catalog_listing';
}

/**
 * The rows a walk looks at before it turns to an index: enough for a query one session in ten
 * matches (about twice the rows it needs on average: with `8 · need`, a query one session in nine
 * matches fell short about one time in three at 100,000 sessions, and paid a count and a walk four
 * times as long). A walk stops at `need` matches, so a denser query reads fewer.
 */
export function walkBudget(need: number): number {
  return 16 * need + 64;
}

/**
 * The rows the index is counted to before any walk: a needle it finds fewer times than this is
 * answered from the index alone (reading about as many rows as `limit`); one it finds more often
 * is walked first.
 */
export function indexProbe(limit: number): number {
  return 2 * limit + 16;
}

/**
 * The first `limit` winners in §6.3 order that `matcher` keeps (all without one), the session
 * `ownSid` left out, `ownCwd` (the `cwd` column of the agent's session, `null` for none) ranking
 * its group first.
 */
export function selectCandidates(sql: SqlStorage, ownSid: ArrayBuffer, ownCwd: string | null, limit: number, matcher: Matcher | undefined): ObjectRecord[] {
  if (matcher?.index !== undefined && indexCount(sql, matcher.index, indexProbe(limit)) < indexProbe(limit)) return fromIndex(sql, ownSid, ownCwd, limit, matcher, matcher.index);
  const found: ObjectRecord[] = [];
  for (const group of groupsOf(ownCwd)) {
    const need = limit - found.length;
    if (need <= 0) break;
    const scope = { ...group, where: `wins = 1 AND ${group.where} AND sid <> ?`, binds: [...group.binds, ownSid] };
    found.push(...(matcher === undefined ? ordered(sql, scope, need, undefined) : matching(sql, scope, need, matcher)));
  }
  return found;
}

/**
 * The first `limit` winners in §6.3 order among the rows `index` finds (fewer than
 * {@link indexProbe}`(limit)`): read in one statement and ordered there (group, then listing
 * order), the exact rule applied to what comes back.
 */
function fromIndex(sql: SqlStorage, ownSid: ArrayBuffer, ownCwd: string | null, limit: number, matcher: Matcher, index: NonNullable<Matcher['index']>): ObjectRecord[] {
  const own = ownCwd !== null && ownCwd.startsWith('"');
  const rank = own ? 'CASE WHEN cwd = ? THEN 0 WHEN cwd IS NULL THEN 1 ELSE 2 END' : 'CASE WHEN cwd IS NULL THEN 0 ELSE 1 END';
  return sql
    .exec<ObjectRecord>(
      `SELECT ${ROW_COLUMNS} FROM catalog_objects NOT INDEXED WHERE row IN (${index.sql}) AND wins = 1 AND sid <> ? AND (${matcher.sql}) ORDER BY ${rank}, created_at DESC, sid`,
      ...index.binds,
      ownSid,
      ...matcher.binds,
      ...(own ? [ownCwd] : []),
    )
    .toArray()
    .filter((record) => matcher.test(record))
    .slice(0, limit);
}

/** §6.3's groups: same cwd (only for a cwd that is a non-empty string), no cwd, other cwd. */
function groupsOf(ownCwd: string | null): Group[] {
  const none: Group = { where: 'cwd IS NULL', binds: [], index: 'catalog_by_cwd' };
  if (ownCwd === null || !ownCwd.startsWith('"')) return [none, { where: 'cwd IS NOT NULL', binds: [], index: 'catalog_listing' }];
  return [{ where: 'cwd = ?', binds: [ownCwd], index: 'catalog_by_cwd' }, none, { where: 'cwd IS NOT NULL AND cwd <> ?', binds: [ownCwd], index: 'catalog_listing' }];
}

/** How many rows `index` finds, counting to `cap` at most. */
function indexCount(sql: SqlStorage, index: NonNullable<Matcher['index']>, cap: number): number {
  return sql.exec<{ n: number }>(`SELECT count(*) AS n FROM (${index.sql} LIMIT ?)`, ...index.binds, cap).one().n;
}

/**
 * The first `need` rows of `group` that `matcher` keeps, in listing order, at a cost within a
 * constant factor of the cheaper of two ways (the doubling of a walk against an index), once
 * {@link selectCandidates} found the index too large to read at once: the group's first `budget`
 * rows are walked (SQLite's test applied as they come, stopping at `need`), and while they hold
 * too few matches the index is counted to the next budget, four times larger: it is read once it
 * finds fewer rows than that walk would look at.
 */
function matching(sql: SqlStorage, group: Group, need: number, matcher: Matcher): ObjectRecord[] {
  if (matcher.index === undefined) return ordered(sql, group, need, matcher);
  const indexed = { ...group, where: `${group.where} AND row IN (${matcher.index.sql})`, binds: [...group.binds, ...matcher.index.binds] };
  for (let budget = walkBudget(need); ; budget *= 4) {
    // The walk reads the index alone (it holds the folded fields); whole rows are read for its matches only.
    const rows = sql
      .exec<ObjectRecord>(
        `SELECT ${ROW_COLUMNS} FROM catalog_objects NOT INDEXED WHERE row IN (SELECT row FROM (SELECT row, ${MATCHED_COLUMNS} FROM catalog_objects INDEXED BY ${group.index} WHERE ${group.where} ORDER BY created_at DESC, sid LIMIT ?) WHERE (${matcher.sql}) LIMIT ?) ORDER BY created_at DESC, sid`,
        ...group.binds,
        budget,
        ...matcher.binds,
        need,
      )
      .toArray();
    const walked = rows.filter((record) => matcher.test(record));
    if (walked.length >= need) return walked;
    // The exact rule dropped a row SQLite let through: the index answers (exactly) instead.
    if (rows.length === need) return ordered(sql, indexed, need, matcher, 'NOT INDEXED');
    const seen = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM (SELECT 1 FROM catalog_objects INDEXED BY ${group.index} WHERE ${group.where} LIMIT ?)`, ...group.binds, budget).one().n;
    if (seen < budget) return walked;
    if (indexCount(sql, matcher.index, 4 * budget) < 4 * budget) return ordered(sql, indexed, need, matcher, 'NOT INDEXED');
  }
}

/**
 * The first `need` rows of `group` in listing order that `matcher` keeps (all without one), read
 * in pages of `need` (more only when the exact rule drops a row SQLite's test let through).
 */
function ordered(sql: SqlStorage, group: Group, need: number, matcher: Matcher | undefined, using = `INDEXED BY ${group.index}`): ObjectRecord[] {
  const kept: ObjectRecord[] = [];
  const where = matcher === undefined ? group.where : `${group.where} AND (${matcher.sql})`;
  const binds = matcher === undefined ? group.binds : [...group.binds, ...matcher.binds];
  for (let offset = 0; kept.length < need; ) {
    const page = Math.max(need - kept.length, 16);
    const rows = sql.exec<ObjectRecord>(`SELECT ${ROW_COLUMNS} FROM catalog_objects ${using} WHERE ${where} ORDER BY created_at DESC, sid LIMIT ? OFFSET ?`, ...binds, page, offset).toArray();
    for (const record of rows) if (kept.length < need && (matcher === undefined || matcher.test(record))) kept.push(record);
    if (rows.length < page) break;
    offset += page;
  }
  return kept;
}

/** The session's label (SPEC §6.4): its cleaned title, else its id. */
function labelOf(record: ObjectRecord): string {
  return textOfColumn(record.title) ?? idOf(record.sid);
}

/**
 * How `query` narrows the candidates by `rule` (SPEC §6.2, §6.7 with `titles`; §15.10 for
 * `'words'`); `undefined` when it keeps every session. The exact rule is the core's
 * (`candidateMatcher`, what `listCandidates` applies); SQLite narrows first: each needle — the
 * query lowercased by `toLowerCase()`, or each query word folded as §16.3 — must occur in a
 * field folded the same way (`fold_*`, `word_*`), which every match meets; the longest needle of 3
 * or more characters finds its rows through `catalog_trigrams`.
 */
export function queryMatcher(rule: CandidateMatch, query: string, titles: boolean): Matcher | undefined {
  const exact = candidateMatcher(rule, query);
  if (exact.keepsAll) return undefined;
  const test = (record: ObjectRecord) => {
    const fields = [idOf(record.sid), cwdOfColumn(record.cwd)];
    return exact.matches(titles ? [...fields, labelOf(record)] : fields);
  };
  // The core's query words (SPEC §15.10): the pieces between whitespace, folded, empty ones dropped.
  const needles = rule === 'substring' ? [query.toLowerCase()] : [...new Set(query.split(/\s+/).map(foldWord).filter((word) => word !== ''))];
  // A needle with a lone surrogate can match half of a pair SQLite keeps as one character, and one
  // with a NUL ends FTS5's query string there (the probe's F7: "unterminated string"): only the
  // exact rule decides.
  if (needles.some((needle) => hasLoneSurrogate(needle) || needle.includes('\0'))) return { sql: '1', binds: [], test };
  const prefix = rule === 'substring' ? 'fold' : 'word';
  const fields = (titles ? ['id', 'cwd', 'title'] : ['id', 'cwd']).map((field) => `${prefix}_${field}`);
  const sql = needles.map(() => `(${fields.map((field) => `instr(${field}, ?) > 0`).join(' OR ')})`).join(' AND ');
  const binds = needles.flatMap((needle) => fields.map(() => needle));
  const longest = needles.reduce((a, b) => ([...b].length > [...a].length ? b : a));
  // FTS5's trigram tokenizer finds substrings of 3 or more characters (code points).
  if ([...longest].length < 3) return { sql, binds, test };
  const phrase = `{${fields.join(' ')}} : "${longest.replaceAll('"', '""')}"`;
  return { sql, binds, test, index: { sql: 'SELECT rowid FROM catalog_trigrams WHERE catalog_trigrams MATCH ?', binds: [phrase] } };
}

/** A row as `/candidates` answers it (SPEC §6.5). */
export function candidateOf(record: ObjectRecord): SessionCandidate {
  const sessionId = idOf(record.sid);
  const label = labelOf(record);
  const cwd = cwdOfColumn(record.cwd);
  return { sessionId, label, ...(isNonEmptyString(cwd) && { cwd }), createdAt: record.created_at, mention: formatSessionReferenceMention({ sessionId, label }) };
}
