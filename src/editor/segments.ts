/**
 * The text as a renderer draws it: plain runs and chips (SPEC §15.6).
 * @module
 */
import { scanSessionReferenceText, type SessionReferenceToken } from '../mention.js';
import { checkText } from './offsets.js';

/** A run of ordinary text: `text` is the input's `slice(start, end)`, never empty (SPEC §15.6). */
export interface MentionTextSegment {
  kind: 'text';
  /** UTF-16 offset of its first character. */
  start: number;
  /** UTF-16 offset just after it. */
  end: number;
  text: string;
}

/**
 * One chip: a mention or bare URI of the text, the SPEC §3.6 `token` it scans as (`sessionId` and
 * `label` when valid, `error` when not), and `valid: token.error === undefined` (SPEC §15.6).
 */
export interface MentionChipSegment {
  kind: 'mention';
  /** UTF-16 offset of its first character. */
  start: number;
  /** UTF-16 offset just after it. */
  end: number;
  token: SessionReferenceToken;
  /** `false` for a malformed explicit mention or a bare URI that is not canonical. */
  valid: boolean;
}

/** A piece of {@link segmentMentions}' result. */
export type MentionSegment = MentionTextSegment | MentionChipSegment;

/**
 * The whole `text`, in order, as plain runs and chips (SPEC §15.6): one chip per §3.6 token
 * (explicit mentions and bare canonical-shaped URIs, malformed ones included with
 * `valid: false`), the text between them as plain runs. The segments cover every offset exactly
 * once and none is empty (the empty text has no segment): what a renderer draws. One scan, linear
 * in the text (SPEC §15.5).
 * @example
 * segmentMentions('ask @[Schema](dsh-session:InNlc3Npb24tNDM0Ig) now');
 * // [{ kind: 'text', start: 0, end: 4, text: 'ask ' },
 * //  { kind: 'mention', start: 4, end: 45, valid: true,
 * //    token: { kind: 'mention', start: 4, end: 45, sessionId: 'session-434', label: 'Schema' } },
 * //  { kind: 'text', start: 45, end: 49, text: ' now' }]
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` only when `text` is not a string.
 */
export function segmentMentions(text: string): MentionSegment[] {
  checkText(text);
  return segmentsAround(text, scanSessionReferenceText(text).tokens);
}

/**
 * `text` cut at `chips` (tokens in order, not overlapping, each inside the text): plain runs
 * between them, no empty run. Also used for a replay's display text (SPEC §15.4).
 */
export function segmentsAround(text: string, chips: readonly SessionReferenceToken[]): MentionSegment[] {
  const segments: MentionSegment[] = [];
  let at = 0;
  for (const token of chips) {
    if (token.start > at) segments.push({ kind: 'text', start: at, end: token.start, text: text.slice(at, token.start) });
    segments.push({ kind: 'mention', start: token.start, end: token.end, token, valid: token.error === undefined });
    at = token.end;
  }
  if (text.length > at) segments.push({ kind: 'text', start: at, end: text.length, text: text.slice(at) });
  return segments;
}
