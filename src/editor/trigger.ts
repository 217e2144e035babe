/**
 * Typing `@`: the trigger the caret is in, and inserting the chosen mention (SPEC §15.1, §15.2).
 * @module
 */
import { readCallerFields } from '../caller-data.js';
import { check } from '../errors.js';
import { endsInOpenMention, formatSessionReferenceMention, scanSessionReferenceText, type SessionReferenceMentionInput } from '../mention.js';
import { checkOffset, checkText } from './offsets.js';

/** An `@query` being typed (SPEC §15.1): `text.slice(start, end)` is `'@' + query`. */
export interface MentionTrigger {
  /** UTF-16 offset of the `@`. */
  start: number;
  /** UTF-16 offset of the caret. */
  end: number;
  /** What follows the `@` up to the caret: what `listCandidates` filters by. */
  query: string;
}

/** A range of text to replace by a mention: a {@link MentionTrigger}, or any `{ start, end }`. */
export interface MentionInsertionRange {
  start: number;
  end: number;
}

/** Result of {@link insertMention}. */
export interface MentionInsertion {
  /** The new text. */
  text: string;
  /** Where the caret goes: after the mention and its space. */
  caret: number;
}

/** Ends a query (looking back from the caret): whitespace, a bracket, or the `@` itself. */
const QUERY_STOP = /[\s()[\]{}@]/;
/** May stand right before a triggering `@`: whitespace, an opening bracket or a quote. */
const BEFORE_TRIGGER = /[\s([{"'`“‘«„]/;

/**
 * The `@` the caret is typing after (SPEC §15.1), or `undefined`: an `@` at the start of the text
 * or after whitespace, an opening bracket (`(`, `[`, `{`) or a quote (`"`, `'`, `` ` ``, `“`,
 * `‘`, `«`, `„`), followed by a run without whitespace, brackets or `@` up to `caret`.
 *
 * It never triggers where a mention put in its place would not stand as itself: on `@[` (a mention
 * typed by hand), inside a mention's label or URI, inside a label left open by an unterminated
 * `@[`, or when the query holds a bare URI or the start of one that runs on past the caret. So
 * {@link insertMention} on a trigger always yields exactly the inserted mention. Linear in the text
 * (one scan of the text before the `@`, one of the query's run, SPEC §15.5); never throws on a
 * string `text`.
 * @example
 * findMentionTrigger('ask @sch', 8);  // { start: 4, end: 8, query: 'sch' }
 * findMentionTrigger('mail a@b', 8);  // undefined: the `@` is inside a word
 * findMentionTrigger('see @[x', 7);   // undefined: a mention typed by hand
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `text` is not a string or
 * `caret` is not an integer from 0 to `text.length`.
 */
export function findMentionTrigger(text: string, caret: number): MentionTrigger | undefined {
  checkText(text);
  checkOffset(text, caret, 'caret');
  let at = caret - 1;
  while (at >= 0 && !QUERY_STOP.test(text[at]!)) at--;
  if (at < 0 || text[at] !== '@' || (at > 0 && !BEFORE_TRIGGER.test(text[at - 1]!)) || text[at + 1] === '[') return undefined;
  // A mention put in the `@`'s place must stand as itself: no mention begun before the `@` may
  // still be open there (its label or payload would take the new one in) ...
  if (endsInOpenMention(text.slice(0, at))) return undefined;
  // ... and the query holds no bare URI, nor the start of one that runs on past the caret
  // (`@dsh-session:|0`): that is text already written, not a query.
  let runEnd = caret;
  while (runEnd < text.length && !QUERY_STOP.test(text[runEnd]!)) runEnd++;
  if (scanSessionReferenceText(text.slice(at, runEnd)).tokens.some((token) => token.start < caret - at)) return undefined;
  return { start: at, end: caret, query: text.slice(at + 1, caret) };
}

/**
 * Replaces `range` (usually a {@link findMentionTrigger} result) by the canonical mention and one
 * space — none when whitespace follows — and puts the caret after them (SPEC §15.2).
 *
 * `mention` is a mention string (a candidate's `mention`, or any text that scans as exactly one
 * valid mention or bare URI: it is rewritten in canonical form, SPEC §3.1), or
 * `{ sessionId, label? }`. A range that cuts into an existing mention or bare URI is widened to
 * cover it, so a mention is never split. Linear in the text; never throws on a string `text`.
 * @example
 * const text = 'ask @sch';
 * insertMention(text, findMentionTrigger(text, 8)!, '@[Schema](dsh-session:InNlc3Npb24tNDM0Ig)');
 * // { text: 'ask @[Schema](dsh-session:InNlc3Npb24tNDM0Ig) ', caret: 46 }
 * insertMention('see', { start: 3, end: 3 }, { sessionId: 'session-434' });
 * // { text: 'see@[session-434](dsh-session:InNlc3Npb24tNDM0Ig) ', caret: 50 }
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `text` is not a string or
 * `range` is not `{ start, end }` with integers `0 <= start <= end <= text.length` (a throwing
 * getter or a revoked proxy: the original error is the `cause`); `SESSION_REFERENCE_INVALID_REFERENCE`
 * when `mention` is not one valid mention or a `{ sessionId: string, label?: string }`.
 */
export function insertMention(
  text: string,
  range: MentionInsertionRange,
  mention: string | SessionReferenceMentionInput,
): MentionInsertion {
  checkText(text);
  // Each field read once (SPEC §10.4).
  const { start, end } = readCallerFields(range, ['start', 'end'], 'range');
  let from = checkOffset(text, start, 'range.start');
  let to = checkOffset(text, end, 'range.end');
  check(from <= to, 'INVALID_ARGUMENT', 'range.start must not be after range.end', { start, end });
  const canonical = canonicalMention(mention);
  // Widen to whole tokens: a token the range cuts into (or an empty range stands inside) goes with it.
  for (const token of scanSessionReferenceText(text).tokens) {
    if (token.start < to && token.end > from) {
      from = Math.min(from, token.start);
      to = Math.max(to, token.end);
    }
  }
  const rest = text.slice(to);
  const inserted = /^\s/.test(rest) ? canonical : `${canonical} `;
  return { text: text.slice(0, from) + inserted + rest, caret: from + inserted.length };
}

/**
 * The canonical form of `mention` (SPEC §3.1).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_REFERENCE` when it is not one valid
 * mention or bare URI, or not a `{ sessionId, label? }`.
 */
function canonicalMention(mention: unknown): string {
  if (typeof mention !== 'string') return formatSessionReferenceMention(mention as SessionReferenceMentionInput);
  const { tokens } = scanSessionReferenceText(mention);
  const [token] = tokens;
  check(
    tokens.length === 1 && token?.start === 0 && token.end === mention.length && token.error === undefined,
    'INVALID_REFERENCE',
    'mention must be exactly one valid mention',
    mention,
  );
  return formatSessionReferenceMention(token);
}
