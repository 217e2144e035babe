import { Buffer } from 'node:buffer';
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
});
