/**
 * Retention: holding one reference object to its byte budget (SPEC §8.3, §8.4).
 *
 * Drops are oldest-first, so only the items that end up kept (and the first one that does not
 * fit) are ever sized exactly; every other item only has its raw UTF-8 length measured, for
 * `omittedBytes`. A raw length is a lower bound of the serialized length, which lets the walk stop
 * without serializing a huge item. Nothing re-serializes the whole object per drop.
 * @module
 */
import { describeValue, fail } from './errors.js';
import type { ConversationItem } from './projection.js';
import { serializedItemBytes, serializeReference, tagSafeJson, type ReferenceHead } from './render.js';
import { utf8ByteLength } from './utf8.js';

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
}

/** The notice that replaces the middle of a truncated text (SPEC §8.3 step 4). */
export function omissionNotice(omittedBytes: number): string {
  return `\n[… ${omittedBytes} UTF-8 bytes omitted …]\n`;
}

/** Tag-safe JSON bytes of each ASCII character: 1, or an escape (`\"`, `\n`, `\u0001`, `\u003c`…). */
const ASCII_JSON_BYTES = Array.from({ length: 128 }, (_, unit) => tagSafeJson(String.fromCharCode(unit)).length - 2);

/**
 * Holds `head` + `items` to `budget` UTF-8 bytes of tag-safe serialization (SPEC §8.3): keeps
 * everything if it fits; else drops the oldest items that are neither checkpoints nor the newest
 * item; else shortens kept texts by head/tail truncation, longest raw UTF-8 length first (ties:
 * oldest first), each as little as possible before moving to the next.
 *
 * Does not modify `items`. Cost is linear in the text of the items (plus sorting the kept ones).
 * @param withheld Messages the store left out (`SessionSurface.withheld`, SPEC §11.2.2): older
 *   than every item but checkpoints, so they are dropped whatever the budget, and only add to
 *   `originalMessages`, `omittedMessages` and `omittedBytes`.
 * @throws SessionReferenceError `SESSION_REFERENCE_BUDGET_EXCEEDED` when the object with an empty
 * conversation, or with every kept text down to its notice, exceeds `budget`.
 */
export function retainConversation(head: ReferenceHead, items: readonly ConversationItem[], budget: number, withheld = { messages: 0, bytes: 0 }): Retention {
  const headBytes = utf8ByteLength(serializeReference(head, []));
  if (headBytes > budget) throw overBudget(head, `${headBytes} bytes before any conversation`, budget);
  const n = items.length;
  const mandatory = (i: number) => items[i]!.checkpoint || i === n - 1;
  // Raw and exact sizes by item index, set only for the items that may be kept (the mandatory
  // ones, and the newest others until one does not fit): few, so these arrays stay sparse.
  const raws: number[] = [];
  const sizes: number[] = [];
  /** What keeping item `i` adds: its serialized bytes and a comma. */
  const measure = (i: number) => {
    raws[i] ??= utf8ByteLength(items[i]!.text);
    return (sizes[i] = serializedItemBytes(items[i]!)) + 1;
  };

  // Every kept item adds a comma but the first (when there are items, the newest is kept).
  let total = n > 0 ? headBytes - 1 : headBytes;
  for (let i = 0; i < n; i++) if (mandatory(i)) total += measure(i);
  let firstKept = n - 1;
  for (let i = n - 2; i >= 0; i--) {
    if (mandatory(i)) continue;
    // The raw length is a lower bound: a huge item stops the walk unserialized.
    if (total + (raws[i] = utf8ByteLength(items[i]!.text)) > budget) break;
    const added = measure(i);
    if (total + added > budget) break;
    total += added;
    firstKept = i;
  }

  const kept: number[] = [];
  let omittedBytes = withheld.bytes;
  for (let i = 0; i < n; i++) {
    if (i >= firstKept || mandatory(i)) kept.push(i);
    else omittedBytes += raws[i] ?? utf8ByteLength(items[i]!.text);
  }

  // Step 4: shortened items, by index.
  const shortened: ConversationItem[] = [];
  if (total > budget) {
    for (const i of [...kept].sort((a, b) => raws[b]! - raws[a]! || a - b)) {
      if (total <= budget) break;
      const others = total - sizes[i]!;
      const cut = shortenItem(items[i]!, raws[i]!, budget - others);
      if (cut.bytes >= sizes[i]!) continue;
      shortened[i] = cut.item;
      total = others + cut.bytes;
      omittedBytes += cut.omittedBytes;
    }
    if (total > budget) throw overBudget(head, `at least ${total} bytes, every kept text truncated`, budget);
  }

  return {
    conversation: kept.map((i) => shortened[i] ?? items[i]!),
    originalMessages: n + withheld.messages,
    retainedMessages: kept.length,
    omittedMessages: n + withheld.messages - kept.length,
    omittedBytes,
    serializedBytes: total,
  };
}

function overBudget(head: ReferenceHead, needs: string, budget: number) {
  return fail(
    'BUDGET_EXCEEDED',
    `session ${describeValue(head.sessionId)} needs ${needs}; maxReferenceBytes is ${budget}`,
  );
}

interface Cut {
  item: ConversationItem;
  /** Serialized bytes of the shortened item. */
  bytes: number;
  omittedBytes: number;
}

/**
 * The head/tail truncation of `item`'s text (raw length `raw`) with the largest k for which the
 * serialized item fits in `available` bytes; the notice alone when none fits (SPEC §8.3 step 4).
 *
 * Raising k by one raises the byte limit of one end — the head's ⌈k/2⌉ for odd k, the tail's
 * ⌊k/2⌋ for even k, both equal to ⌈k/2⌉ then — so that end takes at most one more code point,
 * and the serialized size never decreases with k (a code point adds at least one byte, N loses at
 * most one digit): the walk stops at the first k that does not fit.
 */
function shortenItem(item: ConversationItem, raw: number, available: number): Cut {
  const { text } = item;
  const units = [0, 0]; // UTF-16 units kept at the end (0) and at the start (1)
  const bytes = [0, 0]; // their raw UTF-8 bytes
  let omittedBytes = raw;
  // Serialized bytes of the item with the notice alone, but for the notice's digits.
  let json = serializedItemBytes({ ...item, text: omissionNotice(0) }) - 1;
  for (let k = 1; k < raw; k++) {
    const end = k & 1;
    const at = end ? units[1]! : text.length - units[0]!;
    // The code point after the head or before the tail (a lone surrogate is one on its own).
    const before = text.codePointAt(at - 2) ?? 0;
    const point = end ? text.codePointAt(at)! : before > 0xffff ? before : text.charCodeAt(at - 1);
    const pointRaw = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
    if (bytes[end]! + pointRaw > Math.ceil(k / 2)) continue;
    const lone = point >= 0xd800 && point <= 0xdfff;
    const pointJson = point < 0x80 ? ASCII_JSON_BYTES[point]! : lone ? 6 : pointRaw;
    if (json + pointJson + String(omittedBytes - pointRaw).length > available) break;
    units[end]! += point > 0xffff ? 2 : 1;
    bytes[end]! += pointRaw;
    omittedBytes -= pointRaw;
    json += pointJson;
  }
  return {
    item: { ...item, text: text.slice(0, units[1]) + omissionNotice(omittedBytes) + text.slice(text.length - units[0]!) },
    bytes: json + String(omittedBytes).length,
    omittedBytes,
  };
}
