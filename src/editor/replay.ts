/**
 * Replaying a sent message as a chat UI shows it: what the person typed, where the chips stand,
 * and one compact summary per cited session (SPEC §15.4).
 * @module
 */
import { checkEnvelopeMentions } from '../envelope.js';
import type { ContentBlock, PromptEnvelopeMention, SessionReferenceMetadataEntry } from '../types.js';

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
 * The result is a copy (the envelope or source is read with `structuredClone`, after a walk that
 * refuses arrays with holes); every row and position is checked, so a UI can render it as is.
 * Linear in the size of the message.
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
    const { envelope, source } = message as Data;
    return envelope !== undefined ? describeEnvelope(plainCopy(envelope)) : describeRecall(plainCopy(source));
  } catch {
    return undefined;
  }
}

/**
 * A copy of `value` as plain data (`structuredClone`: getters are read once, a proxy or a function
 * throws), or `undefined` when an array inside it has holes. Holes are refused first because
 * cloning a sparse array can cost its length rather than what it holds (JavaScriptCore takes
 * seconds for `length` 2³²−1), and a message never has them (JSON cannot write them).
 */
function plainCopy(value: unknown): unknown {
  return hasNoHoles(value, new Set()) ? structuredClone(value) : undefined;
}

/** Every array reachable from `value` through own enumerable keys is dense; binary data is not walked. */
function hasNoHoles(value: unknown, seen: Set<object>): boolean {
  if (!isData(value) || seen.has(value) || ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return true;
  seen.add(value);
  const keys = Object.keys(value);
  return (!Array.isArray(value) || keys.length === value.length) && keys.every((key) => hasNoHoles(value[key], seen));
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
  if (envelope.mentions === undefined) return { display, references };
  // Throws (then `undefined`) on a position that is not an `@label` of a cited session in display.
  const mentions = checkEnvelopeMentions(envelope.mentions, display, new Set(references.map((r) => r.sessionId)));
  return { display, mentions, references };
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
  // A hole ends the loop at once, so a sparse array costs what it holds.
  for (let i = 0; i < rows.length; i++) {
    const row = i in rows ? readRow(rows[i]) : undefined;
    if (row === undefined) return undefined;
    out.push(row);
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
