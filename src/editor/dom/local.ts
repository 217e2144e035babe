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
 *
 * Line breaks bound a stretch too (issue 29: a chip-free 5 MB draft), where they keep every §15.7
 * result exact. A line break piece `L` (a `\n` outside every chip; the composer keeps no `\r`):
 * - Grapheme clusters never hold a `\n` with anything else (UAX #29 GB4/GB5; `\r\n` cannot occur).
 * - Word units never cross one either: a line break is a unit of its own, and the blanks a word
 *   takes along are spaces and tabs (`./units.ts`). So a deletion or a move takes at most the
 *   one line break next to the edit; the stretch ends at the SECOND line break on each side,
 *   which the edit keeps, so the text on either side of it is never joined.
 * - A bare URI's payload and a mention's payload end at whitespace, so no match runs over `L`
 *   from a payload; a trigger's query ends at a line break (§15.1, §15.10).
 * - A mention's label may hold a `\n`, so a `@[` before `L` could read over it. `L` bounds the
 *   start of a stretch only when no plain piece between the last mention (or the draft's start)
 *   and `L` holds `@[` (a `@[` is always inside one plain piece: a line break or a chip never
 *   follows a `@` with `[`); then no mention attempt is open at `L` and the scan starts afresh there.
 *   At the end, a stretch whose edited text leaves a mention open is made over the whole draft
 *   (`endsInOpenMention`, the editor), so no new match runs over the `L` that ends a stretch.
 * The walk back looks only at pieces' flags (`Piece.opens`), never at their text.
 * @module
 */
import type { Piece } from './view.js';

/** A stretch `[from, to)` of the draft; both ends are piece boundaries. */
export interface Stretch {
  from: number;
  to: number;
}

const isMention = (piece: Piece | undefined): boolean => piece?.chip?.token.kind === 'mention';
const isBreak = (piece: Piece | undefined): boolean => piece !== undefined && piece.node === undefined;

/**
 * Where a stretch may start, walking back from piece `i` (inclusive): the end of the last mention
 * at or before `i`, or the start of a later line break (the `breaks`-th seen) when no run between
 * that mention and the break holds `@[` (see the module's argument); 0 at the draft's start.
 */
function startBefore(pieces: readonly Piece[], i: number, breaks: number): number {
  let seen = 0;
  let candidate: number | undefined;
  for (; i >= 0; i--) {
    const piece = pieces[i]!;
    if (isMention(piece)) break;
    if (piece.opens) candidate = undefined;
    else if (isBreak(piece) && ++seen >= breaks && candidate === undefined) candidate = piece.start;
  }
  return candidate ?? (i >= 0 ? pieces[i]!.end : 0);
}

/**
 * Where a stretch may end, walking on from piece `j` (inclusive): the start of the `breaks`-th line
 * break, or the end of the first mention after the first chip (the one the edit may touch), or the
 * draft's end.
 */
function endAfter(pieces: readonly Piece[], j: number, breaks: number, length: number): number {
  let seen = 0;
  let chips = 0;
  for (; j < pieces.length; j++) {
    const piece = pieces[j]!;
    if (isBreak(piece) && ++seen >= breaks) return piece.start;
    if (piece.chip !== undefined && ++chips > 1 && isMention(piece)) return piece.end;
  }
  return length;
}

/**
 * The stretch for an edit around `[start, end]` (a selection, not yet normalized): from the end of
 * the last mention before the chip before `start` (or the second line break before `start` that
 * bounds it), to the end of the first mention after the chip after `end` (or the second line
 * break after `end`), or the draft's ends.
 * @param indexFrom the index of the first piece that ends after an offset (the view's binary search)
 */
export function stretchAround(pieces: readonly Piece[], indexFrom: (offset: number) => number, start: number, end: number, length: number): Stretch {
  // The chip before `start`'s run, then the mention before it (the walk back counts line breaks from `start`).
  let i = indexFrom(start) - 1;
  let breaks = 0;
  while (i >= 0 && pieces[i]!.chip === undefined) {
    if (isBreak(pieces[i])) breaks++;
    if (breaks >= 2) break;
    i--;
  }
  const from = breaks >= 2 ? startBefore(pieces, i, 1) : startBefore(pieces, i - 1, 2 - breaks);
  return { from, to: endAfter(pieces, indexFrom(end), 2, length) };
}

/**
 * The stretch for reading around `offset` (the trigger, SPEC §15.1): from the end of the last
 * mention that ends at or before it (or a line break after it that bounds it) to the end of the
 * first mention after it (or the next line break), or the draft's ends.
 */
export function stretchAt(pieces: readonly Piece[], indexFrom: (offset: number) => number, offset: number, length: number): Stretch {
  let j = indexFrom(offset);
  while (j < pieces.length && !(isMention(pieces[j]) && pieces[j]!.start >= offset) && !(isBreak(pieces[j]) && pieces[j]!.start >= offset)) j++;
  const to = j >= pieces.length ? length : isBreak(pieces[j]) ? pieces[j]!.start : pieces[j]!.end;
  return { from: startBefore(pieces, indexFrom(offset) - 1, 1), to };
}
