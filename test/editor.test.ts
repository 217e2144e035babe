/**
 * The front-end kit `dsh-session-reference/editor` (SPEC §15): table-driven vectors for each
 * helper, hostile arguments, and fast-check properties over generated prompt texts — chips never
 * split a mention, an inserted mention scans as itself, no trigger inside `@[`, replay summaries
 * equal the metadata. Shared suite: runs in Node, Chromium, workerd, Deno and Bun.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createSessionReferences,
  encodeSessionReferenceUri,
  formatSessionReferenceMention,
  scanSessionReferenceText,
  type SessionReferenceMetadataEntry,
  type UserMessage,
} from '../src/index.js';
import { describeReferencedMessage, findMentionTrigger, insertMention, mentionRangeAt } from '../src/editor/index.js';
import { endsInOpenMention } from '../src/mention.js';
import { revokedProxy, throwingGetter } from './hardening.js';
import { expectCode } from './helpers.js';
import { canonicalMention, CITED_IDS, promptText } from './prompt-texts.js';
import { fakeQuery, userMessage } from './sessions.js';

const SCHEMA = formatSessionReferenceMention({ sessionId: 'session-434', label: 'Schema' }); // 41 characters
const BARE = encodeSessionReferenceUri('a'); // dsh-session:ImEi

describe('findMentionTrigger (SPEC §15.1)', () => {
  it.each([
    ['@', 1, { start: 0, end: 1, query: '' }],
    ['ask @sch', 8, { start: 4, end: 8, query: 'sch' }],
    ['ask @sch', 6, { start: 4, end: 6, query: 's' }],
    ['ask @sch', 5, { start: 4, end: 5, query: '' }],
    ['x\n@q', 4, { start: 2, end: 4, query: 'q' }],
    ['(@x', 3, { start: 1, end: 3, query: 'x' }],
    ['[@x', 3, { start: 1, end: 3, query: 'x' }],
    ['{@x', 3, { start: 1, end: 3, query: 'x' }],
    ['"@x', 3, { start: 1, end: 3, query: 'x' }],
    ["'@x", 3, { start: 1, end: 3, query: 'x' }],
    ['“@x', 3, { start: 1, end: 3, query: 'x' }],
    ['@é🎉/repo-1.2', 13, { start: 0, end: 13, query: 'é🎉/repo-1.2' }],
    [`${SCHEMA} @x`, SCHEMA.length + 3, { start: SCHEMA.length + 1, end: SCHEMA.length + 3, query: 'x' }],
    [`@[x] @y`, 7, { start: 5, end: 7, query: 'y' }],
    // A bare URI after the caret in the same run is not the query's: it stays where it is.
    ['@dsh-session:0', 1, { start: 0, end: 1, query: '' }],
    ['@abcdsh-session:Ig', 3, { start: 0, end: 3, query: 'ab' }],
  ])('%j at %i triggers', (text, caret, expected) => {
    expect(findMentionTrigger(text, caret)).toEqual(expected);
  });

  it.each([
    ['', 0, 'empty text'],
    ['@x', 0, 'the caret before the @'],
    ['mail a@b', 8, 'an @ inside a word'],
    ['\\@x', 3, 'an @ after a backslash'],
    ['a @b c', 6, 'whitespace between the @ and the caret'],
    ['@x)', 3, 'a bracket before the caret'],
    ['@a@b', 4, 'an @ inside the query'],
    ['see @[x', 7, 'a mention typed by hand'],
    ['@[', 1, 'the @ of @['],
    ['@[Schema @mig', 13, 'a label left open by @['],
    ['@[a\\] @mig', 10, 'a label left open: the ] is escaped'],
    [`@[Schema @mig](${BARE})`, 13, 'inside a mention label'],
    [`@dsh-session:ImEi`, 17, 'a bare URI in the query'],
    // Found by the property tests (fast-check, under Node, workerd and Bun): a bare URI that
    // starts in the query and runs on past the caret.
    ['@dsh-session:0', 13, 'a bare URI running on past the caret'],
    ['@dsh-session:0', 2, 'a bare URI running on past the caret, early'],
    ['@dsh-session:dsh-session:', 13, 'a malformed bare URI running on past the caret'],
    ['@dsh-session:email ', 13, 'a malformed bare URI running on past the caret, then a space'],
    [' @dsh-session:x', 5, 'a bare URI running on past the caret, after a space'],
  ])('%j at %i does not trigger (%s)', (text, caret) => {
    expect(findMentionTrigger(text, caret)).toBeUndefined();
  });

  it.each([
    [42, 0],
    [null, 0],
    ['@x', -1],
    ['@x', 3],
    ['@x', 1.5],
    ['@x', Number.NaN],
    ['@x', '2'],
    ['@x', undefined],
  ])('rejects text %j with caret %j (INVALID_ARGUMENT)', (text, caret) => {
    expectCode(() => findMentionTrigger(text as never, caret as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});

describe('insertMention (SPEC §15.2)', () => {
  it.each([
    ['ask @sch', { start: 4, end: 8 }, SCHEMA, `ask ${SCHEMA} `, 4 + SCHEMA.length + 1],
    ['ask @sch now', { start: 4, end: 8 }, SCHEMA, `ask ${SCHEMA} now`, 4 + SCHEMA.length],
    ['ask @sch\nnow', { start: 4, end: 8 }, SCHEMA, `ask ${SCHEMA}\nnow`, 4 + SCHEMA.length],
    ['ask @schnow', { start: 4, end: 8 }, SCHEMA, `ask ${SCHEMA} now`, 4 + SCHEMA.length + 1],
    ['', { start: 0, end: 0 }, SCHEMA, `${SCHEMA} `, SCHEMA.length + 1],
    ['see', { start: 3, end: 3 }, { sessionId: 'session-434' }, `see@[session-434](${encodeSessionReferenceUri('session-434')}) `, 50],
    // Rewritten in canonical form: needless escapes go, a bare URI becomes a mention.
    ['@', { start: 0, end: 1 }, `@[\\S\\chema](${encodeSessionReferenceUri('session-434')})`, `${SCHEMA} `, SCHEMA.length + 1],
    ['@', { start: 0, end: 1 }, BARE, `@[a](${BARE}) `, BARE.length + 7],
    ['@', { start: 0, end: 1 }, { sessionId: 'session-434', label: 'Schema' }, `${SCHEMA} `, SCHEMA.length + 1],
    ['@', { start: 0, end: 1 }, { sessionId: 'a' }, `@[a](${BARE}) `, BARE.length + 7],
    // A range that cuts into a mention takes the whole mention: never split.
    [`x ${SCHEMA} y`, { start: 5, end: 5 }, BARE, `x @[a](${BARE}) y`, 2 + BARE.length + 6],
    [`x ${SCHEMA} y`, { start: 0, end: 5 }, BARE, `@[a](${BARE}) y`, BARE.length + 6],
    [`${BARE}!`, { start: 3, end: 4 }, SCHEMA, `${SCHEMA} !`, SCHEMA.length + 1],
    // At a mention's edge nothing is widened.
    [`x ${SCHEMA}`, { start: 2, end: 2 }, BARE, `x @[a](${BARE}) ${SCHEMA}`, 2 + BARE.length + 7],
  ])('%j %j with %j', (text, range, mention, expectedText, caret) => {
    expect(insertMention(text, range, mention)).toEqual({ text: expectedText, caret });
  });

  it.each(['', 'x', `${SCHEMA} `, ` ${SCHEMA}`, `${SCHEMA}${SCHEMA}`, '@[x](dsh-session:)', '@[x](dsh-session:e30)', 'dsh-session:e30', 7, null, { label: 'x' }, { sessionId: 1 }])(
    'rejects the mention %j (INVALID_REFERENCE)',
    (mention) => {
      expectCode(() => insertMention('@', { start: 0, end: 1 }, mention as never), 'SESSION_REFERENCE_INVALID_REFERENCE');
    },
  );

  it.each([
    [42, { start: 0, end: 0 }],
    ['@x', null],
    ['@x', { start: 0 }],
    ['@x', { start: 2, end: 1 }],
    ['@x', { start: -1, end: 1 }],
    ['@x', { start: 0, end: 3 }],
    ['@x', { start: 0.5, end: 1 }],
  ])('rejects text %j with range %j (INVALID_ARGUMENT)', (text, range) => {
    expectCode(() => insertMention(text as never, range as never, SCHEMA), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });

  it('a throwing getter or a revoked proxy as the range becomes INVALID_ARGUMENT with the cause kept', () => {
    const cause = new TypeError('no start for you');
    expect(expectCode(() => insertMention('@x', throwingGetter('start', cause) as never, SCHEMA), 'SESSION_REFERENCE_INVALID_ARGUMENT').cause).toBe(cause);
    expect(expectCode(() => insertMention('@x', revokedProxy() as never, SCHEMA), 'SESSION_REFERENCE_INVALID_ARGUMENT').cause).toBeInstanceOf(TypeError);
  });
});

describe('mentionRangeAt (SPEC §15.3)', () => {
  const text = `ask ${SCHEMA} and ${BARE}, @[x](dsh-session:e30)`;
  const mentionEnd = 4 + SCHEMA.length;
  const bareStart = mentionEnd + 5;

  it('returns the whole mention for every offset inside it, and nothing outside', () => {
    const schema = { start: 4, end: mentionEnd, token: { kind: 'mention', start: 4, end: mentionEnd, sessionId: 'session-434', label: 'Schema' } };
    expect(mentionRangeAt(text, 4)).toEqual(schema);
    expect(mentionRangeAt(text, 12)).toEqual(schema);
    expect(mentionRangeAt(text, mentionEnd - 1)).toEqual(schema);
    expect(mentionRangeAt(text, 3)).toBeUndefined();
    expect(mentionRangeAt(text, mentionEnd)).toBeUndefined();
    expect(mentionRangeAt(text, bareStart + 3)).toEqual({
      start: bareStart,
      end: bareStart + BARE.length,
      token: { kind: 'bare', start: bareStart, end: bareStart + BARE.length, sessionId: 'a', label: 'a' },
    });
    expect(mentionRangeAt(text, text.length)).toBeUndefined();
  });

  it('returns a malformed mention too, with its error (a warning chip)', () => {
    const range = mentionRangeAt(text, text.length - 2)!;
    expect(range.end).toBe(text.length);
    expect(range.token).toMatchObject({ kind: 'mention', label: 'x', error: { code: 'SESSION_REFERENCE_INVALID_REFERENCE' } });
    expect(range.token.sessionId).toBeUndefined();
  });

  it.each([
    [42, 0],
    ['abc', -1],
    ['abc', 4],
    ['abc', 1.5],
    ['abc', '1'],
  ])('rejects text %j with offset %j (INVALID_ARGUMENT)', (t, offset) => {
    expectCode(() => mentionRangeAt(t as never, offset as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});

/** A §8.4 row as the metadata carries it. */
const row = (sessionId: string, extra: Partial<SessionReferenceMetadataEntry> = {}): SessionReferenceMetadataEntry => ({
  sessionId, label: sessionId, capturedThroughSeq: 7, compacted: false, originalMessages: 4, retainedMessages: 3,
  omittedMessages: 1, omittedBytes: 120, truncated: true, serializedBytes: 900, budgetBytes: 1024, ...extra,
});

/** A dsh recall message (SPEC §14.3). */
const recall = (references: unknown): UserMessage => ({
  id: 'r1', role: 'user', content: [{ type: 'text', text: '## Referenced sessions…' }],
  source: { kind: 'session-reference', form: 'recall', version: 1, references },
});

/** An envelope of SPEC §9.4 around `references` and `mentions`. */
const enveloped = (references: unknown, mentions?: unknown, display: unknown[] = [{ type: 'text', text: 'see @A' }]): UserMessage => ({
  id: 'm1', role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text: 'CTX' }],
  envelope: {
    version: 1, display: display as never, ...(mentions === undefined ? {} : { mentions: mentions as never }),
    contexts: [{ source: { kind: 'plugin', plugin: 'session-reference' }, placement: 'prompt-prefix', metadata: { version: 1, references: references as never } }],
  },
});

describe('describeReferencedMessage (SPEC §15.4)', () => {
  it('describes a composed message: the person’s text, the chips and the metadata rows', async () => {
    const refs = createSessionReferences({
      sessionQuery: fakeQuery([{ header: { id: 'A', createdAt: 1 }, events: [userMessage(1, 'from A')], title: 'Alpha' }]),
    });
    const message: UserMessage = { id: 'm', role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text: `Ask ${formatSessionReferenceMention({ sessionId: 'A' })} then email @A team and @Anna` }] };
    const composed = await refs.referenceUserMessage({ id: 'me' }, message);
    const described = describeReferencedMessage(composed)!;
    expect(described).toEqual({
      display: [{ type: 'text', text: 'Ask @A then email @A team and @Anna' }],
      mentions: [{ block: 0, start: 4, end: 6, sessionId: 'A' }],
      // The chip stands where it was typed; the `@A` typed as plain text stays text.
      segments: [
        [
          { kind: 'text', start: 0, end: 4, text: 'Ask ' },
          { kind: 'mention', start: 4, end: 6, token: { kind: 'mention', start: 4, end: 6, sessionId: 'A', label: 'A' }, valid: true },
          { kind: 'text', start: 6, end: 35, text: ' then email @A team and @Anna' },
        ],
      ],
      references: composed.envelope!.contexts[0]!.metadata.references,
    });
    // A copy: changing it leaves the message alone.
    (described.display![0] as { text: string }).text = 'changed';
    described.references[0]!.label = 'changed';
    expect(composed.envelope!.display[0]).toEqual({ type: 'text', text: 'Ask @A then email @A team and @Anna' });
    expect(composed.envelope!.contexts[0]!.metadata.references[0]!.label).toBe('A');
  });

  it('copies binary data in display as it is (an image block with bytes)', () => {
    const image = { type: 'image', data: new Uint8Array(1 << 20).fill(7), mediaType: 'image/png' };
    const described = describeReferencedMessage(enveloped([row('A')], undefined, [{ type: 'text', text: 'see @A' }, image]))!;
    const copy = described.display![1] as typeof image;
    // Plain checks: vitest's deep equality on a megabyte of bytes takes seconds.
    expect(copy === image || copy.data === image.data).toBe(false);
    expect([copy.type, copy.mediaType, copy.data instanceof Uint8Array, copy.data.length, copy.data[0], copy.data[(1 << 20) - 1]]).toEqual(['image', 'image/png', true, 1 << 20, 7, 7]);
  });

  it('gives segments per display block: chips at the positions (CJK and emoji labels, several blocks), none for other blocks', () => {
    const display = [
      { type: 'text', text: '@数据库迁移 and @🚀 👩‍💻!' },
      { type: 'image', data: 'x' },
      { type: 'text', text: '' },
      { type: 'text', text: 'then @A' },
    ];
    const mentions = [
      { block: 0, start: 0, end: 6, sessionId: 'A' },
      { block: 0, start: 11, end: 20, sessionId: 'B' },
      { block: 3, start: 5, end: 7, sessionId: 'A' },
    ];
    const described = describeReferencedMessage(enveloped([row('A'), row('B')], mentions, display))!;
    const chip = (start: number, end: number, sessionId: string, label: string) => ({
      kind: 'mention', start, end, token: { kind: 'mention', start, end, sessionId, label }, valid: true,
    });
    expect(described.segments).toEqual([
      [chip(0, 6, 'A', '数据库迁移'), { kind: 'text', start: 6, end: 11, text: ' and ' }, chip(11, 20, 'B', '🚀 👩‍💻'), { kind: 'text', start: 20, end: 21, text: '!' }],
      undefined,
      [],
      [{ kind: 'text', start: 0, end: 5, text: 'then ' }, chip(5, 7, 'A', 'A')],
    ]);
  });

  it('describes an envelope without positions (no mentions) and a recall message (references only, no inputIndex)', () => {
    expect(describeReferencedMessage(enveloped([row('A')]))).toEqual({
      display: [{ type: 'text', text: 'see @A' }],
      segments: [[{ kind: 'text', start: 0, end: 6, text: 'see @A' }]],
      references: [row('A')],
    });
    const rows = [{ ...row('A', { capturedThroughSeq: null }), inputIndex: 0 }, { ...row('B', { label: 'Bee', compacted: true }), inputIndex: 1 }];
    const described = describeReferencedMessage(recall(rows))!;
    expect(described).toEqual({ references: [row('A', { capturedThroughSeq: null }), row('B', { label: 'Bee', compacted: true })] });
    expect(Object.keys(described.references[0]!)).toEqual(Object.keys(row('A')));
    // The same from JSON (a recall message pasted into a UI).
    expect(describeReferencedMessage(JSON.parse(JSON.stringify(recall(rows))))).toEqual(described);
  });

  const sparse: unknown[] = [row('A')];
  sparse.length = 2 ** 32 - 1;
  it.each([
    ['null', null],
    ['a string', 'hello'],
    ['a number', 42],
    ['an empty object', {}],
    ['a plain user message', { id: 'u', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }],
    ['an envelope of version 2', { ...enveloped([row('A')]), envelope: { ...enveloped([row('A')]).envelope!, version: 2 } }],
    ['an envelope without display', { envelope: { version: 1, contexts: enveloped([row('A')]).envelope!.contexts } }],
    ['an envelope of another plugin only', { envelope: { version: 1, display: [], contexts: [{ source: { kind: 'plugin', plugin: 'other' }, metadata: { version: 1, references: [] } }] } }],
    ['metadata of version 2', { envelope: { version: 1, display: [], contexts: [{ source: { kind: 'plugin', plugin: 'session-reference' }, metadata: { version: 2, references: [] } }] } }],
    ['rows that are not an array', enveloped({ 0: row('A') })],
    ['a row without budgetBytes', enveloped([{ ...row('A'), budgetBytes: undefined }])],
    ['a row with a numeric label', enveloped([row('A', { label: 1 as never })])],
    ['a row with a negative count', enveloped([row('A', { omittedBytes: -1 })])],
    ['a row with a fractional count', enveloped([row('A', { originalMessages: 1.5 })])],
    ['a row with a string seq', enveloped([row('A', { capturedThroughSeq: '7' as never })])],
    ['a row with an infinite seq', recall([row('A', { capturedThroughSeq: Infinity })])],
    ['a row with a string flag', enveloped([row('A', { truncated: 'yes' as never })])],
    ['a null row', recall([null])],
    ['a deep structure', enveloped([row('A')], undefined, [JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)])],
    ['mentions past the text', enveloped([row('A')], [{ block: 0, start: 4, end: 9, sessionId: 'A' }])],
    ['mentions of an uncited session', enveloped([row('A')], [{ block: 0, start: 4, end: 6, sessionId: 'B' }])],
    ['mentions that are not an array', enveloped([row('A')], 'A')],
    ['a recall of form other', { ...recall([row('A')]), source: { kind: 'session-reference', form: 'other', version: 1, references: [row('A')] } }],
    ['a recall of version 2', { ...recall([row('A')]), source: { kind: 'session-reference', form: 'recall', version: 2, references: [row('A')] } }],
    ['a recall without references', { ...recall([]), source: { kind: 'session-reference', form: 'recall', version: 1 } }],
    ['a throwing envelope getter', throwingGetter('envelope')],
    ['a throwing getter inside the envelope', { envelope: throwingGetter('display', undefined, { version: 1 }) }],
    ['a throwing getter inside a row', recall([throwingGetter('label', undefined, row('A'))])],
    ['a revoked proxy', revokedProxy()],
    ['a proxy message whose traps throw', new Proxy({}, { get: () => { throw new Error('trap'); } })],
    ['a function inside the envelope', enveloped([row('A')], undefined, [{ type: 'text', text: 'x', render: () => 1 }])],
  ])('returns undefined for %s, never throws', (_, message) => {
    expect(describeReferencedMessage(message)).toBeUndefined();
  });

  it('reads a sparse array as the entries it holds, and a proxy like the object it stands for (SPEC §10.3, §10.4)', () => {
    expect(describeReferencedMessage(recall(sparse))).toEqual(describeReferencedMessage(recall([row('A')])));
    const deep = describeReferencedMessage(enveloped([row('A')], undefined, [{ type: 'tool-result', content: sparse }]));
    expect(deep?.display).toEqual([{ type: 'tool-result', content: [row('A')] }]);
    const plain = enveloped([row('A')]);
    expect(describeReferencedMessage({ envelope: new Proxy(plain.envelope!, {}) })).toEqual(describeReferencedMessage(plain));
  });

  it('property: never throws, whatever it is given', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withMap: true, withSet: true, withSparseArray: true, withBigInt: true }), (value) => {
        const described = describeReferencedMessage({ envelope: value });
        expect(described === undefined || Array.isArray(described.references)).toBe(true);
        expect(describeReferencedMessage({ source: { kind: 'session-reference', form: 'recall', version: 1, references: value } }) === undefined || Array.isArray(value)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe('properties (SPEC §15): generated prompt texts', () => {
  it('chips never split a mention: every offset inside one gives that whole mention, any other offset nothing', () => {
    fc.assert(
      fc.property(promptText(true), (text) => {
        const { tokens } = scanSessionReferenceText(text);
        const owner = new Array<number>(text.length).fill(-1);
        tokens.forEach((token, i) => owner.fill(i, token.start, token.end));
        for (let offset = 0; offset <= text.length; offset++) {
          const range = mentionRangeAt(text, offset);
          const i = owner[offset] ?? -1;
          if (i < 0) expect(range).toBeUndefined();
          else expect(range).toEqual({ start: tokens[i]!.start, end: tokens[i]!.end, token: tokens[i] });
        }
      }),
      { numRuns: 150 },
    );
  });

  it('a trigger is an @query outside every mention, and inserting a mention there scans to exactly that mention', () => {
    let triggered = 0;
    fc.assert(
      fc.property(promptText(true), canonicalMention, (text, mention) => {
        const before = scanSessionReferenceText(text).tokens;
        for (let caret = 0; caret <= text.length; caret++) {
          const trigger = findMentionTrigger(text, caret);
          if (trigger === undefined) continue;
          triggered++;
          const { start, end, query } = trigger;
          // A caret inside a surrogate pair reads as the pair's start (SPEC §15.5).
          expect(end).toBe(/[\ud800-\udbff]/.test(text[caret - 1] ?? '') && /[\udc00-\udfff]/.test(text[caret] ?? '') ? caret - 1 : caret);
          expect(text.slice(start, end)).toBe(`@${query}`);
          expect(text[start + 1]).not.toBe('[');
          // Never inside (or over) a mention or bare URI of the text.
          expect(before.filter((t) => t.start < end && t.end > start)).toEqual([]);
          const inserted = insertMention(text, trigger, mention);
          const spaced = /^\s/.test(text.slice(end)) ? 0 : 1;
          expect(inserted.text).toBe(text.slice(0, start) + mention + (spaced ? ' ' : '') + text.slice(end));
          expect(inserted.caret).toBe(start + mention.length + spaced);
          const [expected] = scanSessionReferenceText(mention).tokens;
          const after = scanSessionReferenceText(inserted.text).tokens;
          expect(after.find((t) => t.start === start)).toEqual({ ...expected, start, end: start + mention.length });
          // Everything before it scans as before.
          expect(after.filter((t) => t.end <= start)).toEqual(before.filter((t) => t.end <= start));
        }
      }),
      // 400 texts hold 90-270 triggers (200 seeds measured), so the floor of 30 below checks the
      // generator reaches triggers without failing by chance (at 150 texts it sometimes held 26).
      { numRuns: 400 },
    );
    expect(triggered).toBeGreaterThan(30);
  });

  const EMPTY_LABEL_MENTION = formatSessionReferenceMention({ sessionId: '' });

  /** The nearest `@` before the caret by the rules of SPEC §15.1 alone, written independently. */
  function nearestAt(text: string, caret: number): number | undefined {
    let at = caret - 1;
    while (at >= 0 && !/[\s()[\]{}@]/.test(text[at]!)) at--;
    if (at < 0 || text[at] !== '@' || text[at + 1] === '[') return undefined;
    return at === 0 || /[\s([{"'`“‘«„]/.test(text[at - 1]!) ? at : undefined;
  }

  it.each([
    ['@[abc', true, 'a label running to the end'],
    ['@[a\\]', true, 'a label whose ] is escaped'],
    ['@[a](dsh-session:Ig', true, 'a payload running to the end'],
    ['@[x](dsh-session:ImEi"', true, 'a payload running on through a quote'],
    ['@[x](dsh-session:ImEi" ', false, 'a payload stopped by whitespace'],
    ['@[a](dsh-session:Ig)', false, 'a closed mention'],
    ['@[a](dsh-session:Ig x', false, 'a payload stopped by whitespace, no `)` anywhere'],
    ['@[a](dsh-session:Ig x @[b](dsh-session:Ig', true, 'a later payload running to the end, no `)` anywhere'],
    ['@[a](dsh-session:Ig x @[b', true, 'a later label running to the end, no `)` anywhere'],
    ['@[a](dsh-session:Ig) @[b](dsh-session:Ig', true, 'a payload running to the end after a closed mention'],
    ['@[a] x', false, 'a label closed without a URI'],
    ['@[a](x', false, 'a label closed, then no scheme'],
    ['plain text', false, 'no mention at all'],
  ])('endsInOpenMention(%j) is %s (%s)', (text, open) => {
    expect(endsInOpenMention(text)).toBe(open);
  });

  it('no trigger where an earlier unclosed mention\'s payload run reaches the @ (found by the oracle under Bun)', () => {
    const text = '@[x](dsh-session:ImEi"@';
    expect(findMentionTrigger(text, text.length)).toBeUndefined();
    // With whitespace in between the run stops, and the @ triggers.
    expect(findMentionTrigger('@[x](dsh-session:ImEi" @', 24)).toEqual({ start: 23, end: 24, query: '' });
  });

  it('a trigger is found exactly where the rules allow one and a mention put there would stand as itself (oracle)', () => {
    fc.assert(
      fc.property(promptText(true), canonicalMention, (text, mention) => {
        const tokens = scanSessionReferenceText(text).tokens;
        for (let caret = 0; caret <= text.length; caret++) {
          const at = nearestAt(text, caret);
          // The oracle: no mention or bare URI of the text overlaps the `@query`, and a mention
          // replacing it (with the rest of the text after it) scans as itself whatever its label:
          // the generated one, and the one with an empty label. (A label with whitespace can stand
          // where an empty one cannot: after `@[x](dsh-session:ImEi"`, whose payload run would
          // swallow a label without whitespace up to its `)`. The trigger only fires where every
          // mention stands.)
          const standsAt = (start: number, placed: string) =>
            scanSessionReferenceText(`${text.slice(0, start)}${placed} ${text.slice(caret)}`).tokens.some(
              (t) => t.start === start && t.end === start + placed.length && t.error === undefined,
            );
          const stands =
            at !== undefined &&
            tokens.every((t) => !(t.start < caret && t.end > at)) &&
            [mention, EMPTY_LABEL_MENTION].every((placed) => standsAt(at, placed));
          expect(findMentionTrigger(text, caret)?.start).toBe(stands ? at : undefined);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('replay rows equal the metadata and the chips stand where the mentions were typed', async () => {
    const refs = createSessionReferences({
      sessionQuery: fakeQuery(CITED_IDS.map((id) => ({ header: { id, createdAt: 1 }, events: [userMessage(1, `in ${id}`)] }))),
    });
    await fc.assert(
      fc.asyncProperty(promptText(false), async (text) => {
        const message: UserMessage = { id: 'm', role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text }] };
        let composed: UserMessage;
        try {
          composed = await refs.referenceUserMessage({ id: 'me' }, message);
        } catch {
          return; // a look-alike made a malformed bare URI
        }
        const described = describeReferencedMessage(composed);
        if (composed.envelope === undefined) {
          expect(described).toBeUndefined();
          return;
        }
        expect(described).toEqual({
          display: composed.envelope.display,
          mentions: composed.envelope.mentions,
          segments: [expect.any(Array)],
          references: composed.envelope.contexts[0]!.metadata.references,
        });
        // The segments draw the display text with one chip per position, labelled as the reference.
        const segments = described!.segments![0]!;
        const shown = (composed.envelope.display[0] as { text: string }).text;
        expect(segments.map((s) => shown.slice(s.start, s.end)).join('')).toBe(shown);
        const chips = segments.flatMap((s) => (s.kind === 'mention' ? [s] : []));
        expect(chips.map((c) => ({ block: 0, start: c.start, end: c.end, sessionId: c.token.sessionId }))).toEqual(composed.envelope.mentions);
        expect(chips.map((c) => `@${c.token.label}`)).toEqual(chips.map((c) => shown.slice(c.start, c.end)));
      }),
      { numRuns: 150 },
    );
  });
});
