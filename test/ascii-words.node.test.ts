/**
 * The UAX #29 rules of src/ascii-words.ts against Node's `Intl.Segmenter`, which follows UAX #29
 * (Chromium's ICU, in Deno, workerd and browsers, splits `seeds.py` at the full stop: the reason the
 * rules are ours). Node only; test/ascii-words.test.ts holds the vectors every runtime checks.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { forEachAsciiSegment } from '../src/ascii-words.js';

const SEED = 2929;

function node(text: string): Array<[string, boolean]> {
  return [...new Intl.Segmenter('en', { granularity: 'word' }).segment(text)].map((s) => [s.segment, s.isWordLike === true]);
}

/**
 * Whether this Node's ICU joins letters at a colon (MidLetter, UAX #29 WB6–WB7): ICU 76 (Node
 * 22.12) splits `a:b`, ICU 78 (Node 20.20, 26) and the standard keep it whole, as the rules here do.
 * Where this Node splits it, the colon is left out of the comparison (its vectors are below).
 */
const colonJoins = node('a:b').length === 1;

/** Every ASCII class the rules tell apart, and some of the classes no rule joins. */
const ASCII = fc.constantFrom(...`aZq7 0_.'${colonJoins ? ':' : ''},;" \r\n\t-/#@\x00\x7f`.split(''));

function ours(text: string): Array<[string, boolean]> {
  const out: Array<[string, boolean]> = [];
  forEachAsciiSegment(text, 0, text.length, (from, to, wordLike) => out.push([text.slice(from, to), wordLike]));
  return out;
}

describe('ASCII word segments (UAX #29) against Node', () => {
  it('Node follows UAX #29 here', () => {
    expect(node('seeds.py e.g').filter(([, w]) => w).map(([s]) => s)).toEqual(['seeds.py', 'e.g']);
  });

  it('a colon joins letters (MidLetter), not digits, whatever this Node’s ICU does', () => {
    for (const [text, segments] of [['a:b', ['a:b']], ['1:2', ['1', ':', '2']], ['a:1', ['a', ':', '1']], ['a::b', ['a', ':', ':', 'b']]] as const) {
      expect(ours(text).map(([segment]) => segment)).toEqual(segments);
    }
  });

  it('the same segments and word-likeness as Node’s segmenter', () => {
    fc.assert(
      fc.property(fc.array(ASCII, { maxLength: 48 }).map((c) => c.join('')), (text) => {
        expect(ours(text)).toEqual(node(text));
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });

  it('segments a part of a string in place', () => {
    const text = '中 seeds.py 中';
    const out: string[] = [];
    forEachAsciiSegment(text, 2, 10, (from, to) => out.push(text.slice(from, to)));
    expect(out).toEqual(['seeds.py']);
  });
});
