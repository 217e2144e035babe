/**
 * Mentions in prompt text: `@[label](dsh-session:…)` and bare `dsh-session:` URIs (SPEC §3).
 *
 * The scanner makes one left-to-right pass. Two caches keep it linear for every input
 * (SPEC §3.4): label ends and payload ends only move forward, so each character is looked at a
 * bounded number of times however many unterminated `@[` or `](dsh-session:` the text holds.
 * @module
 */
import { isBase64urlCode } from './base64url.js';
import { describeValue, fail, type SessionReferenceError } from './errors.js';
import { encodeSessionReferenceUri, SESSION_REFERENCE_SCHEME, tryDecodeSessionReferenceUri } from './uri.js';

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
const CLOSE_BRACKET = 0x5d;
const CLOSE_PAREN = 0x29;
/** First character at or after `lastIndex` that ends a payload: `)` or JavaScript `\s`. */
const PAYLOAD_STOP = /[)\s]/g;

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

function unescapeLabel(label: string): string {
  return label.replace(/\\([\s\S])/g, '$1');
}

/** True for a character that glues onto a following scheme: ASCII letter or digit, `+`, `-`, `.`. */
function gluesToScheme(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    code === 0x2b ||
    code === 0x2d ||
    code === 0x2e
  );
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
  return new Scanner(text, false).run();
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
  const scan = new Scanner(text, true).run();
  const references = scan.tokens.map((token) => ({ sessionId: token.sessionId!, label: token.label! }));
  return { text: scan.text, references };
}

class Scanner {
  private readonly pieces: string[] = [];
  private readonly tokens: SessionReferenceToken[] = [];
  /** Start of the ordinary text not yet copied to `pieces`. */
  private copied = 0;
  /** The last label scan: every `@[` whose label starts at or before `labelEnd` ends there. */
  private labelEnd = -1;
  /** The last payload scan: every payload starting at or before `payloadEnd` ends there. */
  private payloadEnd = -1;

  /** With `throwOnError`, the first malformed match throws instead of becoming a token. */
  constructor(
    private readonly text: string,
    private readonly throwOnError: boolean,
  ) {}

  run(): SessionReferenceScan {
    const { text } = this;
    let nextMention = text.indexOf(MENTION_OPEN);
    let nextScheme = text.indexOf(SESSION_REFERENCE_SCHEME);
    let i = 0;
    while (nextMention >= 0 || nextScheme >= 0) {
      if (nextMention >= 0 && (nextScheme < 0 || nextMention < nextScheme)) {
        i = nextMention;
        const end = this.matchMention(i);
        i = end ?? i + 1;
      } else {
        i = nextScheme;
        const end = this.matchBare(i);
        i = end ?? i + 1;
      }
      if (nextMention >= 0 && nextMention < i) nextMention = text.indexOf(MENTION_OPEN, i);
      if (nextScheme >= 0 && nextScheme < i) nextScheme = text.indexOf(SESSION_REFERENCE_SCHEME, i);
    }
    if (this.copied === 0) return { text, tokens: this.tokens };
    this.pieces.push(text.slice(this.copied));
    return { text: this.pieces.join(''), tokens: this.tokens };
  }

  /** Tries `@[LABEL](dsh-session:PAYLOAD)` at `start`; returns the end of the match or undefined. */
  private matchMention(start: number): number | undefined {
    const { text } = this;
    const labelStart = start + MENTION_OPEN.length;
    const labelEnd = this.findLabelEnd(labelStart);
    if (labelEnd >= text.length || !text.startsWith(MENTION_MIDDLE, labelEnd)) return undefined;
    const payloadStart = labelEnd + MENTION_MIDDLE.length;
    const payloadEnd = this.findPayloadEnd(payloadStart);
    if (text.charCodeAt(payloadEnd) !== CLOSE_PAREN) return undefined;
    const end = payloadEnd + 1;
    const label = unescapeLabel(text.slice(labelStart, labelEnd));
    const uri = SESSION_REFERENCE_SCHEME + text.slice(payloadStart, payloadEnd);
    this.emit({ kind: 'mention', start, end, label }, uri, label);
    return end;
  }

  /** Tries a bare URI at `start` (where the scheme is); returns the end of the match or undefined. */
  private matchBare(start: number): number | undefined {
    const { text } = this;
    if (start > 0 && gluesToScheme(text.charCodeAt(start - 1))) return undefined;
    const payloadStart = start + SESSION_REFERENCE_SCHEME.length;
    let end = payloadStart;
    while (end < text.length && isBase64urlCode(text.charCodeAt(end))) end++;
    if (end === payloadStart) return undefined;
    this.emit({ kind: 'bare', start, end }, text.slice(start, end));
    return end;
  }

  /** Records a match: a valid one is replaced by `@label` in the readable text. */
  private emit(token: SessionReferenceToken, uri: string, label?: string): void {
    const sessionId = tryDecodeSessionReferenceUri(uri);
    if (sessionId === undefined) {
      token.error = fail('SESSION_REFERENCE_INVALID_REFERENCE', `not a canonical dsh-session URI: ${describeValue(uri)}`);
      if (this.throwOnError) throw token.error;
      this.tokens.push(token);
      return;
    }
    token.sessionId = sessionId;
    token.label = label ?? sessionId;
    this.tokens.push(token);
    this.pieces.push(this.text.slice(this.copied, token.start), '@', token.label);
    this.copied = token.end;
  }

  /**
   * Index of the `]` that ends a label starting at `from`, or `text.length` when there is none.
   * A label is a run of escaped pairs (`\` + any character) and characters other than `\` and `]`.
   * Labels start right after `@[`, which the previous scan stepped on as plain characters, so a
   * start inside the previous scan shares its end.
   */
  private findLabelEnd(from: number): number {
    if (from <= this.labelEnd) return this.labelEnd;
    const { text } = this;
    let i = from;
    while (i < text.length) {
      const code = text.charCodeAt(i);
      if (code === CLOSE_BRACKET) break;
      if (code === BACKSLASH) {
        if (i + 1 >= text.length) {
          i = text.length;
          break;
        }
        i += 2;
      } else {
        i++;
      }
    }
    this.labelEnd = Math.min(i, text.length);
    return this.labelEnd;
  }

  /** Index of the first `)` or whitespace at or after `from`, or `text.length`. */
  private findPayloadEnd(from: number): number {
    if (from <= this.payloadEnd) return this.payloadEnd;
    PAYLOAD_STOP.lastIndex = from;
    const stop = PAYLOAD_STOP.exec(this.text);
    this.payloadEnd = stop ? stop.index : this.text.length;
    return this.payloadEnd;
  }
}
