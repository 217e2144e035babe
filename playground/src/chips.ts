/**
 * The composer's model, without the DOM: the canonical text (`@[label](dsh-session:…)` markup,
 * exactly what is sent) cut into plain runs and chips, and the edits a chip editor makes on it.
 * Every edit keeps chips atomic (SPEC §15.3): a selection that touches a chip is widened to the
 * whole chip, Backspace/Delete next to a chip remove it whole, and a caret is never left inside one.
 */
import { mentionRangeAt } from '../../src/editor/index.js';
import { scanSessionReferenceText } from '../../src/index.js';

/** How a chip is drawn. */
export type ChipState = 'ok' | 'unknown' | 'malformed';

export interface Chip {
  kind: 'mention' | 'bare';
  state: ChipState;
  /** What the chip shows: `@label`, or the raw markup of a malformed one. */
  text: string;
  /** Hover text: the session id, or why the chip is marked. */
  title: string;
  sessionId?: string;
  /** Error code of a malformed mention. */
  code?: string;
}

/** A run of the canonical text `[start, end)`: plain text, or one chip. */
export interface Segment {
  start: number;
  end: number;
  chip?: Chip;
}

/** Longest raw markup a malformed chip shows (the rest is in its title). */
const MALFORMED_SHOWN = 48;

/**
 * The text as plain runs and chips, alternating: there is always a plain run (possibly empty)
 * before, between and after chips, so every offset outside a chip falls in a plain run.
 * `knownIds` marks well-formed mentions of sessions that are not in the store.
 */
export function segmentsOf(text: string, knownIds: ReadonlySet<string>): Segment[] {
  const segments: Segment[] = [];
  let at = 0;
  for (const token of scanSessionReferenceText(text).tokens) {
    segments.push({ start: at, end: token.start });
    const raw = text.slice(token.start, token.end);
    let chip: Chip;
    if (token.error || token.sessionId === undefined) {
      const shown = raw.length > MALFORMED_SHOWN ? `${raw.slice(0, MALFORMED_SHOWN)}…` : raw;
      const code = token.error?.code ?? 'SESSION_REFERENCE_INVALID_REFERENCE';
      chip = { kind: token.kind, state: 'malformed', text: shown, title: `${code}: ${token.error?.message ?? raw}`, code };
    } else {
      const known = knownIds.has(token.sessionId);
      chip = {
        kind: token.kind,
        state: known ? 'ok' : 'unknown',
        text: `@${token.label ?? token.sessionId}`,
        title: known ? token.sessionId : `${token.sessionId} (no session with this id in the store)`,
        sessionId: token.sessionId,
      };
    }
    segments.push({ start: token.start, end: token.end, chip });
    at = token.end;
  }
  segments.push({ start: at, end: text.length });
  return segments;
}

/** A selection in the canonical text (UTF-16 offsets, `start ≤ end`). */
export interface Selection {
  start: number;
  end: number;
}

/** An edit's result: the new text and where the caret goes. */
export interface Edit {
  text: string;
  caret: number;
}

/** The chip that strictly contains `offset` (start < offset < end), if any (SPEC §15.3). */
function chipAround(text: string, offset: number) {
  const range = mentionRangeAt(text, offset);
  return range && range.start < offset ? range : undefined;
}

/** `offset` moved out of any chip, to the chip's nearer edge (its end when `towardEnd`). */
export function snapOffset(text: string, offset: number, towardEnd = true): number {
  offset = Math.max(0, Math.min(offset, text.length));
  const range = chipAround(text, offset);
  if (!range) return offset;
  return towardEnd ? range.end : range.start;
}

/** The selection widened so that it never cuts a chip; a caret inside a chip moves to its end. */
export function widen(text: string, selection: Selection): Selection {
  if (selection.start === selection.end) {
    const caret = snapOffset(text, selection.start, true);
    return { start: caret, end: caret };
  }
  return { start: snapOffset(text, selection.start, false), end: snapOffset(text, selection.end, true) };
}

/** Replaces the selection (widened to whole chips) by `inserted`; the caret goes after it. */
export function replaceSelection(text: string, selection: Selection, inserted: string): Edit {
  const { start, end } = widen(text, selection);
  return { text: text.slice(0, start) + inserted + text.slice(end), caret: start + inserted.length };
}

/** Length of the code point that ends at `offset` (2 for a surrogate pair). */
function codePointBefore(text: string, offset: number): number {
  const low = text.charCodeAt(offset - 1);
  const high = text.charCodeAt(offset - 2);
  return low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? 2 : 1;
}

/** Length of the code point that starts at `offset`. */
function codePointAt(text: string, offset: number): number {
  return (text.codePointAt(offset) ?? 0) > 0xffff ? 2 : 1;
}

/**
 * Backspace: deletes a non-empty selection, else the chip that ends at the caret (whole), else one
 * code point. At the start of the text nothing changes.
 */
export function deleteBackward(text: string, selection: Selection): Edit {
  if (selection.start !== selection.end) return replaceSelection(text, selection, '');
  const caret = selection.start;
  if (caret === 0) return { text, caret };
  const chip = mentionRangeAt(text, caret - 1);
  const start = chip ? chip.start : caret - codePointBefore(text, caret);
  return replaceSelection(text, { start, end: caret }, '');
}

/** Delete: deletes a non-empty selection, else the chip that starts at the caret (whole), else one code point. */
export function deleteForward(text: string, selection: Selection): Edit {
  if (selection.start !== selection.end) return replaceSelection(text, selection, '');
  const caret = selection.start;
  if (caret >= text.length) return { text, caret };
  const chip = mentionRangeAt(text, caret);
  const end = chip ? chip.end : caret + codePointAt(text, caret);
  return replaceSelection(text, { start: caret, end }, '');
}

/** ArrowLeft/ArrowRight over a chip: the chip's other edge, or `undefined` when no chip is next to the caret. */
export function stepOverChip(text: string, caret: number, direction: -1 | 1): number | undefined {
  if (direction < 0) {
    const chip = caret > 0 ? mentionRangeAt(text, caret - 1) : undefined;
    return chip && chip.end === caret ? chip.start : undefined;
  }
  const chip = mentionRangeAt(text, caret);
  return chip && chip.start === caret ? chip.end : undefined;
}

/** Pasted or dropped text as the composer keeps it: line breaks normalized to `\n`. */
export function normalizePastedText(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}
