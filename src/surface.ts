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
  // One pass reads what folding needs from each event (for a large log, touching an event
  // object costs more than anything done with it); replaying the ops then only reads the
  // compact arrays filled here.
  const n = events.length;
  const ops = new Uint8Array(n);
  const seqs = new Float64Array(n);
  const replaces: Array<{ start: number; end: number }> = [];
  let onSurface = 0;
  for (let i = 0; i < n; i++) {
    const value = events[i];
    if (typeof value !== 'object' || value === null) continue;
    const event = value as SessionEvent;
    const type = event.type;
    if (typeof type !== 'string') continue;
    const op: unknown = event.surfaceOp;
    if (op === undefined ? !MESSAGE_BEARING_TYPES.has(type) : false) continue;
    const seq: unknown = event.seq;
    if (typeof seq === 'number') {
      seqs[i] = seq;
      ops[i] = HAS_SEQ;
    }
    if (op !== undefined && isReplaceOp(op)) {
      ops[i] = ops[i]! | REPLACE;
      replaces.push({ start: op.start, end: op.end });
    } else {
      ops[i] = ops[i]! | APPEND;
    }
    onSurface++;
  }
  if (replaces.length === 0) {
    // No replace op: the surface is every event on it, in order.
    if (onSurface === n) return events.slice() as SessionEvent[];
    const surface = new Array<SessionEvent>(onSurface);
    let k = 0;
    for (let i = 0; i < n; i++) if (ops[i]! !== 0) surface[k++] = events[i] as SessionEvent;
    return surface;
  }
  return replaySurface(events, ops, seqs, replaces, onSurface);
}

/** `ops` flags of one entry: not on the surface (0), appended, replacing; and has a numeric seq. */
const APPEND = 1;
const REPLACE = 2;
const HAS_SEQ = 4;

function isReplaceOp(op: unknown): op is { op: 'replace'; start: number; end: number } {
  if (typeof op !== 'object' || op === null) return false;
  const { op: kind, start, end } = op as Record<string, unknown>;
  return kind === 'replace' && typeof start === 'number' && typeof end === 'number';
}

/**
 * Replays the surface ops of the `onSurface` entries flagged in `ops`; returns the folded surface.
 *
 * The surface is a linked list over slots (one per appended or replacing entry, in typed
 * arrays). A replacing entry takes the slot of the first node it replaces, so slot order is
 * surface order and comparing slots compares positions.
 */
function replaySurface(
  events: readonly unknown[],
  ops: Uint8Array,
  seqs: Float64Array,
  replaces: ReadonlyArray<{ start: number; end: number }>,
  onSurface: number,
): SessionEvent[] {
  const n = ops.length;
  // Only seqs some replace op names can ever be looked up: index just those.
  const endpoints = new Set<number>();
  for (const { start, end } of replaces) endpoints.add(start).add(end);
  const entry = new Int32Array(onSurface);
  const next = new Int32Array(onSurface);
  /** Slot of the current surface node with each endpoint seq. */
  const bySeq = new Map<number, number>();
  let slots = 0;
  let alive = 0;
  let head = -1;
  let tail = -1;
  let replaceIndex = 0;

  const index = (slot: number) => {
    const i = entry[slot]!;
    if (ops[i]! & HAS_SEQ && endpoints.has(seqs[i]!)) bySeq.set(seqs[i]!, slot);
  };
  const unindex = (slot: number) => {
    const i = entry[slot]!;
    if (ops[i]! & HAS_SEQ && bySeq.get(seqs[i]!) === slot) bySeq.delete(seqs[i]!);
  };
  const append = (i: number) => {
    const slot = slots++;
    entry[slot] = i;
    next[slot] = -1;
    if (tail >= 0) next[tail] = slot;
    else head = slot;
    tail = slot;
    alive++;
    index(slot);
  };

  for (let i = 0; i < n; i++) {
    const op = ops[i]!;
    if (op & APPEND) {
      append(i);
    } else if (op & REPLACE) {
      const { start, end } = replaces[replaceIndex++]!;
      const first = bySeq.get(start);
      const last = bySeq.get(end);
      if (first === undefined || last === undefined || first > last) {
        append(i);
        continue;
      }
      for (let slot = first; slot >= 0; slot = next[slot]!) {
        unindex(slot);
        alive--;
        if (slot === last) break;
      }
      alive++;
      // The replacing entry takes the first slot; the rest of the run is unlinked.
      const after = next[last]!;
      entry[first] = i;
      next[first] = after;
      if (after < 0) tail = first;
      index(first);
    }
  }
  const surface = new Array<SessionEvent>(alive);
  let k = 0;
  for (let slot = head; slot >= 0; slot = next[slot]!) surface[k++] = events[entry[slot]!] as SessionEvent;
  return surface;
}
