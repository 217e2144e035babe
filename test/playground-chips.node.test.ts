/**
 * The playground composer's model (playground/src/chips.ts): chips over the canonical text stay
 * atomic under every edit (SPEC §13, §15.3). Vectors, then properties over generated texts that mix
 * valid, unknown and malformed mentions, bare URIs, surrogate pairs and newlines.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeSessionReferenceUri, formatSessionReferenceMention, scanSessionReferenceText } from '../src/index.js';
import {
  deleteBackward,
  deleteForward,
  normalizePastedText,
  replaceSelection,
  segmentsOf,
  snapOffset,
  stepOverChip,
  widen,
} from '../playground/src/chips.js';

const A = formatSessionReferenceMention({ sessionId: 'session-a', label: 'Alpha [1]' });
const BARE = encodeSessionReferenceUri('session-b');
const BAD = '@[bad](dsh-session:e30)';
const KNOWN = new Set(['session-a', 'session-b']);

describe('segmentsOf', () => {
  it('alternates plain runs and chips, marks unknown and malformed mentions, and covers the text exactly', () => {
    const text = `x ${A}${BARE} ${formatSessionReferenceMention({ sessionId: 'gone' })} ${BAD}`;
    const segments = segmentsOf(text, KNOWN);
    expect(segments.map((s) => s.chip?.state ?? 'text')).toEqual(['text', 'ok', 'text', 'ok', 'text', 'unknown', 'text', 'malformed', 'text']);
    expect(segments.map((s) => s.chip?.text)).toEqual([undefined, '@Alpha [1]', undefined, '@session-b', undefined, '@gone', undefined, BAD, undefined]);
    expect(segments[1]!.chip!.title).toBe('session-a');
    expect(segments[5]!.chip!.title).toContain('no session with this id');
    expect(segments[7]!.chip!.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
    expect(segments.map((s) => text.slice(s.start, s.end)).join('')).toBe(text);
  });

  it('is one empty plain run for the empty text', () => {
    expect(segmentsOf('', KNOWN)).toEqual([{ start: 0, end: 0 }]);
  });
});

describe('edits', () => {
  const text = `a ${A} b`;
  const start = 2;
  const end = 2 + A.length;

  it.each([
    ['Backspace just after a chip removes it whole', deleteBackward(text, { start: end, end }), { text: 'a  b', caret: 2 }],
    ['Delete just before a chip removes it whole', deleteForward(text, { start, end: start }), { text: 'a  b', caret: 2 }],
    ['Backspace elsewhere removes one character', deleteBackward(text, { start: 1, end: 1 }), { text: ` ${A} b`, caret: 0 }],
    ['Backspace removes a surrogate pair whole', deleteBackward('x🚀', { start: 3, end: 3 }), { text: 'x', caret: 1 }],
    ['Delete removes a surrogate pair whole', deleteForward('🚀x', { start: 0, end: 0 }), { text: 'x', caret: 0 }],
    ['Backspace at the start does nothing', deleteBackward(text, { start: 0, end: 0 }), { text, caret: 0 }],
    ['Delete at the end does nothing', deleteForward(text, { start: text.length, end: text.length }), { text, caret: text.length }],
    ['a selection cutting into a chip takes all of it', replaceSelection(text, { start: 1, end: start + 3 }, 'Z'), { text: 'aZ b', caret: 2 }],
    ['typing inside a chip goes after it', replaceSelection(text, { start: start + 5, end: start + 5 }, 'Z'), { text: `a ${A}Z b`, caret: end + 1 }],
  ])('%s', (_name, edit, expected) => {
    expect(edit).toEqual(expected);
  });

  it('steps over a chip with ←/→ and not elsewhere', () => {
    expect(stepOverChip(text, end, -1)).toBe(start);
    expect(stepOverChip(text, start, 1)).toBe(end);
    expect(stepOverChip(text, 1, 1)).toBeUndefined();
    expect(stepOverChip(text, end, 1)).toBeUndefined();
    expect(stepOverChip(text, 0, -1)).toBeUndefined();
  });

  it('snaps offsets out of chips and clamps them to the text', () => {
    expect(snapOffset(text, start + 4, false)).toBe(start);
    expect(snapOffset(text, start + 4, true)).toBe(end);
    expect(snapOffset(text, start)).toBe(start);
    expect(snapOffset(text, text.length + 5)).toBe(text.length);
    expect(widen(text, { start: start + 1, end: start + 2 })).toEqual({ start, end });
  });

  it('normalizes pasted line breaks', () => {
    expect(normalizePastedText('a\r\nb\rc\n')).toBe('a\nb\nc\n');
  });
});

/** Texts built from pieces that exercise chips: mentions of every kind, plain runs, astral characters. */
const pieces = fc.constantFrom(A, BARE, BAD, formatSessionReferenceMention({ sessionId: 'gone', label: 'G' }), ' ', 'ab', '\n', '🚀', '@', '[', ')', 'dsh-session:');
const texts = fc.array(pieces, { maxLength: 12 }).map((parts) => parts.join(''));
const withOffsets = texts.chain((text) =>
  fc.tuple(fc.constant(text), fc.nat({ max: text.length }), fc.nat({ max: text.length })).chain(([t, a, b]) =>
    // Carets (a === b) a quarter of the time: the collapsed case must be covered, also inside chips.
    fc.oneof({ arbitrary: fc.constant([t, a, b] as const), weight: 3 }, { arbitrary: fc.constant([t, a, a] as const), weight: 1 }),
  ),
);

/** The token spans of a text. */
const spans = (text: string) => scanSessionReferenceText(text).tokens.map((token) => [token.start, token.end] as const);
const strictlyInside = (text: string, offset: number) => spans(text).some(([s, e]) => s < offset && offset < e);

describe('properties', () => {
  it('a snapped offset is never strictly inside a chip', () => {
    fc.assert(
      fc.property(withOffsets, ([text, offset]) => {
        expect(strictlyInside(text, snapOffset(text, offset, true))).toBe(false);
        expect(strictlyInside(text, snapOffset(text, offset, false))).toBe(false);
      }),
    );
  });

  it('replacing any selection cuts the text only outside chips: every chip is kept byte for byte or removed whole', () => {
    fc.assert(
      fc.property(withOffsets, fc.constantFrom('', 'x', ' '), ([text, a, b], inserted) => {
        const removed = widen(text, { start: Math.min(a, b), end: Math.max(a, b) });
        expect(strictlyInside(text, removed.start)).toBe(false);
        expect(strictlyInside(text, removed.end)).toBe(false);
        if (a === b) expect(removed).toEqual({ start: snapOffset(text, a, true), end: snapOffset(text, a, true) });
        else expect([removed.start <= Math.min(a, b), removed.end >= Math.max(a, b)]).toEqual([true, true]);
        const edit = replaceSelection(text, { start: Math.min(a, b), end: Math.max(a, b) }, inserted);
        expect(edit).toEqual({ text: text.slice(0, removed.start) + inserted + text.slice(removed.end), caret: removed.start + inserted.length });
      }),
    );
  });

  it('Backspace and Delete at a caret remove exactly one whole chip or one code point', () => {
    fc.assert(
      fc.property(withOffsets, ([text, offset]) => {
        const caret = snapOffset(text, offset, true);
        const back = deleteBackward(text, { start: caret, end: caret });
        const removedBack = text.slice(back.caret, caret);
        expect(back.text).toBe(text.slice(0, back.caret) + text.slice(caret));
        const chipBefore = spans(text).find(([, e]) => e === caret);
        if (chipBefore) expect([back.caret, caret]).toEqual([chipBefore[0], chipBefore[1]]);
        else expect([...removedBack].length).toBe(caret === 0 ? 0 : 1);

        const forward = deleteForward(text, { start: caret, end: caret });
        expect(forward.caret).toBe(caret);
        const removedLength = text.length - forward.text.length;
        expect(forward.text).toBe(text.slice(0, caret) + text.slice(caret + removedLength));
        const chipAfter = spans(text).find(([s]) => s === caret);
        if (chipAfter) expect(removedLength).toBe(chipAfter[1] - chipAfter[0]);
        else expect([...text.slice(caret, caret + removedLength)].length).toBe(caret === text.length ? 0 : 1);
      }),
    );
  });
});
