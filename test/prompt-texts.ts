/**
 * Generated prompt texts for the mention-position properties (SPEC §3, §9.4, §15): ordinary text
 * full of look-alikes (`@`, `@[`, `](dsh-session:`, backslashes, `@A` next to `@Anna`), canonical
 * mentions, bare URIs and malformed mentions, in any order. Web APIs only: runs in every runtime.
 */
import fc from 'fast-check';
import { encodeSessionReferenceUri, formatSessionReferenceMention } from '../src/index.js';
import { anyChar } from './hardening.js';

/** Ids the generated texts cite (at most three, SPEC §5 `maxReferences`). */
export const CITED_IDS = ['A', 'Anna', 'session-\u00e9\ud83c\udf89'] as const;

/** Labels rich in look-alikes and the characters a mention escapes. */
export const promptLabel = fc.string({
  unit: fc.oneof(anyChar, fc.constantFrom('A', '@A', '@', '\\', '[', ']', '@[', '](', ')', '](dsh-session:', ' ')),
  maxLength: 12,
});

/** Ordinary text that looks like mentions: never a valid one by itself. */
const lookAlike = fc.oneof(
  fc.constantFrom('@', '@A', '@Anna', ' @A ', '@[', '@[A]', '](', ')', '[', ']', '\\', ' ', '\n', '(', 'email ', 'dsh-session:', 'x@y', '"@'),
  fc.string({ unit: anyChar, maxLength: 6 }),
);

/** A canonical mention of a cited id, with or without a label. */
export const canonicalMention = fc
  .tuple(fc.constantFrom(...CITED_IDS), fc.option(promptLabel, { nil: undefined }))
  .map(([sessionId, label]) => formatSessionReferenceMention(label === undefined ? { sessionId } : { sessionId, label }));

/** A bare canonical URI of a cited id, after a space so it is not glued to a letter. */
const bareUri = fc.constantFrom(...CITED_IDS).map((id) => ` ${encodeSessionReferenceUri(id)}`);

/** Malformed mentions: an empty or non-canonical payload, or one a space breaks. */
const malformed = fc.constantFrom('@[x](dsh-session:)', '@[x](dsh-session:e30)', '@[x](dsh-session:ImEi oops)', '@[x](dsh-session:ImEi');

/** A prompt text of look-alikes, mentions and bare URIs (`withMalformed`: malformed ones too). */
export const promptText = (withMalformed: boolean): fc.Arbitrary<string> =>
  fc
    .array(
      fc.oneof(
        { arbitrary: lookAlike, weight: 4 },
        { arbitrary: canonicalMention, weight: 3 },
        { arbitrary: bareUri, weight: 1 },
        { arbitrary: withMalformed ? malformed : lookAlike, weight: 1 },
      ),
      { maxLength: 10 },
    )
    .map((pieces) => pieces.join(''));
