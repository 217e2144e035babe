/**
 * Typing `@`: the trigger the caret is in, and inserting the chosen mention (SPEC §15.1, §15.2).
 * @module
 */
import { readCallerFields } from '../caller-data.js';
import { check } from '../errors.js';
import { endsInOpenMention, formatSessionReferenceMention, scanSessionReferenceText, type SessionReferenceMentionInput } from '../mention.js';
import { checkText, readOffset } from './offsets.js';

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

/** Options of {@link findMentionTrigger}. */
export interface MentionTriggerOptions {
  /**
   * Let the query hold spaces (SPEC §15.10, for `candidateMatch: 'words'`): it then runs over
   * whitespace other than line breaks (`\n`, `\r`, U+2028, U+2029) and ends at a line break, a
   * second `@` or a bracket; it never starts with whitespace. Default `false`: the query is one
   * run without whitespace (SPEC §15.1).
   */
  allowSpaces?: boolean | undefined;
}

/** Ends a query (looking back from the caret): whitespace, a bracket, or the `@` itself. */
const QUERY_STOP = /[\s()[\]{}@]/;
/** Ends a query that may hold spaces (SPEC §15.10): a line break, a bracket, or the `@` itself. */
const SPACED_QUERY_STOP = /[\n\r\u2028\u2029()[\]{}@]/;
/** May stand right before a triggering `@`: whitespace, an opening bracket or a quote. */
const BEFORE_TRIGGER = /[\s([{"'`“‘«„]/;

/**
 * The `@` the caret is typing after (SPEC §15.1), or `undefined`: an `@` at the start of the text
 * or after whitespace, an opening bracket (`(`, `[`, `{`) or a quote (`"`, `'`, `` ` ``, `“`,
 * `‘`, `«`, `„`), followed by a run without whitespace, brackets or `@` up to `caret`. With
 * `options.allowSpaces` (SPEC §15.10) the run may hold whitespace other than line breaks after its
 * first character: `@ledger rec`. A `caret` inside a surrogate pair is read as the pair's
 * start (SPEC §15.5).
 *
 * It never triggers where a mention put in its place would not stand as itself: on `@[` (a mention
 * typed by hand), inside a mention's label or URI, inside a label left open by an unterminated
 * `@[`, or when the query holds a bare URI or the start of one that runs on past the caret. So
 * {@link insertMention} on a trigger always yields exactly the inserted mention. Linear in the text
 * (one scan of the text before the `@`, one of the query's run, SPEC §15.5); never throws on a
 * string `text`. The rule that ends a spaced query once a word left the menu empty needs the
 * menu's answers: {@link mentionQueryPassedEmpty} applies it.
 * @example
 * findMentionTrigger('ask @sch', 8);  // { start: 4, end: 8, query: 'sch' }
 * findMentionTrigger('mail a@b', 8);  // undefined: the `@` is inside a word
 * findMentionTrigger('see @[x', 7);   // undefined: a mention typed by hand
 * findMentionTrigger('@ledger rec', 11, { allowSpaces: true }); // { start: 0, end: 11, query: 'ledger rec' }
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `text` is not a string,
 * `caret` is not an integer from 0 to `text.length`, or `options.allowSpaces` is neither a boolean
 * nor `undefined`.
 */
export function findMentionTrigger(text: string, caret: number, options?: MentionTriggerOptions): MentionTrigger | undefined {
  checkText(text);
  caret = readOffset(text, caret, 'caret');
  const { allowSpaces } = readCallerFields(options, ['allowSpaces'], 'options');
  check(allowSpaces === undefined || typeof allowSpaces === 'boolean', 'INVALID_ARGUMENT', 'options.allowSpaces must be a boolean', allowSpaces);
  const stop = allowSpaces === true ? SPACED_QUERY_STOP : QUERY_STOP;
  let at = caret - 1;
  while (at >= 0 && !stop.test(text[at]!)) at--;
  if (at < 0 || text[at] !== '@' || (at > 0 && !BEFORE_TRIGGER.test(text[at - 1]!)) || text[at + 1] === '[') return undefined;
  // A spaced query starts with a word: `@ ` is an `@` standing alone.
  if (at + 1 < caret && /\s/.test(text[at + 1]!)) return undefined;
  // A mention put in the `@`'s place must stand as itself: no mention begun before the `@` may
  // still be open there (its label or payload would take the new one in) ...
  if (endsInOpenMention(text.slice(0, at))) return undefined;
  // ... and the query holds no bare URI, nor the start of one that runs on past the caret
  // (`@dsh-session:|0`): that is text already written, not a query. A URI holds no whitespace.
  let runEnd = caret;
  while (runEnd < text.length && !QUERY_STOP.test(text[runEnd]!)) runEnd++;
  if (scanSessionReferenceText(text.slice(at, runEnd)).tokens.some((token) => token.start < caret - at)) return undefined;
  return { start: at, end: caret, query: text.slice(at + 1, caret) };
}

/**
 * SPEC §15.10's end of a spaced query, which needs the menu's answers: `true` when `trigger` (a
 * {@link findMentionTrigger} result with `allowSpaces`) goes on past a space after a word whose
 * query left the menu empty — `empty` is an earlier trigger of the same `@` (same `start`) whose
 * candidates came back empty, and `trigger.query` is `empty.query` (blanks at its end aside)
 * followed by whitespace. The editor then treats the text as typed, not as a query: no menu. An
 * `empty` whose query has no word (`''`) ends nothing. Linear in the query.
 * @example
 * const empty = { start: 0, end: 7, query: 'ledgre' };
 * mentionQueryPassedEmpty({ start: 0, end: 8, query: 'ledgre ' }, empty);   // true
 * mentionQueryPassedEmpty({ start: 0, end: 10, query: 'ledgre re' }, empty); // true
 * mentionQueryPassedEmpty({ start: 0, end: 8, query: 'ledgrea' }, empty);   // false: no space yet
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when either argument has no
 * string `query` (a throwing getter: the original error is the `cause`).
 */
export function mentionQueryPassedEmpty(trigger: MentionTrigger, empty: MentionTrigger): boolean {
  const now = readTrigger(trigger, 'trigger');
  const before = readTrigger(empty, 'empty');
  const word = before.query.trimEnd();
  return now.start === before.start && word !== '' && now.query.startsWith(word) && /\s/.test(now.query.charAt(word.length));
}

/** A trigger's `start` and `query`, each read once. */
function readTrigger(trigger: unknown, name: string): { start: unknown; query: string } {
  const { start, query } = readCallerFields(trigger, ['start', 'query'], name);
  check(typeof query === 'string', 'INVALID_ARGUMENT', `${name}.query must be a string`, query);
  return { start, query };
}

/**
 * Replaces `range` (usually a {@link findMentionTrigger} result) by the canonical mention and one
 * space — none when whitespace follows — and puts the caret after them (SPEC §15.2).
 *
 * `mention` is a mention string (a candidate's `mention`, or any text that scans as exactly one
 * valid mention or bare URI: it is rewritten in canonical form, SPEC §3.1), or
 * `{ sessionId, label? }`. A range that cuts into an existing mention or bare URI is widened to
 * cover it, so a mention is never split; an offset inside a surrogate pair is read as the pair's
 * start (SPEC §15.5). Linear in the text; never throws on a string `text`.
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
  let from = readOffset(text, start, 'range.start');
  let to = readOffset(text, end, 'range.end');
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
