/**
 * Editing with atomic chips, as pure functions on the canonical text (SPEC §15.7): what a
 * composer does on typing, paste, Backspace/Delete and arrow keys, without a DOM.
 * @module
 */
import { readCallerFields } from '../caller-data.js';
import { check } from '../errors.js';
import { scanSessionReferenceText, type SessionReferenceToken } from '../mention.js';
import { checkOffset, checkText, pairStart } from './offsets.js';
import { unitEndAfter, unitStartBefore, type EditUnit } from './units.js';

export type { EditUnit } from './units.js';

/** A selection in the text: UTF-16 offsets; `anchor === focus` is a caret (SPEC §15.7). */
export interface MentionSelection {
  /** Where the selection started. */
  anchor: number;
  /** Where it ends (the caret's side); before `anchor` for a backward selection. */
  focus: number;
}

/** What every edit function returns: the new text and selection (SPEC §15.7). */
export interface MentionEdit {
  text: string;
  selection: MentionSelection;
}

/** Options of {@link deleteBackward}, {@link deleteForward} and {@link moveCaret}. */
export interface EditUnitOptions {
  /** `'character'` (a grapheme cluster, the default) or `'word'`. */
  unit?: EditUnit | undefined;
}

/** Which way {@link moveCaret} moves: `'left'` toward the start of the text, `'right'` toward its end. */
export type CaretDirection = 'left' | 'right';

/** The text and its chips (§3.6 tokens, in order), scanned once per call. */
interface Doc {
  text: string;
  chips: SessionReferenceToken[];
}

/** A normalized selection and its ordered ends. */
interface Normalized extends MentionSelection {
  start: number;
  end: number;
}

/**
 * `selection` with no end inside a chip or a surrogate pair (SPEC §15.5, §15.7): an offset inside
 * a surrogate pair is read as the pair's start; a caret inside a chip moves to the chip's nearer
 * edge (its end on a tie); a range with an end inside a chip grows to cover that chip (the
 * direction, `anchor` before or after `focus`, is kept). The text is returned unchanged.
 * @example
 * const text = 'a @[Schema](dsh-session:InNlc3Npb24tNDM0Ig) b'; // the chip is [2, 43)
 * normalizeSelection(text, { anchor: 5, focus: 5 });  // { text, selection: { anchor: 2, focus: 2 } }
 * normalizeSelection(text, { anchor: 0, focus: 30 }); // { text, selection: { anchor: 0, focus: 43 } }
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `text` is not a string or
 * `selection` is not `{ anchor, focus }` with integers from 0 to `text.length`.
 */
export function normalizeSelection(text: string, selection: MentionSelection): MentionEdit {
  const { anchor, focus } = open(text, selection).selection;
  return { text, selection: { anchor, focus } };
}

/**
 * Backspace (SPEC §15.7): a non-empty selection is deleted; otherwise one unit before the caret —
 * a grapheme cluster, or with `unit: 'word'` the word before the caret with the blanks between
 * it and the caret (a line break, a punctuation mark or an emoji is a word of its own) — and a
 * chip before the caret (also one behind blanks, for a word) is one unit, deleted whole. At the
 * start of the text nothing changes. The caret ends where the deletion was.
 * @example
 * deleteBackward('a @[Schema](dsh-session:InNlc3Npb24tNDM0Ig)', { anchor: 43, focus: 43 });
 * // { text: 'a ', selection: { anchor: 2, focus: 2 } }
 * deleteBackward('see 👩‍💻 now', { anchor: 13, focus: 13 }, { unit: 'word' });
 * // { text: 'see 👩‍💻 ', selection: { anchor: 10, focus: 10 } }
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` as {@link normalizeSelection},
 * and when `options.unit` is neither `'character'` nor `'word'`.
 */
export function deleteBackward(text: string, selection: MentionSelection, options?: EditUnitOptions): MentionEdit {
  const { doc, selection: at } = open(text, selection);
  const unit = readUnit(options);
  if (at.start !== at.end) return splice(doc, at, at.start, at.end, '');
  return splice(doc, at, unitBefore(doc, at.start, unit), at.start, '');
}

/**
 * Delete (SPEC §15.7): {@link deleteBackward} toward the end of the text — one unit after the
 * caret, a chip after it deleted whole; at the end of the text nothing changes.
 * @throws SessionReferenceError as {@link deleteBackward}.
 */
export function deleteForward(text: string, selection: MentionSelection, options?: EditUnitOptions): MentionEdit {
  const { doc, selection: at } = open(text, selection);
  const unit = readUnit(options);
  if (at.start !== at.end) return splice(doc, at, at.start, at.end, '');
  return splice(doc, at, at.start, unitAfter(doc, at.start, unit), '');
}

/**
 * What typing or a paste does (SPEC §15.7): the selection (normalized, so a chip it touches goes
 * whole) is replaced by `inserted` and the caret put after it. Canonical mentions and bare URIs
 * in `inserted` stay mentions, and no chip outside the selection changes: where `inserted` would
 * join a neighbouring chip's token (a letter typed right after a bare URI, a letter typed before
 * one), one space is put between them. When no space can keep a chip apart — an `@[` whose label
 * would run on into a later chip's markup (a label may hold spaces) — the edit is not made: the
 * text and the selection come back unchanged. Line breaks are kept as given (a DOM layer turns
 * `\r\n` into `\n` first).
 * @example
 * replaceSelection('dsh-session:ImEi', { anchor: 16, focus: 16 }, 'x');
 * // { text: 'dsh-session:ImEi x', selection: { anchor: 18, focus: 18 } }
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` as {@link normalizeSelection},
 * and when `inserted` is not a string.
 */
export function replaceSelection(text: string, selection: MentionSelection, inserted: string): MentionEdit {
  const { doc, selection: at } = open(text, selection);
  check(typeof inserted === 'string', 'INVALID_ARGUMENT', 'inserted must be a string', inserted);
  return splice(doc, at, at.start, at.end, inserted);
}

/**
 * An arrow key (SPEC §15.7): a non-empty selection collapses to its left or right end; a caret
 * moves by one unit (as {@link deleteBackward} and {@link deleteForward} would delete), stepping
 * over a chip in one move. The text is returned unchanged.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` as {@link deleteBackward}, and
 * when `direction` is neither `'left'` nor `'right'`.
 */
export function moveCaret(text: string, selection: MentionSelection, direction: CaretDirection, options?: EditUnitOptions): MentionEdit {
  const { doc, selection: at } = open(text, selection);
  check(direction === 'left' || direction === 'right', 'INVALID_ARGUMENT', "direction must be 'left' or 'right'", direction);
  const unit = readUnit(options);
  let caret: number;
  if (at.start !== at.end) caret = direction === 'left' ? at.start : at.end;
  else caret = direction === 'left' ? unitBefore(doc, at.start, unit) : unitAfter(doc, at.start, unit);
  return { text, selection: { anchor: caret, focus: caret } };
}

/** Checks the arguments, scans the text once and normalizes the selection. */
function open(text: string, selection: MentionSelection): { doc: Doc; selection: Normalized } {
  checkText(text);
  check(typeof selection === 'object' && selection !== null, 'INVALID_ARGUMENT', 'selection must be { anchor, focus }', selection);
  // Each field read once (SPEC §10.4).
  const { anchor, focus } = readCallerFields(selection, ['anchor', 'focus'], 'selection');
  const doc = { text, chips: scanSessionReferenceText(text).tokens };
  return { doc, selection: normalize(doc, checkOffset(text, anchor, 'selection.anchor'), checkOffset(text, focus, 'selection.focus')) };
}

/** `options.unit`, read once: `'character'` when absent. */
function readUnit(options: EditUnitOptions | undefined): EditUnit {
  const { unit } = readCallerFields(options, ['unit'], 'options');
  check(unit === undefined || unit === 'character' || unit === 'word', 'INVALID_ARGUMENT', "options.unit must be 'character' or 'word'", unit);
  return unit ?? 'character';
}

/** The normalized selection of SPEC §15.7 (see {@link normalizeSelection}). */
function normalize(doc: Doc, anchor: number, focus: number): Normalized {
  anchor = pairStart(doc.text, anchor);
  focus = pairStart(doc.text, focus);
  if (anchor === focus) {
    const chip = chipAround(doc, anchor);
    const caret = chip === undefined ? anchor : anchor - chip.start < chip.end - anchor ? chip.start : chip.end;
    return { anchor: caret, focus: caret, start: caret, end: caret };
  }
  const start = chipAround(doc, Math.min(anchor, focus))?.start ?? Math.min(anchor, focus);
  const end = chipAround(doc, Math.max(anchor, focus))?.end ?? Math.max(anchor, focus);
  return anchor < focus ? { anchor: start, focus: end, start, end } : { anchor: end, focus: start, start, end };
}

/** Index of the first chip that starts at or after `offset` (binary search). */
function chipIndexFrom(doc: Doc, offset: number): number {
  let low = 0;
  let high = doc.chips.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (doc.chips[middle]!.start < offset) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The chip that strictly contains `offset` (`start < offset < end`), if any. */
function chipAround(doc: Doc, offset: number): SessionReferenceToken | undefined {
  const chip = doc.chips[chipIndexFrom(doc, offset) - 1];
  return chip !== undefined && chip.end > offset ? chip : undefined;
}

/**
 * How much plain text around the caret the segmenter looks at (UTF-16 units). A unit is local, so
 * a window keeps a keystroke in a long run from segmenting all of it (the segmenter's cost grows
 * with the run, not with the unit); a unit longer than the window (a 1,024-letter word) is taken
 * a window at a time.
 */
const WINDOW = 1024;

/** Where the unit before `caret` (not inside a chip) starts: a chip ending there, else within the plain run. */
function unitBefore(doc: Doc, caret: number, unit: EditUnit): number {
  const chip = doc.chips[chipIndexFrom(doc, caret) - 1];
  if (chip?.end === caret) return chip.start;
  const runStart = chip?.end ?? 0;
  if (runStart === caret) return caret;
  // The window starts at the run's start or at a code point boundary.
  const from = Math.max(runStart, pairStart(doc.text, caret - WINDOW));
  const { at, blank } = unitStartBefore(doc.text.slice(from, caret), unit);
  return blank && chip !== undefined && from === runStart ? chip.start : from + at;
}

/** Where the unit after `caret` (not inside a chip) ends: a chip starting there, else within the plain run. */
function unitAfter(doc: Doc, caret: number, unit: EditUnit): number {
  const chip = doc.chips[chipIndexFrom(doc, caret)];
  if (chip?.start === caret) return chip.end;
  const runEnd = chip?.start ?? doc.text.length;
  if (runEnd === caret) return caret;
  const to = Math.min(runEnd, pairStart(doc.text, caret + WINDOW));
  const { at, blank } = unitEndAfter(doc.text.slice(caret, to), unit);
  return blank && chip !== undefined && to === runEnd ? chip.end : caret + at;
}

/** The spaces tried at the two ends of an insertion, in order: none, then one where it is needed. */
const JOINS: ReadonlyArray<readonly [string, string]> = [
  ['', ''],
  [' ', ''],
  ['', ' '],
  [' ', ' '],
];

/**
 * Replaces `[start, end)` (ends outside chips) by `inserted`, with a space at either end where
 * one keeps every chip outside the range and every token of `inserted` as it is; the caret goes
 * after `inserted`. When no choice does, the text and `selection` come back unchanged. At most
 * four scans of the result: linear.
 */
function splice(doc: Doc, selection: Normalized, start: number, end: number, inserted: string): MentionEdit {
  const { text, chips } = doc;
  if (start === end && inserted === '') return { text, selection: { anchor: start, focus: start } };
  const added = inserted === '' ? [] : scanSessionReferenceText(inserted).tokens;
  const before = text.slice(0, start);
  const after = text.slice(end);
  for (const [left, right] of inserted === '' ? JOINS.slice(0, 2) : JOINS) {
    const result = before + left + inserted + right + after;
    const shift = left.length + inserted.length + right.length - (end - start);
    const expected: Array<readonly [number, number, SessionReferenceToken['kind']]> = [];
    for (const chip of chips) if (chip.end <= start) expected.push([chip.start, chip.end, chip.kind]);
    for (const token of added) expected.push([start + left.length + token.start, start + left.length + token.end, token.kind]);
    for (const chip of chips) if (chip.start >= end) expected.push([chip.start + shift, chip.end + shift, chip.kind]);
    const tokens = scanSessionReferenceText(result).tokens;
    if (keepsTokens(tokens, expected)) {
      // The insertion may complete a new chip (`dsh-session:` typed before a payload): the caret
      // then goes to that chip's nearer edge.
      const { anchor, focus } = normalize({ text: result, chips: tokens }, start + left.length + inserted.length, start + left.length + inserted.length);
      return { text: result, selection: { anchor, focus } };
    }
  }
  return { text, selection: { anchor: selection.anchor, focus: selection.focus } };
}

/** Whether every `[start, end, kind]` of `expected` (in order) is one of `tokens` (in order). */
function keepsTokens(tokens: SessionReferenceToken[], expected: ReadonlyArray<readonly [number, number, SessionReferenceToken['kind']]>): boolean {
  let i = 0;
  for (const [start, end, kind] of expected) {
    while (i < tokens.length && tokens[i]!.start < start) i++;
    const token = tokens[i];
    if (token === undefined || token.start !== start || token.end !== end || token.kind !== kind) return false;
  }
  return true;
}
