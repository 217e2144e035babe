/**
 * Mentions as atomic chips: the mention or bare URI at an offset (SPEC §15.3).
 * @module
 */
import { scanSessionReferenceText, type SessionReferenceToken } from '../mention.js';
import { checkText, readOffset } from './offsets.js';

/** A mention or bare URI of the text and where it stands (SPEC §15.3). */
export interface MentionRange {
  /** UTF-16 offset of its first character. */
  start: number;
  /** UTF-16 offset just after it. */
  end: number;
  /** The §3.6 token: `sessionId` and `label` when valid, `error` when malformed. */
  token: SessionReferenceToken;
}

/**
 * The mention or bare URI (a SPEC §3.6 token, malformed ones included) whose characters include
 * `text[offset]`, i.e. `start <= offset < end`; `undefined` when `offset` is in ordinary text or is
 * `text.length` (SPEC §15.3); an `offset` inside a surrogate pair is read as the pair's start
 * (SPEC §15.5). An editor uses it to treat each mention as one chip:
 *
 * - caret snapping: when `mentionRangeAt(text, caret)` has `start < caret`, the caret is inside a
 *   chip; move it to `start` or `end`;
 * - Backspace at `caret`: `mentionRangeAt(text, caret - 1)` is the chip to remove whole;
 * - Delete at `caret`: `mentionRangeAt(text, caret)`;
 * - a pasted canonical mention scans as one token, so it becomes one chip.
 *
 * One scan of `text` (linear, SPEC §15.5); never throws on a string `text`.
 * @example
 * const text = 'ask @[Schema](dsh-session:InNlc3Npb24tNDM0Ig) now';
 * mentionRangeAt(text, 10);
 * // { start: 4, end: 45, token: { kind: 'mention', start: 4, end: 45, sessionId: 'session-434', label: 'Schema' } }
 * mentionRangeAt(text, 2); // undefined
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `text` is not a string or
 * `offset` is not an integer from 0 to `text.length`.
 */
export function mentionRangeAt(text: string, offset: number): MentionRange | undefined {
  checkText(text);
  offset = readOffset(text, offset, 'offset');
  const token = scanSessionReferenceText(text).tokens.find((t) => t.start <= offset && offset < t.end);
  return token === undefined ? undefined : { start: token.start, end: token.end, token };
}
