/**
 * Text units of the editing model (SPEC §15.7): grapheme clusters and words, as `Intl.Segmenter`
 * finds them, within one run of plain text (chips are units of their own and never reach here).
 * @module
 */

/** What a deletion or a caret move takes at a time. */
export type EditUnit = 'character' | 'word';

const segmenters: Partial<Record<'grapheme' | 'word', Intl.Segmenter>> = {};

/** One segmenter per granularity, made on first use (the default locale: break rules are the same). */
function segmenter(granularity: 'grapheme' | 'word'): Intl.Segmenter {
  return (segmenters[granularity] ??= new Intl.Segmenter(undefined, { granularity }));
}

/**
 * Whitespace a word deletion or move takes along with the word: spaces and tabs, not line breaks
 * (a line break is a unit of its own, as in a browser's text field).
 */
const BLANK = /^[^\S\n\r\u2028\u2029]+$/;

/** A segment that is whitespace within a line. */
function isBlank(segment: Intl.SegmentData): boolean {
  return !segment.isWordLike && BLANK.test(segment.segment);
}

/**
 * Where the unit that ends at the end of `run` starts (an offset into `run`; `run` is not empty),
 * and whether everything from there on is blank (a word move then goes on into a chip before it).
 * A character is the last grapheme cluster; a word is the last segment that is not blank (a
 * word-like one, or a single other one such as punctuation, an emoji or a line break) together
 * with the blanks after it.
 */
export function unitStartBefore(run: string, unit: EditUnit): { at: number; blank: boolean } {
  if (unit === 'character') return { at: segmenter('grapheme').segment(run).containing(run.length - 1)!.index, blank: false };
  const segments = segmenter('word').segment(run);
  for (let at = run.length; at > 0; ) {
    const segment = segments.containing(at - 1)!;
    at = segment.index;
    if (!isBlank(segment)) return { at, blank: false };
  }
  return { at: 0, blank: true };
}

/** {@link unitStartBefore} the other way: where the unit that starts `run` ends (an offset into `run`). */
export function unitEndAfter(run: string, unit: EditUnit): { at: number; blank: boolean } {
  if (unit === 'character') return { at: segmenter('grapheme').segment(run).containing(0)!.segment.length, blank: false };
  const segments = segmenter('word').segment(run);
  for (let at = 0; at < run.length; ) {
    const segment = segments.containing(at)!;
    at = segment.index + segment.segment.length;
    if (!isBlank(segment)) return { at, blank: false };
  }
  return { at: run.length, blank: true };
}
