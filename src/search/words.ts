/**
 * Words of indexed text and of queries (SPEC §16.3): `Intl.Segmenter` word segmentation, folded
 * without locale and without diacritics.
 * @module
 */
import { BOUNDARY, forEachAsciiSegment } from '../ascii-words.js';
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
 * {@link ASCII_CLASS} of a boundary ({@link BOUNDARY}): text is cut at their runs first, so the
 * segmenter only sees short chunks and a chunk of ASCII letters, digits and `_` is one word without
 * asking it (the fast path of SPEC §16.3; test/search-words.test.ts checks it). Every other code
 * unit, all of them from U+0080 on, is part of a chunk.
 */
const CUT = 0;
/** {@link ASCII_CLASS} of `[a-z0-9_]`: an ASCII word's own, lowercase. */
const WORD = 1;
/** {@link ASCII_CLASS} of `[A-Z]`: an ASCII word's, lowercased when folded. */
const UPPER = 2;
/** {@link ASCII_CLASS} of the Mid* punctuation and `"`: inside a chunk, never inside an ASCII word. */
const MID = 3;

/**
 * The class of each ASCII code unit (what the scan of {@link forEachWord} reads instead of running
 * a regular expression per chunk: one table look-up per code unit, no match objects).
 */
const ASCII_CLASS = Uint8Array.from({ length: 128 }, (_, code) => {
  const char = String.fromCharCode(code);
  if (BOUNDARY.test(char)) return CUT;
  if (/[A-Z]/.test(char)) return UPPER;
  return /[a-z0-9_]/.test(char) ? WORD : MID;
});

/** Chunks of at most this many code units that went to the segmenter have their words kept in {@link SEGMENTED}. */
const MEMO_CHUNK = 32;

/** How many chunks {@link SEGMENTED} holds before it starts again empty (a few hundred KB at most). */
const MEMO_CHUNKS = 2048;

/**
 * The words of short chunks the segmenter was handed (chunk → start, end, folded of each word, in
 * chunk offsets): text repeats its words (Zipf's law), and a chunk's words depend on the chunk
 * alone (each chunk is segmented by itself), so a chunk seen again is not segmented again. Bounded
 * ({@link MEMO_CHUNKS}); emptied when full.
 */
const SEGMENTED = new Map<string, readonly (string | number)[]>();

let segmenter: Intl.Segmenter | undefined;

/**
 * Calls `visit(start, end, folded)` for every word of `text` in order (UTF-16 offsets into `text`;
 * `folded` of a word longer than {@link MAX_WORD_LENGTH} is that of its {@link wordHead}), skipping
 * words that fold to nothing. Linear: the segmenter sees chunks of at most {@link PIECE} code
 * units. Returns how many code units the segmenter was handed (the costly part: about 2–3 µs each
 * for Chinese or Thai in V8, where an ASCII word costs a few nanoseconds per code unit; a short
 * chunk segmented before is not handed again).
 */
export function forEachWord(text: string, visit: (start: number, end: number, folded: string) => void): number {
  let segmented = 0;
  const length = text.length;
  for (let at = 0; at < length; ) {
    let code = text.charCodeAt(at);
    if (code < 128 && ASCII_CLASS[code] === CUT) {
      at++;
      continue;
    }
    // A chunk: a run of code units other than boundaries. Is it an ASCII word, with capitals?
    const start = at;
    let ascii = true;
    let mid = false;
    let upper = false;
    for (; at < length; at++) {
      code = text.charCodeAt(at);
      if (code >= 128) ascii = false;
      else {
        const kind = ASCII_CLASS[code];
        if (kind === CUT) break;
        if (kind === UPPER) upper = true;
        else if (kind === MID) mid = true;
      }
    }
    // One word by UAX #29 (WB8–WB13b) without the segmenter: `[A-Za-z0-9_]+`, but not `_` alone.
    if (ascii && !mid) {
      if (at - start > 1 || text.charCodeAt(start) !== 95) {
        const head = wordHead(text.slice(start, at));
        visit(start, at, upper ? head.toLowerCase() : head);
      }
      continue;
    }
    // ASCII with `. ' : , ;` or `"`: UAX #29's own rules, the same in every runtime (ascii-words.ts).
    if (ascii) asciiWords(text, start, at, visit);
    else segmented += segmentChunk(text.slice(start, at), start, visit);
  }
  return segmented;
}

/** The words of an ASCII chunk `text[start, end)` that holds Mid* punctuation, by UAX #29 ({@link forEachAsciiSegment}). */
function asciiWords(text: string, start: number, end: number, visit: (start: number, end: number, folded: string) => void): void {
  forEachAsciiSegment(text, start, end, (from, to, wordLike) => {
    if (wordLike) visit(from, to, foldWord(wordHead(text.slice(from, to))));
  });
}

/** The words of one chunk that the fast path does not take; returns the code units handed to the segmenter. */
function segmentChunk(chunk: string, offset: number, visit: (start: number, end: number, folded: string) => void): number {
  const known = chunk.length <= MEMO_CHUNK ? SEGMENTED.get(chunk) : undefined;
  if (known === undefined && chunk.length <= MEMO_CHUNK) {
    // A copy of its own: a slice may keep the whole text it was cut from alive (V8's sliced
    // strings), and so would the words cut from it, which the memo keeps.
    const own = chunk.split('').join('');
    const words: (string | number)[] = [];
    segmentPiece(own, 0, (start, end, folded) => words.push(start, end, folded));
    if (SEGMENTED.size >= MEMO_CHUNKS) SEGMENTED.clear();
    SEGMENTED.set(own, words);
    visitAll(words, offset, visit);
    return chunk.length;
  }
  if (known !== undefined) {
    visitAll(known, offset, visit);
    return 0;
  }
  for (let start = 0; start < chunk.length; ) {
    const end = pieceEnd(chunk, start);
    segmentPiece(chunk.slice(start, end), offset + start, visit);
    start = end;
  }
  return chunk.length;
}

/** Visits the words of a chunk kept flat (start, end, folded of each) at `offset`. */
function visitAll(words: readonly (string | number)[], offset: number, visit: (start: number, end: number, folded: string) => void): void {
  for (let k = 0; k < words.length; k += 3) visit(offset + (words[k] as number), offset + (words[k + 1] as number), words[k + 2] as string);
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

/** The segmenter's answer on its sample, once per realm (the runtime's segmentation does not change while it runs). */
let signature: string | undefined;

/**
 * The segmenter's answer on a fixed sample of several scripts: an index built where the runtime
 * splits words differently (another ICU) is rebuilt rather than trusted (SPEC §16.4).
 */
export function segmenterSignature(): string {
  signature ??= wordsOf("Ünïcode can't 3.14 a_b e.g 校验和数据库迁移 東京タワー ภาษาไทย Türkçe İstanbul проверка").join(' ');
  return signature;
}
