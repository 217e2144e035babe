/**
 * Folding a session's events into its current surface (SPEC §8.2, first rule).
 * @module
 */
import type { SessionEvent } from './types.js';

/** Event types that carry a message and so sit on the surface even without a `surfaceOp` (SPEC §4.3). */
export const MESSAGE_BEARING_TYPES: ReadonlySet<string> = new Set([
  'user/message',
  'steering/message',
  'assistant/message',
  'tool/result',
]);

/**
 * The folded surface of `events`, in surface order (SPEC §8.2).
 *
 * Every event carrying `surfaceOp` takes part: `'append'` pushes it; `{ op: 'replace', start,
 * end }` removes the contiguous run of surface nodes from the node whose seq is `start` through
 * the node whose seq is `end` (surface positions, not a seq range) and puts the event in its
 * place. When an endpoint is not on the current surface — or `end` stands before `start` on it,
 * so the two do not delimit a run — nothing is removed and the event is appended. Any other
 * `surfaceOp` value counts as `'append'`. Message-bearing events (SPEC §4.3) without `surfaceOp`
 * count as `'append'`; other events are not on the surface. Entries that are not objects with a
 * string `type` are skipped. Folding a folded surface returns it unchanged. Linear in
 * `events.length` plus the number of removed nodes.
 */
export function foldSurface(events: readonly unknown[]): SessionEvent[] {
  // The surface is a linked list over slots: an appended event takes a new slot at the end, a
  // replacing event the slot of the first node it replaces. So slot order is surface order, and
  // comparing two slots compares their positions.
  const slots: SessionEvent[] = [];
  /** The slot after each slot on the surface; `slots.length` after the last one. */
  const next: number[] = [];
  /**
   * Slot of the current surface node with each numeric seq (the latest placed, for a repeated
   * seq); -1 once removed. A plain array: seqs are usually small increasing integers, and any
   * other number becomes a property key, kept distinct by `String(seq)` (-0 meets 0, as in a Map).
   */
  const slotOfSeq: number[] = [];
  const place = (slot: number, event: SessionEvent) => {
    slots[slot] = event;
    if (typeof event.seq === 'number') slotOfSeq[event.seq] = slot;
  };
  for (const value of events) {
    const event = value as SessionEvent;
    if (typeof value !== 'object' || value === null || typeof event.type !== 'string') continue;
    const op: unknown = event.surfaceOp;
    if (op === undefined && !MESSAGE_BEARING_TYPES.has(event.type)) continue;
    // `{ op: 'replace', start, end }` with numeric endpoints replaces; any other op appends.
    const { op: kind, start, end } = (op ?? 0) as Record<string, unknown>;
    const replace = kind === 'replace' && typeof start === 'number' && typeof end === 'number';
    const first = replace ? slotOfSeq[start] ?? -1 : -1;
    const last = replace ? slotOfSeq[end] ?? -1 : -1;
    if (first < 0 || last < first) {
      next.push(slots.length + 1);
      place(slots.length, event);
      continue;
    }
    for (let slot = first; slot !== next[last]; slot = next[slot]!) {
      const { seq } = slots[slot]!;
      if (typeof seq === 'number' && slotOfSeq[seq] === slot) slotOfSeq[seq] = -1;
    }
    next[first] = next[last]!;
    place(first, event);
  }
  const surface: SessionEvent[] = [];
  for (let slot = 0; slot < slots.length; slot = next[slot]!) surface.push(slots[slot]!);
  return surface;
}
