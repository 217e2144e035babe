/**
 * Mentions in prompt text: `@[label](dsh-session:…)` and bare `dsh-session:` URIs (SPEC §3).
 *
 * The scanner makes one left-to-right pass, linear for every input (SPEC §3.4): candidates are
 * found by native searches, and a failed `@[` skips every later `@[` that must fail the same way,
 * so each character is looked at a bounded number of times however many unterminated `@[`,
 * `](dsh-session:`, backslashes or schemes the text holds (see `Scanner`).
 * @module
 */
import { describeValue, fail, type SessionReferenceError } from './errors.js';
import { encodeSessionReferenceUri, SESSION_REFERENCE_SCHEME, tryDecodeSessionReferencePayload } from './uri.js';

/** A cited session as written in text: its id and the label shown for it. */
export interface SessionReference {
  sessionId: string;
  label: string;
}

/** Input of {@link formatSessionReferenceMention}. */
export interface SessionReferenceMentionInput {
  sessionId: string;
  /** Shown text; defaults to `sessionId`. */
  label?: string;
}

/** One match found by {@link scanSessionReferenceText} (SPEC §3.6). */
export interface SessionReferenceToken {
  /** `mention` for `@[label](uri)`, `bare` for a bare `dsh-session:` URI. */
  kind: 'mention' | 'bare';
  /** UTF-16 offset of the first character of the match in the input. */
  start: number;
  /** UTF-16 offset just after the match in the input. */
  end: number;
  /** The decoded id; absent when `error` is set. */
  sessionId?: string;
  /** The unescaped label (for a bare URI: the id); absent for a bare URI that failed. */
  label?: string;
  /** Why this match is not a valid reference (`SESSION_REFERENCE_INVALID_REFERENCE`). */
  error?: SessionReferenceError;
}

/** Result of {@link scanSessionReferenceText}. */
export interface SessionReferenceScan {
  /** The readable text: valid matches replaced by `@label`, malformed ones left as written. */
  text: string;
  /** One token per match, in order of appearance. */
  tokens: SessionReferenceToken[];
}

/** Result of {@link parseSessionReferenceText}. */
export interface ParsedSessionReferenceText {
  /** The readable text: every match replaced by `@label`. */
  text: string;
  /** The references in order of appearance, duplicates included. */
  references: SessionReference[];
}

const MENTION_OPEN = '@[';
const MENTION_MIDDLE = '](' + SESSION_REFERENCE_SCHEME;
const BACKSLASH = 0x5c;
const CLOSE_PAREN = 0x29;
/** Sets `lastIndex` just past the first `)` or JavaScript `\s` at or after `lastIndex`. */
const PAYLOAD_STOP = /[)\s]/g;
/** Sets `lastIndex` just past the first character other than `\` at or after `lastIndex`. */
const NOT_BACKSLASH = /[^\\]/g;
/**
 * The start of the next bare URI (SPEC §3.2 b): the scheme followed by a base64url character (the
 * payload is then the longest run of them), where the character before the scheme is not an ASCII
 * letter, digit, `+`, `-` or `.` (the fixed-width lookbehind looks 13 characters back, past the
 * scheme). Literal first, so the engine skips to candidates natively; no quantifier over the input.
 */
const BARE_URI = /dsh-session:(?=[A-Za-z0-9_-])(?<![A-Za-z0-9+.-][\s\S]{12})/g;
/** Sets `lastIndex` just past the first character outside the base64url alphabet. */
const NOT_BASE64URL = /[^A-Za-z0-9_-]/g;

/**
 * Formats a canonical mention `@[LABEL](URI)` (SPEC §3.1): LABEL is `label ?? sessionId` with
 * every `\`, `[` and `]` escaped by a backslash; URI is {@link encodeSessionReferenceUri}.
 * @example formatSessionReferenceMention({ sessionId: 'session-434', label: 'Schema [v2]' })
 * // '@[Schema \\[v2\\]](dsh-session:InNlc3Npb24tNDM0Ig)'
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_REFERENCE` when the input is not an
 * object, `sessionId` is not a string, or `label` is present and not a string.
 */
export function formatSessionReferenceMention(reference: SessionReferenceMentionInput): string {
  const { sessionId, label } = checkMentionInput(reference);
  return `@[${escapeLabel(label ?? sessionId)}](${encodeSessionReferenceUri(sessionId)})`;
}

function checkMentionInput(reference: unknown): SessionReferenceMentionInput {
  if (typeof reference !== 'object' || reference === null) {
    throw fail('SESSION_REFERENCE_INVALID_REFERENCE', `a reference must be an object, got ${describeValue(reference)}`);
  }
  const { sessionId, label } = reference as Record<string, unknown>;
  if (typeof sessionId !== 'string') {
    throw fail('SESSION_REFERENCE_INVALID_REFERENCE', `sessionId must be a string, got ${describeValue(sessionId)}`);
  }
  if (label !== undefined && typeof label !== 'string') {
    throw fail('SESSION_REFERENCE_INVALID_REFERENCE', `label must be a string, got ${describeValue(label)}`);
  }
  return { sessionId, label };
}

function escapeLabel(label: string): string {
  return label.replace(/[\\[\]]/g, '\\$&');
}

/**
 * The label without its escapes: every `\` + character becomes the character. Built by
 * concatenation, so a long label is not copied here (only where the readable text is joined).
 */
function unescapeLabel(label: string): string {
  let slash = label.indexOf('\\');
  if (slash < 0) return label;
  let out = '';
  let from = 0;
  while (slash >= 0 && slash + 1 < label.length) {
    out += label.slice(from, slash);
    from = slash + 1;
    slash = label.indexOf('\\', slash + 2);
  }
  return out + label.slice(from);
}

/**
 * Scans prompt text for mentions and bare URIs without ever throwing on their content
 * (SPEC §3.2, §3.6): for live editors that highlight mentions and flag malformed ones.
 *
 * Offsets are UTF-16 code units into `text`. Linear in `text.length` (SPEC §3.4).
 * @example scanSessionReferenceText('see dsh-session:InNlc3Npb24tNDM0Ig')
 * // { text: 'see @session-434', tokens: [{ kind: 'bare', start: 4, end: 34, sessionId: 'session-434', label: 'session-434' }] }
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` only when `text` is not a string.
 */
export function scanSessionReferenceText(text: string): SessionReferenceScan {
  if (typeof text !== 'string') {
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `text must be a string, got ${describeValue(text)}`);
  }
  const scanner = new Scanner(text, false);
  return { text: scanner.run(), tokens: scanner.tokens };
}

/**
 * Replaces every mention and bare canonical URI in `text` by `@label` and returns the references
 * in order of appearance, duplicates included (SPEC §3.2, §3.3, §3.5).
 * @example parseSessionReferenceText('see @[Schema](dsh-session:InNlc3Npb24tNDM0Ig)')
 * // { text: 'see @Schema', references: [{ sessionId: 'session-434', label: 'Schema' }] }
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_REFERENCE` for the first explicit
 * mention whose URI does not decode (an empty payload included) or bare base64url-shaped
 * candidate that is not canonical; `SESSION_REFERENCE_INVALID_ARGUMENT` when `text` is not a string.
 */
export function parseSessionReferenceText(text: string): ParsedSessionReferenceText {
  if (typeof text !== 'string') {
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `text must be a string, got ${describeValue(text)}`);
  }
  const scanner = new Scanner(text, true);
  return { text: scanner.run(), references: scanner.references };
}

/**
 * The single left-to-right pass (SPEC §3.2, §3.4).
 *
 * Candidates are found with native searches (`indexOf`, and regular expressions with no nested or
 * overlapping quantifiers), and a failed explicit mention skips every later `@[` that must fail
 * the same way, so each character is looked at a bounded number of times whatever the input:
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
 */
class Scanner {
  /** Scan mode: one token per match. */
  readonly tokens: SessionReferenceToken[] = [];
  /** Parse mode: the references (every match is valid, or the parse threw). */
  readonly references: SessionReference[] = [];
  private readonly pieces: string[] = [];
  /** Start of the ordinary text not yet copied to `pieces`. */
  private copied = 0;
  /** Every `@[` before this index is known to fail. */
  private mentionFrom = 0;
  /** Cached `indexOf(']')` and `indexOf('\\')` results: searches only move forward. */
  private nextClose = -1;
  private nextBackslash = -1;

  /** With `throwOnError` (parse mode), the first malformed match throws instead of becoming a token. */
  constructor(
    private readonly text: string,
    private readonly throwOnError: boolean,
  ) {}

  /** Runs the scan; returns the readable text. */
  run(): string {
    const { text } = this;
    let nextMention = text.indexOf(MENTION_OPEN);
    let bare = this.findBare(0);
    let i = 0;
    while (nextMention >= 0 || bare >= 0) {
      if (nextMention >= 0 && (bare < 0 || nextMention < bare)) {
        const end = this.matchMention(nextMention);
        i = end ?? nextMention + 1;
      } else {
        const payloadStart = bare + SESSION_REFERENCE_SCHEME.length;
        NOT_BASE64URL.lastIndex = payloadStart;
        i = NOT_BASE64URL.test(text) ? NOT_BASE64URL.lastIndex - 1 : text.length;
        this.emit('bare', bare, i, payloadStart, i, undefined);
      }
      if (nextMention >= 0 && nextMention < i) nextMention = text.indexOf(MENTION_OPEN, Math.max(i, this.mentionFrom));
      if (bare >= 0 && bare < i) bare = this.findBare(i);
    }
    if (this.copied === 0) return text;
    this.pieces.push(text.slice(this.copied));
    return this.pieces.join('');
  }

  /** Index of the first bare URI starting at or after `from`, or -1. */
  private findBare(from: number): number {
    BARE_URI.lastIndex = from;
    return BARE_URI.test(this.text) ? BARE_URI.lastIndex - SESSION_REFERENCE_SCHEME.length : -1;
  }

  /**
   * Tries `@[LABEL](dsh-session:PAYLOAD)` at `start`; returns the end of the match, or undefined
   * after moving `mentionFrom` past every `@[` that must fail the same way.
   */
  private matchMention(start: number): number | undefined {
    const { text } = this;
    const labelStart = start + MENTION_OPEN.length;
    const labelEnd = this.findLabelEnd(labelStart);
    if (labelEnd >= text.length || !text.startsWith(MENTION_MIDDLE, labelEnd)) {
      this.mentionFrom = labelEnd;
      return undefined;
    }
    const payloadStart = labelEnd + MENTION_MIDDLE.length;
    PAYLOAD_STOP.lastIndex = payloadStart;
    const payloadEnd = PAYLOAD_STOP.test(text) ? PAYLOAD_STOP.lastIndex - 1 : text.length;
    if (text.charCodeAt(payloadEnd) !== CLOSE_PAREN) {
      this.mentionFrom = this.lastLabelEndAtOrBefore(payloadEnd, labelEnd);
      return undefined;
    }
    const end = payloadEnd + 1;
    this.emit('mention', start, end, payloadStart, payloadEnd, unescapeLabel(text.slice(labelStart, labelEnd)));
    return end;
  }

  /**
   * Records the match `text[start, end)` whose URI payload is `text[payloadStart, payloadEnd)`:
   * a valid one is replaced by `@label` in the readable text (a bare URI's label is its id).
   */
  private emit(
    kind: 'mention' | 'bare',
    start: number,
    end: number,
    payloadStart: number,
    payloadEnd: number,
    label: string | undefined,
  ): void {
    const { text } = this;
    const sessionId = tryDecodeSessionReferencePayload(text, payloadStart, payloadEnd);
    if (sessionId === undefined) {
      const uri = SESSION_REFERENCE_SCHEME + text.slice(payloadStart, payloadEnd);
      const error = fail('SESSION_REFERENCE_INVALID_REFERENCE', `not a canonical dsh-session URI: ${describeValue(uri)}`);
      if (this.throwOnError) throw error;
      this.tokens.push(label === undefined ? { kind, start, end, error } : { kind, start, end, label, error });
      return;
    }
    const shown = label ?? sessionId;
    if (this.throwOnError) this.references.push({ sessionId, label: shown });
    else if (label === undefined) this.tokens.push({ kind, start, end, sessionId, label: shown });
    else this.tokens.push({ kind, start, end, label, sessionId });
    if (start > this.copied) this.pieces.push(text.slice(this.copied, start));
    this.pieces.push('@' + shown);
    this.copied = end;
  }

  /**
   * Index of the `]` that ends a label starting at `from` (right after `@[`), or `text.length`
   * when there is none. A label is a run of escaped pairs (`\` + any character) and characters
   * other than `\` and `]`. Label scans only move forward (every later `@[` starts past the last
   * label end), so the cached `]` and `\` positions stay valid.
   */
  private findLabelEnd(from: number): number {
    const { text } = this;
    const n = text.length;
    let i = from;
    for (;;) {
      if (this.nextClose < i) {
        this.nextClose = text.indexOf(']', i);
        if (this.nextClose < 0) this.nextClose = n;
      }
      // No `]` ahead: the label runs to the end, whatever the backslashes.
      if (this.nextClose >= n) return n;
      if (this.nextBackslash < i) {
        this.nextBackslash = text.indexOf('\\', i);
        if (this.nextBackslash < 0) this.nextBackslash = n;
      }
      const slash = this.nextBackslash;
      if (this.nextClose < slash || slash >= n) return this.nextClose;
      // A run of backslashes: pairs; an odd run escapes the character after it.
      let runEnd = slash + 1;
      if (runEnd < n && text.charCodeAt(runEnd) === BACKSLASH) {
        NOT_BACKSLASH.lastIndex = runEnd;
        runEnd = NOT_BACKSLASH.test(text) ? NOT_BACKSLASH.lastIndex - 1 : n;
      }
      i = (runEnd - slash) % 2 === 0 ? runEnd : runEnd + 1;
      if (i >= n) return n;
    }
  }

  /**
   * The last `]` at or before `limit` that ends a label (an even run of backslashes before it);
   * `floor`, a known label end, bounds the search.
   */
  private lastLabelEndAtOrBefore(limit: number, floor: number): number {
    const { text } = this;
    let r = text.lastIndexOf(']', limit);
    while (r > floor) {
      let run = r;
      while (text.charCodeAt(run - 1) === BACKSLASH) run--;
      if ((r - run) % 2 === 0) return r;
      r = text.lastIndexOf(']', run - 1);
    }
    return floor;
  }
}
