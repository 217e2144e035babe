import { describe, expect, it } from 'vitest';
import {
  decodeSessionReferenceUri,
  encodeSessionReferenceUri,
  SESSION_REFERENCE_SCHEME,
  SessionReferenceError,
} from '../src/index.js';
import { expectCode } from './helpers.js';
import { URI_VECTORS } from './vectors.js';


describe('encodeSessionReferenceUri (SPEC §2.2, §2.3)', () => {
  it.each(URI_VECTORS)('encodes %j like dsh', (id, uri) => {
    expect(encodeSessionReferenceUri(id)).toBe(uri);
  });

  it('uses the exact lowercase scheme', () => {
    expect(SESSION_REFERENCE_SCHEME).toBe('dsh-session:');
  });

  it('round-trips a 10 KB id with every kind of character', () => {
    const id = Array.from({ length: 10_240 }, (_, i) => String.fromCharCode((i * 7919) % 0xffff)).join('');
    expect(decodeSessionReferenceUri(encodeSessionReferenceUri(id))).toBe(id);
  });

  it.each([undefined, null, 42, {}, ['a'], Symbol('s')])('rejects the non-string id %s', (id) => {
    expectCode(() => encodeSessionReferenceUri(id as never), 'SESSION_REFERENCE_INVALID_REFERENCE');
  });
});

describe('decodeSessionReferenceUri (SPEC §2.4)', () => {
  it.each(URI_VECTORS)('decodes back to %j', (id, uri) => {
    expect(decodeSessionReferenceUri(uri)).toBe(id);
  });

  const malformed: Array<[string, unknown]> = [
    ['wrong scheme case', 'DSH-SESSION:InNlc3Npb24tNDM0Ig'],
    ['other scheme', 'dsh-sessions:InNlc3Npb24tNDM0Ig'],
    ['empty payload', 'dsh-session:'],
    ['padding', 'dsh-session:ImFiIg=='],
    ['standard base64 alphabet', 'dsh-session:IuaXpeacrOiqnuOBruOCu+ODg+OCt+ODp+ODsyI'],
    ['non-zero trailing bits', 'dsh-session:ImFiIh'],
    ['length 1 mod 4', 'dsh-session:ImFiI'],
    ['SPEC §2.3 example without closing quote', 'dsh-session:InNlc3Npb24tNDM0'],
    ['non-canonical JSON escape "\\u0041"', `dsh-session:${b64url('"\\u0041"')}`],
    ['JSON with whitespace', `dsh-session:${b64url(' "a"')}`],
    ['JSON number', `dsh-session:${b64url('42')}`],
    ['JSON object', `dsh-session:${b64url('{"id":"a"}')}`],
    ['JSON null', `dsh-session:${b64url('null')}`],
    ['invalid UTF-8', 'dsh-session:Iv8i'],
    ['raw lone surrogate bytes (CESU)', 'dsh-session:Iu2ggCI'],
    ['space inside payload', 'dsh-session:ImF iIg'],
    ['leading space', ' dsh-session:ImFiIg'],
    // A char code above 127 whose low 7 bits are a base64url character, in a full group, in a
    // short last group of 2 and of 3 characters (the decoder reads its table at `code & 127`).
    ['U+00C9 (low bits "I") in a full group', 'dsh-session:\u00c9mFiY2Qi'],
    ['U+00E9 (low bits "i") last in a full group', 'dsh-session:ImFiY2Q\u00e9'],
    ['U+0149 (low bits "I") in a short group of 2', 'dsh-session:ImFi\u0149g'],
    ['U+00E7 (low bits "g") last in a short group of 2', 'dsh-session:ImFiI\u00e7'],
    ['U+00C9 (low bits "I") last in a short group of 3', 'dsh-session:ImFiYy\u00c9'],
    ['U+FF49 (low bits "I") in a short group of 3', 'dsh-session:ImFiY\uff49I'],
    ['non-zero trailing bits in a short group of 3', 'dsh-session:ImFiYyJ'],
    ['not a string', 42],
    ['null', null],
  ];
  it.each(malformed)('rejects %s with the URI in the message', (_, uri) => {
    const error = expectCode(() => decodeSessionReferenceUri(uri as string), 'SESSION_REFERENCE_INVALID_REFERENCE');
    if (typeof uri === 'string') expect(error.message).toContain(JSON.stringify(uri).slice(0, 40));
  });

  it('throws SessionReferenceError, not a SyntaxError or TypeError', () => {
    expect(() => decodeSessionReferenceUri('dsh-session:e30')).toThrow(SessionReferenceError);
  });
});

/** Base64url of an ASCII string, written independently of the code under test. */
function b64url(ascii: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let bits = '';
  for (const ch of ascii) bits += ch.charCodeAt(0).toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i < bits.length; i += 6) out += alphabet[parseInt(bits.slice(i, i + 6).padEnd(6, '0'), 2)];
  return out;
}
