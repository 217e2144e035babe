/**
 * Argument checks shared by the editor helpers (SPEC §15): a text and UTF-16 offsets into it.
 * @module
 */
import { check } from '../errors.js';

/**
 * `text` must be a string.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` otherwise.
 */
export function checkText(text: unknown): asserts text is string {
  check(typeof text === 'string', 'INVALID_ARGUMENT', 'text must be a string', text);
}

/**
 * `offset`, which must be an integer from 0 to `text.length` (a caret position).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` naming `name` otherwise.
 */
export function checkOffset(text: string, offset: unknown, name: string): number {
  check(
    Number.isInteger(offset) && (offset as number) >= 0 && (offset as number) <= text.length,
    'INVALID_ARGUMENT',
    `${name} must be an integer from 0 to text.length (${text.length})`,
    offset,
  );
  return offset as number;
}
