/**
 * Where an edit of the composer is made (issue 29.3: a keystroke costs what it changes). The pure
 * functions of SPEC §15.7 scan the text they are given; the composer gives them a stretch of the
 * draft that decides the edit as the whole draft would, so a keystroke in a 5 MB draft scans a few
 * hundred characters.
 *
 * Why a stretch bounded by explicit mentions is enough: a mention ends with `)`, and no `@[`
 * before a mention that the scan kept whole can reach past it — its label would end at the
 * mention's `]` at the latest and take the mention in, or its payload would run to the mention's
 * `)`, and either way the mention would not be a chip of its own. So the scan at the end of a kept
 * mention starts afresh (SPEC §3.6), and what lies before it is decided by what lies before it.
 * A bare URI gives no such bound (a label may run over it), so only explicit mentions bound a
 * stretch. The stretch holds the chip next to each end of the edit (Backspace after a chip takes
 * it), and ends after the next mention past that chip, which the edit keeps (§15.7: no edit changes
 * a chip it does not delete), so the draft after the stretch is scanned as before.
 * @module
 */
import type { Piece } from './view.js';

/** A stretch `[from, to)` of the draft; both ends are piece boundaries. */
export interface Stretch {
  from: number;
  to: number;
}

const isMention = (piece: Piece | undefined): boolean => piece?.chip?.token.kind === 'mention';

/**
 * The stretch for an edit around `[start, end]` (a selection, not yet normalized): from the end of
 * the last mention before the chip before `start`, to the end of the first mention after the chip
 * after `end` (or the draft's ends).
 * @param indexFrom the index of the first piece that ends after an offset (the view's binary search)
 */
export function stretchAround(pieces: readonly Piece[], indexFrom: (offset: number) => number, start: number, end: number, length: number): Stretch {
  // The chip before `start`'s run, then the mention before it.
  let i = indexFrom(start) - 1;
  while (i >= 0 && pieces[i]!.chip === undefined) i--;
  i--;
  while (i >= 0 && !isMention(pieces[i])) i--;
  const from = i >= 0 ? pieces[i]!.end : 0;
  // The chip after `end` (or the one `end` is in), then the mention after it.
  let j = indexFrom(end);
  while (j < pieces.length && pieces[j]!.chip === undefined) j++;
  j++;
  while (j < pieces.length && !isMention(pieces[j])) j++;
  const to = j < pieces.length ? pieces[j]!.end : length;
  return { from, to };
}

/**
 * The stretch for reading around `offset` (the trigger, SPEC §15.1): from the end of the last
 * mention that ends at or before it to the end of the first mention after it (or the draft's ends).
 */
export function stretchAt(pieces: readonly Piece[], indexFrom: (offset: number) => number, offset: number, length: number): Stretch {
  let i = indexFrom(offset) - 1;
  while (i >= 0 && !isMention(pieces[i])) i--;
  let j = indexFrom(offset);
  while (j < pieces.length && !(isMention(pieces[j]) && pieces[j]!.start >= offset)) j++;
  return { from: i >= 0 ? pieces[i]!.end : 0, to: j < pieces.length ? pieces[j]!.end : length };
}
