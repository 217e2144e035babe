/**
 * Retention: holding one reference object to its byte budget (SPEC §8.3, §8.4).
 *
 * Drops are oldest-first, so only the items that end up kept (and the first one that does not
 * fit) are ever sized exactly; every other item only has its raw UTF-8 length measured, for
 * `omittedBytes`. A raw length is a lower bound of the serialized length, which lets the walk stop
 * without serializing a huge item. Nothing re-serializes the whole object per drop.
 * @module
 */
import { fail } from './errors.js';
import type { ConversationItem } from './projection.js';
import {
  itemOverheadBytes,
  jsonStringBytes,
  jsonUnitBytes,
  referenceHeadBytes,
  type ReferenceHead,
} from './render.js';
import { codePointUnitsAt, codePointUnitsBefore, unitUtf8Bytes, utf8ByteLength } from './utf8.js';

/** The outcome of {@link retainConversation}. */
export interface Retention {
  /** Kept items in surface order; truncated ones carry the omission notice. */
  conversation: ConversationItem[];
  originalMessages: number;
  retainedMessages: number;
  omittedMessages: number;
  /** Raw UTF-8 bytes of dropped texts plus bytes removed by truncation. */
  omittedBytes: number;
  /** UTF-8 bytes of the tag-safe serialized reference object. */
  serializedBytes: number;
  /** How many items were sized exactly (serialized length); the others only by raw length. */
  exactlySized: number;
}

/** The notice that replaces the middle of a truncated text (SPEC §8.3 step 4). */
export function omissionNotice(omittedBytes: number): string {
  return `\n[… ${omittedBytes} UTF-8 bytes omitted …]\n`;
}

/** Serialized bytes of the notice without its digits. */
const NOTICE_FIXED_BYTES = jsonStringBytes(omissionNotice(0)) - 2 - 1;

function noticeBytes(omittedBytes: number): number {
  return NOTICE_FIXED_BYTES + String(omittedBytes).length;
}

/**
 * Holds `head` + `items` to `budget` UTF-8 bytes of tag-safe serialization (SPEC §8.3): keeps
 * everything if it fits; else drops the oldest items that are neither checkpoints nor the newest
 * item; else shortens kept texts by head/tail truncation, longest raw UTF-8 length first (ties:
 * oldest first), each as little as possible before moving to the next.
 *
 * Does not modify `items`. Cost is linear in the text of the items (plus sorting the kept ones).
 * @throws SessionReferenceError `SESSION_REFERENCE_BUDGET_EXCEEDED` when the object with an empty
 * conversation, or with every kept text down to its notice, exceeds `budget`.
 */
export function retainConversation(head: ReferenceHead, items: readonly ConversationItem[], budget: number): Retention {
  const headBytes = referenceHeadBytes(head);
  if (headBytes > budget) {
    throw fail(
      'SESSION_REFERENCE_BUDGET_EXCEEDED',
      `reference to session ${JSON.stringify(head.sessionId).slice(0, 80)} needs ${headBytes} bytes before any conversation; maxReferenceBytes is ${budget}`,
    );
  }
  const n = items.length;
  const mandatory = (i: number) => items[i]!.checkpoint === true || i === n - 1;
  // Raw and exact sizes of the items that may be kept (the mandatory ones, and the newest others
  // until one does not fit): few, so no array as long as the conversation.
  const rawOf = new Map<number, number>();
  const sizeOf = new Map<number, number>();

  let total = headBytes;
  let kept = 0;
  for (let i = 0; i < n; i++) {
    if (!mandatory(i)) continue;
    const size = itemBytes(items[i]!);
    sizeOf.set(i, size);
    rawOf.set(i, utf8ByteLength(items[i]!.text));
    total += size + (kept++ > 0 ? 1 : 0);
  }
  let firstKept = n - 1;
  for (let i = n - 2; i >= 0; i--) {
    if (mandatory(i)) continue;
    const raw = utf8ByteLength(items[i]!.text);
    rawOf.set(i, raw);
    if (total + itemOverheadBytes(items[i]!) + 2 + raw + 1 > budget) break;
    const size = itemBytes(items[i]!);
    sizeOf.set(i, size);
    if (total + size + 1 > budget) break;
    total += size + 1;
    kept++;
    firstKept = i;
  }

  const conversation: ConversationItem[] = [];
  const keptIndices: number[] = [];
  let omittedMessages = 0;
  let omittedBytes = 0;
  for (let i = 0; i < n; i++) {
    if (mandatory(i) || i >= firstKept) {
      keptIndices.push(i);
      conversation.push(items[i]!);
    } else {
      omittedMessages++;
      omittedBytes += rawOf.get(i) ?? utf8ByteLength(items[i]!.text);
    }
  }
  const exactlySized = sizeOf.size;

  if (total > budget) {
    const shortening = shortenKept(items, keptIndices, rawOf, sizeOf, total, budget);
    if (shortening.total > budget) {
      throw fail(
        'SESSION_REFERENCE_BUDGET_EXCEEDED',
        `reference to session ${JSON.stringify(head.sessionId).slice(0, 80)} needs at least ${shortening.total} bytes with every kept text truncated; maxReferenceBytes is ${budget}`,
      );
    }
    keptIndices.forEach((index, k) => {
      const text = shortening.texts.get(index);
      if (text !== undefined) conversation[k] = { ...items[index]!, text };
    });
    total = shortening.total;
    omittedBytes += shortening.omittedBytes;
  }

  return {
    conversation,
    originalMessages: n,
    retainedMessages: conversation.length,
    omittedMessages,
    omittedBytes,
    serializedBytes: total,
    exactlySized,
  };
}

function itemBytes(item: ConversationItem): number {
  return itemOverheadBytes(item) + jsonStringBytes(item.text);
}

interface Shortening {
  /** New texts by item index. */
  texts: Map<number, string>;
  total: number;
  omittedBytes: number;
}

/** SPEC §8.3 step 4 over the kept items, whose raw and exact sizes are in `rawOf` and `sizeOf`. */
function shortenKept(
  items: readonly ConversationItem[],
  keptIndices: readonly number[],
  rawOf: ReadonlyMap<number, number>,
  sizeOf: ReadonlyMap<number, number>,
  total: number,
  budget: number,
): Shortening {
  const rawBytes = (i: number) => rawOf.get(i)!;
  const sizes = (i: number) => sizeOf.get(i)!;
  const order = [...keptIndices].sort((a, b) => rawBytes(b) - rawBytes(a) || a - b);
  const texts = new Map<number, string>();
  let omittedBytes = 0;
  for (const index of order) {
    if (total <= budget) break;
    const item = items[index]!;
    const overhead = itemOverheadBytes(item);
    const others = total - sizes(index);
    const cut = shortenText(item.text, rawBytes(index), budget - others - overhead, sizes(index) - overhead);
    if (!cut) continue;
    texts.set(index, cut.text);
    total = others + overhead + cut.bytes;
    omittedBytes += cut.omittedBytes;
  }
  return { texts, total, omittedBytes };
}

interface Cut {
  text: string;
  /** Serialized bytes of the new text, quotes included. */
  bytes: number;
  omittedBytes: number;
}

/**
 * The head/tail truncation of `text` (raw length `raw`) with the largest k whose serialized text
 * fits in `available` bytes; the notice alone when none fits; `undefined` when even the notice
 * alone would not be smaller than the text (`currentBytes`, serialized).
 */
function shortenText(text: string, raw: number, available: number, currentBytes: number): Cut | undefined {
  const noticeOnly = 2 + noticeBytes(raw);
  if (noticeOnly >= currentBytes) return undefined;
  let head = { units: 0, raw: 0, json: 0 };
  let tail = { units: 0, raw: 0, json: 0 };
  let best = { head, tail };
  const size = () => 2 + head.json + tail.json + noticeBytes(raw - head.raw - tail.raw);
  if (size() <= available) {
    for (let k = 1; k < raw; k++) {
      head = grow(text, head, Math.ceil(k / 2), true);
      tail = grow(text, tail, Math.floor(k / 2), false);
      if (size() > available) break;
      best = { head, tail };
    }
  }
  const omittedBytes = raw - best.head.raw - best.tail.raw;
  return {
    text: text.slice(0, best.head.units) + omissionNotice(omittedBytes) + text.slice(text.length - best.tail.units),
    bytes: 2 + best.head.json + best.tail.json + noticeBytes(omittedBytes),
    omittedBytes,
  };
}

interface Side {
  /** UTF-16 code units taken. */
  units: number;
  /** Raw UTF-8 bytes taken. */
  raw: number;
  /** Serialized (tag-safe JSON) bytes taken. */
  json: number;
}

/** Extends a head (from the start) or tail (from the end) by whole code points up to `limit` raw bytes. */
function grow(text: string, side: Side, limit: number, fromStart: boolean): Side {
  let { units, raw, json } = side;
  for (;;) {
    const at = fromStart ? units : text.length - units;
    const width = fromStart ? codePointUnitsAt(text, at) : codePointUnitsBefore(text, at);
    const unit = text.charCodeAt(fromStart ? at : at - 1);
    const cpRaw = width === 2 ? 4 : unitUtf8Bytes(unit);
    if (raw + cpRaw > limit) return units === side.units ? side : { units, raw, json };
    units += width;
    raw += cpRaw;
    json += width === 2 ? 4 : jsonUnitBytes(unit);
  }
}
