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
  // One pass reads what folding needs from each event into compact typed arrays (for a large
  // log, touching an event object costs more than anything done with it, and arrays of object
  // references scale worse than typed ones); the replay below reads only those.
  const n = events.length;
  const flags = new Uint8Array(n);
  const seqs = new Float64Array(n);
  /** `start, end` of each replace op, in event order. */
  const runs: number[] = [];
  /** The seqs replace ops name: only these are ever looked up, so only these are indexed. */
  const endpoints = new Set<number>();
  for (let i = 0; i < n; i++) {
    const value = events[i];
    const event = value as SessionEvent;
    if (typeof value !== 'object' || value === null || typeof event.type !== 'string') continue;
    const op: unknown = event.surfaceOp;
    if (op === undefined && !MESSAGE_BEARING_TYPES.has(event.type)) continue;
    const seq: unknown = event.seq;
    flags[i] = ON_SURFACE;
    if (typeof seq === 'number') {
      seqs[i] = seq;
      flags[i]! |= HAS_SEQ;
    }
    // `{ op: 'replace', start, end }` with numeric endpoints replaces; any other op appends.
    const { op: kind, start, end } = (op ?? 0) as Record<string, unknown>;
    if (kind === 'replace' && typeof start === 'number' && typeof end === 'number') {
      flags[i]! |= REPLACES;
      runs.push(start, end);
      endpoints.add(start).add(end);
    }
  }

  // The surface is a linked list over slots: an appended event takes a new slot at the end, a
  // replacing event the slot of the first node it replaces. So slot order is surface order, and
  // comparing two slots compares their positions.
  /** Event index of each slot. */
  const entry = new Int32Array(n);
  /** The slot after each slot on the surface; the slot count after the last one. */
  const next = new Int32Array(n);
  /** Slot of the current surface node with each endpoint seq (the latest placed, for a repeated seq). */
  const slotOfSeq = new Map<number, number>();
  let slots = 0;
  let run = 0;
  const indexed = (i: number) => (flags[i]! & HAS_SEQ) !== 0 && endpoints.has(seqs[i]!);
  const place = (slot: number, i: number) => {
    entry[slot] = i;
    if (indexed(i)) slotOfSeq.set(seqs[i]!, slot);
  };
  for (let i = 0; i < n; i++) {
    if (flags[i] === 0) continue;
    const replace = (flags[i]! & REPLACES) !== 0;
    const first = replace ? slotOfSeq.get(runs[run++]!) ?? -1 : -1;
    const last = replace ? slotOfSeq.get(runs[run++]!) ?? -1 : -1;
    if (first < 0 || last < first) {
      next[slots] = slots + 1;
      place(slots++, i);
      continue;
    }
    for (let slot = first; slot !== next[last]; slot = next[slot]!) {
      const j = entry[slot]!;
      if (indexed(j) && slotOfSeq.get(seqs[j]!) === slot) slotOfSeq.delete(seqs[j]!);
    }
    next[first] = next[last]!;
    place(first, i);
  }
  const surface: SessionEvent[] = [];
  for (let slot = 0; slot < slots; slot = next[slot]!) surface.push(events[entry[slot]!] as SessionEvent);
  return surface;
}

/** `flags` bits of one entry (0: not on the surface). */
const ON_SURFACE = 1;
const HAS_SEQ = 2;
const REPLACES = 4;
