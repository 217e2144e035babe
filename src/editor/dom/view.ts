/**
 * The composer's element as a view of the canonical text (SPEC §15.8): §15.6 segments drawn as
 * text nodes and chips, and the mapping between DOM points and UTF-16 offsets of the text.
 *
 * An edit redraws only the pieces of the range it touched (issue 29.3: a keystroke costs what it
 * changes, not the draft's length): pieces keep their offsets in the text, a node → piece map
 * answers "which piece is this DOM point in" without walking the element, and a binary search
 * answers "which piece holds this offset".
 * @module
 */
import { cleanTitleLabel } from '../../label.js';
import { segmentMentions, type MentionChipSegment, type MentionSegment } from '../segments.js';

/** The class every chip carries (style chips with `.dsh-mention`, invalid ones with `[data-valid="false"]`). */
export const CHIP_CLASS = 'dsh-mention';

/** Longest markup an invalid chip without a label shows (the rest is cut, with `…`). */
const SHOWN_MARKUP = 48;

/** One drawn segment: a text node for a plain run, a non-editable span for a chip. */
export interface Piece {
  node: Text | HTMLSpanElement;
  /** The segment's offsets in the current text (kept up to date as edits shift them). */
  start: number;
  end: number;
  /** The segment's text (a run's characters, or a chip's markup). */
  source: string;
  /** The chip's segment (`undefined` for a plain run). */
  chip: MentionChipSegment | undefined;
}

/** A DOM point: a node and an offset in it. */
export interface DomPoint {
  node: Node;
  offset: number;
}

/** How chips are named and whether they are buttons (SPEC §15.9). */
export interface ChipOptions {
  /** The accessible name of a valid chip, from its cleaned label. */
  name(label: string): string;
  /** Whether chips can be activated (`role="button"`; otherwise `role="img"`, a named unit). */
  activatable: boolean;
}

/** The text a chip shows: `@label` (cleaned, SPEC §6.6), or the (cut) markup of an invalid bare URI. */
function shownLabel(chip: MentionChipSegment, markup: string): string {
  const { label } = chip.token;
  if (label !== undefined) return `@${cleanTitleLabel(label) || cleanTitleLabel(markup)}`;
  return markup.length > SHOWN_MARKUP ? `${markup.slice(0, SHOWN_MARKUP)}…` : markup;
}

/** The label a valid chip stands for, cleaned as §6.6 cleans labels (the id when nothing is left). */
export function chipLabel(chip: MentionChipSegment): string {
  const { token } = chip;
  return cleanTitleLabel(token.label ?? '') || cleanTitleLabel(token.sessionId ?? '') || (token.sessionId ?? '');
}

/**
 * A chip: non-editable, the label shown, an accessible name, the session id exact in
 * `data-session-id` and cleaned in `title`; invalid ones marked.
 */
function drawChip(document: Document, chip: MentionChipSegment, markup: string, options: ChipOptions): HTMLSpanElement {
  const span = document.createElement('span');
  span.className = CHIP_CLASS;
  span.contentEditable = 'false';
  span.textContent = shownLabel(chip, markup);
  const { token } = chip;
  if (token.error === undefined) {
    span.dataset.sessionId = token.sessionId;
    span.title = cleanTitleLabel(token.sessionId);
    span.setAttribute('role', options.activatable ? 'button' : 'img');
    span.setAttribute('aria-label', options.name(chipLabel(chip)));
  } else {
    span.dataset.valid = 'false';
    span.title = cleanTitleLabel(token.error.message);
    span.setAttribute('role', 'img');
    span.setAttribute('aria-label', `invalid session mention: ${cleanTitleLabel(span.textContent)}`);
  }
  return span;
}

/** The element drawn from the text, and the DOM ↔ offset mapping over what is drawn. */
export class TextView {
  readonly element: HTMLElement;
  readonly #options: ChipOptions;
  #pieces: Piece[] = [];
  #byNode = new Map<Node, Piece>();
  #length = 0;
  /** A `<br>` after a final line break, so that the empty last line takes up a line. */
  #tail: HTMLBRElement;

  constructor(element: HTMLElement, options: ChipOptions) {
    this.element = element;
    this.#options = options;
    this.#tail = element.ownerDocument.createElement('br');
  }

  /** The drawn pieces, in order (read-only use). */
  get pieces(): readonly Piece[] {
    return this.#pieces;
  }

  /** Draws the whole `text` anew (the first draw, `setText`, after an IME composition). */
  draw(text: string): void {
    for (const piece of this.#pieces) this.#byNode.delete(piece.node);
    this.#pieces = this.#make(segmentMentions(text), text, 0);
    this.element.replaceChildren(...this.#pieces.map((piece) => piece.node));
    this.#length = text.length;
    this.#placeTail(text.endsWith('\n'));
  }

  /**
   * Redraws the range `[from, to)` of the old text, which became `replacement` (both ends are piece
   * boundaries: the start of the text or of a piece, the end of a piece or of the text). Pieces
   * after it keep their nodes and shift their offsets. Within the range, pieces that draw the same
   * at its start and end stay; a plain run that changed keeps its text node (its data is set).
   */
  replace(from: number, to: number, replacement: string): void {
    const first = this.indexFrom(from);
    let last = first;
    while (last < this.#pieces.length && this.#pieces[last]!.end <= to) last++;
    const old = this.#pieces.slice(first, last);
    const fresh = segmentMentions(replacement);
    let head = 0;
    while (head < old.length && head < fresh.length && sameDrawing(old[head]!, fresh[head]!, replacement)) head++;
    let tail = 0;
    while (tail < old.length - head && tail < fresh.length - head && sameDrawing(old[old.length - 1 - tail]!, fresh[fresh.length - 1 - tail]!, replacement)) tail++;
    const middle = this.#make(fresh.slice(head, fresh.length - tail), replacement, from, old.slice(head, old.length - tail));
    const delta = replacement.length - (to - from);
    // The kept pieces of the range get the new segments' offsets; those after it shift.
    for (const [i, piece] of old.slice(0, head).entries()) Object.assign(piece, { start: from + fresh[i]!.start, end: from + fresh[i]!.end });
    for (const [i, piece] of old.slice(old.length - tail).entries()) {
      const segment = fresh[fresh.length - tail + i]!;
      Object.assign(piece, { start: from + segment.start, end: from + segment.end });
    }
    for (let i = last; i < this.#pieces.length; i++) {
      const piece = this.#pieces[i]!;
      piece.start += delta;
      piece.end += delta;
    }
    const removed = old.slice(head, old.length - tail);
    for (const piece of removed) {
      if (!middle.includes(piece)) {
        piece.node.remove();
        this.#byNode.delete(piece.node);
      }
    }
    const before = this.#pieces[last - tail]?.node ?? (this.#tail.parentNode ? this.#tail : null);
    for (const piece of middle) this.element.insertBefore(piece.node, before);
    this.#pieces.splice(first + head, removed.length, ...middle);
    this.#length += delta;
    const lastPiece = this.#pieces.at(-1);
    this.#placeTail(lastPiece?.chip === undefined && lastPiece !== undefined && lastPiece.source.endsWith('\n'));
  }

  /**
   * Pieces for `segments` of `text` (their offsets shifted by `base`); a plain run reuses the text
   * node of a run of `reuse` (pieces being replaced) when there is one.
   */
  #make(segments: MentionSegment[], text: string, base: number, reuse: Piece[] = []): Piece[] {
    const document = this.element.ownerDocument;
    const runs = reuse.filter((piece) => piece.chip === undefined);
    return segments.map((segment) => {
      const source = segment.kind === 'text' ? segment.text : '';
      let piece: Piece;
      if (segment.kind === 'text') {
        const recycled = runs.shift();
        if (recycled !== undefined && (recycled.node as Text).data !== source) (recycled.node as Text).data = source;
        piece = recycled ?? { node: document.createTextNode(source), start: 0, end: 0, source, chip: undefined };
        piece.source = source;
      } else {
        const markup = text.slice(segment.start, segment.end);
        piece = { node: drawChip(document, segment, markup, this.#options), start: 0, end: 0, source: markup, chip: segment };
      }
      piece.start = base + segment.start;
      piece.end = base + segment.end;
      this.#byNode.set(piece.node, piece);
      return piece;
    });
  }

  #placeTail(afterLineBreak: boolean): void {
    if (afterLineBreak) this.element.append(this.#tail);
    else this.#tail.remove();
  }

  /** Index of the first piece that ends after `offset`, or that starts at it (binary search); `pieces.length` when none. */
  indexFrom(offset: number): number {
    const pieces = this.#pieces;
    let low = 0;
    let high = pieces.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (pieces[middle]!.end <= offset && pieces[middle]!.start < offset) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The chip piece whose node is or contains `node`, if any. */
  chipOf(node: Node | null): Piece | undefined {
    for (let at = node; at !== null && at !== this.element; at = at.parentNode) {
      const piece = this.#byNode.get(at);
      if (piece !== undefined) return piece.chip === undefined ? undefined : piece;
    }
    return undefined;
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
    const piece = this.#byNode.get(top);
    if (piece === undefined) {
      // Something the browser put there (the tail `<br>`, or a node we did not draw): the end
      // of the pieces before it.
      return this.#startOfChild(Array.prototype.indexOf.call(this.element.childNodes, top) + 1);
    }
    const { start, end } = piece;
    if (piece.chip === undefined) return node === piece.node ? start + Math.min(offset, end - start) : end;
    const atStart = offset === 0 && (node === top || node === top.firstChild || node.parentNode === top.firstChild);
    return atStart ? start : end;
  }

  /** The offset where the element's child at `index` starts (the text's length past the pieces). */
  #startOfChild(index: number): number {
    const child = this.element.childNodes[index];
    const piece = child && this.#byNode.get(child);
    return piece?.start ?? this.#length;
  }

  /** The DOM point of a text offset outside chips: in a plain run's text node when one touches it. */
  pointOf(offset: number): DomPoint {
    const pieces = this.#pieces;
    const index = this.indexFrom(offset);
    for (const piece of [pieces[index - 1], pieces[index]]) {
      if (piece?.chip === undefined && piece !== undefined && piece.start <= offset && offset <= piece.end) {
        return { node: piece.node, offset: offset - piece.start };
      }
    }
    // Between chips, or at the element's start or end: a position among the element's children.
    const next = pieces[index];
    if (next === undefined) return { node: this.element, offset: this.element.childNodes.length - (this.#tail.parentNode ? 1 : 0) };
    const range = this.element.ownerDocument.createRange();
    range.setStartBefore(next.node);
    return { node: this.element, offset: range.startOffset };
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

/** Whether an old piece draws the same as a new segment of `text` (so it can stay). */
function sameDrawing(piece: Piece, segment: MentionSegment, text: string): boolean {
  if ((piece.chip === undefined) !== (segment.kind === 'text')) return false;
  return piece.source === text.slice(segment.start, segment.end);
}
