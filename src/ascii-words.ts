/**
 * Word segments of ASCII text by the rules of UAX #29 (Unicode word boundaries), the same in every
 * runtime (SPEC §16.3, §15.10).
 *
 * Runtimes do not agree on ASCII: Node's and Bun's `Intl.Segmenter` follow UAX #29 and keep
 * `seeds.py`, `e.g` and `a:b` as one word each (a full stop, colon or apostrophe between letters
 * joins them, WB6–WB7), while Chromium's ICU, and with it Deno, workerd and Chromium browsers,
 * splits them at the full stop and the colon. An index built at the edge and one built by the CLI
 * would then hold other words for the same log. ASCII text is therefore segmented here, by the
 * standard's rules, and only text holding other characters is left to the runtime's segmenter
 * (where the runtimes agree: test/ascii-words.node.test.ts checks these rules against Node's).
 * @module
 */

/**
 * ASCII characters that are a word boundary on both sides under every rule of UAX #29 (word
 * break property Other, or CR/LF/Newline, or a space): everything but letters, digits, `_`, the
 * Mid* punctuation `. ' : , ;` and `"` (which joins Hebrew letters). Text cut at them segments as
 * its pieces do, so a piece of ASCII alone is segmented by the rules here, and the runtime's
 * segmenter is handed only pieces that hold other characters.
 */
export const BOUNDARY = /[\0-\x21\x23-\x26\x28-\x2b\x2d\x2f\x3c-\x40\x5b-\x5e\x60\x7b-\x7f]/;

/** Word-break class of each ASCII code unit, for the rules below: 0 is every class no rule joins. */
const OTHER = 0;
/** `A-Z a-z` (ALetter). */
const LETTER = 1;
/** `0-9` (Numeric). */
const DIGIT = 2;
/** `_` (ExtendNumLet). */
const EXTEND = 3;
/** `:` (MidLetter): joins letters. */
const MID_LETTER = 4;
/** `.` (MidNumLet) and `'` (Single_Quote): join letters, and digits. */
const MID_BOTH = 5;
/** `,` `;` (MidNum): join digits. */
const MID_NUM = 6;
/** U+0020 (WSegSpace): runs of it are one segment (WB3d). */
const SPACE = 7;
/** CR, kept with a following LF (WB3). */
const CR = 8;
/** LF. */
const LF = 9;

const CLASS = Uint8Array.from({ length: 128 }, (_, code) => {
  const char = String.fromCharCode(code);
  if (/[A-Za-z]/.test(char)) return LETTER;
  if (/[0-9]/.test(char)) return DIGIT;
  if (char === '_') return EXTEND;
  if (char === ':') return MID_LETTER;
  if (char === '.' || char === "'") return MID_BOTH;
  if (char === ' ') return SPACE;
  if (char === '\r') return CR;
  if (char === '\n') return LF;
  return char === ',' || char === ';' ? MID_NUM : OTHER;
});

/** Whether a middle character of class `mid` joins two neighbours of class `side` (WB6–WB7, WB11–WB12). */
function joins(side: number, mid: number): boolean {
  if (side === LETTER) return mid === MID_LETTER || mid === MID_BOTH;
  return side === DIGIT && (mid === MID_NUM || mid === MID_BOTH);
}

/** Whether UAX #29 keeps code units `i - 1` and `i` of `text` in one segment (`start ≤ i - 1`, `i < end`). */
function keeps(text: string, start: number, end: number, i: number): boolean {
  const before = CLASS[text.charCodeAt(i - 1)]!;
  const after = CLASS[text.charCodeAt(i)]!;
  if ((before === SPACE && after === SPACE) || (before === CR && after === LF)) return true; // WB3d, WB3
  // WB5, WB8–WB10, WB13a–WB13b: letters, digits and `_` in any mix.
  if (before >= LETTER && before <= EXTEND && after >= LETTER && after <= EXTEND) return true;
  // WB6, WB12: a word character, then a middle character followed by the same kind again.
  if (i + 1 < end && joins(before, after) && CLASS[text.charCodeAt(i + 1)] === before) return true;
  // WB7, WB11: a middle character between two of the same kind.
  return i >= start + 2 && joins(after, before) && CLASS[text.charCodeAt(i - 2)] === after;
}

/**
 * Calls `visit(from, to, wordLike)` for each segment of `text[start, end)`, in order, where every
 * code unit there is ASCII (below U+0080): segments as UAX #29 cuts them (CR LF and runs of spaces
 * aside: every other character stands alone, as no rule joins it), `wordLike` as `Intl.Segmenter`
 * says (a segment holding a letter or digit, or at least two `_`).
 */
export function forEachAsciiSegment(text: string, start: number, end: number, visit: (from: number, to: number, wordLike: boolean) => void): void {
  let from = start;
  let word = false;
  for (let i = start; i < end; i++) {
    if (i > start && !keeps(text, start, end, i)) {
      visit(from, i, word || (i - from > 1 && CLASS[text.charCodeAt(from)] === EXTEND));
      from = i;
      word = false;
    }
    const kind = CLASS[text.charCodeAt(i)];
    if (kind === LETTER || kind === DIGIT) word = true;
  }
  if (end > from) visit(from, end, word || (end - from > 1 && CLASS[text.charCodeAt(from)] === EXTEND));
}

let segmenter: Intl.Segmenter | undefined;

/**
 * Calls `visit(from, to, wordLike)` for each word segment of `text`, in order: UAX #29 word
 * segmentation as `Intl.Segmenter` gives it (`wordLike` = its `isWordLike`), except that pieces of
 * ASCII text between {@link BOUNDARY} characters are segmented by {@link forEachAsciiSegment}, the
 * same in every runtime. Each boundary character is a segment of its own (a run of spaces is one
 * segment to `Intl.Segmenter`: no word starts inside it). Linear in `text`'s length.
 */
export function forEachSegment(text: string, visit: (from: number, to: number, wordLike: boolean) => void): void {
  for (let at = 0; at < text.length; ) {
    if (BOUNDARY.test(text[at]!)) {
      visit(at, at + 1, false);
      at++;
      continue;
    }
    const start = at;
    let ascii = true;
    for (; at < text.length; at++) {
      const code = text.charCodeAt(at);
      if (code >= 128) ascii = false;
      else if (BOUNDARY.test(text[at]!)) break;
    }
    if (ascii) forEachAsciiSegment(text, start, at, visit);
    else {
      segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
      for (const { index, segment, isWordLike } of segmenter.segment(text.slice(start, at))) visit(start + index, start + index + segment.length, isWordLike === true);
    }
  }
}
