/**
 * UTF-8 byte lengths (src/utf8.ts; SPEC §8.3, §8.4): equal to `TextEncoder`'s for every string,
 * lone surrogates included, and linear: each UTF-16 unit is handed to `encodeInto` once (a
 * Chromium `encodeInto` converts its whole source string, so handing it the rest of the text
 * again and again took 50 s for a 10 MB id there).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { utf8ByteLength } from '../src/utf8.js';
import { anyCodePoint } from './hardening.js';

const PIECE = 1 << 14;
const encodedLength = (text: string) => new TextEncoder().encode(text).length;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('utf8ByteLength', () => {
  it.each<[string, string]>([
    ['empty', ''],
    ['ASCII', 'hello'],
    ['two, three and four bytes', 'é€🎉'],
    ['a lone high surrogate', '\ud83c'],
    ['a lone low surrogate', '\udf89'],
    ['reversed halves', '\udf89\ud83c'],
    ['a pair across the first piece boundary', `${'x'.repeat(PIECE - 1)}🎉y`],
    ['a lone high surrogate ending the first piece', `${'x'.repeat(PIECE - 1)}\ud83cy`],
    ['a lone high surrogate ending the text at the piece boundary', `${'x'.repeat(PIECE - 1)}\ud83c`],
    ['a lone low surrogate starting the second piece', `${'x'.repeat(PIECE)}\udf89`],
    ['pairs only, across many pieces', '🎉'.repeat(3 * PIECE + 1)],
    ['three-byte units only, filling the scratch exactly', '€'.repeat(2 * PIECE)],
  ])('%s: as TextEncoder counts', (_, text) => {
    expect(utf8ByteLength(text)).toBe(encodedLength(text));
  });

  it('property: as TextEncoder counts, for any string of any length (lone surrogates included)', () => {
    const unit = fc.oneof(fc.constantFrom('x', 'é', '€', '🎉', '\ud83c', '\udf89'), fc.string({ unit: anyCodePoint, maxLength: 3 }));
    // Padding puts the generated units at and around the piece boundaries.
    const padding = fc.oneof(fc.nat(40), fc.integer({ min: PIECE - 40, max: PIECE }), fc.integer({ min: 2 * PIECE - 40, max: 2 * PIECE }));
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 40 }), padding, (pieces, pad) => {
        const text = 'a'.repeat(pad) + pieces.join('');
        expect(utf8ByteLength(text)).toBe(encodedLength(text));
      }),
      { numRuns: 100, seed: 22 },
    );
  });

  it('hands each UTF-16 unit of a 10 MB text to encodeInto once, in source pieces of at most 16,384 units', () => {
    const text = `id-é🎉<\\][${'x'.repeat(54)}`.repeat(170_000);
    const sources: number[] = [];
    const encodeInto = TextEncoder.prototype.encodeInto;
    vi.spyOn(TextEncoder.prototype, 'encodeInto').mockImplementation(function (this: TextEncoder, source: string, destination: Uint8Array) {
      sources.push(source.length);
      return encodeInto.call(this, source, destination);
    });
    expect(utf8ByteLength(text)).toBe(encodedLength(text));
    expect(sources.reduce((sum, length) => sum + length, 0)).toBe(text.length);
    expect(Math.max(...sources)).toBeLessThanOrEqual(PIECE);
  });
});
