/**
 * Words of indexed text and of queries (SPEC §16.3): `Intl.Segmenter` word segmentation, folded
 * without locale and without diacritics.
 * @module
 */
import { foldWord } from '../fold.js';

/** The folding of SPEC §16.3, shared with the core's word matching (SPEC §15.10). */
export { foldWord };

/** The longest piece of text handed to the segmenter at once, in UTF-16 code units (SPEC §16.3). */
const PIECE = 2048;

/**
 * Words longer than this (UTF-16 code units) are indexed by their first this many code units
 * ({@link wordHead}): a long identifier (`a_snake_case_name_of_seventy_letters…`) is found by
 * its prefix, and a pasted base64 blob or hash costs one word of this length, not its size.
 */
export const MAX_WORD_LENGTH = 64;

/** `word`, or its first {@link MAX_WORD_LENGTH} code units when longer (never half a surrogate pair). */
export function wordHead(word: string): string {
  if (word.length <= MAX_WORD_LENGTH) return word;
  return word.slice(0, /[\ud800-\udbff]/.test(word[MAX_WORD_LENGTH - 1]!) ? MAX_WORD_LENGTH - 1 : MAX_WORD_LENGTH);
}

/**
 * ASCII characters that are a word boundary on both sides under every rule of UAX #29 (word
 * break property Other, or CR/LF/Newline, or a space): everything but letters, digits, `_`, the
 * Mid* punctuation `. ' : , ;` and `"` (which joins Hebrew letters). Text is cut at their runs
 * first, so the segmenter only sees short chunks and a chunk of ASCII letters, digits and `_` is
 * one word without asking it (the fast path of SPEC §16.3; test/search-words.test.ts checks in
 * every runtime that it yields the segmenter's own words).
 */
const CHUNKS = /[^\0-\x21\x23-\x26\x28-\x2b\x2d\x2f\x3c-\x40\x5b-\x5e\x60\x7b-\x7f]+/g;

/** A chunk that is one word by UAX #29 (WB8–WB13b) without the segmenter. */
const ASCII_WORD = /^(?:[A-Za-z0-9][A-Za-z0-9_]*|_[A-Za-z0-9_]+)$/;

let segmenter: Intl.Segmenter | undefined;

/**
 * Calls `visit(start, end, folded)` for every word of `text` in order (UTF-16 offsets into `text`;
 * `folded` of a word longer than {@link MAX_WORD_LENGTH} is that of its {@link wordHead}), skipping
 * words that fold to nothing. Linear: the segmenter sees chunks of at most {@link PIECE} code
 * units. Returns how many code units the segmenter was handed (the costly part: about 2–3 µs each
 * for Chinese or Thai in V8, where an ASCII word costs a few nanoseconds per code unit).
 */
export function forEachWord(text: string, visit: (start: number, end: number, folded: string) => void): number {
  let segmented = 0;
  for (const match of text.matchAll(CHUNKS)) {
    const chunk = match[0];
    const at = match.index;
    if (ASCII_WORD.test(chunk)) {
      visit(at, at + chunk.length, wordHead(chunk).toLowerCase());
      continue;
    }
    segmented += chunk.length;
    for (let start = 0; start < chunk.length; ) {
      const end = pieceEnd(chunk, start);
      segmentPiece(chunk.slice(start, end), at + start, visit);
      start = end;
    }
  }
  return segmented;
}

/**
 * The work of segmenting `slice`, of which `segmented` code units went to the segmenter, in
 * units of `pace` (about 10 µs each): one per 1,024 code units, plus one per 4 segmented code
 * units. In workerd, whose clock stands still, this count alone decides when to yield.
 */
export function sliceWork(slice: string, segmented: number): number {
  return 1 + (slice.length >> 10) + (segmented >> 2);
}

/** Where the piece of `chunk` starting at `start` ends: at most {@link PIECE} code units, never inside a surrogate pair. */
function pieceEnd(chunk: string, start: number): number {
  let end = Math.min(chunk.length, start + PIECE);
  if (end < chunk.length && /[\udc00-\udfff]/.test(chunk[end]!)) end--;
  return end;
}

function segmentPiece(piece: string, offset: number, visit: (start: number, end: number, folded: string) => void): void {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
  for (const { segment, index, isWordLike } of segmenter.segment(piece)) {
    if (!isWordLike) continue;
    const folded = foldWord(wordHead(segment));
    if (folded !== '') visit(offset + index, offset + index + segment.length, folded);
  }
}

/**
 * Text segmented at once between two chances to yield, in UTF-16 code units (with the whitespace
 * search of `sliceEnd`, at most twice this): about 10 ms of Chinese or Thai for the segmenter,
 * far less of ASCII. Indexed text (up to `maxIndexBytes` per session) and queries (up to
 * `MAX_QUERY_LENGTH`) must not block the event loop whole (SPEC §10.3).
 */
export const SLICE = 2048;

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
 * The slices of `text` that are segmented one at a time ({@link SLICE}): the words of a text are
 * those of its slices, in indexing and in every later look at the same text alike (a word of more
 * than 16,384 code units without a space may be cut in two, the same way each time).
 */
export function* slicesOf(text: string): Generator<string> {
  for (let start = 0; start < text.length; ) {
    const end = sliceEnd(text, start);
    yield start === 0 && end === text.length ? text : text.slice(start, end);
    start = end;
  }
}

/** The folded words of `text` as the index holds them: those of its {@link slicesOf slices}, in order. */
export function indexedWords(text: string): string[] {
  const words: string[] = [];
  for (const slice of slicesOf(text)) forEachWord(slice, (_start, _end, folded) => words.push(folded));
  return words;
}

/** The folded words of `text`, in order: the search engine's tokenizer. */
export function wordsOf(text: string): string[] {
  const words: string[] = [];
  forEachWord(text, (_start, _end, folded) => words.push(folded));
  return words;
}

/**
 * The longest query `searchSessions` takes, in UTF-16 code units (256 Ki): far past anything typed
 * or pasted as a search (a query asks for sessions holding every one of its words), and short
 * enough that segmenting it is bounded work (a longer query is `INVALID_ARGUMENT`).
 */
export const MAX_QUERY_LENGTH = 262_144;

/**
 * The words of a query (SPEC §16.2): one entry per whitespace-separated query word, holding its
 * parts as the segmenter splits them (most words have one part; a Chinese word may have several,
 * which must stand next to each other in that order). Query words without any word are dropped,
 * and so are repeats. Segmented in {@link slicesOf slices} as indexed text is, awaiting
 * `pause(work)` after each (the caller yields to the event loop there and checks its signal: a
 * query of one long unspaced word never blocks; `work` is {@link sliceWork}).
 */
export async function queryWords(query: string, pause: (work: number) => Promise<void>): Promise<string[][]> {
  const words = new Map<string, string[]>();
  for (const piece of query.split(/\s+/)) {
    const parts: string[] = [];
    for (const slice of slicesOf(piece)) {
      const segmented = forEachWord(slice, (_start, _end, folded) => parts.push(folded));
      await pause(sliceWork(slice, segmented));
    }
    // A word given twice asks nothing more (a query of one word repeated costs one word).
    if (parts.length > 0) words.set(parts.join(' '), parts);
  }
  return [...words.values()];
}

/**
 * True when the indexed word `word` matches the query part `part` (SPEC §16.3): `word` starts with
 * `part`, or, for a part of 5 or more code points, is one edit (insertion, deletion or
 * substitution) away from it. The engine's own rule, used again to find the words to highlight.
 */
export function matchesPart(word: string, part: string): boolean {
  return word.startsWith(part) || (fuzzyDistance(part) === 1 && withinOneEdit(word, part));
}

/** The edit distance a query part is allowed: 1 for parts of 5 or more code points, else 0. */
export function fuzzyDistance(part: string): 0 | 1 {
  let count = 0;
  for (const _ of part) if (++count >= 5) return 1;
  return 0;
}

/** True when `a` and `b` are at most one edit apart (UTF-16 code units, as the engine counts). */
function withinOneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) return a.slice(i + 1) === b.slice(i + 1);
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

/**
 * The segmenter's answer on a fixed sample of several scripts: an index built where the runtime
 * splits words differently (another ICU) is rebuilt rather than trusted (SPEC §16.4).
 */
export function segmenterSignature(): string {
  return wordsOf("Ünïcode can't 3.14 a_b 校验和数据库迁移 東京タワー ภาษาไทย Türkçe İstanbul проверка").join(' ');
}
