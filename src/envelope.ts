/**
 * The mention positions of a composed prompt's envelope (SPEC §9.4 `envelope.mentions`).
 * @module
 */
import { check } from './errors.js';
import type { ContentBlock, PromptEnvelopeMention } from './types.js';

/**
 * Validates and copies mention positions (SPEC §9.4 `envelope.mentions`) against the readable
 * content they point into and the sessions cited: each `{ block, start, end, sessionId }` is on a
 * text block of `display`, `0 <= start < end <= text.length`, starts at an `@`, does not overlap or
 * precede the previous one, and names a session of `cited`. One pass; each entry is read once.
 * Used by `composePromptMessage` (writing) and `describeReferencedMessage` (reading).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` naming the first bad entry.
 */
export function checkEnvelopeMentions(mentions: unknown, display: ContentBlock[], cited: Set<unknown>): PromptEnvelopeMention[] {
  check(Array.isArray(mentions), 'INVALID_ARGUMENT', 'mentions must be an array', mentions);
  const copies: PromptEnvelopeMention[] = [];
  let previous = { block: 0, end: 0 };
  // Array.from visits the holes of a sparse array too (as undefined, which fails the check).
  Array.from(mentions as unknown[], (mention, index) => {
    const { block, start, end, sessionId } = (mention ?? {}) as Record<string, unknown>;
    const target = Number.isInteger(block) ? display[block as number] : undefined;
    const text = target?.type === 'text' && typeof target.text === 'string' ? target.text : undefined;
    check(
      text !== undefined &&
        Number.isInteger(start) &&
        Number.isInteger(end) &&
        (start as number) < (end as number) &&
        (end as number) <= text.length &&
        text.charCodeAt(start as number) === 0x40 && // '@'
        (block as number) >= previous.block &&
        (block !== previous.block || (start as number) >= previous.end) &&
        typeof sessionId === 'string' &&
        cited.has(sessionId),
      'INVALID_ARGUMENT',
      `mentions[${index}] must be { block, start, end, sessionId } of an @label in a text block of the content, in order, citing a session of the context`,
      mention,
    );
    previous = { block: block as number, end: end as number };
    copies.push({ block: block as number, start: start as number, end: end as number, sessionId: sessionId as string });
  });
  return copies;
}
