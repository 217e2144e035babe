/**
 * The composer's element as a view of the canonical text (SPEC §15.8): §15.6 segments drawn as
 * text nodes and chips, and the mapping between DOM points and UTF-16 offsets of the text.
 * @module
 */
import { segmentMentions, type MentionSegment } from '../segments.js';

/** The class every chip carries (style chips with `.dsh-mention`, invalid ones with `[data-valid="false"]`). */
export const CHIP_CLASS = 'dsh-mention';

/** Longest markup an invalid chip without a label shows (the rest is cut, with `…`). */
const SHOWN_MARKUP = 48;

/** One drawn segment: a text node for a plain run, a non-editable span for a chip. */
interface Piece {
  node: Text | HTMLSpanElement;
  segment: MentionSegment;
}

/** A DOM point: a node and an offset in it. */
export interface DomPoint {
  node: Node;
  offset: number;
}

/** What a piece draws, to tell whether an old piece can stay for a new segment. */
function sameDrawing(piece: Piece, segment: MentionSegment, text: string, oldText: string): boolean {
  const old = piece.segment;
  return old.kind === segment.kind && oldText.slice(old.start, old.end) === text.slice(segment.start, segment.end);
}

/** The text a chip shows: `@label`, or the (cut) markup of an invalid bare URI. */
function chipLabel(segment: MentionSegment & { kind: 'mention' }, text: string): string {
  const { label } = segment.token;
  if (label !== undefined) return `@${label}`;
  const markup = text.slice(segment.start, segment.end);
  return markup.length > SHOWN_MARKUP ? `${markup.slice(0, SHOWN_MARKUP)}…` : markup;
}

/** A chip: non-editable, the label shown, the session id in `title` and `data-session-id`, invalid ones marked. */
function drawChip(document: Document, segment: MentionSegment & { kind: 'mention' }, text: string): HTMLSpanElement {
  const chip = document.createElement('span');
  chip.className = CHIP_CLASS;
  chip.contentEditable = 'false';
  chip.textContent = chipLabel(segment, text);
  const { token } = segment;
  if (token.error === undefined) {
    chip.dataset.sessionId = token.sessionId;
    chip.title = token.sessionId;
  } else {
    chip.dataset.valid = 'false';
    chip.title = token.error.message;
  }
  return chip;
}

/** The element drawn from the text, and the DOM ↔ offset mapping over what is drawn. */
export class TextView {
  readonly element: HTMLElement;
  #pieces: Piece[] = [];
  #text = '';
  /** A `<br>` after a final line break, so that the empty last line takes up a line. */
  #tail: HTMLBRElement;

  constructor(element: HTMLElement) {
    this.element = element;
    this.#tail = element.ownerDocument.createElement('br');
  }

  /**
   * Draws `text`. Pieces that draw the same as before at the start and at the end are kept (so a
   * keystroke touches one text node, and chips an app decorated stay); the rest is replaced.
   * With `fresh`, everything is drawn anew (after the browser drew an IME composition itself).
   */
  draw(text: string, fresh = false): void {
    const segments = segmentMentions(text);
    const old = fresh ? [] : this.#pieces;
    let head = 0;
    while (head < old.length && head < segments.length && sameDrawing(old[head]!, segments[head]!, text, this.#text)) head++;
    let tail = 0;
    while (
      tail < old.length - head &&
      tail < segments.length - head &&
      sameDrawing(old[old.length - 1 - tail]!, segments[segments.length - 1 - tail]!, text, this.#text)
    ) {
      tail++;
    }
    const document = this.element.ownerDocument;
    const middle: Piece[] = segments.slice(head, segments.length - tail).map((segment) => ({
      node: segment.kind === 'text' ? document.createTextNode(segment.text) : drawChip(document, segment, text),
      segment,
    }));
    const kept = (piece: Piece, segment: MentionSegment): Piece => ({ node: piece.node, segment });
    const pieces = [
      ...old.slice(0, head).map((piece, i) => kept(piece, segments[i]!)),
      ...middle,
      ...old.slice(old.length - tail).map((piece, i) => kept(piece, segments[segments.length - tail + i]!)),
    ];
    if (fresh || this.#pieces.length === 0 || this.element.childNodes.length !== this.#pieces.length + (this.#tail.parentNode ? 1 : 0)) {
      this.element.replaceChildren(...pieces.map((piece) => piece.node));
    } else {
      for (const piece of old.slice(head, old.length - tail)) piece.node.remove();
      const before = old[old.length - tail]?.node ?? (this.#tail.parentNode ? this.#tail : null);
      for (const piece of middle) this.element.insertBefore(piece.node, before);
    }
    if (text.endsWith('\n')) this.element.append(this.#tail);
    else this.#tail.remove();
    this.#pieces = pieces;
    this.#text = text;
  }

  /**
   * The text offset of a DOM point, or `undefined` when it is outside the element. A point inside
   * a chip is its start when it stands before the chip's content, else its end (the editing
   * model then normalizes it, SPEC §15.7).
   */
  offsetOf(node: Node | null, offset: number): number | undefined {
    if (node === null) return undefined;
    if (node === this.element) return this.#startOfChild(offset);
    let top: Node = node;
    while (top.parentNode !== this.element) {
      if (top.parentNode === null) return undefined;
      top = top.parentNode;
    }
    const index = this.#pieces.findIndex((piece) => piece.node === top);
    const piece = this.#pieces[index];
    if (piece === undefined) {
      // Something the browser put there (the tail `<br>`, or a node we did not draw): the end
      // of the pieces before it.
      const child = Array.prototype.indexOf.call(this.element.childNodes, top);
      return this.#startOfChild(child + 1);
    }
    const { start, end } = piece.segment;
    if (piece.segment.kind === 'text') return node === piece.node ? start + Math.min(offset, end - start) : end;
    const atStart = offset === 0 && (node === top || node === top.firstChild || node.parentNode === top.firstChild);
    return atStart ? start : end;
  }

  /** The offset where the element's child at `index` starts (the text's length past the pieces). */
  #startOfChild(index: number): number {
    return this.#pieces[index]?.segment.start ?? this.#text.length;
  }

  /** The DOM point of a text offset outside chips: in a plain run's text node when one touches it. */
  pointOf(offset: number): DomPoint {
    const pieces = this.#pieces;
    let low = 0;
    let high = pieces.length;
    // The first piece that ends at or after `offset`.
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (pieces[middle]!.segment.end < offset) low = middle + 1;
      else high = middle;
    }
    for (const index of [low, low + 1]) {
      const piece = pieces[index];
      if (piece?.segment.kind === 'text' && piece.segment.start <= offset && offset <= piece.segment.end) {
        return { node: piece.node, offset: offset - piece.segment.start };
      }
    }
    // Between chips, or at the element's start or end: a position among the element's children.
    const child = pieces.findIndex((piece) => piece.segment.start >= offset);
    return { node: this.element, offset: child < 0 ? pieces.length : child };
  }

  /** The client rectangle of the character at `offset` (in a plain run), for placing a menu. */
  rectOf(offset: number): DOMRect {
    const { node, offset: at } = this.pointOf(offset);
    const range = this.element.ownerDocument.createRange();
    range.setStart(node, at);
    if (node.nodeType === 3 && at < (node as Text).length) range.setEnd(node, at + 1);
    else range.collapse(true);
    return range.getBoundingClientRect();
  }
}
