/**
 * How `listCandidates` matches a query against a session's id, cwd and label: dsh's substring rule
 * (SPEC §6.2, §6.7) or word matching for front ends (SPEC §15.10).
 * @module
 */
import { forEachSegment } from './ascii-words.js';
import { foldWord } from './fold.js';

/**
 * The rule `listCandidates` filters by (config `candidateMatch`, SPEC §5): `'substring'` (dsh's,
 * SPEC §6.2) or `'words'` (SPEC §15.10).
 */
export type CandidateMatch = 'substring' | 'words';

/** A query made ready to test sessions by (see {@link candidateMatcher}). */
export interface CandidateMatcher {
  /** `true` when the query keeps every record (empty; by words, no word): nothing to test. */
  readonly keepsAll: boolean;
  /**
   * Whether a session whose fields (id, cwd, and with title matching its label; a field that is
   * not a string is no text) matches the query.
   */
  matches(fields: readonly unknown[]): boolean;
}


/**
 * `query` made ready to match sessions by `rule`:
 *
 * - `'substring'` (SPEC §6.2, §6.7): a field contains the whole query, both lowercased with
 *   `toLowerCase()` (no locale). An empty query keeps every record.
 * - `'words'` (SPEC §15.10): the query is cut at whitespace into words, each folded as SPEC §16.3
 *   ({@link foldWord}: case without locale, NFKD diacritics removed); a word that folds to nothing
 *   is dropped, and so is a repeat. Every word must be a prefix of a word of some field (each word
 *   may match a different field), the field folded the same way and cut into words by
 *   `Intl.Segmenter` (granularity `'word'`, SPEC §16.3; ASCII by UAX #29's own rules in every
 *   runtime, `forEachSegment` of ascii-words.ts) — precisely: the word stands in the folded
 *   field at a segment boundary, so a query word that spans several words (`ledger-ap`, `/srv/al`,
 *   `数据库迁`) matches where those words stand together, in that order (as search's adjacency,
 *   SPEC §16.2). A query with no word keeps every record.
 *
 * Each `matches` call folds each field at most once and segments a field only for a word it
 * contains: linear in the fields' length times the number of query words.
 * @example
 * candidateMatcher('words', 'dumen').matches(['session-1', null, 'Dümen: seeds.py done']); // true
 * candidateMatcher('words', 'ledger rec').matches(['s-2', '/srv/ledger', 'Reconciler']); // true
 * candidateMatcher('words', 'edger').matches(['s-2', '/srv/ledger']); // false: not a word's prefix
 * candidateMatcher('substring', 'edger').matches(['s-2', '/srv/ledger']); // true
 */
export function candidateMatcher(rule: CandidateMatch, query: string): CandidateMatcher {
  if (rule === 'substring') {
    const needle = query.toLowerCase();
    return {
      keepsAll: needle === '',
      matches: (fields) => fields.some((field) => typeof field === 'string' && field.toLowerCase().includes(needle)),
    };
  }
  const words = queryWords(query);
  return {
    keepsAll: words.length === 0,
    matches(fields) {
      // Each field folded once, when a word first needs it.
      const folded: Array<string | undefined> = [];
      return words.every((word) => fields.some((field, i) => typeof field === 'string' && startsAtBoundary((folded[i] ??= foldWord(field)), word)));
    },
  };
}

/** The folded, distinct, non-empty words of `query` cut at whitespace (SPEC §15.10). */
function queryWords(query: string): string[] {
  const words = new Set<string>();
  for (const piece of query.split(/\s+/)) {
    const word = foldWord(piece);
    if (word !== '') words.add(word);
  }
  return [...words];
}

/** Whether `word` stands in `text` at a word-segment boundary (both folded). */
function startsAtBoundary(text: string, word: string): boolean {
  if (!text.includes(word)) return false;
  let found = false;
  forEachSegment(text, (from) => {
    found ||= text.startsWith(word, from);
  });
  return found;
}
