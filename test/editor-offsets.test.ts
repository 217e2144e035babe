/**
 * SPEC §15.5 for every §15 function that takes an offset or a selection: an offset inside a
 * surrogate pair reads as the pair's start, so each function gives exactly what it gives at the
 * pair's start, and no result holds a lone surrogate the input did not have. Vectors first (the
 * issue's `'hi @😀x'`), then fast-check properties over prompt texts full of astral characters
 * (emoji, ZWJ sequences, flags, mentions with emoji labels) and lone surrogates. Shared suite: runs
 * in Node, Chromium, workerd, Deno and Bun.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSessionReferenceMention } from '../src/index.js';
import {
  deleteBackward,
  deleteForward,
  findMentionTrigger,
  insertMention,
  mentionRangeAt,
  moveCaret,
  normalizeSelection,
  replaceSelection,
  type MentionSelection,
} from '../src/editor/index.js';
import { canonicalMention, promptText } from './prompt-texts.js';

const EMOJI_LABEL = formatSessionReferenceMention({ sessionId: 's-😀', label: '😀 launch 👩‍💻' });

/** Whether `offset` falls inside a surrogate pair of `text` (between its high and low halves). */
function insidePair(text: string, offset: number): boolean {
  return /[\ud800-\udbff]/.test(text[offset - 1] ?? '') && /[\udc00-\udfff]/.test(text[offset] ?? '');
}

/** How many lone surrogates `value` holds: every string inside it counted (objects, arrays). */
function loneSurrogates(value: unknown): number {
  if (typeof value === 'string') return value.match(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g)?.length ?? 0;
  if (typeof value === 'object' && value !== null) return Object.values(value).reduce<number>((sum, v) => sum + loneSurrogates(v), 0);
  return 0;
}

/** Every §15 function that takes an offset or a selection, as `(text, a, b) → result`, `a`/`b` offsets. */
const CALLS: ReadonlyArray<readonly [string, (text: string, a: number, b: number, mention: string) => unknown]> = [
  ['findMentionTrigger', (text, a) => findMentionTrigger(text, a)],
  ['findMentionTrigger allowSpaces', (text, a) => findMentionTrigger(text, a, { allowSpaces: true })],
  ['mentionRangeAt', (text, a) => mentionRangeAt(text, a)],
  ['insertMention', (text, a, b, mention) => insertMention(text, { start: Math.min(a, b), end: Math.max(a, b) }, mention)],
  ['normalizeSelection', (text, a, b) => normalizeSelection(text, sel(a, b))],
  ['deleteBackward character', (text, a, b) => deleteBackward(text, sel(a, b))],
  ['deleteBackward word', (text, a, b) => deleteBackward(text, sel(a, b), { unit: 'word' })],
  ['deleteForward character', (text, a, b) => deleteForward(text, sel(a, b))],
  ['deleteForward word', (text, a, b) => deleteForward(text, sel(a, b), { unit: 'word' })],
  ['replaceSelection', (text, a, b) => replaceSelection(text, sel(a, b), 'é')],
  ['replaceSelection of a pair', (text, a, b) => replaceSelection(text, sel(a, b), '🎉')],
  ['moveCaret left', (text, a, b) => moveCaret(text, sel(a, b), 'left')],
  ['moveCaret right word', (text, a, b) => moveCaret(text, sel(a, b), 'right', { unit: 'word' })],
];

const sel = (anchor: number, focus: number): MentionSelection => ({ anchor, focus });

describe('offsets inside a surrogate pair (SPEC §15.5)', () => {
  it("findMentionTrigger('hi @😀x', 5) reads the caret as the pair's start (the issue's vector)", () => {
    expect(findMentionTrigger('hi @😀x', 5)).toEqual({ start: 3, end: 4, query: '' });
    expect(findMentionTrigger('hi @😀x', 5, { allowSpaces: true })).toEqual({ start: 3, end: 4, query: '' });
    expect(findMentionTrigger('hi @😀x', 6)).toEqual({ start: 3, end: 6, query: '😀' });
  });

  it.each([
    ['mentionRangeAt', () => mentionRangeAt(`x${EMOJI_LABEL}😀`, 1 + EMOJI_LABEL.length + 1), undefined],
    ['insertMention', () => insertMention('a😀b', { start: 2, end: 2 }, { sessionId: 'x' }).text, `a@[x](dsh-session:Ingi) 😀b`],
    ['normalizeSelection', () => normalizeSelection('😀', sel(1, 1)).selection, sel(0, 0)],
    ['deleteBackward', () => deleteBackward('a😀', sel(2, 2)).text, '😀'],
    ['deleteForward', () => deleteForward('a😀b', sel(2, 2)).text, 'ab'],
  ])('%s reads an offset inside a pair as its start', (_, run, expected) => {
    expect(run()).toEqual(expected);
  });

  /** Prompt texts rich in astral characters (and, with `lone`, lone surrogates). */
  const astralText = (lone: boolean) =>
    fc
      .array(
        fc.oneof(
          promptText(true).filter((text) => lone || loneSurrogates(text) === 0),
          fc.constantFrom('😀', '@😀', ' @👩‍💻x', '🇯🇵🇺🇸', '𐀀', 'a\u0301😀', EMOJI_LABEL, ' @a 😀 b'),
          ...(lone ? [fc.constantFrom('\ud83d', '\ude00', '\ude00\ud83d', '@\ud83d')] : []),
        ),
        { maxLength: 4 },
      )
      .map((pieces) => pieces.join(''));

  const wellFormedMention = canonicalMention.filter((mention) => loneSurrogates(mention) === 0);

  /**
   * For each function and each pair of offsets (`a` over every offset, `b` over `a` and the ends),
   * the result with either offset moved inside a pair equals the result at the pair's start; and
   * the result holds no more lone surrogates than the text (plus what was inserted).
   */
  function checkText(text: string, mention: string): void {
    const pairStartOf = (offset: number) => (insidePair(text, offset) ? offset - 1 : offset);
    const lone = loneSurrogates(text) + loneSurrogates(mention);
    for (const [name, call] of CALLS) {
      for (let a = 0; a <= text.length; a++) {
        for (const b of new Set([a, 0, text.length])) {
          if (!insidePair(text, a) && !insidePair(text, b)) continue;
          const got = call(text, a, b, mention);
          expect(got, `${name} at ${a}, ${b}`).toEqual(call(text, pairStartOf(a), pairStartOf(b), mention));
          expect(loneSurrogates(got), `${name} at ${a}, ${b}`).toBeLessThanOrEqual(lone);
        }
      }
    }
  }

  it('every function gives at an offset inside a pair what it gives at the pair start (well-formed texts)', () => {
    let inside = 0;
    fc.assert(
      fc.property(astralText(false), canonicalMention, (text, mention) => {
        for (let offset = 0; offset <= text.length; offset++) if (insidePair(text, offset)) inside++;
        checkText(text, mention);
      }),
      { numRuns: 80 },
    );
    expect(inside).toBeGreaterThan(100);
  });

  it('a well-formed text gives well-formed results at any offsets', () => {
    const textAndOffsets = astralText(false).chain((text) =>
      fc.tuple(fc.constant(text), fc.nat({ max: text.length }), fc.nat({ max: text.length }), wellFormedMention),
    );
    fc.assert(
      fc.property(textAndOffsets, ([text, a, b, mention]) => {
        for (const [name, call] of CALLS) expect(loneSurrogates(call(text, a, b, mention)), `${name} at ${a}, ${b}`).toBe(0);
      }),
      { numRuns: 400 },
    );
  });

  it('with lone surrogates in the text: the same, and no result holds a lone surrogate the input did not', () => {
    fc.assert(
      fc.property(astralText(true), canonicalMention, (text, mention) => checkText(text, mention)),
      { numRuns: 80 },
    );
  });
});
