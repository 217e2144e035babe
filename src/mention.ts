/**
 * Mentions in prompt text: `@[label](dsh-session:…)` and bare `dsh-session:` URIs (SPEC §3).
 *
 * The scanner makes one left-to-right pass, linear for every input (SPEC §3.4): candidates are
 * found by native searches, and a failed `@[` skips every later `@[` that must fail the same way,
 * so each character is looked at a bounded number of times however many unterminated `@[`,
 * `](dsh-session:`, backslashes or schemes the text holds (see {@link scanSessionReferenceText}).
 * @module
 */
import { readCallerFields } from './caller-data.js';
import { check, fail, keptError, type SessionReferenceError } from './errors.js';
import { encodeSessionReferenceUri, notCanonical, SESSION_REFERENCE_SCHEME, tryDecodeSessionReferenceUri } from './uri.js';

/** A cited session as written in text: its id and the label shown for it. */
export interface SessionReference {
  sessionId: string;
  label: string;
}

/** Input of {@link formatSessionReferenceMention}. */
export interface SessionReferenceMentionInput {
  sessionId: string;
  /** Shown text; defaults to `sessionId`. */
  label?: string | undefined;
}

/** What every token of {@link scanSessionReferenceText} has (SPEC §3.6). */
interface SessionReferenceTokenBase {
  /** `mention` for `@[label](uri)`, `bare` for a bare `dsh-session:` URI. */
  kind: 'mention' | 'bare';
  /** UTF-16 offset of the first character of the match in the input. */
  start: number;
  /** UTF-16 offset just after the match in the input. */
  end: number;
}

/** A match that is a valid reference: its id and label, no `error`. */
export interface ValidSessionReferenceToken extends SessionReferenceTokenBase {
  /** The decoded id. */
  sessionId: string;
  /** The unescaped label (for a bare URI: the id). */
  label: string;
  error?: undefined;
}

/** A match whose URI does not decode: the `error`, and the label of an explicit mention. */
export interface MalformedSessionReferenceToken extends SessionReferenceTokenBase {
  sessionId?: undefined;
  /** The unescaped label of an explicit mention; absent for a bare URI. */
  label?: string | undefined;
  /**
   * Why this match is not a valid reference (`SESSION_REFERENCE_INVALID_REFERENCE`, naming the
   * URI). Kept, not thrown, so it is made without a stack trace (`stack` is absent): a paste of
   * many malformed URIs costs no stack per token.
   */
  error: SessionReferenceError;
}

/**
 * One match found by {@link scanSessionReferenceText} (SPEC §3.6), valid or malformed:
 * `token.error === undefined` (or `!token.error`) narrows it to a {@link ValidSessionReferenceToken}.
 */
export type SessionReferenceToken = ValidSessionReferenceToken | MalformedSessionReferenceToken;

/** Result of {@link scanSessionReferenceText}. */
export interface SessionReferenceScan {
  /** The readable text: valid matches replaced by `@label`, malformed ones left as written. */
  text: string;
  /** One token per match, in order of appearance. */
  tokens: SessionReferenceToken[];
}

/**
 * A reference found in prompt text with where its `@label` stands in the readable text: UTF-16
 * offsets, `end - start === 1 + label.length` (SPEC §9.4 `envelope.mentions`).
 */
export interface PlacedSessionReference extends SessionReference {
  start: number;
  end: number;
}

/** Result of {@link parseSessionReferenceText}. */
export interface ParsedSessionReferenceText {
  /** The readable text: every match replaced by `@label`. */
  text: string;
  /** The references in order of appearance, duplicates included. */
  references: SessionReference[];
}

const MENTION_MIDDLE = '](' + SESSION_REFERENCE_SCHEME;
const BACKSLASH = 0x5c;
/** Where a mention's payload stops: a `)` or a JavaScript `\s`. */
const PAYLOAD_STOP = /[)\s]/g;
/**
 * The start of a bare URI (SPEC §3.2 b): the scheme followed by a base64url character (the
 * payload is then the longest run of them), where the character before the scheme is not an ASCII
 * letter, digit, `+`, `-` or `.` (the fixed-width lookbehind looks 13 characters back, past the
 * scheme). Literal first, so the engine skips to candidates natively; no quantifier over the input.
 */
const BARE_URI = /dsh-session:(?=[A-Za-z0-9_-])(?<![A-Za-z0-9+.-][\s\S]{12})/g;
/** The end of a run of backslashes. */
const NOT_BACKSLASH = /[^\\]/g;
/** The end of a bare URI's payload: a character outside the base64url alphabet. */
const NOT_BASE64URL = /[^A-Za-z0-9_-]/g;

/**
 * Index of the first match of the global `pattern`, `length` characters long, in `text` at or
 * after `from`, or `text.length` when there is none (a native search).
 */
function find(pattern: RegExp, text: string, from: number, length = 1): number {
  pattern.lastIndex = from;
  return pattern.test(text) ? pattern.lastIndex - length : text.length;
}

/**
 * The label without its escapes: every `\` + character becomes the character (a label never ends
 * in an unpaired `\`). Built by concatenation, so a long label is not copied here (only where the
 * readable text is joined): a regular-expression replace is an order of magnitude slower on a long
 * label full of escapes.
 */
function unescapeLabel(label: string): string {
  let out = '';
  let from = 0;
  for (let slash = label.indexOf('\\'); slash >= 0; slash = label.indexOf('\\', slash + 2)) {
    out += label.slice(from, slash);
    from = slash + 1;
  }
  return out + label.slice(from);
}

/**
 * Formats a canonical mention `@[LABEL](URI)` (SPEC §3.1): LABEL is `label ?? sessionId` with
 * every `\`, `[` and `]` escaped by a backslash; URI is {@link encodeSessionReferenceUri}.
 * @example formatSessionReferenceMention({ sessionId: 'session-434', label: 'Schema [v2]' })
 * // '@[Schema \\[v2\\]](dsh-session:InNlc3Npb24tNDM0Ig)'
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_REFERENCE` when the input is not an
 * object or cannot be read (a throwing getter, a revoked proxy: the original error is the
 * `cause`), `sessionId` is not a string, or `label` is present and not a string.
 */
export function formatSessionReferenceMention(reference: SessionReferenceMentionInput): string {
  // Each field read once (SPEC §10.4).
  const { sessionId, label } = readCallerFields(reference, ['sessionId', 'label'], 'reference', 'INVALID_REFERENCE');
  check(
    typeof sessionId === 'string' && (label === undefined || typeof label === 'string'),
    'INVALID_REFERENCE',
    'a reference must be { sessionId: string, label?: string }',
    typeof reference === 'object' && reference !== null ? { sessionId, label } : reference,
  );
  return `@[${(label ?? sessionId).replace(/[\\[\]]/g, '\\$&')}](${encodeSessionReferenceUri(sessionId)})`;
}

/**
 * Replaces every mention and bare canonical URI in `text` by `@label` and returns the references
 * in order of appearance, duplicates included (SPEC §3.2, §3.3, §3.5): the scan of
 * {@link scanSessionReferenceText} that throws its first error.
 * @example parseSessionReferenceText('see @[Schema](dsh-session:InNlc3Npb24tNDM0Ig)')
 * // { text: 'see @Schema', references: [{ sessionId: 'session-434', label: 'Schema' }] }
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_REFERENCE` for the first explicit
 * mention whose URI does not decode (an empty payload included) or bare base64url-shaped
 * candidate that is not canonical; `SESSION_REFERENCE_INVALID_ARGUMENT` when `text` is not a string.
 */
export function parseSessionReferenceText(text: string): ParsedSessionReferenceText {
  const parsed = parsePlacedReferences(text);
  return { text: parsed.text, references: parsed.references.map(({ sessionId, label }) => ({ sessionId, label })) };
}

/**
 * {@link parseSessionReferenceText} that also says where each `@label` stands in the readable text
 * (SPEC §9.4): the positions are recorded while the readable text is built, in the same pass.
 * @throws SessionReferenceError as {@link parseSessionReferenceText}.
 */
export function parsePlacedReferences(text: string): { text: string; references: PlacedSessionReference[] } {
  const readableStarts: number[] = [];
  // Stops at the first malformed match: a text full of them costs one error, not one per match.
  const scanned = scan(text, true, readableStarts);
  // Every token is then valid and has its readable start.
  const references = (scanned.tokens as ValidSessionReferenceToken[]).map(({ sessionId, label }, i) => {
    const start = readableStarts[i]!;
    return { sessionId, label, start, end: start + 1 + label.length };
  });
  return { text: scanned.text, references };
}

/**
 * Scans prompt text for mentions and bare URIs without ever throwing on their content
 * (SPEC §3.2, §3.6): for live editors that highlight mentions and flag malformed ones.
 *
 * Offsets are UTF-16 code units into `text`. Linear in `text.length` (SPEC §3.4): one
 * left-to-right pass where candidates are found with native searches (`indexOf`, and regular
 * expressions with no nested or overlapping quantifiers), and a failed explicit mention skips every
 * later `@[` that must fail the same way, so each character is looked at a bounded number of times
 * whatever the input:
 *
 * - A `]` ends a label exactly when the maximal run of backslashes right before it has even
 *   length. A label starts right after `[`, so that run never crosses a label start, and whether a
 *   `]` ends a label does not depend on where the label started: every label starting at or
 *   before a terminating `]` ends at the first one.
 * - So when the label of the `@[` at `s` ends at `L` without `](dsh-session:` there, every `@[`
 *   before `L` fails the same way.
 * - When its payload runs into `P` (whitespace or the end, not `)`), every `@[` whose label ends at
 *   or before `P` fails too: its payload starts between the failed one's and `P` (or its
 *   `](dsh-session:` would cover `P`), so it runs into `P` as well. Those are the `@[` before the
 *   last terminating `]` at or before `P`.
 * - When no `)` follows its payload start, every later `@[` fails too (its payload starts later),
 *   so the payload is not walked at all: one native search for `)` decides it.
 * - Hence label scans never overlap and only move forward, and so do payload starts, so the next
 *   `]`, `\` and `)` found by one stay valid for the next; the next `@[` and bare URI are searched
 *   for again only once the scan has passed them.
 * @example scanSessionReferenceText('see dsh-session:InNlc3Npb24tNDM0Ig')
 * // { text: 'see @session-434', tokens: [{ kind: 'bare', start: 4, end: 34, sessionId: 'session-434', label: 'session-434' }] }
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` only when `text` is not a string.
 */
export function scanSessionReferenceText(text: string): SessionReferenceScan {
  return scan(text, false);
}

/**
 * Whether an explicit mention begun in `text` is still open at its end: a `@[` whose label, or
 * whose payload after `](dsh-session:`, runs on to the end of `text`. Whatever is appended would
 * be read into that mention (the editor's trigger rule, SPEC §15.1). One scan, linear.
 */
export function endsInOpenMention(text: string): boolean {
  const end = { open: false };
  scan(text, false, undefined, end);
  return end.open;
}

/**
 * The scan of {@link scanSessionReferenceText}; with `throwOnError`, the first malformed match
 * throws its error. `readableStarts`, when given, receives for each valid token the offset of its
 * `@label` in the readable text, in token order; `end.open` is set when a mention attempt ran to
 * the end of the text (see {@link endsInOpenMention}).
 */
function scan(text: string, throwOnError: boolean, readableStarts?: number[], end?: { open: boolean }): SessionReferenceScan {
  check(typeof text === 'string', 'INVALID_ARGUMENT', 'text must be a string', text);
  const n = text.length;
  const tokens: SessionReferenceToken[] = [];
  let readable = '';
  /** Start of the ordinary text not yet copied to `readable`. */
  let copied = 0;
  /** Every `@[` before this index is known to fail. */
  let mentionFrom = 0;
  /** Cached next `]` and `\` (`n`: none): label scans only move forward. */
  let nextClose = -1;
  let nextBackslash = -1;
  /** Cached next `)` (`n`: none): payload starts only move forward too. */
  let nextParen = -1;

  /** `text.indexOf(search, from)`, with `n` for none. */
  const indexOrEnd = (search: string, from: number): number => {
    const found = text.indexOf(search, from);
    return found < 0 ? n : found;
  };

  /**
   * Records the match `text[start, end)` whose URI is `uri`: a valid one is replaced by `@label`
   * in the readable text (a bare URI's label is its id).
   */
  const record = (kind: 'mention' | 'bare', start: number, end: number, uri: string, label?: string): void => {
    const sessionId = tryDecodeSessionReferenceUri(uri);
    if (sessionId === undefined) {
      if (throwOnError) throw fail('INVALID_REFERENCE', notCanonical(uri));
      // Kept, not thrown: no stack trace, so a paste of many malformed URIs stays cheap.
      const reason = keptError('INVALID_REFERENCE', notCanonical(uri));
      tokens.push(label === undefined ? { kind, start, end, error: reason } : { kind, start, end, label, error: reason });
      return;
    }
    const token = { kind, start, end, sessionId, label: label ?? sessionId };
    tokens.push(token);
    readable += text.slice(copied, start);
    readableStarts?.push(readable.length);
    readable += '@' + token.label;
    copied = end;
  };

  /**
   * Index of the `]` that ends a label starting at `from` (right after `@[`), or `n` when there is
   * none. A label is a run of escaped pairs (`\` + any character) and characters other than `\`
   * and `]`.
   */
  const findLabelEnd = (from: number): number => {
    for (let i = from; ; ) {
      if (nextClose < i) nextClose = indexOrEnd(']', i);
      // No `]` ahead: the label runs to the end, whatever the backslashes (so a long unterminated
      // `@[` costs one search, not a second one for `\` over the same text).
      if (nextClose === n) return n;
      // Searched for once a `]` is ahead; one found before stays valid while it is ahead too.
      if (nextBackslash < i) nextBackslash = indexOrEnd('\\', i);
      // The first `]` before any `\`.
      if (nextClose < nextBackslash) return nextClose;
      // A run of backslashes: pairs; an odd run escapes the character after it. A long run is
      // skipped by a native search.
      let runEnd = nextBackslash + 1;
      if (text.charCodeAt(runEnd) === BACKSLASH) runEnd = find(NOT_BACKSLASH, text, runEnd);
      i = runEnd + ((runEnd - nextBackslash) % 2);
    }
  };

  /**
   * Tries `@[LABEL](dsh-session:PAYLOAD)` at `start`; returns the end of the match, or `start + 1`
   * after moving `mentionFrom` past every `@[` that must fail the same way.
   */
  const matchMention = (start: number): number => {
    const labelEnd = findLabelEnd(start + 2);
    if (!text.startsWith(MENTION_MIDDLE, labelEnd)) {
      if (end && labelEnd === n) end.open = true;
      mentionFrom = labelEnd;
      return start + 1;
    }
    const payloadStart = labelEnd + MENTION_MIDDLE.length;
    if (nextParen < payloadStart) nextParen = indexOrEnd(')', payloadStart);
    // No `)` ahead: this attempt fails, and so does every later one, so the payload is not walked
    // for whitespace, unless the caller asks whether it runs to the end (`end`).
    if (nextParen === n && !end) {
      mentionFrom = n;
      return start + 1;
    }
    const payloadEnd = find(PAYLOAD_STOP, text, payloadStart);
    if (text[payloadEnd] !== ')') {
      if (end && payloadEnd === n) end.open = true;
      mentionFrom = lastLabelEndAtOrBefore(text, payloadEnd, labelEnd);
      return start + 1;
    }
    // The URI is the text between `](` and `)`.
    record('mention', start, payloadEnd + 1, text.slice(labelEnd + 2, payloadEnd), unescapeLabel(text.slice(start + 2, labelEnd)));
    return payloadEnd + 1;
  };

  // The next `@[` and the next bare URI at or after `i` (`n`: none left).
  let mention = indexOrEnd('@[', 0);
  let bare = findBare(text, 0);
  for (let i = 0; mention < n || bare < n; ) {
    if (mention < bare) {
      i = matchMention(mention);
    } else {
      i = find(NOT_BASE64URL, text, bare + SESSION_REFERENCE_SCHEME.length);
      record('bare', bare, i, text.slice(bare, i));
    }
    if (mention < i) mention = indexOrEnd('@[', Math.max(i, mentionFrom));
    if (bare < i) bare = findBare(text, i);
  }
  // With no match, `readable` is '' and `text.slice(0)` is `text` itself (no copy).
  return { text: readable + text.slice(copied), tokens };
}

/**
 * Index of the first bare URI start ({@link BARE_URI}) in `text` at or after `from`, or
 * `text.length`. `indexOf` finds the first scheme natively several times faster than the regular
 * expression's own search, and a text without one (a long unterminated `@[`, prose) is not
 * searched again by the expression; from the first scheme on, the expression checks the
 * characters around each scheme and skips to the next.
 */
function findBare(text: string, from: number): number {
  const scheme = text.indexOf(SESSION_REFERENCE_SCHEME, from);
  return scheme < 0 ? text.length : find(BARE_URI, text, scheme, SESSION_REFERENCE_SCHEME.length);
}

/**
 * The last `]` at or before `limit` that ends a label (an even run of backslashes before it);
 * `floor`, a known label end, bounds the search.
 */
function lastLabelEndAtOrBefore(text: string, limit: number, floor: number): number {
  for (let close = text.lastIndexOf(']', limit); close > floor; ) {
    let run = close;
    while (text.charCodeAt(run - 1) === BACKSLASH) run--;
    if ((close - run) % 2 === 0) return close;
    close = text.lastIndexOf(']', run - 1);
  }
  return floor;
}
