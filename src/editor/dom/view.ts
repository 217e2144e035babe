/**
 * The composer's element as a view of the canonical text (SPEC §15.8): §15.6 segments drawn as
 * text nodes and chips, one block (`<div>`) per line, lines grouped by up to {@link CHUNK_LINES}
 * in blocks of their own, and the mapping between DOM points and UTF-16 offsets of the text.
 *
 * A keystroke costs what it changes (issue 29.3): an edit redraws only the lines it touched; each
 * line is a block of its own, so the browser lays out that line and not the whole draft (one
 * inline run of 5 MB costs seconds of layout per change), and lines are grouped so that no block
 * has thousands of children (Chromium lays out every child of a block whose child changed: 16,000
 * lines in one block cost 60–100 ms per change, in blocks of 64 lines under 1 ms), blocks off
 * screen being skipped (`content-visibility: auto`); pieces keep their offsets in the text,
 * a node → piece map answers "which piece is this DOM point in" without walking the element, and
 * binary searches answer "which piece, which line holds this offset".
 * @module
 */
import { cleanTitleLabel } from '../../label.js';
import { segmentMentions, type MentionChipSegment, type MentionSegment } from '../segments.js';

/** The class every chip carries (style chips with `.dsh-mention`, invalid ones with `[data-valid="false"]`). */
export const CHIP_CLASS = 'dsh-mention';

/** Longest markup an invalid chip without a label shows (the rest is cut, with `…`). */
const SHOWN_MARKUP = 48;

/** Lines per group block (a group that grows past twice as many is split). */
const CHUNK_LINES = 64;

/** One line of the view: a block holding its pieces (or a `<br>` when it is empty). */
interface Line {
  node: HTMLDivElement;
  /** Offset of the line's first character, and of its end (its `\n`, or the end of the text). */
  start: number;
  end: number;
}

/**
 * One drawn piece of the text: a run of plain text within a line (a text node), a chip (a
 * non-editable span), or a line break (`\n`, drawn as the boundary between two lines: no node).
 */
export interface Piece {
  node: Text | HTMLSpanElement | undefined;
  /** The piece's offsets in the current text (kept up to date as edits shift them). */
  start: number;
  end: number;
  /** The piece's text (a run's characters, a chip's markup, or `\n`). */
  source: string;
  /** The chip's segment (`undefined` for a run or a line break). */
  chip: MentionChipSegment | undefined;
  /** Whether a run holds `@[` (a mention may start in it), so a stretch can be bounded without reading text (`./local.ts`). */
  opens: boolean;
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
  if (label !== undefined) return `@${cleanTitleLabel(label)}`;
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

/** Index of the first of `items` (sorted, not overlapping) whose `end` is after `offset` or whose `start` is at it. */
function firstEndingAfter(items: ReadonlyArray<{ start: number; end: number }>, offset: number): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const item = items[middle]!;
    if (item.end <= offset && item.start < offset) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The element drawn from the text, and the DOM ↔ offset mapping over what is drawn. */
export class TextView {
  readonly element: HTMLElement;
  readonly #options: ChipOptions;
  #pieces: Piece[] = [];
  #lines: Line[] = [];
  #pieceOf = new Map<Node, Piece>();
  #lineOf = new Map<Node, Line>();
  /** The group blocks, children of the element. */
  #chunks = new Set<Node>();
  /** The text of each group block (its lines and the line break after them), once known. */
  #chunkText = new Map<Node, string>();
  #length = 0;

  constructor(element: HTMLElement, options: ChipOptions) {
    this.element = element;
    this.#options = options;
  }

  /** The drawn pieces, in order (read-only use). */
  get pieces(): readonly Piece[] {
    return this.#pieces;
  }

  /** Draws the whole `text` anew (the first draw, `setText`, undo, after an IME composition). */
  draw(text: string): void {
    this.#pieceOf.clear();
    this.#lineOf.clear();
    this.#pieces = this.#make(segmentMentions(text), text, 0);
    this.#lines = this.#layLines(this.#pieces, 0, text.length);
    this.#chunks.clear();
    this.#chunkText.clear();
    const chunks: HTMLDivElement[] = [];
    this.#length = text.length;
    for (let i = 0; i < this.#lines.length; i += CHUNK_LINES) {
      const lines = this.#lines.slice(i, i + CHUNK_LINES);
      const chunk = this.#chunk(lines.map((line) => line.node));
      // Each block's text, cut from the text drawn (so the first edit copies nothing either).
      const end = lines.at(-1)!.end;
      this.#chunkText.set(chunk, text.slice(lines[0]!.start, end === text.length ? end : end + 1));
      chunks.push(chunk);
    }
    this.element.replaceChildren(...chunks);
    this.#showEmpty();
  }

  /**
   * Redraws the range `[from, to)` of the old text, which became `replacement` (both ends are piece
   * boundaries: the start of the text or of a piece, the end of a piece or of the text). Only the
   * lines that hold the range are drawn anew; the pieces and lines after them keep their nodes and
   * shift their offsets.
   */
  replace(from: number, to: number, replacement: string): void {
    const delta = replacement.length - (to - from);
    // The empty text's line comes back into the document first.
    if (this.#length === 0) this.element.replaceChildren(this.#lines[0]!.node.parentNode!);
    // The lines that hold the range, and their pieces.
    const firstLine = this.#lineAt(from);
    const lastLine = this.#lineAt(to);
    const lineStart = this.#lines[firstLine]!.start;
    const lineEnd = this.#lines[lastLine]!.end;
    const first = firstEndingAfter(this.#pieces, lineStart);
    let last = first;
    while (last < this.#pieces.length && this.#pieces[last]!.end <= lineEnd) last++;
    const old = this.#pieces.slice(first, last);
    const before = old.filter((piece) => piece.end <= from);
    const after = old.filter((piece) => piece.start >= to);
    // The pieces being replaced (read before the pieces after them shift).
    const replaced = old.filter((piece) => piece.start < to && piece.end > from);
    for (const piece of replaced) if (piece.node) this.#pieceOf.delete(piece.node);
    for (const piece of after) {
      piece.start += delta;
      piece.end += delta;
    }
    const middle = this.#reuse(replaced, this.#make(segmentMentions(replacement), replacement, from));
    const groups = this.#group([...before, ...middle, ...after], lineStart, lineEnd + delta);
    for (let i = last; i < this.#pieces.length; i++) {
      const piece = this.#pieces[i]!;
      piece.start += delta;
      piece.end += delta;
    }
    for (let i = lastLine + 1; i < this.#lines.length; i++) {
      const line = this.#lines[i]!;
      line.start += delta;
      line.end += delta;
    }
    const removed = this.#lines.slice(firstLine, lastLine + 1);
    const chunk = removed[0]!.node.parentNode as HTMLDivElement;
    for (const line of removed) this.#chunkText.delete(line.node.parentNode!);
    let lines: Line[];
    if (groups.length === removed.length) {
      // As many lines as before (typing, a chip deleted): the blocks stay, only changed children move.
      lines = removed;
      groups.forEach((group, i) => this.#fill(Object.assign(removed[i]!, { start: group.start, end: group.end }), group.nodes));
    } else {
      lines = groups.map((group) => this.#open(group));
      removed[0]!.node.before(...lines.map((line) => line.node));
      for (const line of removed) {
        const parent = line.node.parentNode!;
        line.node.remove();
        this.#lineOf.delete(line.node);
        if (parent.firstChild === null) {
          this.#chunks.delete(parent);
          (parent as HTMLDivElement).remove();
        }
      }
    }
    const pieces = [...before, ...middle, ...after];
    if (chunk.childElementCount > 2 * CHUNK_LINES) chunk.after(this.#chunk(Array.from(chunk.children).slice(CHUNK_LINES)));
    this.#pieces.splice(first, old.length, ...pieces);
    this.#lines.splice(firstLine, removed.length, ...lines);
    this.#length += delta;
    this.#showEmpty();
  }

  /**
   * The empty text is drawn as nothing at all, so that an app's `:empty` placeholder shows; its one
   * line waits in its block, out of the document, for the first character.
   */
  #showEmpty(): void {
    if (this.#length === 0) this.element.replaceChildren();
  }

  /**
   * The whole text, made from each group block's text without copying the draft: a balanced
   * concatenation, which V8 keeps as a rope until someone reads its characters. An edit costs the
   * text of the blocks it touched and one concatenation per block, not a copy of the draft.
   */
  text(): string {
    const parts: string[] = [];
    for (let chunk = this.element.firstChild; chunk !== null; chunk = chunk.nextSibling) parts.push(this.#textOfChunk(chunk));
    let level = parts;
    while (level.length > 1) {
      const next: string[] = [];
      for (let i = 0; i < level.length; i += 2) next.push(level[i]! + (level[i + 1] ?? ''));
      level = next;
    }
    return level[0] ?? '';
  }

  /** The text of a group block: its lines, and the line break after them unless it is the last. */
  #textOfChunk(chunk: Node): string {
    let text = this.#chunkText.get(chunk);
    if (text === undefined) {
      const first = this.#lineOf.get(chunk.firstChild!)!;
      const last = this.#lineOf.get(chunk.lastChild!)!;
      text = this.source(first.start, last.end === this.#length ? last.end : last.end + 1);
      this.#chunkText.set(chunk, text);
    }
    return text;
  }

  /** The text of `[from, to)` (both piece boundaries), from the pieces that cover it. */
  source(from: number, to: number): string {
    const parts: string[] = [];
    for (let i = this.indexFrom(from); i < this.#pieces.length && this.#pieces[i]!.start < to; i++) parts.push(this.#pieces[i]!.source);
    return parts.join('');
  }

  /**
   * Pieces for `segments` of `text` (their offsets shifted by `base`): a plain run is cut at its
   * line breaks into runs and breaks.
   */
  #make(segments: MentionSegment[], text: string, base: number): Piece[] {
    const document = this.element.ownerDocument;
    const pieces: Piece[] = [];
    for (const segment of segments) {
      if (segment.kind === 'mention') {
        const source = text.slice(segment.start, segment.end);
        const node = drawChip(document, segment, source, this.#options);
        pieces.push({ node, start: base + segment.start, end: base + segment.end, source, chip: segment, opens: false });
        this.#pieceOf.set(node, pieces.at(-1)!);
        continue;
      }
      let at = segment.start;
      for (const part of segment.text.split('\n')) {
        if (at > segment.start) pieces.push({ node: undefined, start: base + at - 1, end: base + at, source: '\n', chip: undefined, opens: false });
        if (part !== '') {
          const node = document.createTextNode(part);
          pieces.push({ node, start: base + at, end: base + at + part.length, source: part, chip: undefined, opens: part.includes('@[') });
          this.#pieceOf.set(node, pieces.at(-1)!);
        }
        at += part.length + 1;
      }
    }
    return pieces;
  }

  /**
   * A group block holding `lines`. Off screen, the browser skips its layout and painting
   * (`content-visibility: auto`; its height is remembered once drawn, and guessed at 64 lines
   * before): a change lays out the blocks in view, not the draft.
   */
  #chunk(lines: Node[]): HTMLDivElement {
    const chunk = this.element.ownerDocument.createElement('div');
    chunk.style.contentVisibility = 'auto';
    chunk.style.containIntrinsicSize = 'auto 1500px';
    // Where the `lh` unit is known (an invalid value is ignored, so the pixels above stay).
    chunk.style.containIntrinsicSize = `auto ${CHUNK_LINES}lh`;
    chunk.append(...lines);
    this.#chunks.add(chunk);
    return chunk;
  }

  /** The lines of `pieces` (which cover `[start, end)` and start at a line's start): a block each. */
  #layLines(pieces: Piece[], start: number, end: number): Line[] {
    return this.#group(pieces, start, end).map((group) => this.#open(group));
  }

  /** `pieces` (covering `[start, end)` from a line's start) cut into lines: their offsets and nodes. */
  #group(pieces: Piece[], start: number, end: number): Array<{ start: number; end: number; nodes: Node[] }> {
    const groups = [{ start, end, nodes: [] as Node[] }];
    for (const piece of pieces) {
      if (piece.node === undefined) {
        groups.at(-1)!.end = piece.start;
        groups.push({ start: piece.end, end, nodes: [] });
      } else {
        groups.at(-1)!.nodes.push(piece.node);
      }
    }
    return groups;
  }

  /** A new line block for a group. */
  #open(group: { start: number; end: number; nodes: Node[] }): Line {
    const line = { node: this.element.ownerDocument.createElement('div'), start: group.start, end: group.end };
    this.#lineOf.set(line.node, line);
    this.#fill(line, group.nodes);
    return line;
  }

  /** Makes `nodes` the line's children (a `<br>` when there is none, so that an empty line takes up a line), moving only what differs. */
  #fill(line: Line, nodes: Node[]): void {
    const children = line.node.childNodes;
    if (nodes.length === 0) {
      if (children.length !== 1 || children[0]!.nodeName !== 'BR') line.node.replaceChildren(this.element.ownerDocument.createElement('br'));
      return;
    }
    if (children.length === nodes.length && nodes.every((node, i) => children[i] === node)) return;
    line.node.replaceChildren(...nodes);
  }

  /**
   * Keeps the nodes of `old` pieces for `fresh` ones that draw the same (from both ends), and the
   * text nodes of changed runs (their data set): a keystroke changes one text node, not the line.
   */
  #reuse(old: Piece[], fresh: Piece[]): Piece[] {
    const same = (a: Piece, b: Piece) => (a.chip === undefined) === (b.chip === undefined) && a.source === b.source;
    const take = (from: Piece, into: Piece) => {
      if (into.node) this.#pieceOf.delete(into.node);
      into.node = from.node;
      if (into.node) this.#pieceOf.set(into.node, into);
    };
    let head = 0;
    while (head < old.length && head < fresh.length && same(old[head]!, fresh[head]!)) take(old[head]!, fresh[head]!), head++;
    let tail = 0;
    while (tail < old.length - head && tail < fresh.length - head && same(old[old.length - 1 - tail]!, fresh[fresh.length - 1 - tail]!)) {
      take(old[old.length - 1 - tail]!, fresh[fresh.length - 1 - tail]!);
      tail++;
    }
    const runs = old.slice(head, old.length - tail).filter((piece) => piece.chip === undefined && piece.node !== undefined);
    for (const piece of fresh.slice(head, fresh.length - tail)) {
      const run = piece.chip === undefined && piece.node !== undefined ? runs.shift() : undefined;
      if (run === undefined) continue;
      (run.node as Text).data = piece.source;
      take(run, piece);
    }
    return fresh;
  }

  /** Index of the line that holds `offset` (the last line starting at or before it). */
  #lineAt(offset: number): number {
    let low = 0;
    let high = this.#lines.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.#lines[middle]!.start <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  /** Index of the first piece that ends after `offset`, or that starts at it (binary search); `pieces.length` when none. */
  indexFrom(offset: number): number {
    return firstEndingAfter(this.#pieces, offset);
  }

  /** The chip piece whose node is or contains `node`, if any. */
  chipOf(node: Node | null): Piece | undefined {
    for (let at = node; at !== null && at !== this.element; at = at.parentNode) {
      const piece = this.#pieceOf.get(at);
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
    if (node === this.element || this.#chunks.has(node)) {
      // Before the line (or group of lines) at `offset`, or at the end of the last one.
      let child: Node | null | undefined = node.childNodes[offset];
      while (child && !this.#lineOf.has(child)) child = child.firstChild;
      if (child) return this.#lineOf.get(child)!.start;
      let last: Node | null = node.childNodes[offset - 1] ?? null;
      while (last && !this.#lineOf.has(last)) last = last.lastChild;
      return last ? this.#lineOf.get(last)!.end : node === this.element ? this.#length : undefined;
    }
    const line = this.#lineOf.get(node);
    if (line !== undefined) return this.#startOfChild(line, offset);
    let top: Node = node;
    while (!this.#lineOf.has(top.parentNode!)) {
      if (top.parentNode === null || top.parentNode === this.element || this.#chunks.has(top.parentNode)) return undefined;
      top = top.parentNode;
    }
    const piece = this.#pieceOf.get(top);
    if (piece === undefined) {
      // Something the browser put in a line (a `<br>`, or a node we did not draw): where it stands.
      const parent = this.#lineOf.get(top.parentNode!)!;
      return this.#startOfChild(parent, Array.prototype.indexOf.call(parent.node.childNodes, top) as number);
    }
    const { start, end } = piece;
    if (piece.chip === undefined) return node === piece.node ? start + Math.min(offset, end - start) : end;
    const atStart = offset === 0 && (node === top || node === top.firstChild || node.parentNode === top.firstChild);
    return atStart ? start : end;
  }

  /** The offset where the line's child at `index` starts (the line's end past its pieces). */
  #startOfChild(line: Line, index: number): number {
    const child = line.node.childNodes[index];
    return (child && this.#pieceOf.get(child)?.start) ?? (index === 0 ? line.start : line.end);
  }

  /** The DOM point of a text offset outside chips: in a plain run's text node when one touches it. */
  pointOf(offset: number): DomPoint {
    if (this.#length === 0) return { node: this.element, offset: 0 };
    const line = this.#lines[this.#lineAt(offset)]!;
    const pieces = this.#pieces;
    const index = this.indexFrom(offset);
    for (const piece of [pieces[index - 1], pieces[index]]) {
      if (piece?.chip === undefined && piece?.node !== undefined && piece.start <= offset && offset <= piece.end && piece.node.parentNode === line.node) {
        return { node: piece.node, offset: offset - piece.start };
      }
    }
    // Between chips, or at a line's start or end: a position among the line's children.
    const next = pieces[index];
    if (next?.node === undefined || next.node.parentNode !== line.node) {
      const count = line.node.childNodes.length;
      return { node: line.node, offset: line.start === line.end ? 0 : count };
    }
    const range = this.element.ownerDocument.createRange();
    range.setStartBefore(next.node);
    return { node: line.node, offset: range.startOffset };
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
