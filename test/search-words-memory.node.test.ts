/**
 * Memory of search's word memo (SPEC §16.3, §16.7): the memo of short segmented chunks keeps
 * copies of its own, never the texts the chunks were cut from (V8 keeps a slice's whole text
 * alive; the first memo kept 2,000 texts of 100 KB, 201 MB, for 2,000 chunks of 20 code units).
 * Node only: it collects garbage through V8's flag.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { forEachWord } from '../src/search/words.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('search words memo (SPEC §16.7)', () => {
  it('keeps no text a memoized chunk was cut from', () => {
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 500; i++) {
      // A text of 100 KB whose one non-ASCII chunk (20 code units, each text its own) is memoized.
      const text = `${'a '.repeat(50_000)}übergröße${String(i).padStart(11, 'x')} b`;
      let words = 0;
      forEachWord(text, () => words++);
      expect(words).toBe(50_002);
    }
    gc();
    // 500 texts of 100 KB would be 50 MB; the memo's own copies and words are a few dozen KB.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(10_000_000);
  });
});
