import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeSessionReferenceUri, encodeSessionReferenceUri, scanSessionReferenceText } from '../src/index.js';

/**
 * A literal, quadratic reading of SPEC §3.2: at each position try an explicit mention, then a bare
 * URI, else copy one character. It shares no code with src/mention.ts's linear scanner.
 */
function naiveScan(text: string) {
  const tokens: Array<{ kind: string; start: number; end: number; sessionId?: string; label?: string; error?: string }> = [];
  let out = '';
  let i = 0;
  const decode = (uri: string) => {
    try {
      return decodeSessionReferenceUri(uri);
    } catch {
      return undefined;
    }
  };
  while (i < text.length) {
    if (text.startsWith('@[', i)) {
      let j = i + 2;
      let closed = false;
      while (j < text.length) {
        if (text[j] === '\\') {
          if (j + 1 >= text.length) break;
          j += 2;
        } else if (text[j] === ']') {
          closed = true;
          break;
        } else j++;
      }
      if (closed && text.startsWith('](dsh-session:', j)) {
        let k = j + '](dsh-session:'.length;
        while (k < text.length && text[k] !== ')' && !/\s/.test(text[k]!)) k++;
        if (text[k] === ')') {
          const label = text.slice(i + 2, j).replace(/\\([\s\S])/g, '$1');
          const sessionId = decode('dsh-session:' + text.slice(j + '](dsh-session:'.length, k));
          if (sessionId === undefined) {
            tokens.push({ kind: 'mention', start: i, end: k + 1, label, error: 'SESSION_REFERENCE_INVALID_REFERENCE' });
            out += text.slice(i, k + 1);
          } else {
            tokens.push({ kind: 'mention', start: i, end: k + 1, label, sessionId });
            out += '@' + label;
          }
          i = k + 1;
          continue;
        }
      }
    }
    if (text.startsWith('dsh-session:', i) && !(i > 0 && /[A-Za-z0-9+\-.]/.test(text[i - 1]!))) {
      let k = i + 'dsh-session:'.length;
      while (k < text.length && /[A-Za-z0-9_-]/.test(text[k]!)) k++;
      if (k > i + 'dsh-session:'.length) {
        const sessionId = decode(text.slice(i, k));
        if (sessionId === undefined) {
          tokens.push({ kind: 'bare', start: i, end: k, error: 'SESSION_REFERENCE_INVALID_REFERENCE' });
          out += text.slice(i, k);
        } else {
          tokens.push({ kind: 'bare', start: i, end: k, sessionId, label: sessionId });
          out += '@' + sessionId;
        }
        i = k;
        continue;
      }
    }
    out += text[i];
    i++;
  }
  return { text: out, tokens };
}

const fragments = fc.constantFrom(
  '@[', '@', '[', ']', '(', ')', '\\', '\\\\', '](', '](dsh-session:', 'dsh-session:', 'dsh-session', ':',
  encodeSessionReferenceUri('a').slice('dsh-session:'.length), encodeSessionReferenceUri('日本').slice('dsh-session:'.length),
  encodeSessionReferenceUri('a'), 'ImFiIh', 'e30', 'x', 'a', '.', '-', '+', '_', ' ', '\n', '\t', '\u00a0', 'é', '🎉',
);

describe('the linear scanner agrees with a literal reading of SPEC §3.2', () => {
  it('on generated texts made of mention fragments', () => {
    fc.assert(
      fc.property(fc.array(fragments, { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        const expected = naiveScan(text);
        const actual = scanSessionReferenceText(text);
        expect(actual.text).toBe(expected.text);
        expect(
          actual.tokens.map(({ error, ...token }) => (error ? { ...token, error: error.code } : token)),
        ).toEqual(expected.tokens);
      }),
      { numRuns: 3000 },
    );
  });
});
