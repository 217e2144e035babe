/**
 * Argument checks shared by the editor helpers (SPEC §15): a text and UTF-16 offsets into it, an
 * offset inside a surrogate pair read as the pair's start (SPEC §15.5).
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

/**
 * `offset`, checked as {@link checkOffset}, and read as SPEC §15.5 says: one that falls inside a
 * surrogate pair (between a high and a low surrogate) is the pair's start.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` naming `name` as {@link checkOffset}.
 */
export function readOffset(text: string, offset: unknown, name: string): number {
  return pairStart(text, checkOffset(text, offset, name));
}

/** `offset`, or the start of the surrogate pair it falls inside (SPEC §15.5). */
export function pairStart(text: string, offset: number): number {
  const high = text.charCodeAt(offset - 1);
  const low = text.charCodeAt(offset);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? offset - 1 : offset;
}
