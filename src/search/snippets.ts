/**
 * Snippets of a search hit (SPEC §16.2): up to three passages around matched words, cleaned as
 * labels are (§6.6), with the UTF-16 ranges of the matched words.
 * @module
 */
import { engineRoot as root } from './root.js';
import { forEachWord } from './words.js';

/** Longest snippet text, in code points, the `…` of its cuts included (SPEC §16.2). */
export const MAX_SNIPPET_CODE_POINTS = 240;

/** At most this many snippets per hit (SPEC §16.2). */
export const MAX_SNIPPETS = 3;

/** Code points of text kept before the first matched word of a snippet. */
const LEAD = 60;

/** One snippet of a hit (SPEC §16.2). */
export interface SessionSearchSnippet {
  role: 'user' | 'assistant' | 'title';
  /** Only for hosts whose items carry a seq; the module's projection does not. */
  seq?: number;
  /** At most 240 code points, one line, no Cc or Cf characters (SPEC §6.6); untrusted: render as text. */
  text: string;
  /** `[start, end)` UTF-16 offsets into `text`, one per matched word, covering the whole word, in order. */
  highlights: Array<[number, number]>;
}

/** The words of `text` that `matches` accepts, as `[start, end)` ranges in order. */
export function matchedWords(text: string, matches: (folded: string) => boolean): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  forEachWord(text, (start, end, folded) => {
    if (matches(folded)) ranges.push([start, end]);
  });
  return ranges;
}

/**
 * The snippet of `text` around its matched words `ranges` (non-empty, in order): from a little
 * before the first one, cleaned piece by piece (so each highlight still covers its word), cut to
 * {@link MAX_SNIPPET_CODE_POINTS} code points with `…` where text was left out.
 */
export function snippetOf(role: SessionSearchSnippet['role'], text: string, ranges: ReadonlyArray<readonly [number, number]>): SessionSearchSnippet {
  const from = startBefore(text, ranges[0]![0]);
  const out = new SnippetText(from > 0);
  let at = from;
  for (const [start, end] of ranges) {
    if (!out.add(text.slice(at, start))) break;
    if (!out.add(text.slice(start, end), true)) break;
    at = end;
  }
  if (!out.full) out.add(text.slice(at, at + MAX_SNIPPET_CODE_POINTS * 2));
  return { role, ...out.finish(at + MAX_SNIPPET_CODE_POINTS * 2 < text.length) };
}

/** An offset about {@link LEAD} code points before `offset`, at a word break when one is near. */
function startBefore(text: string, offset: number): number {
  let start = offset;
  for (let count = 0; start > 0 && count < LEAD; count++) start -= /[\udc00-\udfff]/.test(text[start - 1]!) && start > 1 ? 2 : 1;
  if (start === 0) return 0;
  const space = text.indexOf(' ', start);
  return space !== -1 && space < offset ? space + 1 : start;
}

/** A snippet's text built piece by piece, cleaned, within the code point limit. */
class SnippetText {
  private text: string;
  private points: number;
  readonly highlights: Array<[number, number]> = [];
  full = false;

  constructor(cutBefore: boolean) {
    this.text = cutBefore ? '…' : '';
    this.points = cutBefore ? 1 : 0;
  }

  /** Appends `raw` cleaned (a highlighted word whole or not at all); false once the limit is reached. */
  add(raw: string, highlight = false): boolean {
    let piece = root.collapseUntrustedText(raw);
    // One space where two cleaned pieces meet with a space each; none at the start.
    if (piece.startsWith(' ') && (this.text === '' || this.text.endsWith(' '))) piece = piece.slice(1);
    const room = MAX_SNIPPET_CODE_POINTS - 1 - this.points; // one left for a closing `…`
    const points = countCodePoints(piece, room + 1);
    if (points > room) {
      if (!highlight) this.append(takeCodePoints(piece, room));
      this.full = true;
      return false;
    }
    if (highlight && piece !== '') this.highlights.push([this.text.length, this.text.length + piece.length]);
    this.append(piece);
    return true;
  }

  private append(piece: string): void {
    this.text += piece;
    this.points += countCodePoints(piece, Infinity);
  }

  finish(moreAfter: boolean): Pick<SessionSearchSnippet, 'text' | 'highlights'> {
    let text = this.text.trimEnd();
    if (this.full || moreAfter) text += '…';
    return { text, highlights: this.highlights.filter(([, end]) => end <= text.length) };
  }
}

/** Code points of `text`, counting stops past `cap`. A lone surrogate counts as one. */
function countCodePoints(text: string, cap: number): number {
  let count = 0;
  for (const _ of text) if (++count > cap) break;
  return count;
}

/** The first `count` code points of `text`. */
function takeCodePoints(text: string, count: number): string {
  let end = 0;
  for (const char of text) {
    if (count-- <= 0) break;
    end += char.length;
  }
  return text.slice(0, end);
}
