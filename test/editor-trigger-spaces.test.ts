/**
 * The trigger of word matching (SPEC §15.10): `findMentionTrigger(text, caret, { allowSpaces: true })`
 * lets the query hold spaces up to a line break, a second `@` or a bracket, and
 * `mentionQueryPassedEmpty` ends it once a space follows a word that left the menu empty. Table
 * vectors, hostile options, and properties over generated prompt texts. Shared suite: runs in
 * Node, Chromium, workerd, Deno and Bun.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeSessionReferenceUri, formatSessionReferenceMention, scanSessionReferenceText } from '../src/index.js';
import { findMentionTrigger, insertMention, mentionQueryPassedEmpty, type MentionTrigger } from '../src/editor/index.js';
import { throwingGetter } from './hardening.js';
import { expectCode } from './helpers.js';
import { canonicalMention, promptText } from './prompt-texts.js';

const SPACES = { allowSpaces: true } as const;
const SCHEMA = formatSessionReferenceMention({ sessionId: 'session-434', label: 'Schema' });
const BARE = encodeSessionReferenceUri('a'); // dsh-session:ImEi

describe('findMentionTrigger with allowSpaces (SPEC §15.10)', () => {
  it.each([
    ['@ledger rec', 11, { start: 0, end: 11, query: 'ledger rec' }],
    ['ask @ledger rec', 15, { start: 4, end: 15, query: 'ledger rec' }],
    ['ask @ledger ', 12, { start: 4, end: 12, query: 'ledger ' }],
    ['ask @ledger  rec\tx', 18, { start: 4, end: 18, query: 'ledger  rec\tx' }],
    ['@a\u00a0b\u3000c', 6, { start: 0, end: 6, query: 'a\u00a0b\u3000c' }],
    ['x\n@dümen kahve', 14, { start: 2, end: 14, query: 'dümen kahve' }],
    ['(@schema mig', 12, { start: 1, end: 12, query: 'schema mig' }],
    [`${SCHEMA} @y z`, SCHEMA.length + 5, { start: SCHEMA.length + 1, end: SCHEMA.length + 5, query: 'y z' }],
    // Without spaces in the query it is the trigger of SPEC §15.1.
    ['ask @sch', 8, { start: 4, end: 8, query: 'sch' }],
    ['@', 1, { start: 0, end: 1, query: '' }],
    // A second `@` ends the query; at a word start it begins a new one.
    ['@ledger @rec x', 14, { start: 8, end: 14, query: 'rec x' }],
    // A bare URI after the caret, past a space, is not the query's.
    [`@a b ${BARE}`, 4, { start: 0, end: 4, query: 'a b' }],
  ])('%j at %i triggers', (text, caret, expected) => {
    expect(findMentionTrigger(text, caret, SPACES)).toEqual(expected);
  });

  it.each([
    ['@ ', 2, 'a query starting with a space: an @ standing alone'],
    ['@\tx', 3, 'a query starting with a tab'],
    ['@ledger\nrec', 11, 'a line break ends the query'],
    ['@ledger\r\nrec', 12, 'a CRLF ends the query'],
    ['@ledger\u2028rec', 11, 'a line separator ends the query'],
    ['@a b@c', 6, 'an @ inside the query'],
    ['@ledger (rec', 12, 'a bracket ends the query'],
    ['mail a@b c', 10, 'an @ inside a word'],
    ['see @[x y', 9, 'a mention typed by hand'],
    [`@a ${BARE}`, 3 + BARE.length, 'a bare URI in the query'],
    [`@a ${BARE} b`, 5 + BARE.length, 'a bare URI in the middle of the query'],
    [`@a dsh-session:x`, 8, 'a bare URI running on past the caret'],
    [`@[Schema @mig x](${BARE})`, 15, 'inside a mention label'],
  ])('%j at %i does not trigger (%s)', (text, caret) => {
    expect(findMentionTrigger(text, caret, SPACES)).toBeUndefined();
  });

  it('`@ledger rec` does not trigger without allowSpaces (SPEC §15.1 stays the default)', () => {
    expect(findMentionTrigger('@ledger rec', 11)).toBeUndefined();
    expect(findMentionTrigger('@ledger rec', 11, {})).toBeUndefined();
    expect(findMentionTrigger('@ledger rec', 11, { allowSpaces: false })).toBeUndefined();
    expect(findMentionTrigger('@ledger rec', 11, { allowSpaces: undefined })).toBeUndefined();
  });

  it.each([['yes'], [1], [null]])('rejects allowSpaces %j (INVALID_ARGUMENT)', (allowSpaces) => {
    expectCode(() => findMentionTrigger('@x', 2, { allowSpaces } as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });

  it('an options getter that throws is INVALID_ARGUMENT with the cause kept', () => {
    const error = expectCode(() => findMentionTrigger('@x', 2, throwingGetter('allowSpaces') as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    expect(error.cause).toBeInstanceOf(Error);
  });

  it('a long line with an @ at its start is scanned once per call (linear, no quadratic look-back)', () => {
    const text = `@${'word '.repeat(200_000)}`;
    expect(findMentionTrigger(text, text.length, SPACES)?.query.length).toBe(text.length - 1);
  });
});

describe('mentionQueryPassedEmpty (SPEC §15.10)', () => {
  const trigger = (start: number, query: string): MentionTrigger => ({ start, end: start + 1 + query.length, query });

  it.each([
    [trigger(0, 'ledgre '), trigger(0, 'ledgre'), true, 'a space after the word that left the menu empty'],
    [trigger(0, 'ledgre re'), trigger(0, 'ledgre'), true, 'more words after it'],
    [trigger(0, 'ledgre\tre'), trigger(0, 'ledgre'), true, 'a tab after it'],
    [trigger(0, 'ledgre '), trigger(0, 'ledgre '), true, 'the empty answer came for the query with its space'],
    [trigger(0, 'ledgre  x'), trigger(0, 'ledgre '), true, 'blanks at the end of the empty query aside'],
    [trigger(0, 'ledgrea'), trigger(0, 'ledgre'), false, 'no space yet'],
    [trigger(0, 'ledgre'), trigger(0, 'ledgre'), false, 'the same query: the menu shows it empty'],
    [trigger(0, 'ledger rec'), trigger(0, 'ledgre'), false, 'another query'],
    [trigger(0, 'led x'), trigger(0, 'ledgre'), false, 'a shorter query (Backspace went back)'],
    [trigger(4, 'ledgre x'), trigger(0, 'ledgre'), false, 'another @'],
    [trigger(0, ' x'), trigger(0, ''), false, 'an empty query has no word'],
    [trigger(0, 'a b'), trigger(0, '  '), false, 'a blank query has no word'],
  ])('%j after %j is %s (%s)', (now, empty, passed) => {
    expect(mentionQueryPassedEmpty(now, empty)).toBe(passed);
  });

  it.each([
    [null, trigger(0, 'a')],
    [trigger(0, 'a'), undefined],
    [{ start: 0, end: 1, query: 3 }, trigger(0, 'a')],
  ])('rejects %j and %j (INVALID_ARGUMENT)', (now, empty) => {
    expectCode(() => mentionQueryPassedEmpty(now as never, empty as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});

describe('properties (SPEC §15.1, §15.10): generated prompt texts', () => {
  /** Prompt texts with words and spaces after `@`s, so spaced queries are common. */
  const spacedText = fc
    .array(fc.oneof(promptText(true), fc.constantFrom('@led ger', ' @a b', '\t', ' x y ', '@ ', '@Anna zed')), { maxLength: 6 })
    .map((pieces) => pieces.join(''));

  it('a spaced trigger equals the plain one whenever either has no whitespace in its query', () => {
    fc.assert(
      fc.property(spacedText, (text) => {
        for (let caret = 0; caret <= text.length; caret++) {
          const plain = findMentionTrigger(text, caret);
          const spaced = findMentionTrigger(text, caret, SPACES);
          if (plain !== undefined) expect(spaced).toEqual(plain);
          if (spaced !== undefined && !/\s/.test(spaced.query)) expect(plain).toEqual(spaced);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a spaced trigger is an @query on one line, outside every mention, and a mention inserted there scans as itself', () => {
    let spacedQueries = 0;
    fc.assert(
      fc.property(spacedText, canonicalMention, (text, mention) => {
        const before = scanSessionReferenceText(text).tokens;
        for (let caret = 0; caret <= text.length; caret++) {
          const trigger = findMentionTrigger(text, caret, SPACES);
          if (trigger === undefined) continue;
          const { start, end, query } = trigger;
          if (/\s/.test(query)) spacedQueries++;
          // A caret inside a surrogate pair reads as the pair's start (SPEC §15.5).
          expect(end).toBe(/[\ud800-\udbff]/.test(text[caret - 1] ?? '') && /[\udc00-\udfff]/.test(text[caret] ?? '') ? caret - 1 : caret);
          expect(text.slice(start, end)).toBe(`@${query}`);
          expect(query).not.toMatch(/^\s|[\n\r\u2028\u2029@()[\]{}]/);
          expect(before.filter((t) => t.start < end && t.end > start)).toEqual([]);
          const inserted = insertMention(text, trigger, mention);
          const after = scanSessionReferenceText(inserted.text).tokens;
          const [expected] = scanSessionReferenceText(mention).tokens;
          expect(after.find((t) => t.start === start)).toEqual({ ...expected, start, end: start + mention.length });
          expect(after.filter((t) => t.end <= start)).toEqual(before.filter((t) => t.end <= start));
        }
      }),
      { numRuns: 200 },
    );
    // The generator reaches queries with spaces (a floor far below what 200 texts give).
    expect(spacedQueries).toBeGreaterThan(20);
  });
});
