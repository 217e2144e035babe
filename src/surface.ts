/**
 * Folding a session's events into its current surface (SPEC §8.2, first rule).
 * @module
 */
import { presentEntries } from './host.js';
import type { SessionEvent } from './types.js';

/** Event types that carry a message and so sit on the surface even without a `surfaceOp` (SPEC §4.3). */
export const MESSAGE_BEARING_TYPES: ReadonlySet<string> = new Set([
  'user/message',
  'steering/message',
  'assistant/message',
  'tool/result',
]);

/**
 * The slot of each seq (-1: none), for {@link foldSurface}: in an `Int32Array` grown by doubling for seqs that
 * are integers from 0 below a bound linear in the events (dsh's seqs, the usual case); any other
 * number in a `Map`, which keeps numbers apart as property keys would (-0 meets 0, NaN meets NaN).
 * Not a plain array: at 500,000 seqs its growth leaves megabytes of garbage in V8's large-object
 * space, which only a full collection frees, where a typed array's buffers go with their young
 * views (SPEC §11.2.2: the edge isolate's 128 MiB).
 */
function seqSlots(events: number): { get(seq: number): number; set(seq: number, slot: number): void } {
  /** Seqs below this (integers from 0) are dense. */
  const bound = 4 * events + 1024;
  /** Slot + 1 by seq (0: none, or removed). */
  let dense = new Int32Array(64);
  const sparse = new Map<number, number>();
  const isDense = (seq: number) => seq >= 0 && seq < bound && Number.isInteger(seq);
  return {
    get: (seq) => (isDense(seq) ? (seq < dense.length ? dense[seq]! : 0) - 1 : sparse.get(seq) ?? -1),
    set(seq, slot) {
      if (!isDense(seq)) {
        sparse.set(seq, slot);
        return;
      }
      if (seq >= dense.length) {
        const grown = new Int32Array(Math.min(bound, Math.max(seq + 1, 2 * dense.length)));
        grown.set(dense);
        dense = grown;
      }
      dense[seq] = slot + 1;
    },
  };
}

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
 * string `type` are skipped, and so are the holes of a sparse array. Folding a folded surface
 * returns it unchanged. Linear in the number of events present (not `events.length`: SPEC §10.3)
 * plus the number of removed nodes.
 */
export function foldSurface(events: readonly unknown[]): SessionEvent[] {
  const present = presentEntries(events);
  // One pass. The surface is a linked list over slots: an appended event takes a new slot at the
  // end, a replacing event the slot of the first node it replaces, so slot order is surface order
  // and comparing two slots compares their positions. Slots live in typed arrays (event indices,
  // not event references): at 100 MB, touching the events is the cost, and this reads each one
  // once (its type, surfaceOp and seq), plus the seq of each node a replace removes.
  const n = present.count;
  /** Position (among the present events) of each slot's event. */
  const entry = new Int32Array(n);
  /** The slot after each slot on the surface; the slot count after the last one. */
  const next = new Int32Array(n);
  /** Slot of the current surface node with each numeric seq (the latest placed, for a repeated seq); -1 once removed. */
  const slotOfSeq = seqSlots(n);
  let slots = 0;
  for (let i = 0; i < n; i++) {
    // Object(): null and primitives read as having no type.
    const event = Object(present.at(i)) as SessionEvent;
    if (typeof event.type !== 'string') continue;
    const op: unknown = event.surfaceOp;
    if (op === undefined && !MESSAGE_BEARING_TYPES.has(event.type)) continue;
    // `{ op: 'replace', start, end }` with numeric endpoints on the surface, `end` not before
    // `start`, replaces; anything else appends.
    const { op: kind, start, end } = (op ?? 0) as Record<string, unknown>;
    const replace = kind === 'replace' && typeof start === 'number' && typeof end === 'number';
    const first = replace ? slotOfSeq.get(start) : -1;
    const last = replace ? slotOfSeq.get(end) : -1;
    let slot = slots;
    if (first >= 0 && last >= first) {
      for (let removed = first; removed !== next[last]; removed = next[removed]!) {
        const { seq } = Object(present.at(entry[removed]!)) as SessionEvent;
        if (typeof seq === 'number' && slotOfSeq.get(seq) === removed) slotOfSeq.set(seq, -1);
      }
      next[first] = next[last]!;
      slot = first;
    } else {
      next[slot] = ++slots;
    }
    entry[slot] = i;
    const seq: unknown = event.seq;
    if (typeof seq === 'number') slotOfSeq.set(seq, slot);
  }
  const surface: SessionEvent[] = [];
  for (let slot = 0; slot < slots; slot = next[slot]!) surface.push(present.at(entry[slot]!) as SessionEvent);
  return surface;
}
