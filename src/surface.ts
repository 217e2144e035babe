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

interface SurfaceNode {
  readonly event: SessionEvent;
  /** Increases along the surface: compares positions in O(1). */
  readonly key: number;
  prev: SurfaceNode | undefined;
  next: SurfaceNode | undefined;
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
 * string `type` are skipped. Folding a folded surface returns it unchanged. Linear in
 * `events.length` plus the number of removed nodes.
 */
export function foldSurface(events: readonly unknown[]): SessionEvent[] {
  const surface = new Surface();
  for (const value of events) {
    if (typeof value !== 'object' || value === null) continue;
    const event = value as SessionEvent;
    if (typeof event.type !== 'string') continue;
    const op: unknown = event.surfaceOp;
    if (op === undefined) {
      if (MESSAGE_BEARING_TYPES.has(event.type)) surface.append(event);
    } else if (isReplaceOp(op)) {
      surface.replace(event, op.start, op.end);
    } else {
      surface.append(event);
    }
  }
  return surface.toArray();
}

function isReplaceOp(op: unknown): op is { op: 'replace'; start: number; end: number } {
  if (typeof op !== 'object' || op === null) return false;
  const { op: kind, start, end } = op as Record<string, unknown>;
  return kind === 'replace' && typeof start === 'number' && typeof end === 'number';
}

class Surface {
  private head: SurfaceNode | undefined;
  private tail: SurfaceNode | undefined;
  private nextKey = 0;
  private readonly bySeq = new Map<number, SurfaceNode>();

  append(event: SessionEvent): void {
    const node: SurfaceNode = { event, key: this.nextKey++, prev: this.tail, next: undefined };
    if (this.tail) this.tail.next = node;
    else this.head = node;
    this.tail = node;
    this.index(node);
  }

  replace(event: SessionEvent, start: number, end: number): void {
    const first = this.bySeq.get(start);
    const last = this.bySeq.get(end);
    if (!first || !last || first.key > last.key) {
      this.append(event);
      return;
    }
    for (let node: SurfaceNode | undefined = first; node; node = node.next) {
      this.unindex(node);
      if (node === last) break;
    }
    const node: SurfaceNode = { event, key: first.key, prev: first.prev, next: last.next };
    if (node.prev) node.prev.next = node;
    else this.head = node;
    if (node.next) node.next.prev = node;
    else this.tail = node;
    this.index(node);
  }

  toArray(): SessionEvent[] {
    const out: SessionEvent[] = [];
    for (let node = this.head; node; node = node.next) out.push(node.event);
    return out;
  }

  private index(node: SurfaceNode): void {
    if (typeof node.event.seq === 'number') this.bySeq.set(node.event.seq, node);
  }

  private unindex(node: SurfaceNode): void {
    const seq = node.event.seq;
    if (typeof seq === 'number' && this.bySeq.get(seq) === node) this.bySeq.delete(seq);
  }
}
