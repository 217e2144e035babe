import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSessionReferenceUri, encodeSessionReferenceUri } from '../src/index.js';
import { URI_VECTORS } from './vectors.js';

/** dsh's published encoding (SPEC §2.3), the oracle the wire format must match byte for byte. */
function dshEncode(id: string): string {
  return 'dsh-session:' + Buffer.from(JSON.stringify(id), 'utf8').toString('base64url');
}

describe('wire compatibility with Buffer base64url (SPEC §2.3)', () => {
  it.each(URI_VECTORS)('the pinned vector for %j is what Buffer produces', (id, uri) => {
    expect(dshEncode(id)).toBe(uri);
  });

  it('matches Buffer for a 10 KB id and for every single UTF-16 code unit', () => {
    const big = Array.from({ length: 10_240 }, (_, i) => String.fromCharCode((i * 7919) % 0xffff)).join('');
    expect(encodeSessionReferenceUri(big)).toBe(dshEncode(big));
    for (let unit = 0; unit <= 0xffff; unit += 1) {
      const id = String.fromCharCode(unit);
      if (encodeSessionReferenceUri(id) !== dshEncode(id)) expect(encodeSessionReferenceUri(id)).toBe(dshEncode(id));
    }
  });

  it('matches Buffer for ids of every length 0..64 (all padding cases)', () => {
    for (let n = 0; n <= 64; n++) {
      const id = 'é🎉x'.repeat(n).slice(0, n);
      expect(encodeSessionReferenceUri(id)).toBe(dshEncode(id));
      expect(decodeSessionReferenceUri(dshEncode(id))).toBe(id);
    }
  });

  it('decodes exactly the payloads Buffer reads back to the same base64url and a canonical JSON string (fast-check)', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // Mostly the alphabet; now and then padding, the standard alphabet's extras, a space, or a
    // code above 127 whose low 7 bits are a base64url character.
    const char = fc.oneof(
      { weight: 30, arbitrary: fc.constantFrom(...alphabet) },
      { weight: 1, arbitrary: fc.constantFrom('=', '+', '/', ' ', '\u00c1', '\u0149', '\uff49', 'é') },
    );
    const payload = fc.oneof(
      fc.string({ unit: char, maxLength: 40 }),
      // Real payloads of ASCII and non-ASCII ids, some with one character changed.
      fc.tuple(fc.string({ maxLength: 20 }), fc.nat(), char).map(([id, at, c]) => {
        const p = Buffer.from(JSON.stringify(id), 'utf8').toString('base64url');
        return at % 3 === 0 ? p : p.slice(0, at % p.length) + c + p.slice((at % p.length) + 1);
      }),
    );
    fc.assert(
      fc.property(payload, (p) => {
        const uri = `dsh-session:${p}`;
        let expected: string | undefined;
        const bytes = Buffer.from(p, 'base64url');
        if (p !== '' && bytes.toString('base64url') === p) {
          const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
          try {
            const id: unknown = JSON.parse(text.decode(bytes));
            if (typeof id === 'string' && dshEncode(id) === uri) expected = id;
          } catch {
            expected = undefined;
          }
        }
        let got: string | undefined;
        try {
          got = decodeSessionReferenceUri(uri);
        } catch {
          got = undefined;
        }
        expect(got).toBe(expected);
      }),
      { numRuns: 2000, seed: 0xb64 },
    );
  });
});
