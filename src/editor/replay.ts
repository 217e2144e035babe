/**
 * Replaying a sent message as a chat UI shows it: what the person typed, where the chips stand,
 * and one compact summary per cited session (SPEC §15.4).
 * @module
 */
import { copyCallerData, readCallerFields } from '../caller-data.js';
import { checkEnvelopeMentions } from '../envelope.js';
import type { ContentBlock, PromptEnvelopeMention, SessionReferenceMetadataEntry } from '../types.js';
import { segmentsAround, type MentionSegment } from './segments.js';

/** Result of {@link describeReferencedMessage} (SPEC §15.4). */
export interface ReferencedMessageDescription {
  /**
   * What the person typed: the envelope's readable content (mentions as `@label`, no snapshot).
   * Absent for a dsh recall message, whose prompt is the direct message before it.
   */
  display?: ContentBlock[];
  /**
   * Where each mention stands in `display` (SPEC §9.4): draw a chip over
   * `display[block].text.slice(start, end)`. Absent for a recall message and for an envelope
   * written without positions.
   */
  mentions?: PromptEnvelopeMention[];
  /**
   * One entry per `display` block (absent with `display`): for a text block its SPEC §15.6
   * segments with the chips at the `mentions` positions — `@label` runs whose `token` is
   * `{ kind: 'mention', start, end, sessionId, label }` — so a replay draws each chip where it was
   * typed without scanning again (an envelope without positions gives plain runs only); for any
   * other block `undefined` (SPEC §15.4).
   */
  segments?: Array<MentionSegment[] | undefined>;
  /** One row per cited session, in first-mention order: id, label, captured seq and the §8.4 statistics. */
  references: SessionReferenceMetadataEntry[];
}

type Data = Record<string, unknown>;

/**
 * The person's text and a source summary of a message this module composed (SPEC §9.4: it
 * carries an `envelope` with a `session-reference` context) or of a dsh recall message (SPEC
 * §14.3: `source: { kind: 'session-reference', form: 'recall', version: 1, references }`); for
 * anything else — other messages, malformed shapes, non-objects, throwing getters, proxies —
 * `undefined` (SPEC §15.4). Never throws.
 *
 * The result is a copy: the envelope or source is read once into a private plain copy (SPEC
 * §10.4: framework state such as a Svelte `$state` message reads as the plain message it stands
 * for; a sparse array is the entries it holds); every row and position is checked, so a UI can
 * render it as is. Linear in the size of the message.
 * @example
 * ```ts
 * // The quickstart's session (README), cited as `Apply ${candidate.mention}`:
 * const composed = await refs.referenceUserMessage(agent, message);
 * describeReferencedMessage(composed);
 * // { display: [{ type: 'text', text: 'Apply @Schema migration' }],
 * //   mentions: [{ block: 0, start: 6, end: 23, sessionId: 'session-schema' }],
 * //   references: [{ sessionId: 'session-schema', label: 'Schema migration', capturedThroughSeq: 3,
 * //                  compacted: false, originalMessages: 2, retainedMessages: 2, omittedMessages: 0,
 * //                  omittedBytes: 0, truncated: false, serializedBytes: 228, budgetBytes: 65536 }] }
 * describeReferencedMessage({ role: 'user', content: [] }); // undefined
 * ```
 */
export function describeReferencedMessage(message: unknown): ReferencedMessageDescription | undefined {
  try {
    if (typeof message !== 'object' || message === null) return undefined;
    // The two fields read once, each into a private plain copy (SPEC §10.4).
    const { envelope, source } = readCallerFields(message, ['envelope', 'source'], 'message');
    return envelope !== undefined ? describeEnvelope(copyCallerData(envelope, 'message.envelope')) : describeRecall(copyCallerData(source, 'message.source'));
  } catch {
    return undefined;
  }
}

/** An envelope of SPEC §9.4 with a `session-reference` context, else `undefined`. */
function describeEnvelope(envelope: unknown): ReferencedMessageDescription | undefined {
  if (!isData(envelope) || envelope.version !== 1 || !Array.isArray(envelope.display) || !Array.isArray(envelope.contexts)) return undefined;
  const context = envelope.contexts.find(
    (c: unknown) => isData(c) && isData(c.source) && c.source.kind === 'plugin' && c.source.plugin === 'session-reference',
  ) as Data | undefined;
  const metadata = context?.metadata;
  if (!isData(metadata) || metadata.version !== 1) return undefined;
  const references = readRows(metadata.references);
  if (references === undefined) return undefined;
  const display = envelope.display as ContentBlock[];
  if (envelope.mentions === undefined) return { display, segments: displaySegments(display, []), references };
  // Throws (then `undefined`) on a position that is not an `@label` of a cited session in display.
  const mentions = checkEnvelopeMentions(envelope.mentions, display, new Set(references.map((r) => r.sessionId)));
  return { display, mentions, segments: displaySegments(display, mentions), references };
}

/**
 * The §15.6 segments of each text block of `display`, chips at `mentions` (checked: in order, not
 * overlapping, each an `@label` inside its block). One pass over the blocks and the positions.
 */
function displaySegments(display: ContentBlock[], mentions: PromptEnvelopeMention[]): Array<MentionSegment[] | undefined> {
  let next = 0;
  return display.map((block: unknown, index) => {
    if (!isData(block) || block.type !== 'text' || typeof block.text !== 'string') return undefined;
    const text = block.text;
    const chips = [];
    for (; next < mentions.length && mentions[next]!.block === index; next++) {
      const { start, end, sessionId } = mentions[next]!;
      chips.push({ kind: 'mention' as const, start, end, sessionId, label: text.slice(start + 1, end) });
    }
    return segmentsAround(text, chips);
  });
}

/** A dsh recall message's source (SPEC §14.3), else `undefined`. */
function describeRecall(source: unknown): ReferencedMessageDescription | undefined {
  if (!isData(source) || source.kind !== 'session-reference' || source.form !== 'recall' || source.version !== 1) return undefined;
  const references = readRows(source.references);
  return references === undefined ? undefined : { references };
}

/** Every row of a plain-data array, checked and copied in §8.4 key order; `undefined` if any is off. */
function readRows(rows: unknown): SessionReferenceMetadataEntry[] | undefined {
  if (!Array.isArray(rows)) return undefined;
  const out: SessionReferenceMetadataEntry[] = [];
  for (const row of rows) {
    const checked = readRow(row);
    if (checked === undefined) return undefined;
    out.push(checked);
  }
  return out;
}

/**
 * The fields of a row and what each must be: id, label, captured seq and the §8.4 statistics, in
 * metadata key order (SPEC §9.1).
 */
const ROW_FIELDS: ReadonlyArray<readonly [keyof SessionReferenceMetadataEntry, (value: unknown) => boolean]> = [
  ['sessionId', isString],
  ['label', isString],
  ['capturedThroughSeq', (value) => value === null || Number.isFinite(value)],
  ['compacted', isBoolean],
  ['originalMessages', isCount],
  ['retainedMessages', isCount],
  ['omittedMessages', isCount],
  ['omittedBytes', isCount],
  ['truncated', isBoolean],
  ['serializedBytes', isCount],
  ['budgetBytes', isCount],
];

/** One row, checked and copied with exactly the {@link ROW_FIELDS} (other keys, e.g. a recall's `inputIndex`, dropped). */
function readRow(row: unknown): SessionReferenceMetadataEntry | undefined {
  if (!isData(row)) return undefined;
  const copy: Data = {};
  for (const [key, ok] of ROW_FIELDS) {
    if (!ok(row[key])) return undefined;
    copy[key] = row[key];
  }
  return copy as unknown as SessionReferenceMetadataEntry;
}

function isData(value: unknown): value is Data {
  return typeof value === 'object' && value !== null;
}

function isString(value: unknown): boolean {
  return typeof value === 'string';
}

function isBoolean(value: unknown): boolean {
  return typeof value === 'boolean';
}

/** A count of §8.4: a non-negative safe integer. */
function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
