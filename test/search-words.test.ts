/** Words, folding and snippets of search (SPEC §16.2–§16.3): properties, in every runtime. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSessionReferences } from '../src/index.js';
import { encodeWord } from '../src/search/engine.js';
import { forEachSegment } from '../src/ascii-words.js';
import { foldWord, forEachWord, wordHead, wordsOf } from '../src/search/words.js';
import { assistantMessage, fakeQuery, userMessage } from './sessions.js';

const SEED = 2323;

/** Characters around every rule the fast path relies on: ASCII word and Mid* punctuation, separators, marks, Cf, CJK, emoji. */
const PIECES = [
  'a', 'Z', 'q', '7', '0', '_', '.', "'", ':', ',', ';', '"', ' ', '  ', '\n', '\t', '-', '/', '(', '#', '@',
  'é', 'ü', 'İ', 'ß', 'ǅ', 'ﬁ', '\u0301', '\u00ad', '\u200d', '\u200b', '\u061c', '\u{e0041}', '中', '文', '数据库', 'カタカナ', 'ไทย', 'я', '🚀', '👩‍💻', '١', 'ℌ',
];
const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((parts) => parts.join(''));

/** The words a plain Intl.Segmenter pass over the whole text gives, as the module keeps them. */
function intlWords(input: string): Array<[number, number, string]> {
  const out: Array<[number, number, string]> = [];
  for (const { segment, index, isWordLike } of new Intl.Segmenter(undefined, { granularity: 'word' }).segment(input)) {
    if (!isWordLike) continue;
    const folded = foldWord(wordHead(segment));
    if (folded !== '') out.push([index, index + segment.length, folded]);
  }
  return out;
}

/** The words of the core's segments (ascii-words.ts: UAX #29's rules for ASCII, the runtime's segmenter for the rest). */
function segmentWords(input: string): Array<[number, number, string]> {
  const out: Array<[number, number, string]> = [];
  forEachSegment(input, (from, to, wordLike) => {
    const folded = wordLike ? foldWord(wordHead(input.slice(from, to))) : '';
    if (folded !== '') out.push([from, to, folded]);
  });
  return out;
}

/**
 * Whether this runtime's segmenter follows UAX #29 on ASCII (Node, Bun). Chromium's ICU (Deno,
 * workerd, Chromium) splits `e.g` and `a:b` at the full stop and the colon; there ASCII text with
 * that punctuation is compared with the core's own segments only.
 */
const followsUax29 = intlWords('e.g a:b').length === 2;

/** The words forEachWord must give: the core's segments, which are the runtime's own where both follow UAX #29. */
function reference(input: string): Array<[number, number, string]> {
  const words = segmentWords(input);
  if (followsUax29 || !/[.':,;"]/.test(input)) expect(words).toEqual(intlWords(input));
  return words;
}

describe('search words (SPEC §16.3)', () => {
  it('the ASCII fast path and the chunking yield the segmenter’s own words', () => {
    fc.assert(
      fc.property(text, (input) => {
        const words: Array<[number, number, string]> = [];
        forEachWord(input, (start, end, folded) => words.push([start, end, folded]));
        expect(words).toEqual(reference(input));
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('a chunk segmented before gives the same words from the memo, without the segmenter', () => {
    fc.assert(
      fc.property(text, (input) => {
        const first: Array<[number, number, string]> = [];
        forEachWord(input, (start, end, folded) => first.push([start, end, folded]));
        const again: Array<[number, number, string]> = [];
        // Every chunk of at most 32 code units is now known: only longer ones go to the segmenter again.
        const segmented = forEachWord(input, (start, end, folded) => again.push([start, end, folded]));
        expect(again).toEqual(first);
        expect(again).toEqual(reference(input));
        expect(segmented).toBeLessThanOrEqual(input.length);
      }),
      { seed: SEED, numRuns: 200 },
    );
    // A text of short non-ASCII chunks, once segmented, is not handed to the segmenter again (read
    // twice first: the memo, emptied when full, may have been emptied halfway through the first).
    const turkish = 'günü çözüm İstanbul dümen '.repeat(4);
    forEachWord(turkish, () => undefined);
    forEachWord(turkish, () => undefined);
    expect(forEachWord(turkish, () => undefined)).toBe(0);
  });

  it('encodes a word for FTS5 as the regular expression of every ASCII character but [a-z0-9] does', () => {
    const reference = (word: string) => word.replace(/[\0-/:-`{-\x7f]/g, (char) => String.fromCharCode(0xe000 + char.charCodeAt(0)));
    fc.assert(
      fc.property(fc.oneof(text, fc.string({ unit: 'binary', maxLength: 20 }), fc.stringMatching(/^[a-z0-9_.:']{0,12}$/)), (word) => {
        expect(encodeWord(word)).toBe(reference(word));
      }),
      { seed: SEED, numRuns: 400 },
    );
  });

  it('ASCII text has UAX #29’s words in every runtime (a full stop, colon or apostrophe joins letters; a full stop, comma or semicolon digits)', () => {
    const vectors: Array<[string, string[]]> = [
      ['Dümen: seeds.py done', ['dumen', 'seeds.py', 'done']],
      ['e.g. decimal.Decimal a:b can\'t', ['e.g', 'decimal.decimal', 'a:b', 'can\'t']],
      ['v0.3.0 3,14 1;2 1:2 x.1 1.x a..b a.', ['v0.3.0', '3,14', '1;2', '1', '2', 'x', '1', '1', 'x', 'a', 'b', 'a']],
      ['_ __ a_b _1 "q" \'t\'', ['__', 'a_b', '_1', 'q', 't']],
    ];
    for (const [text, words] of vectors) expect([text, wordsOf(text)]).toEqual([text, words]);
  });

  it('folds without locale and without diacritics', () => {
    expect(['Ünïcode', 'İstanbul', 'ÇİFT', 'Crème', 'ﬁle'].map(foldWord)).toEqual(['unicode', 'istanbul', 'cift', 'creme', 'file']);
  });

  it('segments a long text without spaces in pieces, every word found', () => {
    const long = '数据库迁移方案'.repeat(2000);
    let count = 0;
    forEachWord(long, () => count++);
    expect(count).toBeGreaterThan(2000 * 2);
  });
});

describe('search snippets (SPEC §16.2, §6.6)', () => {
  it('snippets are at most 240 code points without Cc or Cf, highlights inside them, in order, each a whole matched word', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(text, { minLength: 1, maxLength: 6 }), fc.nat(), async (texts, pick) => {
        const events = texts.map((t, i) => (i % 2 ? assistantMessage(i + 1, t) : userMessage(i + 1, `${t} `.repeat(1 + (i % 3) * 9))));
        const words: string[] = [];
        for (const t of texts) forEachWord(t, (s, e) => words.push(t.slice(s, e)));
        fc.pre(words.length > 0);
        const query = words[pick % words.length]!;
        const refs = createSessionReferences({ sessionQuery: fakeQuery([{ header: { id: 's', createdAt: 1 }, events, title: texts[0] }]) });
        const hits = await refs.searchSessions({ id: 'agent' }, query);
        expect(hits.map((h) => h.sessionId)).toEqual(['s']);
        for (const { text: snippet, highlights } of hits[0]!.snippets) {
          expect([...snippet].length).toBeLessThanOrEqual(240);
          expect(snippet).not.toMatch(/[\p{Cc}\p{Cf}]/u);
          let last = 0;
          for (const [start, end] of highlights) {
            expect(start).toBeGreaterThanOrEqual(last);
            expect(end).toBeGreaterThan(start);
            expect(end).toBeLessThanOrEqual(snippet.length);
            // A matched word, whole: no space inside, and it does not start or end inside a surrogate pair.
            expect(snippet.slice(start, end)).not.toMatch(/\s|^[\udc00-\udfff]|[\ud800-\udbff]$/);
            last = end;
          }
          // Each highlighted word is one the query matched (cleaning only removes invisible characters).
          expect(highlights.length).toBeGreaterThan(0);
        }
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it('highlights whole words of the original text, and each range is a word of the snippet where cleaning removes nothing inside', async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery([{ header: { id: 's', createdAt: 1 }, events: [userMessage(1, 'Wir prüften die Prüfsumme; prüfen\u200bwir es.')] }]) });
    const [hit] = await refs.searchSessions({ id: 'agent' }, 'prüf');
    const [snippet] = hit!.snippets;
    expect(snippet!.highlights.map(([a, b]) => snippet!.text.slice(a, b))).toEqual(['prüften', 'Prüfsumme', 'prüfen']);
  });

  it('a long message gives a snippet cut to 240 code points around the match, with … where text was left out', async () => {
    const long = `${'filler '.repeat(200)}the zeppelin landed ${'after '.repeat(200)}`;
    const refs = createSessionReferences({ sessionQuery: fakeQuery([{ header: { id: 's', createdAt: 1 }, events: [userMessage(1, long)] }]) });
    const [hit] = await refs.searchSessions({ id: 'agent' }, 'zeppelin');
    const [snippet] = hit!.snippets;
    expect(snippet!.text.startsWith('…') && snippet!.text.endsWith('…')).toBe(true);
    expect([...snippet!.text].length).toBeLessThanOrEqual(240);
    expect(snippet!.highlights.map(([a, b]) => snippet!.text.slice(a, b))).toEqual(['zeppelin']);
  });
});
