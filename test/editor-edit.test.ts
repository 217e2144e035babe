/**
 * The editor kit's segments and edit model (SPEC §15.5–§15.7): `segmentMentions`,
 * `normalizeSelection`, `deleteBackward`, `deleteForward`, `replaceSelection` and `moveCaret`.
 * Table-driven vectors (CJK and emoji labels, ZWJ sequences, combining marks, flags, malformed
 * mentions, selections across chips, the chip-join rule), hostile arguments, then fast-check
 * properties over generated prompt texts. Shared suite: runs in Node, Chromium, workerd, Deno and Bun.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeSessionReferenceUri, formatSessionReferenceMention, scanSessionReferenceText } from '../src/index.js';
import {
  deleteBackward,
  deleteForward,
  moveCaret,
  normalizeSelection,
  replaceSelection,
  segmentMentions,
  type MentionEdit,
  type MentionSelection,
} from '../src/editor/index.js';
import { anyString, revokedProxy, throwingGetter } from './hardening.js';
import { expectCode } from './helpers.js';
import { canonicalMention, promptText } from './prompt-texts.js';

const M = formatSessionReferenceMention({ sessionId: 'session-434', label: 'Schema' }); // 41 characters
const CJK = formatSessionReferenceMention({ sessionId: '会话-7', label: '数据库迁移' });
const EMOJI = formatSessionReferenceMention({ sessionId: 'e', label: '🚀 launch 👩‍💻' });
const BARE = encodeSessionReferenceUri('a'); // dsh-session:ImEi, 16 characters
const BAD = '@[bad](dsh-session:e30)';
const ZWJ = '👩‍💻'; // U+1F469 U+200D U+1F4BB: 5 code units, one grapheme cluster
const FLAGS = '🇯🇵🇺🇸'; // two regional-indicator pairs: two clusters of 4 code units

const at = (anchor: number, focus = anchor): MentionSelection => ({ anchor, focus });
const edit = (text: string, anchor: number, focus = anchor): MentionEdit => ({ text, selection: at(anchor, focus) });

describe('segmentMentions (SPEC §15.6)', () => {
  it.each([
    ['the empty text', '', []],
    ['plain text', 'abc', [{ kind: 'text', start: 0, end: 3, text: 'abc' }]],
    ['a lone scheme', 'dsh-session:', [{ kind: 'text', start: 0, end: 12, text: 'dsh-session:' }]],
  ])('%s', (_, text, expected) => {
    expect(segmentMentions(text)).toEqual(expected);
  });

  it('cuts text, valid chips (CJK and emoji labels, bare URIs) and malformed ones, with no empty run', () => {
    const text = `x${CJK}${BARE} ${EMOJI}${BAD}`;
    const segments = segmentMentions(text);
    expect(segments.map((s) => [s.kind, text.slice(s.start, s.end), s.kind === 'mention' ? s.valid : s.text])).toEqual([
      ['text', 'x', 'x'],
      ['mention', CJK, true],
      ['mention', BARE, true],
      ['text', ' ', ' '],
      ['mention', EMOJI, true],
      ['mention', BAD, false],
    ]);
    expect(segments[1]).toMatchObject({ token: { kind: 'mention', sessionId: '会话-7', label: '数据库迁移' } });
    expect(segments[2]).toMatchObject({ token: { kind: 'bare', sessionId: 'a', label: 'a' } });
    expect(segments[5]).toMatchObject({ token: { kind: 'mention', label: 'bad', error: { code: 'SESSION_REFERENCE_INVALID_REFERENCE' } } });
  });

  it('marks a non-canonical bare URI invalid and keeps a broken mention as text around its bare URI', () => {
    expect(segmentMentions('see dsh-session:A').map((s) => [s.kind, s.kind === 'mention' && s.valid])).toEqual([
      ['text', false],
      ['mention', false],
    ]);
    const broken = `@[x](${BARE} oops)`;
    expect(segmentMentions(broken).map((s) => broken.slice(s.start, s.end))).toEqual(['@[x](', BARE, ' oops)']);
  });

  it('rejects a text that is not a string (INVALID_ARGUMENT)', () => {
    expectCode(() => segmentMentions(42 as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});

describe('normalizeSelection (SPEC §15.7)', () => {
  const text = `a ${M} b`; // the chip is [2, 43)
  it.each([
    ['a caret outside chips stays', text, at(1), at(1)],
    ['a caret at a chip edge stays', text, at(2), at(2)],
    ['a caret inside a chip goes to the nearer edge (start)', text, at(5), at(2)],
    ['a caret inside a chip goes to the nearer edge (end)', text, at(40), at(43)],
    ['a caret in the middle of a chip goes to its end (a tie)', BARE, at(8), at(16)],
    ['a range ending inside a chip grows to cover it', text, at(0, 30), at(0, 43)],
    ['a backward range keeps its direction', text, at(30, 0), at(43, 0)],
    ['a range inside one chip covers the chip', text, at(5, 6), at(2, 43)],
    ['a range starting inside a chip grows to its start', text, at(44, 5), at(44, 2)],
    ['a caret inside a surrogate pair is read as the pair’s start', 'x🚀y', at(2), at(1)],
    ['a range end inside a surrogate pair too', 'x🚀y', at(4, 2), at(4, 1)],
    ['a caret inside a pair inside a chip: the pair, then the chip', `${EMOJI}`, at(4), at(0)],
  ])('%s', (_, t, selection, expected) => {
    expect(normalizeSelection(t, selection)).toEqual({ text: t, selection: expected });
  });
});

describe('deleteBackward and deleteForward (SPEC §15.7)', () => {
  const text = `a ${M} b`;
  it.each([
    ['Backspace after a chip deletes it whole', deleteBackward(text, at(43)), edit('a  b', 2)],
    ['Backspace inside a chip (caret snapped to its end) deletes it whole', deleteBackward(text, at(40)), edit('a  b', 2)],
    ['Backspace after a CJK chip', deleteBackward(`${CJK}!`, at(CJK.length)), edit('!', 0)],
    ['Backspace after a malformed chip deletes it whole', deleteBackward(`x${BAD}`, at(1 + BAD.length)), edit('x', 1)],
    ['Backspace deletes a ZWJ sequence whole', deleteBackward(`x${ZWJ}`, at(6)), edit('x', 1)],
    ['Backspace deletes a letter with its combining mark', deleteBackward('ae\u0301', at(3)), edit('a', 1)],
    ['Backspace deletes one flag of two', deleteBackward(FLAGS, at(8)), edit('🇯🇵', 4)],
    ['Backspace at the start changes nothing', deleteBackward(text, at(0)), edit(text, 0)],
    ['Backspace deletes a range across two chips (its end grown to cover the second)', deleteBackward(`a ${M}${BARE} b`, at(1, 46)), edit('a b', 1)],
    ['Backspace deletes a backward range', deleteBackward(text, at(44, 1)), edit('ab', 1)],
    ['Delete before a chip deletes it whole', deleteForward(text, at(2)), edit('a  b', 2)],
    ['Delete deletes a surrogate pair whole', deleteForward('x🚀', at(1)), edit('x', 1)],
    ['Delete deletes a ZWJ sequence whole', deleteForward(`${ZWJ}y`, at(0)), edit('y', 0)],
    ['Delete at the end changes nothing', deleteForward(text, at(text.length)), edit(text, text.length)],
  ])('%s', (_, result, expected) => {
    expect(result).toEqual(expected);
  });

  const word = { unit: 'word' } as const;
  it.each([
    ['a word', deleteBackward('hello world', at(11), word), edit('hello ', 6)],
    ['a word and the blanks after it', deleteBackward('hello world \t ', at(14), word), edit('hello ', 6)],
    ['part of a word before the caret', deleteBackward('hello world', at(8), word), edit('hello rld', 6)],
    ['a punctuation mark is a word of its own', deleteBackward('foo, ', at(5), word), edit('foo', 3)],
    ['a line break is a word of its own', deleteBackward('line\n', at(5), word), edit('line', 4)],
    ['an emoji ZWJ sequence is a word of its own', deleteBackward(`see ${ZWJ}`, at(9), word), edit('see ', 4)],
    ['a CJK word after a space', deleteBackward('你好 世界', at(5), word), edit('你好 ', 3)],
    ['a chip is a word', deleteBackward(`see ${M}`, at(45), word), edit('see ', 4)],
    ['a chip behind blanks is a word with them', deleteBackward(`see ${M}  `, at(47), word), edit('see ', 4)],
    ['only the text after a chip', deleteBackward(`${M}xy`, at(43), word), edit(M, 41)],
    ['forward: the blanks and the word after the caret', deleteForward('hello world', at(5), word), edit('hello', 5)],
    ['forward: blanks and a chip after them', deleteForward(`a  ${M} b`, at(1), word), edit('a b', 1)],
    ['forward: a CJK chip', deleteForward(`${CJK} x`, at(0), word), edit(' x', 0)],
    // The segmenter looks at 1,024 units around the caret: a longer word goes a window at a time,
    // and a chip behind more blanks than that stays.
    ['a word longer than the window', deleteBackward(`x ${'a'.repeat(3000)}`, at(3002), word), edit(`x ${'a'.repeat(1976)}`, 1978)],
    ['blanks longer than the window', deleteBackward(`${M}${' '.repeat(2000)}`, at(2041), word), edit(`${M}${' '.repeat(976)}`, 1017)],
    ['forward: a word longer than the window', deleteForward(`${'b'.repeat(1500)} y`, at(0), word), edit(`${'b'.repeat(476)} y`, 0)],
  ])('word: %s', (_, result, expected) => {
    expect(result).toEqual(expected);
  });

  it('puts the caret at the nearer edge of a chip that a deletion forms around it', () => {
    // Deleting the `\\` leaves `dsh-session:0`, a (malformed) bare URI chip: the caret goes to its end.
    expect(deleteForward('dsh-session:\\0 x', at(12))).toEqual(edit('dsh-session:0 x', 13));
  });

  it('never joins what is left into a chip: the space stays, or nothing is deleted', () => {
    // Deleting the space between a bare URI and a letter would make the letter part of the URI.
    expect(deleteBackward(`${BARE} x`, at(17))).toEqual(edit(`${BARE} x`, 17));
    // Deleting the `]` would let `@[x` take the mention into its label.
    expect(deleteBackward(`@[x] ${M}`, at(4))).toEqual(edit(`@[x] ${M}`, 4));
  });
});

describe('replaceSelection (SPEC §15.7)', () => {
  const text = `a ${M} b`;
  it.each([
    ['typing at a caret', replaceSelection('ac', at(1), 'b'), edit('abc', 2)],
    ['typing inside a chip goes to its nearer edge', replaceSelection(text, at(5), 'Z'), edit(`a Z${M} b`, 3)],
    ['typing over a range across a chip replaces the chip too', replaceSelection(text, at(1, 30), 'Z'), edit('aZ b', 2)],
    ['a letter typed after a bare URI gets a space before it', replaceSelection(BARE, at(16), 'x'), edit(`${BARE} x`, 18)],
    ['a letter typed before a bare URI gets a space after it', replaceSelection(BARE, at(0), 'x'), edit(`x ${BARE}`, 1)],
    ['a letter typed after a malformed bare URI too', replaceSelection('dsh-session:A', at(13), 'b'), edit('dsh-session:A b', 15)],
    ['a space typed after a bare URI needs none', replaceSelection(BARE, at(16), ' '), edit(`${BARE} `, 17)],
    ['a letter after a mention needs no space', replaceSelection(M, at(41), 'x'), edit(`${M}x`, 42)],
    ['a pasted mention stays a mention', replaceSelection('see ', at(4), CJK), edit(`see ${CJK}`, 4 + CJK.length)],
    ['a pasted bare URI after a letter gets a space', replaceSelection('see', at(3), BARE), edit(`see ${BARE}`, 20)],
    ['a pasted bare URI between letters gets spaces on both sides', replaceSelection('ab', at(1), BARE), edit(`a ${BARE} b`, 18)],
    ['a mention pasted over a range across two chips', replaceSelection(`${M}${BARE}`, at(3, 44), EMOJI), edit(EMOJI, EMOJI.length)],
    ['deleting with an empty insertion', replaceSelection(text, at(2, 43), ''), edit('a  b', 2)],
  ])('%s', (_, result, expected) => {
    expect(result).toEqual(expected);
  });

  it('does not make an edit that no space can keep apart from a chip (an @[ whose label would take the mention in)', () => {
    expect(replaceSelection(M, at(0), '@[')).toEqual(edit(M, 0));
    expect(replaceSelection(`x ${M}`, at(1, 0), '@[open ')).toEqual(edit(`x ${M}`, 1, 0));
    // Where a `]` stands between them, the same text is fine.
    expect(replaceSelection(`] ${M}`, at(0), '@[')).toEqual(edit(`@[] ${M}`, 2));
  });
});

describe('moveCaret (SPEC §15.7)', () => {
  const text = `a ${M} b`;
  it.each([
    ['left over a chip in one move', moveCaret(text, at(43), 'left'), at(2)],
    ['right over a chip in one move', moveCaret(text, at(2), 'right'), at(43)],
    ['right by one character', moveCaret(text, at(0), 'right'), at(1)],
    ['left from inside a chip: first to its nearer edge, then one unit', moveCaret(text, at(40), 'left'), at(2)],
    ['a range collapses to its left end', moveCaret(text, at(30, 0), 'left'), at(0)],
    ['a range collapses to its right end (grown over the chip)', moveCaret(text, at(0, 30), 'right'), at(43)],
    ['over a ZWJ sequence', moveCaret(`x${ZWJ}y`, at(1), 'right'), at(6)],
    ['at the start, left stays', moveCaret(text, at(0), 'left'), at(0)],
    ['at the end, right stays', moveCaret(text, at(text.length), 'right'), at(text.length)],
  ])('%s', (_, result, expected) => {
    expect(result).toEqual({ text: result.text, selection: expected });
    expect(result.text).toBeTypeOf('string');
  });

  it('moves by words like deleteBackward and deleteForward delete them', () => {
    expect(moveCaret('hello world', at(11), 'left', { unit: 'word' }).selection).toEqual(at(6));
    expect(moveCaret('hello world', at(0), 'right', { unit: 'word' }).selection).toEqual(at(5));
    expect(moveCaret(`see ${M}  `, at(47), 'left', { unit: 'word' }).selection).toEqual(at(4));
  });
});

describe('arguments (SPEC §15.5: never throws on strings; bad arguments are the caller’s)', () => {
  it.each([
    ['a text that is not a string', () => normalizeSelection(42 as never, at(0))],
    ['a missing selection', () => deleteBackward('abc', undefined as never)],
    ['a null selection', () => deleteForward('abc', null as never)],
    ['a negative anchor', () => moveCaret('abc', at(-1), 'left')],
    ['a fractional focus', () => replaceSelection('abc', at(0, 1.5), 'x')],
    ['an anchor past the end', () => normalizeSelection('abc', at(4))],
    ['a string offset', () => normalizeSelection('abc', { anchor: '1', focus: 1 } as never)],
    ['an unknown unit', () => deleteBackward('abc', at(1), { unit: 'line' as never })],
    ['an unknown direction', () => moveCaret('abc', at(1), 'up' as never)],
    ['an insertion that is not a string', () => replaceSelection('abc', at(1), 5 as never)],
    ['a throwing getter in the selection', () => normalizeSelection('abc', throwingGetter('anchor', undefined, { focus: 0 }) as never)],
    ['a revoked proxy as the selection', () => normalizeSelection('abc', revokedProxy() as never)],
    ['a revoked proxy as options', () => deleteBackward('abc', at(1), revokedProxy() as never)],
  ])('rejects %s (INVALID_ARGUMENT)', (_, call) => {
    expectCode(call, 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });

  it('reads a proxy selection like the plain object it stands for', () => {
    expect(normalizeSelection(`a ${M}`, new Proxy(at(5), {})).selection).toEqual(at(2));
  });
});

/** A generated text with a selection in it (any offsets, inside chips and surrogate pairs included). */
const textAndSelection = fc
  .tuple(fc.oneof(promptText(true), anyString(16), fc.constantFrom(`${ZWJ} ${CJK}${BARE}x`, FLAGS)), fc.nat(), fc.nat())
  .map(([text, a, f]) => ({ text, selection: at(a % (text.length + 1), f % (text.length + 1)) }));

/** What is typed or pasted: characters, mentions, bare URIs, and the pieces that join them. */
const inserted = fc.oneof(
  anyString(4),
  canonicalMention,
  fc.constantFrom(BARE, 'x', ' ', '-', '@[', ']', '(', '\n', ZWJ, 'dsh-session:', ')'),
);

/** Every edit function applied to one text and selection. */
function allEdits(text: string, selection: MentionSelection, insertion: string): MentionEdit[] {
  return [
    normalizeSelection(text, selection),
    deleteBackward(text, selection),
    deleteBackward(text, selection, { unit: 'word' }),
    deleteForward(text, selection),
    deleteForward(text, selection, { unit: 'word' }),
    replaceSelection(text, selection, insertion),
    moveCaret(text, selection, 'left'),
    moveCaret(text, selection, 'right', { unit: 'word' }),
  ];
}

/** The chips' own texts, in order. */
const chipTexts = (text: string): string[] => scanSessionReferenceText(text).tokens.map((t) => text.slice(t.start, t.end));

/** Whether `part` is a subsequence of `whole`. */
function isSubsequence(part: readonly string[], whole: readonly string[]): boolean {
  let i = 0;
  for (const item of whole) if (i < part.length && item === part[i]) i++;
  return i === part.length;
}

describe('properties (SPEC §15.5–§15.7): generated texts and selections', () => {
  it('segments cover the text exactly once, with no empty run, and the chips are the §3.6 tokens', () => {
    fc.assert(
      fc.property(fc.oneof(promptText(true), anyString(24)), (text) => {
        const segments = segmentMentions(text);
        let end = 0;
        for (const segment of segments) {
          expect(segment.start).toBe(end);
          expect(segment.end).toBeGreaterThan(segment.start);
          if (segment.kind === 'text') expect(segment.text).toBe(text.slice(segment.start, segment.end));
          else expect(segment.valid).toBe(segment.token.error === undefined);
          end = segment.end;
        }
        expect(end).toBe(text.length);
        expect(segments.filter((s) => s.kind === 'mention').map((s) => s.kind === 'mention' && s.token)).toEqual(scanSessionReferenceText(text).tokens);
        // No two plain runs in a row: every run is as long as it can be.
        expect(segments.some((s, i) => s.kind === 'text' && segments[i + 1]?.kind === 'text')).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it('every function returns a normalized selection inside its text, never inside a chip or a surrogate pair', () => {
    fc.assert(
      fc.property(textAndSelection, inserted, ({ text, selection }, insertion) => {
        for (const result of allEdits(text, selection, insertion)) {
          const { anchor, focus } = result.selection;
          expect(normalizeSelection(result.text, result.selection).selection).toEqual(result.selection);
          expect(Math.min(anchor, focus)).toBeGreaterThanOrEqual(0);
          expect(Math.max(anchor, focus)).toBeLessThanOrEqual(result.text.length);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('no chip changes unless deleted, an inserted mention stays a mention, and only the selection or one unit goes', () => {
    fc.assert(
      fc.property(textAndSelection, inserted, ({ text, selection }, insertion) => {
        const { anchor, focus } = normalizeSelection(text, selection).selection;
        const start = Math.min(anchor, focus);
        const end = Math.max(anchor, focus);
        const kept = (from: number, to: number) =>
          scanSessionReferenceText(text).tokens.filter((t) => t.end <= from || t.start >= to).map((t) => text.slice(t.start, t.end));
        const typed = replaceSelection(text, selection, insertion);
        if (typed.text !== text) {
          // The selection is replaced by the insertion, with at most one space on either side.
          const middle = typed.text.slice(start, typed.text.length - (text.length - end));
          expect([insertion, ` ${insertion}`, `${insertion} `, ` ${insertion} `]).toContain(middle);
          expect(isSubsequence(kept(start, end), chipTexts(typed.text))).toBe(true);
          expect(isSubsequence(chipTexts(insertion), chipTexts(typed.text))).toBe(true);
        }
        for (const removal of [deleteBackward(text, selection, { unit: 'word' }), deleteForward(text, selection)]) {
          // One contiguous part goes (at most a space comes back where a join had to be kept apart).
          let prefix = 0;
          while (prefix < removal.text.length && removal.text[prefix] === text[prefix]) prefix++;
          let suffix = 0;
          while (suffix < removal.text.length - prefix && removal.text[removal.text.length - 1 - suffix] === text[text.length - 1 - suffix]) suffix++;
          expect(removal.text.length - prefix - suffix).toBeLessThanOrEqual(1);
          // Every chip outside the part that went is still there.
          expect(isSubsequence(kept(prefix, text.length - suffix), chipTexts(removal.text))).toBe(true);
          if (start !== end && removal.text !== text) expect(isSubsequence(kept(start, end), chipTexts(removal.text))).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('moving never changes the text, and deleting by a unit deletes what moving by it steps over', () => {
    fc.assert(
      fc.property(textAndSelection, fc.constantFrom('character', 'word'), ({ text, selection }, unit) => {
        const caret = normalizeSelection(text, at(selection.focus)).selection.focus;
        const left = moveCaret(text, at(caret), 'left', { unit });
        const right = moveCaret(text, at(caret), 'right', { unit });
        expect([left.text, right.text]).toEqual([text, text]);
        // Where the deletion is made as is (no space kept against a join), it removes exactly what
        // the move steps over; the caret stays where the deletion was, unless what is left forms a
        // new chip around it (`dsh-session:` + `\` + `0`, the `\` deleted): then it goes to the
        // chip's nearer edge like any selection.
        const expectDeletion = (result: MentionEdit, from: number, to: number) => {
          if (result.text.length !== text.length - (to - from)) return;
          const rest = text.slice(0, from) + text.slice(to);
          expect(result).toEqual({ text: rest, selection: normalizeSelection(rest, at(from)).selection });
        };
        expectDeletion(deleteBackward(text, at(caret), { unit }), left.selection.focus, caret);
        expectDeletion(deleteForward(text, at(caret), { unit }), caret, right.selection.focus);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on strings, whatever the text, selection and insertion', () => {
    fc.assert(
      fc.property(anyString(40), fc.nat(), fc.nat(), anyString(8), (text, a, f, insertion) => {
        const selection = at(a % (text.length + 1), f % (text.length + 1));
        expect(allEdits(text, selection, insertion)).toHaveLength(8);
        expect(segmentMentions(text + insertion).length).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 300 },
    );
  });
});
